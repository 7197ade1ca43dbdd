//! PostgreSQL's binaries (`--pg-bin`, or the highest
//! `/usr/lib/postgresql/N/bin`) and the unprivileged user the server runs
//! as: commands run as `postgres`, in a process group of their own, and
//! optionally first moved into a memory cgroup.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::cgroup::MemCgroup;
use super::server::{PACKAGE, ServerError, failed};

/// PostgreSQL's binaries and their major version.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub dir: PathBuf,
    pub major: u32,
    /// `postgres --version`, e.g. "PostgreSQL 15.14 (Debian ...)".
    pub version: String,
}

impl Binaries {
    /// `dir` (from `--pg-bin`), or the highest `/usr/lib/postgresql/N/bin`.
    pub fn find(dir: Option<&Path>) -> Result<Binaries, ServerError> {
        let dir = match dir {
            Some(d) => {
                if !d.join("postgres").is_file() || !d.join("pg_ctl").is_file() {
                    return Err(ServerError::Usage(format!(
                        "--pg-bin {}: no postgres and pg_ctl there; give the directory holding PostgreSQL's binaries (e.g. /usr/lib/postgresql/15/bin)",
                        d.display()
                    )));
                }
                d.to_path_buf()
            }
            None => {
                let mut found: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| {
                        let v = e.file_name().to_str()?.parse::<u32>().ok()?;
                        let bin = e.path().join("bin");
                        (bin.join("postgres").is_file() && bin.join("initdb").is_file())
                            .then_some((v, bin))
                    })
                    .collect();
                found.sort();
                match found.pop() {
                    Some((_, bin)) => bin,
                    None => {
                        return Err(ServerError::Usage(format!(
                            "--workload pg needs PostgreSQL: no /usr/lib/postgresql/*/bin/postgres here; install the package {PACKAGE} (apt-get install {PACKAGE}) or give --pg-bin DIR"
                        )));
                    }
                }
            }
        };
        let out = Command::new(dir.join("postgres"))
            .arg("--version")
            .output()
            .map_err(|e| failed(&format!("cannot run {}/postgres", dir.display()), e))?;
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let version = text
            .strip_prefix("postgres (PostgreSQL) ")
            .map(|v| format!("PostgreSQL {v}"))
            .unwrap_or(text.clone());
        let major = version
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.split('.').next())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                ServerError::Failed(format!(
                    "{}/postgres --version said {text:?}",
                    dir.display()
                ))
            })?;
        if major < 15 {
            return Err(ServerError::Usage(format!(
                "{version} in {} is too old: --workload pg needs PostgreSQL 15 or newer (track_wal_io_timing, pg_stat_wal); install {PACKAGE}",
                dir.display()
            )));
        }
        Ok(Binaries {
            dir,
            major,
            version,
        })
    }
}

/// The unprivileged user the server runs as (PostgreSQL refuses root).
#[derive(Clone, Copy, Debug)]
pub struct PgUser {
    pub uid: u32,
    pub gid: u32,
}

impl PgUser {
    /// The `postgres` user Debian's package creates.
    pub fn lookup() -> Result<PgUser, ServerError> {
        let name = c"postgres";
        // SAFETY: getpwnam returns a pointer into static storage or null;
        // the two fields are copied out at once.
        let pw = unsafe { libc::getpwnam(name.as_ptr()) };
        if pw.is_null() {
            return Err(ServerError::Usage(format!(
                "--workload pg runs PostgreSQL as the user postgres, which does not exist here; install {PACKAGE} (it creates the user)"
            )));
        }
        // SAFETY: pw is non-null and points to a valid passwd entry.
        let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
        Ok(PgUser { uid, gid })
    }

    /// A command run as this user, in a process group of its own.
    pub(super) fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.uid(self.uid).gid(self.gid);
        Self::common(&mut c);
        c
    }

    /// The same, first moved into memory cgroup `cg` (as root: the move
    /// needs it), then made this user.
    pub(super) fn command_in(&self, program: &Path, cg: MemCgroup) -> Command {
        let mut c = Command::new(program);
        let (uid, gid) = (self.uid, self.gid);
        // SAFETY: only async-signal-safe calls (open, write, close,
        // setgroups, setgid, setuid) in the forked child.
        unsafe {
            c.pre_exec(move || {
                cg.enter_from_child()?;
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
        Self::common(&mut c);
        c
    }

    fn common(c: &mut Command) {
        c.current_dir("/")
            .process_group(0)
            .env_remove("PGDATA")
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .stdin(Stdio::null());
    }

    pub(super) fn chown(&self, p: &Path) -> Result<(), ServerError> {
        std::os::unix::fs::chown(p, Some(self.uid), Some(self.gid))
            .map_err(|e| failed(&format!("chown {} to postgres", p.display()), e))
    }
}
