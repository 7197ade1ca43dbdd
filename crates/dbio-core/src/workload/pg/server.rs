//! The throwaway PostgreSQL cluster dbio runs a `pg` workload against: its
//! binaries (`/usr/lib/postgresql/*/bin`, highest version, or `--pg-bin`),
//! its directories under the target (`dbio-pg/data`, `dbio-pg/run` for the
//! unix socket — or a short directory of dbio's own under `/run/dbio` when
//! that path is too long for a socket or holds a control character —, WAL
//! in `dbio-pg/wal` or `--redo-dir/dbio-pg-wal`), `initdb
//! --data-checksums` (arguments only, no shell), the settings dbio writes
//! to `dbio.conf` (included from postgresql.conf, quoted by its own rules:
//! `conf`), and start/stop as the unprivileged `postgres` user
//! (`binaries`, `postmaster`: no pg_ctl, no shell). How it ends in every
//! case is `lifecycle`.
//!
//! A [`Server`] stops its postmaster when dropped (SIGINT, then SIGKILL),
//! so a run that fails or is interrupted leaves no server
//! behind. A postmaster a killed dbio left is found through `postmaster.pid`
//! and stopped by the next run or `dbio clean`. The postmaster runs in a
//! process group of its own: a Ctrl-C on dbio's terminal does not reach it,
//! dbio stops it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use rustix::process::Signal;

pub use super::binaries::Binaries;
use super::binaries::pg_user;
use super::conf;
pub use super::lifecycle::clean;
use super::lifecycle::{
    make_socket_dir, remove_cluster_files, remove_socket_dir, remove_stale_locks, stop_data_dir,
    stop_orphan,
};
use super::postmaster::{self, NotUp};
use crate::workload::db::cause;
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::procs::cgroup_name;
use crate::workload::db::server::Kind;
use crate::workload::db::user::ServerUser;
use crate::workload::db::{PRIVATE_SOCKET_PARENT, SOCKET_PATH_MAX, read_marker, write_marker};
pub use crate::workload::db::{ServerError, failed, last_lines};

/// The directory under the target that holds the cluster.
pub const CLUSTER_SUBDIR: &str = "dbio-pg";
/// The WAL directory's name under `--redo-dir`.
pub(crate) const WAL_SUBDIR: &str = "dbio-pg-wal";
/// The database dbio's tables live in (the sampler uses `postgres`, so its
/// own queries do not count in the workload's database statistics).
pub(crate) const DATABASE: &str = "dbio";
/// The port: only the socket's file name, since there is no TCP.
pub(crate) const PORT: u16 = 5432;
/// The package named when no binaries are found.
pub(crate) const PACKAGE: &str = "postgresql-15";
/// PostgreSQL in the shared lifecycle's messages and files; stopped with
/// SIGINT (fast shutdown: sessions ended, a checkpoint), up to a minute.
pub(super) const KIND: Kind = Kind {
    name: "PostgreSQL",
    user: "postgres",
    cgroup_prefix: "dbio-pg",
    memory_option: "--pg-memory",
    shutdown: Signal::INT,
    shutdown_grace: Duration::from_secs(60),
};

/// Where a cluster's files are.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Paths {
    /// `TARGET/dbio-pg`.
    pub root: PathBuf,
    pub data: PathBuf,
    pub wal: PathBuf,
    /// The unix socket's directory: `dbio-pg/run`, or dbio's own short one
    /// (`/run/dbio/pg-HASH`, see [`PRIVATE_SOCKET_PARENT`]).
    pub socket_dir: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    pub fn new(target: &Path, redo_dir: Option<&Path>) -> Paths {
        let root = target.join(CLUSTER_SUBDIR);
        let data = root.join("data");
        let run = root.join("run");
        let fits = run.join(format!(".s.PGSQL.{PORT}")).as_os_str().len() <= SOCKET_PATH_MAX;
        let plain = run.to_str().is_some_and(|s| !s.contains(char::is_control));
        let socket_dir = match fits && plain {
            true => run,
            false => Path::new(PRIVATE_SOCKET_PARENT).join(cgroup_name("pg", &data)),
        };
        Paths {
            wal: match redo_dir {
                Some(r) => r.join(WAL_SUBDIR),
                None => root.join("wal"),
            },
            socket_dir,
            log: root.join("server.log"),
            data,
            root,
        }
    }

    /// The directory a server's message is about: the WAL's when it names
    /// `pg_wal` or the WAL directory, else the data directory.
    pub fn named_in(&self, text: &str) -> &Path {
        let wal = self.wal.to_string_lossy();
        // The line naming an operating-system error, if one does.
        let text = text
            .lines()
            .find(|l| cause::find(l).is_some())
            .unwrap_or(text);
        match text.contains("pg_wal") || text.contains(wal.as_ref()) {
            true => &self.wal,
            false => &self.data,
        }
    }

    /// The socket's path.
    pub fn socket(&self) -> PathBuf {
        self.socket_dir.join(format!(".s.PGSQL.{PORT}"))
    }

    /// Whether the socket is in a directory of dbio's own, not under the target.
    pub(crate) fn private_socket_dir(&self) -> bool {
        !self.socket_dir.starts_with(&self.root)
    }

    pub(super) fn marker(&self) -> PathBuf {
        self.root.join("cluster.json")
    }

    fn conf(&self) -> PathBuf {
        self.data.join("dbio.conf")
    }
}

/// What a cluster was made for: a cluster is reused only for the same.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Shape {
    pub(super) major: u32,
    pub(super) wal: PathBuf,
}

/// The settings dbio gives the server, in order (`--pg-set` last, so it
/// wins). The socket directory is one element of the server's comma list
/// (double-quoted: `conf::socket_dir_element`); `wal` is the WAL's size
/// settings (`space::Estimate::wal_settings`).
pub fn settings(
    paths: &Paths,
    shared_buffers: u64,
    sessions: u32,
    wal: &[(String, String)],
    extra: &[(String, String)],
) -> Result<Vec<(String, String)>, ServerError> {
    let socket_dir = conf::socket_dir_element(&paths.socket_dir).map_err(|e| {
        ServerError::Usage(format!(
            "--target: the socket directory {:?} {e}; give another --target",
            paths.socket_dir
        ))
    })?;
    let mut s: Vec<(String, String)> = [
        ("listen_addresses", String::new()),
        ("unix_socket_directories", socket_dir),
        ("port", PORT.to_string()),
        ("max_connections", (sessions + 10).to_string()),
        (
            "shared_buffers",
            format!("{}kB", (shared_buffers / 1024).max(128)),
        ),
        ("huge_pages", "off".into()),
        ("synchronous_commit", "on".into()),
        ("fsync", "on".into()),
        ("full_page_writes", "on".into()),
        ("track_io_timing", "on".into()),
        ("track_wal_io_timing", "on".into()),
        ("checkpoint_timeout", "5min".into()),
        ("logging_collector", "off".into()),
        ("log_checkpoints", "on".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .chain(wal.iter().cloned())
    .collect();
    for (k, v) in extra {
        s.retain(|(n, _)| n != k);
        s.push((k.clone(), v.clone()));
    }
    Ok(s)
}

/// PostgreSQL 15's defaults of the settings [`settings`] writes (the
/// documented ones; `unix_socket_directories` as Debian builds it).
pub(crate) const STOCK: &crate::workload::db::departures::Stock = &[
    ("listen_addresses", "localhost"),
    ("unix_socket_directories", "/var/run/postgresql"),
    ("port", "5432"),
    ("max_connections", "100"),
    ("shared_buffers", "128MB"),
    ("huge_pages", "try"),
    ("synchronous_commit", "on"),
    ("fsync", "on"),
    ("full_page_writes", "on"),
    ("track_io_timing", "off"),
    ("track_wal_io_timing", "off"),
    ("checkpoint_timeout", "5min"),
    ("logging_collector", "off"),
    ("log_checkpoints", "on"),
    ("max_wal_size", "1GB"),
    ("min_wal_size", "80MB"),
    ("data_checksums", "off"),
    ("autovacuum_enabled", "on"),
];

/// What dbio changes from a stock PostgreSQL: the `settings` it writes
/// (none on an existing server), checksums when it made the cluster
/// (`initdb --data-checksums`), and its tables' autovacuum.
pub fn departures(
    settings: &[(String, String)],
    own_cluster: bool,
    autovacuum: bool,
) -> Vec<crate::workload::db::departures::Departure> {
    let mut all = settings.to_vec();
    if own_cluster {
        all.push(("data_checksums".into(), "on".into()));
    }
    let on_off = if autovacuum { "on" } else { "off" };
    all.push(("autovacuum_enabled".into(), on_off.into()));
    crate::workload::db::departures::departures(&all, STOCK)
}

/// A running server dbio started; stopped when dropped.
pub struct Server {
    pub bin: Binaries,
    pub paths: Paths,
    user: ServerUser,
    /// The postmaster dbio started (reaped once stopped); None once stopped.
    postmaster: Option<Child>,
    /// The cluster was made by an earlier run and reused.
    pub reused: bool,
    /// A postmaster an earlier, killed dbio left running, which this run stopped.
    pub orphan_stopped: Option<u32>,
    /// The memory cgroup the server runs in (`--pg-memory`).
    pub cgroup: Option<MemCgroup>,
}

impl Server {
    /// Makes (or reuses) the cluster, writes `settings`, starts the server
    /// and checks that it answers.
    pub fn start(
        bin: Binaries,
        paths: Paths,
        settings: &[(String, String)],
        memory: Option<u64>,
    ) -> Result<Server, ServerError> {
        let user = pg_user()?;
        let orphan_stopped = KIND.before_start(&paths.root, &paths.socket(), || {
            stop_orphan(&bin, &paths, &user)
        })?;
        let mut server = Server {
            bin,
            paths,
            user,
            postmaster: None,
            reused: false,
            orphan_stopped,
            cgroup: None,
        };
        server.reused = server.ensure_cluster()?;
        server.write_conf(settings)?;
        let p = &server.paths;
        server.cgroup = KIND.memory_cgroup(&p.root, &p.data, &[&p.data, &p.wal], memory)?;
        match server.start_postmaster() {
            Ok(child) => server.postmaster = Some(child),
            Err(e) => {
                KIND.after_stop(&server.paths.root);
                remove_socket_dir(&server.paths);
                return Err(e);
            }
        }
        Ok(server)
    }

    /// Makes the directories and runs initdb, unless a cluster of the same
    /// shape is there. Returns whether it was reused.
    fn ensure_cluster(&self) -> Result<bool, ServerError> {
        let p = &self.paths;
        let want = Shape {
            major: self.bin.major,
            wal: p.wal.clone(),
        };
        let have: Option<Shape> = read_marker(&p.marker());
        if have.as_ref() == Some(&want) && p.data.join("PG_VERSION").is_file() {
            return Ok(true);
        }
        // Another shape (or a half-made cluster): start again.
        remove_cluster_files(p, have.as_ref().map(|s| s.wal.as_path()));
        let mut dirs = vec![p.data.as_path(), p.wal.as_path()];
        if !p.private_socket_dir() {
            dirs.push(&p.socket_dir);
        }
        self.user.make_dirs(&p.root, &dirs, 0o700)?;
        self.check_reachable()?;
        let out = self
            .user
            .command(&self.bin.dir.join("initdb"))
            .arg("--data-checksums")
            .arg("--pgdata")
            .arg(&p.data)
            .arg("--waldir")
            .arg(&p.wal)
            .args([
                "--username=postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-instructions",
            ])
            .output()
            .map_err(|e| failed("cannot run initdb", e))?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr);
            let err = initdb_failed(&out.status.to_string(), &text, p);
            remove_cluster_files(p, None);
            return Err(err);
        }
        let conf = p.data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf).map_err(|e| failed("read postgresql.conf", e))?;
        text.push_str("\n# dbio's settings for this run\ninclude_if_exists = 'dbio.conf'\n");
        fs::write(&conf, text).map_err(|e| failed("write postgresql.conf", e))?;
        write_marker(&p.marker(), &want)?;
        Ok(false)
    }

    /// The postgres user must reach the cluster through the target's
    /// parents (a 0700 directory on the way stops it).
    fn check_reachable(&self) -> Result<(), ServerError> {
        if !self.user.can_write(&self.paths.data) {
            remove_cluster_files(&self.paths, None);
            return Err(KIND.unreachable(&self.paths.root));
        }
        Ok(())
    }

    fn write_conf(&self, settings: &[(String, String)]) -> Result<(), ServerError> {
        let text = conf::render(settings).map_err(|(k, e)| {
            ServerError::Usage(format!("--pg-set {k}: the value {e}; give it on one line"))
        })?;
        let conf = self.paths.conf();
        fs::write(&conf, text).map_err(|e| failed("write dbio.conf", e))?;
        self.user.chown(&conf)
    }

    /// Starts the postmaster (`postmaster::start`); a start that fails
    /// names the cause its log shows (a full filesystem ...), then the
    /// log's last lines.
    fn start_postmaster(&self) -> Result<Child, ServerError> {
        let p = &self.paths;
        postmaster::remove_log(&p.log)?;
        remove_stale_locks(p);
        make_socket_dir(p, &self.user)?;
        let why = match postmaster::start(
            &self.bin,
            p,
            &self.user,
            self.cgroup.clone(),
            Duration::from_secs(120),
        ) {
            Ok(child) => return Ok(child),
            Err(NotUp::Spawn(e)) => return Err(e),
            Err(NotUp::Exited(status)) => format!("it exited ({status})"),
            Err(NotUp::TimedOut(t)) => format!("not ready after {} s", t.as_secs()),
        };
        let log = fs::read_to_string(&p.log).unwrap_or_default();
        let why = match cause_of(&log, p) {
            Some(c) => format!("{why}: {c}"),
            None => why,
        };
        let err = KIND.did_not_start(Some(&why), &p.log, "");
        stop_data_dir(&self.bin, p, &self.user);
        Err(err)
    }

    /// Connection settings for database `db` over the private socket.
    pub fn config(&self, db: &str) -> postgres::Config {
        let mut c = postgres::Config::new();
        c.host_path(&self.paths.socket_dir)
            .port(PORT)
            .user("postgres")
            .dbname(db)
            .application_name("dbio")
            .connect_timeout(Duration::from_secs(30));
        c
    }

    /// A connection to database `db`.
    pub fn connect(&self, db: &str) -> Result<postgres::Client, ServerError> {
        self.config(db)
            .connect(postgres::NoTls)
            .map_err(|e| failed("cannot connect to PostgreSQL", e))
    }

    /// Stops the server (fast shutdown, then SIGKILL); idempotent.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.postmaster.take() {
            if postmaster_alive(&self.paths) {
                postmaster::stop(&self.paths.data, Some(&mut child));
            } else {
                // It died under the run: reap it, then let PostgreSQL
                // clean up what it left.
                let _ = child.wait();
                stop_data_dir(&self.bin, &self.paths, &self.user);
            }
            remove_socket_dir(&self.paths);
            KIND.after_stop(&self.paths.root);
        }
    }
}

/// The operating-system error behind a failure: the one `text` names, on
/// the filesystem of the directory it is about (`Paths::named_in`), or a
/// full filesystem there (`cause`).
pub(crate) fn cause_of(text: &str, paths: &Paths) -> Option<String> {
    let dir = paths.named_in(text);
    cause::describe(text, dir).or_else(|| cause::describe_nearly_full(dir))
}

/// initdb's failure in one line: the OS error its output names (on the
/// filesystem of the directory it names) and the line naming it, else its
/// last lines.
fn initdb_failed(status: &str, text: &str, paths: &Paths) -> ServerError {
    let said = match text.lines().find(|l| cause::find(l).is_some()) {
        Some(line) => line.trim().to_string(),
        None => last_lines(text, 3),
    };
    ServerError::Failed(match cause_of(text, paths) {
        Some(c) => format!("initdb failed ({status}): {c} ({said})"),
        None => format!("initdb failed ({status}): {said}"),
    })
}

/// Whether the postmaster `paths.data` names is alive.
fn postmaster_alive(paths: &Paths) -> bool {
    super::lifecycle::live_postmaster(&paths.data).is_some()
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
    fn pg_set_overrides_dbio_settings_and_keeps_no_tcp() {
        let p = Paths::new(Path::new("/srv/t"), None);
        let s = settings(
            &p,
            64 << 20,
            4,
            &[("max_wal_size".into(), "4096MB".into())],
            &[
                ("shared_buffers".into(), "1GB".into()),
                ("work_mem".into(), "8MB".into()),
            ],
        )
        .unwrap();
        let get = |k: &str| {
            s.iter()
                .filter(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("shared_buffers"), ["1GB"]);
        assert_eq!(get("work_mem"), ["8MB"]);
        assert_eq!(get("listen_addresses"), [""]);
        assert_eq!(get("unix_socket_directories"), ["\"/srv/t/dbio-pg/run\""]);
        assert_eq!(get("max_connections"), ["14"]);
        assert_eq!(get("max_wal_size"), ["4096MB"]);
    }

    #[test]
    fn every_setting_dbio_writes_has_its_stock_default() {
        let p = Paths::new(Path::new("/srv/t"), None);
        let wal = [
            ("max_wal_size".to_string(), "4096MB".to_string()),
            ("min_wal_size".to_string(), "256MB".to_string()),
        ];
        let s = settings(&p, 64 << 20, 4, &wal, &[]).unwrap();
        for (name, _) in &s {
            assert!(
                STOCK.iter().any(|(n, _)| n == name),
                "{name} has no stock default"
            );
        }
        let names = |d: Vec<crate::workload::db::departures::Departure>| -> Vec<String> {
            d.into_iter().map(|d| d.name).collect()
        };
        let d = names(departures(&s, true, false));
        for want in [
            "listen_addresses",
            "shared_buffers",
            "track_io_timing",
            "data_checksums",
            "autovacuum_enabled",
        ] {
            assert!(d.iter().any(|n| n == want), "{want} missing from {d:?}");
        }
        for same in ["port", "fsync", "synchronous_commit", "checkpoint_timeout"] {
            assert!(!d.iter().any(|n| n == same), "{same} is the default: {d:?}");
        }
        let on = names(departures(&[], false, true));
        assert!(on.is_empty(), "{on:?}");
    }

    #[test]
    fn the_socket_goes_to_a_short_directory_when_the_target_cannot_hold_it() {
        let deep = format!("/srv/{}", "d".repeat(90));
        for target in [deep.as_str(), "/srv/new\nline", "/srv/tab\there"] {
            let p = Paths::new(Path::new(target), None);
            assert!(
                p.socket_dir.starts_with(PRIVATE_SOCKET_PARENT),
                "{target:?}"
            );
            assert!(p.socket().as_os_str().len() <= SOCKET_PATH_MAX);
            assert_eq!(p.socket_dir, Paths::new(Path::new(target), None).socket_dir);
        }
        let p = Paths::new(Path::new("/srv/a,b 'c' \"d\" $(e)"), None);
        assert_eq!(p.socket_dir, p.root.join("run"));
    }

    #[test]
    fn a_message_about_the_wal_is_about_the_wals_filesystem() {
        let p = Paths::new(Path::new("/srv/t"), Some(Path::new("/log")));
        let wal = "PANIC: could not write to file \"pg_wal/xlogtemp.1\": No space left on device";
        assert_eq!(p.named_in(wal), Path::new("/log/dbio-pg-wal"));
        let initdb = "could not create directory \"/log/dbio-pg-wal/archive_status\"";
        assert_eq!(p.named_in(initdb), Path::new("/log/dbio-pg-wal"));
        let data = "could not extend file \"base/1/2\": No space left on device";
        assert_eq!(p.named_in(data), p.data);
        let both = "could not write file \"/srv/t/dbio-pg/data/x\": No space left on device\n\
                    removing contents of WAL directory \"/log/dbio-pg-wal\"";
        assert_eq!(p.named_in(both), p.data, "the line naming the error");
        let e = initdb_failed("exit status: 1", both, &p).to_string();
        assert!(
            e.starts_with("initdb failed (exit status: 1): no space left on device (ENOSPC) on the filesystem of /srv/t/dbio-pg/data")
                && e.ends_with("(could not write file \"/srv/t/dbio-pg/data/x\": No space left on device)"),
            "{e}"
        );
    }

    #[test]
    fn wal_goes_under_the_redo_dir_when_given() {
        let p = Paths::new(Path::new("/srv/t"), Some(Path::new("/log")));
        assert_eq!(p.wal, PathBuf::from("/log/dbio-pg-wal"));
        assert_eq!(p.data, PathBuf::from("/srv/t/dbio-pg/data"));
        let q = Paths::new(Path::new("/srv/t"), None);
        assert_eq!(q.wal, PathBuf::from("/srv/t/dbio-pg/wal"));
    }
}
