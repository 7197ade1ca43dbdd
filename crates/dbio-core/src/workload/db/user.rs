//! The unprivileged user a database server runs as (PostgreSQL and MariaDB
//! refuse root; their Debian packages create `postgres` and `mysql`):
//! commands run as that user, in a process group of their own (a Ctrl-C on
//! dbio's terminal does not reach the server; dbio stops it), optionally
//! first moved into a memory cgroup.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

use super::cgroup::MemCgroup;
use super::{ServerError, failed};

/// The user a server runs as.
#[derive(Clone, Copy, Debug)]
pub struct ServerUser {
    pub name: &'static str,
    pub uid: u32,
    pub gid: u32,
}

impl ServerUser {
    /// User `name`, which `package` creates; `workload` (e.g. "--workload
    /// pg runs PostgreSQL") opens the refusal when it does not exist.
    pub fn lookup(
        name: &'static str,
        package: &str,
        workload: &str,
    ) -> Result<ServerUser, ServerError> {
        let c = std::ffi::CString::new(name).expect("a user name has no NUL");
        // SAFETY: getpwnam returns a pointer into static storage or null;
        // the two fields are copied out at once.
        let pw = unsafe { libc::getpwnam(c.as_ptr()) };
        if pw.is_null() {
            return Err(ServerError::Usage(format!(
                "{workload} as the user {name}, which does not exist here; install {package} (it creates the user)"
            )));
        }
        // SAFETY: pw is non-null and points to a valid passwd entry.
        let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
        Ok(ServerUser { name, uid, gid })
    }

    /// A command run as this user, in a process group of its own.
    pub fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.uid(self.uid).gid(self.gid);
        Self::common(&mut c);
        c
    }

    /// The same, first moved into memory cgroup `cg` (as root: the move
    /// needs it), then made this user.
    pub(crate) fn command_in(&self, program: &Path, cg: MemCgroup) -> Command {
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
            .env_remove("MYSQL_HOST")
            .env_remove("MYSQL_UNIX_PORT")
            .env_remove("MYSQL_TCP_PORT")
            .stdin(Stdio::null());
    }

    pub(crate) fn chown(&self, p: &Path) -> Result<(), ServerError> {
        std::os::unix::fs::chown(p, Some(self.uid), Some(self.gid))
            .map_err(|e| failed(&format!("chown {} to {}", p.display(), self.name), e))
    }

    /// Makes a server instance's directories: `root` (0755, the user's: the
    /// server writes its log there, its parents made as needed) and each of
    /// `dirs` (new, `mode`, the user's; their parents made as needed).
    pub fn make_dirs(&self, root: &Path, dirs: &[&Path], mode: u32) -> Result<(), ServerError> {
        use std::os::unix::fs::PermissionsExt;
        let create_all = |d: &Path| {
            std::fs::create_dir_all(d)
                .map_err(|e| failed(&format!("cannot create {}", d.display()), e))
        };
        let chmod = |d: &Path, mode: u32| {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode))
                .map_err(|e| failed(&format!("chmod {}", d.display()), e))
        };
        create_all(root.parent().unwrap_or(root))?;
        create_all(root)?;
        chmod(root, 0o755)?;
        self.chown(root)?;
        for d in dirs {
            if let Some(parent) = d.parent() {
                create_all(parent)?;
            }
            std::fs::create_dir(d)
                .map_err(|e| failed(&format!("cannot create {}", d.display()), e))?;
            chmod(d, mode)?;
            self.chown(d)?;
        }
        Ok(())
    }

    /// Whether this user can write `dir` (a 0700 directory above it stops it).
    pub(crate) fn can_write(&self, dir: &Path) -> bool {
        self.command(Path::new("/usr/bin/test"))
            .arg("-w")
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    }
}
