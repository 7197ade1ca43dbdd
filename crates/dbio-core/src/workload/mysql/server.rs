//! The throwaway MariaDB instance dbio runs a `mysql` workload against: its
//! binaries (`mariadbd`, `mariadb-install-db` from the package
//! mariadb-server), its directories under the target (`dbio-mysql/data`,
//! `dbio-mysql/run` for the unix socket and pid file, redo in
//! `dbio-mysql/redo` or `--redo-dir/dbio-mysql-redo`), the `my.cnf` dbio
//! writes from its options (networking off), `mariadb-install-db` once per
//! shape (page size and redo directory are fixed at install), and the
//! server started as the unprivileged `mysql` user in a process group of
//! its own. A [`Server`] stops it when dropped (SIGTERM, then SIGKILL), so
//! a run that fails or is interrupted leaves no server behind; how a killed
//! dbio's server is found and stopped later is `lifecycle`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

pub use super::binaries::Binaries;
use super::binaries::mysql_user;
use super::lifecycle::{self, remove_instance_files, stop_orphan};
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::server::Kind;
use crate::workload::db::user::ServerUser;
use crate::workload::db::{ServerError, failed, last_lines};
use crate::workload::db::{read_marker, write_marker};

/// The directory under the target that holds the instance.
pub const INSTANCE_SUBDIR: &str = "dbio-mysql";
/// The redo directory's name under `--redo-dir`.
pub const REDO_SUBDIR: &str = "dbio-mysql-redo";
/// The database dbio's tables live in.
pub const DATABASE: &str = "dbio";
/// The package named when the server is missing.
pub const PACKAGE: &str = "mariadb-server";
/// MariaDB in the shared lifecycle's messages and files.
const KIND: Kind = Kind {
    name: "MariaDB",
    user: "mysql",
    cgroup_prefix: "dbio-mysql",
    memory_option: "--mysql-memory",
};

/// Where an instance's files are.
#[derive(Clone, Debug)]
pub struct Paths {
    /// `TARGET/dbio-mysql`.
    pub root: PathBuf,
    pub data: PathBuf,
    pub redo: PathBuf,
    /// The socket's and the pid file's directory.
    pub run: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    pub fn new(target: &Path, redo_dir: Option<&Path>) -> Paths {
        let root = target.join(INSTANCE_SUBDIR);
        Paths {
            data: root.join("data"),
            redo: match redo_dir {
                Some(r) => r.join(REDO_SUBDIR),
                None => root.join("redo"),
            },
            run: root.join("run"),
            log: root.join("server.log"),
            root,
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.run.join("mysqld.sock")
    }

    pub fn pid_file(&self) -> PathBuf {
        self.run.join("mysqld.pid")
    }

    pub(super) fn marker(&self) -> PathBuf {
        self.root.join("instance.json")
    }

    fn cnf(&self) -> PathBuf {
        self.root.join("my.cnf")
    }
}

/// What an instance was installed for: reused only for the same.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Shape {
    pub(super) version: String,
    pub(super) page_size: u32,
    pub(super) redo: PathBuf,
}

/// The settings dbio gives the server, in order (`--mysql-set` last, so it wins).
pub fn settings(
    paths: &Paths,
    page_size: u32,
    flush_method: &str,
    buffer_pool: u64,
    sessions: u32,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut s: Vec<(String, String)> = [
        ("datadir", paths.data.display().to_string()),
        ("socket", paths.socket().display().to_string()),
        ("pid_file", paths.pid_file().display().to_string()),
        ("log_error", paths.log.display().to_string()),
        ("skip_networking", "1".into()),
        ("skip_name_resolve", "1".into()),
        (
            "innodb_log_group_home_dir",
            paths.redo.display().to_string(),
        ),
        ("innodb_page_size", page_size.to_string()),
        (
            "innodb_buffer_pool_size",
            buffer_pool.max(8 << 20).to_string(),
        ),
        ("innodb_flush_method", flush_method.into()),
        ("innodb_flush_log_at_trx_commit", "1".into()),
        ("innodb_doublewrite", "1".into()),
        ("innodb_file_per_table", "1".into()),
        ("innodb_log_file_size", (128u64 << 20).to_string()),
        ("innodb_buffer_pool_load_at_startup", "0".into()),
        ("innodb_buffer_pool_dump_at_shutdown", "0".into()),
        ("max_connections", (sessions + 10).to_string()),
        ("performance_schema", "1".into()),
        // File I/O waits are timed by default; InnoDB's mutexes and
        // rw-locks too, for the wait summaries (some overhead: turn it off
        // with --mysql-set performance_schema=0).
        ("performance_schema_instrument", "'wait/synch/%=ON'".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in extra {
        let norm = |n: &str| n.replace('-', "_");
        s.retain(|(n, _)| norm(n) != norm(k));
        s.push((k.clone(), v.clone()));
    }
    s
}

/// A running server dbio started; stopped when dropped.
pub struct Server {
    pub bin: Binaries,
    pub paths: Paths,
    user: ServerUser,
    child: Option<Child>,
    /// The instance was installed by an earlier run and reused.
    pub reused: bool,
    /// A server an earlier, killed dbio left running, which this run stopped.
    pub orphan_stopped: Option<u32>,
    /// The memory cgroup the server runs in (`--mysql-memory`).
    pub cgroup: Option<MemCgroup>,
}

impl Server {
    /// Installs (or reuses) the instance, writes `settings` to its my.cnf,
    /// starts the server and waits until it answers.
    pub fn start(
        bin: Binaries,
        paths: Paths,
        settings: &[(String, String)],
        page_size: u32,
        memory: Option<u64>,
    ) -> Result<Server, ServerError> {
        let user = mysql_user()?;
        let orphan_stopped =
            KIND.before_start(&paths.root, &paths.socket(), || stop_orphan(&paths))?;
        let mut server = Server {
            bin,
            paths,
            user,
            child: None,
            reused: false,
            orphan_stopped,
            cgroup: None,
        };
        server.reused = server.ensure_instance(settings, page_size)?;
        server.write_cnf(settings)?;
        let p = &server.paths;
        server.cgroup = KIND.memory_cgroup(&p.root, &p.data, &[&p.data, &p.redo], memory)?;
        if let Err(e) = server.launch() {
            server.stop();
            KIND.after_stop(&server.paths.root);
            return Err(e);
        }
        Ok(server)
    }

    /// Makes the directories and runs mariadb-install-db, unless an
    /// instance of the same shape is there. Returns whether it was reused.
    fn ensure_instance(
        &self,
        settings: &[(String, String)],
        page_size: u32,
    ) -> Result<bool, ServerError> {
        let p = &self.paths;
        let want = Shape {
            version: self.bin.version.clone(),
            page_size,
            redo: p.redo.clone(),
        };
        let have: Option<Shape> = read_marker(&p.marker());
        if have.as_ref() == Some(&want) && p.data.join("mysql").is_dir() {
            return Ok(true);
        }
        remove_instance_files(p, have.as_ref().map(|s| s.redo.as_path()));
        self.user
            .make_dirs(&p.root, &[&p.data, &p.run, &p.redo], 0o750)?;
        if !self.user.can_write(&p.data) {
            remove_instance_files(p, None);
            return Err(KIND.unreachable(&p.root));
        }
        self.write_cnf(settings)?;
        let out = self
            .user
            .command(&self.bin.install_db)
            .arg(format!("--defaults-file={}", p.cnf().display()))
            .args(["--auth-root-authentication-method=socket", "--skip-test-db"])
            .output()
            .map_err(|e| failed("cannot run mariadb-install-db", e))?;
        if !out.status.success() {
            // The bootstrap server logs to log_error, the installer to stdout.
            let text = format!(
                "{}\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                fs::read_to_string(&p.log).unwrap_or_default()
            );
            remove_instance_files(p, None);
            // The server's own errors, not the installer's advice after them.
            let errors: Vec<&str> = text.lines().filter(|l| l.contains("[ERROR]")).collect();
            let why = match errors.is_empty() {
                true => last_lines(&text, 3),
                false => last_lines(&errors.join("\n"), 3),
            };
            return Err(ServerError::Failed(format!(
                "MariaDB did not start: mariadb-install-db failed ({}): {why}",
                out.status
            )));
        }
        write_marker(&p.marker(), &want)?;
        Ok(false)
    }

    fn write_cnf(&self, settings: &[(String, String)]) -> Result<(), ServerError> {
        let mut text = String::from("# written by dbio for each run; do not edit\n[mariadbd]\n");
        for (k, v) in settings {
            text.push_str(&format!("{k} = {v}\n"));
        }
        let cnf = self.paths.cnf();
        fs::write(&cnf, text).map_err(|e| failed("write my.cnf", e))?;
        fs::set_permissions(&cnf, fs::Permissions::from_mode(0o644))
            .map_err(|e| failed("chmod my.cnf", e))
    }

    /// Starts mariadbd and waits until it accepts a connection; a server
    /// that exits (or never answers) fails with its log's last lines.
    fn launch(&mut self) -> Result<(), ServerError> {
        let _ = fs::remove_file(&self.paths.log);
        lifecycle::remove_leftovers(&self.paths);
        let mut cmd = match self.cgroup.clone() {
            Some(cg) => self.user.command_in(&self.bin.mariadbd, cg),
            None => self.user.command(&self.bin.mariadbd),
        };
        let child = cmd
            .arg(format!("--defaults-file={}", self.paths.cnf().display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed(&format!("cannot run {}", self.bin.mariadbd.display()), e))?;
        self.child = Some(child);
        let t0 = Instant::now();
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                self.child = None;
                return Err(self.start_failed(&format!("it exited ({status})")));
            }
            if self.paths.socket().exists() && self.connect(None).is_ok() {
                return Ok(());
            }
            if t0.elapsed() > Duration::from_secs(120) {
                return Err(self.start_failed("it did not answer within 120 s"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn start_failed(&self, why: &str) -> ServerError {
        KIND.did_not_start(Some(why), &self.paths.log, "")
    }

    /// Connection options over the private socket, as root (unix_socket
    /// authentication: dbio runs as root), in database `db`.
    pub fn opts(&self, db: Option<&str>) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .socket(Some(self.paths.socket().display().to_string()))
            .prefer_socket(true)
            .user(Some("root"))
            .db_name(db)
            .into()
    }

    /// Where the workload connects on this server.
    pub fn endpoint(&self) -> super::endpoint::Endpoint {
        super::endpoint::Endpoint::new(self.opts(None), true)
    }

    pub fn connect(&self, db: Option<&str>) -> Result<mysql::Conn, ServerError> {
        mysql::Conn::new(self.opts(db)).map_err(|e| failed("cannot connect to MariaDB", e))
    }

    /// Stops the server (SIGTERM: InnoDB shuts down cleanly, then SIGKILL);
    /// idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            lifecycle::stop_child(&mut child, &self.paths);
            KIND.after_stop(&self.paths.root);
        }
    }

    /// Whether the server is still running (not killed under the run).
    pub fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_set_overrides_dbio_settings_and_keeps_networking_off() {
        let p = Paths::new(Path::new("/srv/t"), Some(Path::new("/log")));
        let s = settings(
            &p,
            16384,
            "O_DIRECT",
            64 << 20,
            4,
            &[
                ("innodb-doublewrite".into(), "0".into()),
                ("innodb_io_capacity".into(), "2000".into()),
            ],
        );
        let get = |k: &str| {
            s.iter()
                .filter(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("innodb_doublewrite"), Vec::<&str>::new());
        assert_eq!(get("innodb-doublewrite"), ["0"]);
        assert_eq!(get("innodb_io_capacity"), ["2000"]);
        assert_eq!(get("skip_networking"), ["1"]);
        assert_eq!(get("innodb_flush_method"), ["O_DIRECT"]);
        assert_eq!(get("innodb_page_size"), ["16384"]);
        assert_eq!(get("innodb_flush_log_at_trx_commit"), ["1"]);
        assert_eq!(get("innodb_log_group_home_dir"), ["/log/dbio-mysql-redo"]);
        assert_eq!(get("socket"), ["/srv/t/dbio-mysql/run/mysqld.sock"]);
        assert_eq!(get("max_connections"), ["14"]);
    }
}
