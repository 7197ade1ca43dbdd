//! MariaDB's server binary — `mariadbd` where Debian's mariadb-server puts
//! it, or in `--mysql-bin DIR` — the SQL scripts its bootstrap reads (the
//! system tables, from the package's share directory), and the `mysql` user
//! the server runs as (commands as that user are `db::user`'s).

use std::path::{Path, PathBuf};

use super::bootstrap::SCRIPTS;
use super::server::PACKAGE;
use crate::workload::db::user::ServerUser;
use crate::workload::db::{ServerError, failed};

/// Where Debian puts the server and the SQL of its system tables.
const MARIADBD: &str = "/usr/sbin/mariadbd";
const SHARE: [&str; 2] = ["/usr/share/mysql", "/usr/share/mariadb"];

/// MariaDB's server, the directory of its bootstrap SQL, and its version.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub mariadbd: PathBuf,
    /// The directory holding `mysql_system_tables.sql` and the other
    /// scripts of [`SCRIPTS`].
    pub share: PathBuf,
    /// e.g. "10.11.19-MariaDB-0+deb12u1".
    pub version: String,
}

impl Binaries {
    /// Debian's (`/usr/sbin/mariadbd`, `/usr/share/mysql`), or `mariadbd`
    /// in `dir` (`--mysql-bin`) with the scripts in `dir/../share/mysql`
    /// (or `share/mariadb`, `share`) as a MariaDB tree has them.
    pub fn find(dir: Option<&Path>) -> Result<Binaries, ServerError> {
        let mariadbd = match dir {
            Some(d) => d.join("mariadbd"),
            None => PathBuf::from(MARIADBD),
        };
        if !mariadbd.is_file() {
            return Err(missing(dir, &mariadbd));
        }
        let shares: Vec<PathBuf> = match dir {
            Some(d) => ["share/mysql", "share/mariadb", "share"]
                .iter()
                .map(|s| d.join("..").join(s))
                .collect(),
            None => SHARE.iter().map(PathBuf::from).collect(),
        };
        let share = shares
            .iter()
            .find(|s| SCRIPTS.iter().all(|f| s.join(f).is_file()))
            .cloned()
            .ok_or_else(|| missing(dir, &shares[0].join(SCRIPTS[0])))?;
        let version = version(&mariadbd)?;
        Ok(Binaries {
            mariadbd,
            share,
            version,
        })
    }
}

/// The refusal of a MariaDB without `what` (its server or its scripts).
fn missing(dir: Option<&Path>, what: &Path) -> ServerError {
    ServerError::Usage(match dir {
        None => format!(
            "--workload mysql needs MariaDB: no {} here; install the package {PACKAGE} (apt-get install {PACKAGE}) or give --mysql-bin DIR",
            what.display()
        ),
        Some(d) => format!(
            "--mysql-bin {}: no {} there; give the bin directory of a MariaDB tree (mariadbd, with its SQL scripts in ../share/mysql), or install the package {PACKAGE}",
            d.display(),
            what.strip_prefix(d).unwrap_or(what).display()
        ),
    })
}

/// "10.11.19-MariaDB-0+deb12u1", from `mariadbd --version`.
fn version(mariadbd: &Path) -> Result<String, ServerError> {
    let out = std::process::Command::new(mariadbd)
        .arg("--version")
        .output()
        .map_err(|e| failed(&format!("cannot run {}", mariadbd.display()), e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "Ver")
        .nth(1)
        .map(str::to_string)
        .ok_or_else(|| {
            ServerError::Failed(format!("{} --version said {text:?}", mariadbd.display()))
        })
}

/// The `mysql` user the package creates (MariaDB refuses to run as root).
pub(crate) fn mysql_user() -> Result<ServerUser, ServerError> {
    ServerUser::lookup("mysql", PACKAGE, "--workload mysql runs MariaDB")
}
