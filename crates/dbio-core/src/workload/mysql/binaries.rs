//! MariaDB's binaries — `mariadbd` and `mariadb-install-db` where Debian's
//! mariadb-server puts them, or in `--mysql-bin DIR` — and the `mysql` user
//! the server runs as (commands as that user are `db::user`'s).

use std::path::{Path, PathBuf};

use super::server::PACKAGE;
use crate::workload::db::user::ServerUser;
use crate::workload::db::{ServerError, failed};

/// Where Debian puts the server and its installer.
const MARIADBD: &str = "/usr/sbin/mariadbd";
const INSTALL_DB: &str = "/usr/bin/mariadb-install-db";

/// MariaDB's server and installer, and the server's version.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub mariadbd: PathBuf,
    pub install_db: PathBuf,
    /// e.g. "10.11.19-MariaDB-0+deb12u1".
    pub version: String,
}

impl Binaries {
    /// Debian's (`/usr/sbin/mariadbd`, `/usr/bin/mariadb-install-db`), or
    /// both in `dir` (`--mysql-bin`).
    pub fn find(dir: Option<&Path>) -> Result<Binaries, ServerError> {
        let (mariadbd, install_db) = match dir {
            Some(d) => (d.join("mariadbd"), d.join("mariadb-install-db")),
            None => (PathBuf::from(MARIADBD), PathBuf::from(INSTALL_DB)),
        };
        for b in [&mariadbd, &install_db] {
            if !b.is_file() {
                return Err(ServerError::Usage(match dir {
                    None => format!(
                        "--workload mysql needs MariaDB: no {} here; install the package {PACKAGE} (apt-get install {PACKAGE}) or give --mysql-bin DIR",
                        b.display()
                    ),
                    Some(d) => format!(
                        "--mysql-bin {}: no {} there; give the directory holding mariadbd and mariadb-install-db, or install the package {PACKAGE}",
                        d.display(),
                        b.file_name().unwrap_or_default().to_string_lossy()
                    ),
                }));
            }
        }
        let out = std::process::Command::new(&mariadbd)
            .arg("--version")
            .output()
            .map_err(|e| failed(&format!("cannot run {}", mariadbd.display()), e))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let version = text
            .split_whitespace()
            .skip_while(|w| *w != "Ver")
            .nth(1)
            .map(str::to_string)
            .ok_or_else(|| {
                ServerError::Failed(format!("{} --version said {text:?}", mariadbd.display()))
            })?;
        Ok(Binaries {
            mariadbd,
            install_db,
            version,
        })
    }
}

/// The `mysql` user the package creates (MariaDB refuses to run as root).
pub fn mysql_user() -> Result<ServerUser, ServerError> {
    ServerUser::lookup("mysql", PACKAGE, "--workload mysql runs MariaDB")
}
