//! The throwaway PostgreSQL cluster dbio runs a `pg` workload against: its
//! binaries (`/usr/lib/postgresql/*/bin`, highest version, or `--pg-bin`),
//! its directories under the target (`dbio-pg/data`, `dbio-pg/run` for the
//! unix socket, WAL in `dbio-pg/wal` or `--redo-dir/dbio-pg-wal`), `initdb
//! --data-checksums`, the settings dbio writes to `dbio.conf` (included from
//! postgresql.conf), and start/stop as the unprivileged `postgres` user.
//!
//! A [`Server`] stops its postmaster when dropped (`pg_ctl stop -m fast`,
//! then SIGKILL), so a run that fails or is interrupted leaves no server
//! behind. A postmaster a killed dbio left is found through `postmaster.pid`
//! and stopped by the next run or `dbio clean`. The postmaster runs in a
//! process group of its own: a Ctrl-C on dbio's terminal does not reach it,
//! dbio stops it.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::cgroup::{self, MemCgroup};

/// The directory under the target that holds the cluster.
pub const CLUSTER_SUBDIR: &str = "dbio-pg";
/// The WAL directory's name under `--redo-dir`.
pub const WAL_SUBDIR: &str = "dbio-pg-wal";
/// The database dbio's tables live in (the sampler uses `postgres`, so its
/// own queries do not count in the workload's database statistics).
pub const DATABASE: &str = "dbio";
/// The port: only the socket's file name, since there is no TCP.
pub const PORT: u16 = 5432;
/// Longest path of a unix socket (sun_path is 108 bytes with its NUL).
const SOCKET_PATH_MAX: usize = 107;
/// The package named when no binaries are found.
pub const PACKAGE: &str = "postgresql-15";

/// What can go wrong with the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Bad input or a machine that cannot run it (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The server failed (exit 1).
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C before the sessions started (exit 130).
    #[error("{0}")]
    Interrupted(String),
}

fn failed(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::Failed(format!("{what}: {e}"))
}

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
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.uid(self.uid).gid(self.gid);
        Self::common(&mut c);
        c
    }

    /// The same, first moved into memory cgroup `cg` (as root: the move
    /// needs it), then made this user.
    fn command_in(&self, program: &Path, cg: MemCgroup) -> Command {
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

    fn chown(&self, p: &Path) -> Result<(), ServerError> {
        std::os::unix::fs::chown(p, Some(self.uid), Some(self.gid))
            .map_err(|e| failed(&format!("chown {} to postgres", p.display()), e))
    }
}

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

    fn marker(&self) -> PathBuf {
        self.root.join("cluster.json")
    }

    fn conf(&self) -> PathBuf {
        self.data.join("dbio.conf")
    }
}

/// What a cluster was made for: a cluster is reused only for the same.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct Shape {
    major: u32,
    wal: PathBuf,
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
    user: PgUser,
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
        let user = PgUser::lookup()?;
        let sock = paths.socket_dir.join(format!(".s.PGSQL.{PORT}"));
        if sock.as_os_str().len() > SOCKET_PATH_MAX {
            return Err(ServerError::Usage(format!(
                "--target {} is too deep for PostgreSQL's unix socket ({} is over {SOCKET_PATH_MAX} bytes); give a shorter --target path",
                paths.root.parent().unwrap_or(&paths.root).display(),
                sock.display()
            )));
        }
        let orphan_stopped = stop_orphan(&bin, &paths, &user);
        forget_cgroup(&paths);
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
        if let Some(limit) = memory {
            let cg = MemCgroup::create(&cgroup_name(&server.paths.data), limit)?;
            fs::write(
                server.paths.root.join("cgroup"),
                cg.path.as_os_str().as_encoded_bytes(),
            )
            .map_err(|e| failed("write the cgroup's path", e))?;
            server.cgroup = Some(cg);
            cgroup::evict(&server.paths.data);
            cgroup::evict(&server.paths.wal);
        }
        if let Err(e) = server.pg_ctl_start() {
            forget_cgroup(&server.paths);
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
        let have: Option<Shape> = fs::read(p.marker())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if have.as_ref() == Some(&want) && p.data.join("PG_VERSION").is_file() {
            return Ok(true);
        }
        // Another shape (or a half-made cluster): start again.
        remove_cluster_files(p, have.as_ref().map(|s| s.wal.as_path()));
        let target = p.root.parent().unwrap_or(&p.root);
        fs::create_dir_all(target)
            .map_err(|e| failed(&format!("cannot create {}", target.display()), e))?;
        fs::create_dir_all(&p.root)
            .map_err(|e| failed(&format!("cannot create {}", p.root.display()), e))?;
        fs::set_permissions(&p.root, fs::Permissions::from_mode(0o755))
            .map_err(|e| failed(&format!("chmod {}", p.root.display()), e))?;
        // The server writes its log there.
        self.user.chown(&p.root)?;
        for d in [&p.data, &p.socket_dir, &p.wal] {
            if let Some(parent) = d.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| failed(&format!("cannot create {}", parent.display()), e))?;
            }
            fs::create_dir(d).map_err(|e| failed(&format!("cannot create {}", d.display()), e))?;
            fs::set_permissions(d, fs::Permissions::from_mode(0o700))
                .map_err(|e| failed(&format!("chmod {}", d.display()), e))?;
            self.user.chown(d)?;
        }
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
        let marker = serde_json::to_vec(&want).expect("shape serializes");
        fs::write(p.marker(), marker).map_err(|e| failed("write cluster.json", e))?;
        Ok(false)
    }

    /// The postgres user must reach the cluster through the target's
    /// parents (a 0700 directory on the way stops it).
    fn check_reachable(&self) -> Result<(), ServerError> {
        let ok = self
            .user
            .command(Path::new("/usr/bin/test"))
            .arg("-w")
            .arg(&self.paths.data)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            let target = self.paths.root.parent().unwrap_or(&self.paths.root);
            remove_cluster_files(&self.paths, None);
            return Err(ServerError::Usage(format!(
                "--target {}: the postgres user PostgreSQL runs as cannot reach it (a directory on the way is not searchable by others); chmod o+x the directories above it, or use another --target",
                target.display()
            )));
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
        let log = fs::read_to_string(&self.paths.log).unwrap_or_default();
        let err = String::from_utf8_lossy(&out.stderr);
        // A server half up (timed out) is stopped before giving up.
        stop_data_dir(&self.bin, &self.paths, &self.user);
        Err(ServerError::Failed(format!(
            "PostgreSQL did not start: {} (server log {})",
            if log.trim().is_empty() {
                last_lines(&err, 3)
            } else {
                last_lines(&log, 3)
            },
            self.paths.log.display()
        )))
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
            forget_cgroup(&self.paths);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The postmaster's pid from `postmaster.pid`, if that process is alive.
fn live_postmaster(data: &Path) -> Option<u32> {
    live_pid_in(&data.join("postmaster.pid"))
}

/// The pid on the first line of a PostgreSQL lock file, if that process is
/// a live (not zombie) postgres.
fn live_pid_in(lock: &Path) -> Option<u32> {
    let text = fs::read_to_string(lock).ok()?;
    let pid: u32 = text.lines().next()?.trim().parse().ok()?;
    // SAFETY: kill with signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid as i32, 0) } == 0;
    let is_pg = fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim() == "postgres")
        .unwrap_or(false);
    // A killed postmaster whose parent (init in a container) does not reap
    // it stays a zombie: dead for our purposes.
    let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    (alive && is_pg && !zombie).then_some(pid)
}

/// Stops a server running on `paths.data` that dbio did not start in this
/// process (a killed dbio's orphan). Returns its pid.
fn stop_orphan(bin: &Binaries, paths: &Paths, user: &PgUser) -> Option<u32> {
    let pid = live_postmaster(&paths.data)?;
    stop_data_dir(bin, paths, user);
    eprintln!(
        "dbio: stopped PostgreSQL (pid {pid}) on {}, left running by an earlier dbio that was killed",
        paths.data.display()
    );
    Some(pid)
}

/// `pg_ctl stop -m fast`; if the postmaster is still there, SIGKILL it and
/// wait for it to go. A postmaster that died without cleaning up (killed)
/// leaves its shared memory, socket and pid file: PostgreSQL removes them
/// itself when started again on the data directory, so it is started once
/// more (crash recovery) and stopped cleanly.
fn stop_data_dir(bin: &Binaries, paths: &Paths, user: &PgUser) {
    if live_postmaster(&paths.data).is_none() {
        if paths.data.join("postmaster.pid").exists() {
            recover(bin, paths, user);
        }
        return;
    }
    let _ = user
        .command(&bin.dir.join("pg_ctl"))
        .args(["stop", "-m", "fast", "-w", "-t", "60", "-s", "-D"])
        .arg(&paths.data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if let Some(pid) = live_postmaster(&paths.data) {
        // SAFETY: plain kill(2) of the postmaster that postmaster.pid names.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let t0 = Instant::now();
        while live_postmaster(&paths.data).is_some() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Starts and stops a server whose postmaster died, so that PostgreSQL
/// removes what the dead one left (shared memory segments, socket, pid file).
fn recover(bin: &Binaries, paths: &Paths, user: &PgUser) {
    eprintln!(
        "dbio: PostgreSQL on {} died without cleaning up; starting it once more to remove its shared memory, socket and pid file",
        paths.data.display()
    );
    // The dead postmaster's children notice and exit; a new postmaster
    // refuses to start while they still hold the shared memory. They all
    // work in the data directory.
    let t0 = Instant::now();
    while processes_in(&paths.data) && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    remove_stale_locks(paths);
    let started = user
        .command(&bin.dir.join("pg_ctl"))
        .args(["start", "-w", "-t", "300", "-s", "-D"])
        .arg(&paths.data)
        .arg("-l")
        .arg(&paths.log)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if started && live_postmaster(&paths.data).is_some() {
        stop_data_dir(bin, paths, user);
    }
}

/// Removes the pid file and the socket's lock file of a postmaster that is
/// gone. PostgreSQL removes stale ones itself, but takes a zombie (a killed
/// postmaster nobody reaped, as under a container's init) for a live server
/// and refuses to start. Its shared memory is found without them (by the
/// data directory's inode) and removed by the next start.
fn remove_stale_locks(paths: &Paths) {
    let pid_file = paths.data.join("postmaster.pid");
    let sock_lock = paths.socket_dir.join(format!(".s.PGSQL.{PORT}.lock"));
    for lock in [pid_file, sock_lock] {
        if lock.exists() && live_pid_in(&lock).is_none() {
            let _ = fs::remove_file(&lock);
        }
    }
}

/// Whether a process works in `dir` (PostgreSQL's processes work in their
/// data directory).
fn processes_in(dir: &Path) -> bool {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
                && fs::read_link(e.path().join("cwd")).is_ok_and(|c| c.starts_with(dir))
        })
}

/// The cgroup's name for a data directory (stable, so a later run finds it).
fn cgroup_name(data: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("dbio-pg-{h:016x}")
}

/// Removes the memory cgroup recorded in the cluster directory, if any
/// (its processes must be gone).
fn forget_cgroup(paths: &Paths) {
    let file = paths.root.join("cgroup");
    if let Ok(p) = fs::read_to_string(&file) {
        cgroup::remove(Path::new(p.trim()));
        let _ = fs::remove_file(file);
    }
}

/// Removes a cluster's files (its WAL too, where the marker says it is).
fn remove_cluster_files(paths: &Paths, marked_wal: Option<&Path>) {
    for wal in [Some(paths.wal.as_path()), marked_wal]
        .into_iter()
        .flatten()
    {
        if !wal.starts_with(&paths.root) {
            let _ = fs::remove_dir_all(wal);
        }
    }
    let _ = fs::remove_dir_all(&paths.root);
}

/// `dbio clean`: stops a server left on the cluster under `target` and
/// removes the cluster (its WAL too). Returns whether there was one.
pub fn clean(target: &Path) -> Result<bool, ServerError> {
    let paths = Paths::new(target, None);
    if !paths.root.exists() {
        return Ok(false);
    }
    let shape: Option<Shape> = fs::read(paths.marker())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if live_postmaster(&paths.data).is_some() {
        let bin = Binaries::find(None)?;
        stop_orphan(&bin, &paths, &PgUser::lookup()?);
    } else if paths.data.join("postmaster.pid").exists() {
        // A server that was killed: let PostgreSQL clean up after it.
        let bin = Binaries::find(None)?;
        stop_data_dir(&bin, &paths, &PgUser::lookup()?);
    }
    forget_cgroup(&paths);
    remove_cluster_files(&paths, shape.as_ref().map(|s| s.wal.as_path()));
    Ok(true)
}

/// The last `n` non-empty lines of `text`, joined into one line.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
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

    #[test]
    fn last_lines_make_one_line() {
        assert_eq!(last_lines("a\n\nb\nc\nd\n", 3), "b | c | d");
        assert_eq!(last_lines("only", 3), "only");
    }
}
