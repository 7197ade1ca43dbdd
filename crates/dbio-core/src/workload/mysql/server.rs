//! The throwaway MariaDB instance dbio runs a `mysql` workload against:
//! its directories under the target (`dbio-mysql/data`, `dbio-mysql/run`
//! for the pid file and, where the path allows, the unix socket; redo in
//! `dbio-mysql/redo` or `--redo-dir/dbio-mysql-redo`), its system tables
//! made once per shape (page size and redo directory are fixed at install)
//! by `mariadbd --bootstrap` (`bootstrap`), and the server started as the
//! unprivileged `mysql` user in a process group of its own, every setting
//! an argument of its command line (`args`: no shell, no option file). A
//! [`Server`] stops it when dropped (SIGTERM, then SIGKILL), so a run that
//! fails or is interrupted leaves no server behind; how a killed dbio's
//! server is found and stopped later is `lifecycle`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use rustix::process::Signal;

use super::args::command_line;
pub use super::binaries::Binaries;
use super::binaries::mysql_user;
use super::bootstrap;
use super::lifecycle::{self, remove_instance_files, stop_orphan};
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::procs::cgroup_name;
use crate::workload::db::server::{Kind, Probe, Start, make_socket_dir, wait_up};
use crate::workload::db::user::ServerUser;
use crate::workload::db::{PRIVATE_SOCKET_PARENT, SOCKET_PATH_MAX, ServerError, cause, failed};
use crate::workload::db::{read_marker, write_marker};

/// The directory under the target that holds the instance.
pub const INSTANCE_SUBDIR: &str = "dbio-mysql";
/// The redo directory's name under `--redo-dir`.
pub const REDO_SUBDIR: &str = "dbio-mysql-redo";
/// The database dbio's tables live in.
pub(crate) const DATABASE: &str = "dbio";
/// The package named when the server is missing.
pub(crate) const PACKAGE: &str = "mariadb-server";
/// MariaDB in the shared lifecycle's messages and files; stopped with
/// SIGTERM (InnoDB shuts down cleanly, flushing dirty pages: up to 120 s).
pub(super) const KIND: Kind = Kind {
    name: "MariaDB",
    user: "mysql",
    cgroup_prefix: "dbio-mysql",
    memory_option: "--mysql-memory",
    shutdown: Signal::TERM,
    shutdown_grace: Duration::from_secs(120),
};
/// How long a start may take until the server answers.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Where an instance's files are (absolute: the server runs in `/`).
#[derive(Clone, Debug)]
pub struct Paths {
    /// `TARGET/dbio-mysql`.
    pub root: PathBuf,
    pub data: PathBuf,
    pub redo: PathBuf,
    /// The pid file's directory, and the socket's where it fits.
    pub run: PathBuf,
    /// The socket's directory: `run`, or dbio's own under [`PRIVATE_SOCKET_PARENT`].
    pub socket_dir: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    pub fn new(target: &Path, redo_dir: Option<&Path>) -> Paths {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let root = abs(target).join(INSTANCE_SUBDIR);
        let run = root.join("run");
        let under_target = run.join("mysqld.sock");
        let socket_dir = match under_target.to_str() {
            Some(s) if s.len() <= SOCKET_PATH_MAX => run.clone(),
            // A stable name per instance (a later run or `dbio clean` finds it).
            _ => Path::new(PRIVATE_SOCKET_PARENT).join(cgroup_name("mysql", &root)),
        };
        Paths {
            data: root.join("data"),
            redo: match redo_dir {
                Some(r) => abs(r).join(REDO_SUBDIR),
                None => root.join("redo"),
            },
            run,
            socket_dir,
            log: root.join("server.log"),
            root,
        }
    }

    /// The unix socket; its path is UTF-8 and fits a socket address.
    pub fn socket(&self) -> PathBuf {
        self.socket_dir.join("mysqld.sock")
    }

    /// Whether the socket is in a directory of dbio's own, not under the target.
    pub(crate) fn private_socket_dir(&self) -> bool {
        self.socket_dir != self.run
    }

    pub(crate) fn pid_file(&self) -> PathBuf {
        self.run.join("mysqld.pid")
    }

    pub(super) fn marker(&self) -> PathBuf {
        self.root.join("instance.json")
    }
}

/// What an instance was installed for: reused only for the same.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Shape {
    pub(super) version: String,
    pub(super) page_size: u32,
    pub(super) redo: PathBuf,
}

/// The settings dbio gives the server beside the paths it places
/// (`args::PLACED`), in order (`--mysql-set` last, so it wins).
pub fn settings(
    page_size: u32,
    flush_method: &str,
    buffer_pool: u64,
    sessions: u32,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut s: Vec<(String, String)> = [
        ("skip_networking", "1".into()),
        ("skip_name_resolve", "1".into()),
        ("innodb_page_size", page_size.to_string()),
        (
            "innodb_buffer_pool_size",
            buffer_pool.max(min_buffer_pool(page_size)).to_string(),
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
        ("performance_schema_instrument", "wait/synch/%=ON".into()),
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

/// MariaDB 10.11's defaults of the settings [`settings`] gives it.
pub(crate) const STOCK: &crate::workload::db::departures::Stock = &[
    ("skip_networking", "0"),
    ("skip_name_resolve", "0"),
    ("innodb_page_size", "16384"),
    ("innodb_buffer_pool_size", "134217728"),
    ("innodb_flush_method", "O_DIRECT"),
    ("innodb_flush_log_at_trx_commit", "1"),
    ("innodb_doublewrite", "1"),
    ("innodb_file_per_table", "1"),
    ("innodb_log_file_size", "100663296"),
    ("innodb_buffer_pool_load_at_startup", "1"),
    ("innodb_buffer_pool_dump_at_shutdown", "1"),
    ("max_connections", "151"),
    ("performance_schema", "0"),
    ("performance_schema_instrument", ""),
];

/// What dbio changes from a stock MariaDB: the [`settings`] it gives the
/// server (none on an existing server).
pub fn departures(
    settings: &[(String, String)],
) -> Vec<crate::workload::db::departures::Departure> {
    let norm: Vec<(String, String)> = settings
        .iter()
        .map(|(k, v)| (k.replace('-', "_"), v.clone()))
        .collect();
    crate::workload::db::departures::departures(&norm, STOCK)
}

/// The smallest buffer pool dbio gives: 8 MiB, or what InnoDB needs for
/// `page` (it refuses less: 6 MiB for 16k pages, 11 for 32k, 21 for 64k).
pub(crate) fn min_buffer_pool(page: u32) -> u64 {
    let needs = (u64::from(page) * 336).div_ceil(1 << 20) << 20;
    needs.max(8 << 20)
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
    /// Installs (or reuses) the instance, starts the server with
    /// `settings` and waits until it answers.
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
        let p = &server.paths;
        server.cgroup = KIND.memory_cgroup(&p.root, &p.data, &[&p.data, &p.redo], memory)?;
        if let Err(e) = server.launch(settings) {
            server.stop();
            KIND.after_stop(&server.paths.root);
            lifecycle::remove_leftovers(&server.paths);
            return Err(e);
        }
        Ok(server)
    }

    /// Makes the directories and the system tables (`bootstrap`), unless
    /// an instance of the same shape is there. Returns whether it was reused.
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
        let args = command_line(p, settings);
        if let Err(e) = bootstrap::run(&self.user, &self.bin, &args, &p.log, &p.data) {
            remove_instance_files(p, None);
            return Err(e);
        }
        write_marker(&p.marker(), &want)?;
        Ok(false)
    }

    /// Starts mariadbd with `settings` and waits until it accepts a
    /// connection; a server that exits (or never answers) fails with the
    /// cause its log names, or the log's last lines.
    fn launch(&mut self, settings: &[(String, String)]) -> Result<(), ServerError> {
        let _ = fs::remove_file(&self.paths.log);
        lifecycle::remove_leftovers(&self.paths);
        if self.paths.private_socket_dir() {
            make_socket_dir(&self.paths.socket_dir, &self.user)?;
        }
        let mut cmd = match self.cgroup.clone() {
            Some(cg) => self.user.command_in(&self.bin.mariadbd, cg),
            None => self.user.command(&self.bin.mariadbd),
        };
        let mut child = cmd
            .args(command_line(&self.paths, settings))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| failed(&format!("cannot run {}", self.bin.mariadbd.display()), e))?;
        let up = wait_up(&mut child, START_TIMEOUT, || {
            if self.paths.socket().exists() && self.connect(None).is_ok() {
                Probe::Up
            } else if bootstrap::waits_for_space(&self.paths.log) {
                // It waits for ever and may not hear SIGTERM: killed.
                Probe::Stuck("it waited for disk space and was killed")
            } else {
                Probe::Waiting
            }
        });
        let why = match up {
            Start::Up => {
                self.child = Some(child);
                return Ok(());
            }
            Start::Exited(status) => format!("it exited ({status})"),
            Start::Stuck(why) => why.to_string(),
            Start::TimedOut(t) => {
                // Stopped by the caller.
                self.child = Some(child);
                format!("it did not answer within {} s", t.as_secs())
            }
        };
        Err(self.start_failed(&why))
    }

    /// A start that failed: the OS error its log names, on the filesystem
    /// of the data, or `why` and the log's last lines.
    fn start_failed(&self, why: &str) -> ServerError {
        let log = fs::read(&self.paths.log).unwrap_or_default();
        match cause::describe(&String::from_utf8_lossy(&log), &self.paths.data) {
            Some(c) => ServerError::Failed(format!(
                "MariaDB did not start: {why}: {c} (server log {})",
                self.paths.log.display()
            )),
            None => KIND.did_not_start(Some(why), &self.paths.log, ""),
        }
    }

    /// The OS error the server's log names (a full filesystem, ...), on the
    /// filesystem of the data, if any: why a statement or a session failed.
    pub fn log_cause(&self) -> Option<String> {
        let log = fs::read(&self.paths.log).ok()?;
        cause::describe(&String::from_utf8_lossy(&log), &self.paths.data)
    }

    /// Connection options over the private socket, as root (unix_socket
    /// authentication: dbio runs as root), in database `db`.
    pub fn opts(&self, db: Option<&str>) -> mysql::Opts {
        mysql::OptsBuilder::new()
            .socket(Some(self.paths.socket().to_string_lossy().into_owned()))
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
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn every_setting_dbio_gives_has_its_stock_default() {
        let s = settings(16384, "O_DIRECT", 64 << 20, 4, &[]);
        for (name, _) in &s {
            assert!(
                STOCK.iter().any(|(n, _)| n == name),
                "{name} has no stock default"
            );
        }
        let d: Vec<String> = departures(&s).into_iter().map(|d| d.name).collect();
        for want in [
            "skip_networking",
            "innodb_buffer_pool_size",
            "innodb_log_file_size",
            "performance_schema",
        ] {
            assert!(d.iter().any(|n| n == want), "{want} missing from {d:?}");
        }
        for same in [
            "innodb_page_size",
            "innodb_doublewrite",
            "innodb_flush_method",
            "innodb_flush_log_at_trx_commit",
        ] {
            assert!(!d.iter().any(|n| n == same), "{same} is the default: {d:?}");
        }
        let set = departures(&[("innodb-io-capacity".into(), "2000".into())]);
        assert_eq!(set[0].name, "innodb_io_capacity");
        assert_eq!(set[0].default, None);
    }

    #[test]
    fn mysql_set_overrides_dbio_settings_and_keeps_networking_off() {
        let s = settings(
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
        assert_eq!(get("max_connections"), ["14"]);
        assert_eq!(get("performance_schema_instrument"), ["wait/synch/%=ON"]);
    }

    #[test]
    fn the_buffer_pool_is_at_least_what_innodb_needs_for_the_page() {
        assert_eq!(min_buffer_pool(4096), 8 << 20);
        assert_eq!(min_buffer_pool(16384), 8 << 20);
        assert_eq!(min_buffer_pool(32768), 11 << 20);
        assert_eq!(min_buffer_pool(65536), 21 << 20);
        let s = settings(65536, "O_DIRECT", 16 << 20, 1, &[]);
        assert!(s.contains(&("innodb_buffer_pool_size".into(), (21u64 << 20).to_string())));
    }

    #[test]
    fn the_socket_is_under_the_target_where_it_fits_else_in_dbios_own_directory() {
        let p = Paths::new(Path::new("/srv/t"), Some(Path::new("/log")));
        assert_eq!(p.socket(), Path::new("/srv/t/dbio-mysql/run/mysqld.sock"));
        assert_eq!(p.redo, Path::new("/log/dbio-mysql-redo"));
        assert!(!p.private_socket_dir());
        let deep = format!("/srv/{}", "d".repeat(90));
        let non_utf8 = OsStr::from_bytes(b"/srv/\xff");
        for t in [Path::new(&deep), Path::new(non_utf8)] {
            let p = Paths::new(t, None);
            assert!(p.private_socket_dir(), "{}", t.display());
            let s = p.socket();
            assert!(
                s.starts_with(PRIVATE_SOCKET_PARENT) && s.to_str().is_some(),
                "{}",
                s.display()
            );
            assert!(s.as_os_str().len() <= SOCKET_PATH_MAX);
            assert_eq!(Paths::new(t, None).socket(), s, "the same every time");
            assert_eq!(p.pid_file(), p.root.join("run/mysqld.pid"));
        }
        assert_ne!(
            Paths::new(Path::new(&deep), None).socket(),
            Paths::new(Path::new(non_utf8), None).socket()
        );
        let rel = Paths::new(Path::new("-t"), None);
        assert!(rel.root.is_absolute() && rel.root.ends_with("-t/dbio-mysql"));
    }
}
