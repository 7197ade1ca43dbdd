//! PostgreSQL's binaries (`--pg-bin`, or the highest
//! `/usr/lib/postgresql/N/bin`) and the unprivileged user the server runs
//! as (`postgres`; commands as that user are `db::user`'s).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::server::{PACKAGE, ServerError, failed};
use crate::workload::db::user::ServerUser;

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
                check_bin_dir(d)?;
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

/// Refuses a `--pg-bin` without PostgreSQL's binaries, or one initdb
/// would hand to a shell (checked with the options, before anything is made).
pub fn check_bin_dir(d: &Path) -> Result<(), ServerError> {
    if !d.join("postgres").is_file() || !d.join("initdb").is_file() {
        return Err(ServerError::Usage(format!(
            "--pg-bin {}: no postgres and initdb there; give the directory holding PostgreSQL's binaries (e.g. /usr/lib/postgresql/15/bin)",
            d.display()
        )));
    }
    check_no_shell_text(d)
}

/// Characters a `/bin/sh` line would read in a double-quoted path.
const SHELL_SPECIAL: &[char] = &['"', '$', '`', '\\', '\n'];

/// Refuses a `--pg-bin` that initdb cannot use safely: initdb runs the
/// `postgres` binary beside it through `popen` (a `/bin/sh` line) with the
/// binary's path in double quotes, where `$`, a backtick, `"` or `\` would
/// be read by the shell.
fn check_no_shell_text(dir: &Path) -> Result<(), ServerError> {
    let bad = match dir.to_str() {
        Some(s) => s.contains(SHELL_SPECIAL),
        None => true,
    };
    if bad {
        return Err(ServerError::Usage(format!(
            "--pg-bin {:?}: initdb passes this path to /bin/sh, which would read its $, `, \", \\ or line break (or bytes that are not UTF-8); give PostgreSQL's binaries in a directory without them",
            dir
        )));
    }
    Ok(())
}

/// The `postgres` user Debian's package creates (PostgreSQL refuses root).
pub(crate) fn pg_user() -> Result<ServerUser, ServerError> {
    ServerUser::lookup("postgres", PACKAGE, "--workload pg runs PostgreSQL")
}
