//! The throwaway PostgreSQL cluster dbio runs a `pg` workload against: its
//! binaries (`/usr/lib/postgresql/*/bin`, highest version, or `--pg-bin`),
//! its directories under the target (`dbio-pg/data`, `dbio-pg/run` for the
//! unix socket, WAL in `dbio-pg/wal` or `--redo-dir/dbio-pg-wal`), `initdb
//! --data-checksums`, the settings dbio writes to `dbio.conf` (included from
//! postgresql.conf), and start/stop as the unprivileged `postgres` user
//! (`binaries`). How it ends in every case is `lifecycle`.
//!
//! A [`Server`] stops its postmaster when dropped (`pg_ctl stop -m fast`,
//! then SIGKILL), so a run that fails or is interrupted leaves no server
//! behind. A postmaster a killed dbio left is found through `postmaster.pid`
//! and stopped by the next run or `dbio clean`. The postmaster runs in a
//! process group of its own: a Ctrl-C on dbio's terminal does not reach it,
//! dbio stops it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub use super::binaries::Binaries;
use super::binaries::pg_user;
pub use super::lifecycle::clean;
use super::lifecycle::{remove_cluster_files, remove_stale_locks, stop_data_dir, stop_orphan};
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::server::Kind;
use crate::workload::db::user::ServerUser;
pub use crate::workload::db::{ServerError, failed, last_lines};
use crate::workload::db::{read_marker, write_marker};

/// The directory under the target that holds the cluster.
pub const CLUSTER_SUBDIR: &str = "dbio-pg";
/// The WAL directory's name under `--redo-dir`.
pub const WAL_SUBDIR: &str = "dbio-pg-wal";
/// The database dbio's tables live in (the sampler uses `postgres`, so its
/// own queries do not count in the workload's database statistics).
pub const DATABASE: &str = "dbio";
/// The port: only the socket's file name, since there is no TCP.
pub const PORT: u16 = 5432;
/// The package named when no binaries are found.
pub const PACKAGE: &str = "postgresql-15";
/// PostgreSQL in the shared lifecycle's messages and files.
const KIND: Kind = Kind {
    name: "PostgreSQL",
    user: "postgres",
    cgroup_prefix: "dbio-pg",
    memory_option: "--pg-memory",
};

/// Where a cluster's files are.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Paths {
    /// `TARGET/dbio-pg`.
    pub root: PathBuf,
    pub data: PathBuf,
    pub wal: PathBuf,
    /// The unix socket's directory.
    pub socket_dir: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    pub fn new(target: &Path, redo_dir: Option<&Path>) -> Paths {
        let root = target.join(CLUSTER_SUBDIR);
        Paths {
            data: root.join("data"),
            wal: match redo_dir {
                Some(r) => r.join(WAL_SUBDIR),
                None => root.join("wal"),
            },
            socket_dir: root.join("run"),
            log: root.join("server.log"),
            root,
        }
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

/// The settings dbio gives the server, in order (`--pg-set` last, so it wins).
pub fn settings(
    paths: &Paths,
    shared_buffers: u64,
    sessions: u32,
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut s: Vec<(String, String)> = [
        ("listen_addresses", String::new()),
        (
            "unix_socket_directories",
            paths.socket_dir.display().to_string(),
        ),
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
        ("max_wal_size", "4GB".into()),
        ("min_wal_size", "256MB".into()),
        ("checkpoint_timeout", "5min".into()),
        ("logging_collector", "off".into()),
        ("log_checkpoints", "on".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for (k, v) in extra {
        s.retain(|(n, _)| n != k);
        s.push((k.clone(), v.clone()));
    }
    s
}

/// A running server dbio started; stopped when dropped.
pub struct Server {
    pub bin: Binaries,
    pub paths: Paths,
    user: ServerUser,
    running: bool,
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
        let sock = paths.socket_dir.join(format!(".s.PGSQL.{PORT}"));
        let orphan_stopped =
            KIND.before_start(&paths.root, &sock, || stop_orphan(&bin, &paths, &user))?;
        let mut server = Server {
            bin,
            paths,
            user,
            running: false,
            reused: false,
            orphan_stopped,
            cgroup: None,
        };
        server.reused = server.ensure_cluster()?;
        server.write_conf(settings)?;
        let p = &server.paths;
        server.cgroup = KIND.memory_cgroup(&p.root, &p.data, &[&p.data, &p.wal], memory)?;
        if let Err(e) = server.pg_ctl_start() {
            KIND.after_stop(&server.paths.root);
            return Err(e);
        }
        server.running = true;
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
        self.user
            .make_dirs(&p.root, &[&p.data, &p.socket_dir, &p.wal], 0o700)?;
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
            remove_cluster_files(p, None);
            return Err(ServerError::Failed(format!(
                "initdb failed ({}): {}",
                out.status,
                last_lines(&text, 3)
            )));
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
        let mut text = String::from("# written by dbio for each run; do not edit\n");
        for (k, v) in settings {
            text.push_str(&format!("{k} = '{}'\n", v.replace('\'', "''")));
        }
        let conf = self.paths.conf();
        fs::write(&conf, text).map_err(|e| failed("write dbio.conf", e))?;
        self.user.chown(&conf)
    }

    fn pg_ctl_start(&self) -> Result<(), ServerError> {
        let _ = fs::remove_file(&self.paths.log);
        remove_stale_locks(&self.paths);
        let pg_ctl = self.bin.dir.join("pg_ctl");
        let mut cmd = match self.cgroup.clone() {
            Some(cg) => self.user.command_in(&pg_ctl, cg),
            None => self.user.command(&pg_ctl),
        };
        let out = cmd
            .args(["start", "-w", "-t", "120", "-s", "-D"])
            .arg(&self.paths.data)
            .arg("-l")
            .arg(&self.paths.log)
            .stdout(Stdio::null())
            .output()
            .map_err(|e| failed("cannot run pg_ctl", e))?;
        if out.status.success() {
            return Ok(());
        }
        // The log is read first: a server half up (timed out) is stopped
        // before giving up, and its shutdown logs too.
        let err = KIND.did_not_start(None, &self.paths.log, &String::from_utf8_lossy(&out.stderr));
        stop_data_dir(&self.bin, &self.paths, &self.user);
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
        if std::mem::take(&mut self.running) {
            stop_data_dir(&self.bin, &self.paths, &self.user);
            KIND.after_stop(&self.paths.root);
        }
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
    fn pg_set_overrides_dbio_settings_and_keeps_no_tcp() {
        let p = Paths::new(Path::new("/srv/t"), None);
        let s = settings(
            &p,
            64 << 20,
            4,
            &[
                ("shared_buffers".into(), "1GB".into()),
                ("work_mem".into(), "8MB".into()),
            ],
        );
        let get = |k: &str| {
            s.iter()
                .filter(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert_eq!(get("shared_buffers"), ["1GB"]);
        assert_eq!(get("work_mem"), ["8MB"]);
        assert_eq!(get("listen_addresses"), [""]);
        assert_eq!(get("unix_socket_directories"), ["/srv/t/dbio-pg/run"]);
        assert_eq!(get("max_connections"), ["14"]);
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
