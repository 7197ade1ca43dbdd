//! `--workload pg` against the real PostgreSQL dbio starts (Debian's
//! postgresql-15): runs on tmpfs and on XFS over a direct-io loop device,
//! the invariants between what dbio issued and what the server counted
//! (commits = transactions, logical reads ≥ rows asked for, WAL with
//! updates and almost none without), physical reads three ways, and that
//! no postmaster, shared memory, socket or pid file is left after success,
//! a failed start, Ctrl-C, or kill -9 (then `dbio clean`). The tests share
//! one lock: "nothing left" is checked machine-wide.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::server::{ServerDir, dbio, evict, json, processes_left};
use crate::common::store::temp_store;

pub(crate) static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The server's socket under the target.
const SOCKET: &str = "dbio-pg/run/.s.PGSQL.5432";

/// A target directory the postgres user can reach (`ServerDir`).
pub(crate) struct PgDir(ServerDir);

impl std::ops::Deref for PgDir {
    type Target = ServerDir;
    fn deref(&self) -> &ServerDir {
        &self.0
    }
}

impl PgDir {
    pub(crate) fn on_tmpfs() -> PgDir {
        PgDir(ServerDir::on_tmpfs("pg", SOCKET))
    }

    fn under(mountpoint: &Path) -> PgDir {
        PgDir(ServerDir::under(mountpoint, "pg", SOCKET))
    }
}

/// PostgreSQL's shared memory a server of this test left behind, waited
/// for up to 10 s to go (a stopping server removes its own at its very
/// end): SysV segments of the postgres user that no process is attached
/// to, and POSIX segments (`/dev/shm/PostgreSQL.*`) that no process maps,
/// made since `since`. A live server holds its own (another worktree's
/// tests or benches may run one beside this test); a dead one's stay
/// unattached until removed. A POSIX segment does not say whose it is and
/// a live server may keep one unmapped (pinned), so those are judged only
/// while no other postmaster runs here.
fn pg_shared_memory_left(since: SystemTime) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        let left = pg_shared_memory_unheld(since);
        if left.is_empty() || t0.elapsed() > Duration::from_secs(10) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn pg_shared_memory_unheld(since: SystemTime) -> Vec<String> {
    // Whole seconds (SysV ctime), one early: made during this test.
    let since = since
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .saturating_sub(1);
    let uid = postgres_uid();
    let shm = fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default();
    let mut lines = shm.lines();
    let head: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (nattch, owner, ctime) = (col("nattch"), col("uid"), col("ctime"));
    let mut found: Vec<String> = lines
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f[owner] == uid && f[nattch] == "0" && f[ctime].parse::<u64>().is_ok_and(|t| t >= since)
        })
        .map(|l| format!("sysv shm, attached by none: {l}"))
        .collect();
    if other_postmasters() {
        return found;
    }
    let mapped = mapped_pg_segments();
    found.extend(
        fs::read_dir("/dev/shm")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("PostgreSQL."))
            .filter(|e| {
                e.metadata().is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    m.mtime() >= since as i64
                })
            })
            .map(|e| format!("/dev/shm/{}", e.file_name().to_string_lossy()))
            .filter(|p| !mapped.contains(p))
            .map(|p| format!("{p}, mapped by none")),
    );
    found
}

/// The `/dev/shm/PostgreSQL.*` files some process maps.
fn mapped_pg_segments() -> std::collections::HashSet<String> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| fs::read_to_string(e.path().join("maps")).ok())
        .flat_map(|maps| {
            maps.lines()
                .filter_map(|l| l.split_whitespace().nth(5))
                .filter(|p| p.starts_with("/dev/shm/PostgreSQL."))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether a postmaster runs here (a `postgres` process whose parent is
/// not one): when this is asked, this test's servers have stopped.
fn other_postmasters() -> bool {
    let comm_ppid = |pid: &str| -> Option<(String, String)> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1.to_string();
        Some((comm, rest.split_whitespace().nth(1)?.to_string()))
    };
    fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let pid = e.file_name().to_string_lossy().into_owned();
        match comm_ppid(&pid) {
            Some((comm, ppid)) if comm == "postgres" => {
                comm_ppid(&ppid).is_none_or(|(parent, _)| parent != "postgres")
            }
            _ => false,
        }
    })
}

fn postgres_uid() -> String {
    fs::read_to_string("/etc/passwd")
        .unwrap()
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .and_then(|l| l.split(':').nth(2).map(str::to_string))
        .unwrap_or_default()
}

/// No server process, shared memory, socket or pid file of `d`'s cluster.
pub(crate) fn assert_nothing_left(d: &ServerDir) {
    // The postmaster's children may take a moment to go after it exits.
    assert_eq!(
        processes_left(&d.base),
        Vec::<i32>::new(),
        "server processes left"
    );
    assert_eq!(
        pg_shared_memory_left(d.since),
        Vec::<String>::new(),
        "shared memory left"
    );
    assert!(!d.socket().exists(), "socket left");
    assert!(
        !d.target.join("dbio-pg/run/.s.PGSQL.5432.lock").exists(),
        "socket lock left"
    );
    assert!(
        !d.target.join("dbio-pg/data/postmaster.pid").exists(),
        "postmaster.pid left"
    );
}

pub(crate) fn f(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

fn pg_run_on_tmpfs_meets_the_invariants() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let base = [
        "--sessions",
        "2",
        "--scale",
        "300",
        "--work-unit",
        "16",
        "--cache",
        "16M",
        "--work-loop",
        "60",
    ];

    // Select only, on freshly loaded (vacuumed) tables: no WAL to speak of.
    let mut args = base.to_vec();
    args.extend(["--update-pct", "0"]);
    let r = json(&d.run(&args));
    let pg = &r["pg"];
    assert_eq!(pg["cluster_reused"], false);
    assert_eq!(pg["load"]["reused"], false);
    assert!(f(pg, "load.mib_per_s") > 0.0);
    assert_eq!(f(pg, "selects"), 120.0);
    assert_eq!(f(pg, "updates"), 0.0);
    assert_eq!(f(pg, "rows"), 120.0 * 16.0);
    assert_eq!(
        f(pg, "server.xact_commit"),
        120.0,
        "one transaction per select"
    );
    assert!(f(pg, "server.blks_hit") + f(pg, "server.blks_read") >= 120.0 * 16.0);
    assert!(
        f(pg, "server.wal_bytes") < 64.0 * 1024.0,
        "select-only WAL: {}",
        pg["server"]
    );
    assert_nothing_left(&d);

    // Half updates: every update is BEGIN, UPDATE, COMMIT.
    let mut args = base.to_vec();
    args.extend(["--update-pct", "50"]);
    let r = json(&d.run(&args));
    let pg = &r["pg"];
    assert_eq!(pg["cluster_reused"], true);
    assert_eq!(pg["load"]["reused"], true);
    assert_eq!(f(pg, "selects"), 60.0);
    assert_eq!(f(pg, "updates"), 60.0);
    assert_eq!(f(pg, "commit.requests"), 60.0);
    assert_eq!(f(pg, "server.xact_commit"), 120.0);
    assert!(f(pg, "server.tup_updated") >= 60.0 * 16.0);
    assert!(
        f(pg, "server.wal_bytes") > 60.0 * 16.0 * 50.0,
        "{}",
        pg["server"]
    );
    assert!(f(pg, "server.wal_sync") >= 1.0);
    assert!(f(pg, "server.blks_hit") + f(pg, "server.blks_read") >= 120.0 * 16.0);
    // The settings dbio chose are recorded as the server applied them.
    let settings = pg["settings"].as_array().unwrap();
    let has = |k: &str, v: &str| settings.iter().any(|s| s[0] == k && s[1] == v);
    assert!(has("shared_buffers", "16MB"), "{settings:?}");
    assert!(has("listen_addresses", ""), "{settings:?}");
    assert!(has("track_wal_io_timing", "on"), "{settings:?}");
    assert_nothing_left(&d);

    // The store has the shared db.* metrics: dbio report reads them.
    for m in [
        "db.executes_s",
        "db.redo_mbs",
        "db.physical_reads_s",
        "db.transactions_s",
    ] {
        let out = dbio()
            .args(["report", "--metric", m, "--format", "csv"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{m}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    // AWR's compare period report reads the pg load profile.
    let out = dbio().args(["compare", "1", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in ["Executes", "WAL bytes", "pg.update_pct"] {
        assert!(text.contains(line), "{line} missing from compare:\n{text}");
    }

    // dbio clean removes the cluster.
    let out = d.clean();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!d.target.join("dbio-pg").exists());
}

fn a_bad_setting_fails_in_one_line_and_leaves_nothing_running() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    // Refused before anything is made.
    let out = d.run(&["--pg-set", "shared_buffers"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.target.exists(), "a refused run made its target");
    // Refused by the server: one line with its own words, exit 1.
    let out = d.run(&[
        "--scale",
        "100",
        "--pg-set",
        "shared_buffers=banana",
        "--time",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // After the line saying where the target landed: one line.
    let err = err
        .lines()
        .filter(|l| !l.starts_with("where "))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("did not start") && err.contains("banana"),
        "{err}"
    );
    assert_nothing_left(&d);
}

fn ctrl_c_stops_the_server_and_keeps_what_was_measured() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let r = d.interrupted(&[
        "--sessions",
        "2",
        "--scale",
        "200",
        "--update-pct",
        "20",
        "--time",
        "120",
    ]);
    assert!(f(&r["pg"], "selects") > 0.0);
    assert!(f(&r["pg"], "server.xact_commit") > 0.0);
    assert_nothing_left(&d);
}

/// `dbio clean` on a target whose benchmark is running is refused (the
/// target's lock) and the running server is left alone.
fn clean_under_a_running_benchmark_is_refused_and_the_server_keeps_running() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let mut child = d.spawn(&["--sessions", "1", "--scale", "100", "--time", "120"]);
    d.wait_until_running(&mut child, 1);
    let out = d.clean();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("in use by another dbio command"), "{err}");
    assert!(d.socket().exists(), "the running server was left alone");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the benchmark still runs"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "interrupted", "it ran on to the Ctrl-C");
    assert_nothing_left(&d);
}

fn kill_9_leaves_a_server_the_next_run_and_clean_stop() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    d.kill_9(
        &["--sessions", "1", "--scale", "100", "--time", "120"],
        &["--sessions", "1", "--scale", "100", "--work-loop", "5"],
        "dbio-pg",
        |d| assert!(d.target.join("dbio-pg/data/postmaster.pid").exists()),
        assert_nothing_left,
    );
}

fn pg_run_on_xfs_reads_three_ways() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let mut dev = LoopDev::new(1 << 30, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let d = PgDir::under(&mnt);
    // 2 x 3000 pages = 47 MiB of heap against 16 MiB of shared_buffers.
    let args = [
        "--sessions",
        "2",
        "--scale",
        "3000",
        "--cache",
        "16M",
        "--update-pct",
        "0",
        "--work-loop",
        "200",
    ];
    json(&d.run(&args));
    evict(&d.target);
    let r = json(&d.run(&args));
    let pg = &r["pg"];
    let reads = &pg["physical_reads"];
    assert_eq!(
        reads["device"].as_str(),
        Some(dev.name().as_str()),
        "{reads}"
    );
    let (pg_blocks, dev_reqs) = (f(reads, "pg_blocks"), f(reads, "device_requests"));
    assert!(pg_blocks > 100.0, "{reads}");
    assert!(dev_reqs > 0.0, "the device saw no reads: {reads}");
    assert!(reads["absorbed_pct"].is_number(), "{reads}");
    eprintln!("physical reads three ways: {reads}");
    assert!(r["storage"].to_string().contains("xfs"), "{}", r["storage"]);
    drop(d);
    drop(dev);
}

fn a_server_killed_mid_run_fails_the_run_and_is_cleaned_up() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let args = [
        "--sessions",
        "2",
        "--scale",
        "200",
        "--update-pct",
        "20",
        "--time",
        "120",
    ];
    let r = d.server_killed(&args, |d| {
        fs::read_to_string(d.target.join("dbio-pg/data/postmaster.pid"))
            .unwrap()
            .lines()
            .next()
            .unwrap()
            .parse()
            .unwrap()
    });
    assert!(f(&r["pg"], "selects") > 0.0, "what was measured is kept");
    // The dead server's shared memory, socket and pid file are gone too.
    assert_nothing_left(&d);
}

fn ctrl_c_while_loading_stops_the_load_and_the_server() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    // 4 x 40000 pages: 1.25 GiB to load, seconds of work.
    let mut child = d.spawn(&["--sessions", "4", "--scale", "40000", "--time", "5"]);
    d.wait_until_running(&mut child, 1);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted while loading"), "{err}");
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "slow: {:?}",
        t0.elapsed()
    );
    assert_nothing_left(&d);
}

fn scans_hot_schema_and_think_time_keep_the_mix_exact() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let r = json(&d.run(&[
        "--sessions",
        "2",
        "--scale",
        "300",
        "--work-unit",
        "16",
        "--update-pct",
        "30",
        "--scan-pct",
        "20",
        "--scan-size",
        "8",
        "--hot-schema-frequency",
        "5",
        "--think-frequency",
        "10",
        "--think-min",
        "0.001",
        "--work-loop",
        "50",
    ]));
    let pg = &r["pg"];
    // Exact over every 100 operations: 100 operations, 30 / 20 / 50.
    assert_eq!(f(pg, "updates"), 30.0);
    assert_eq!(f(pg, "scans"), 20.0);
    assert_eq!(f(pg, "selects"), 50.0);
    assert_eq!(f(pg, "rows"), 80.0 * 16.0 + 20.0 * 8.0);
    assert_eq!(f(pg, "server.xact_commit"), 100.0);
    assert!(f(pg, "server.blks_hit") + f(pg, "server.blks_read") >= 80.0 * 16.0 + 20.0 * 8.0);
    assert!(f(pg, "scan.latency.mean_us") > 0.0);
    assert_nothing_left(&d);
}

/// A PostgreSQL server the test starts itself (for --pg-url), on a unix
/// socket only; stopped and removed when dropped.
pub(crate) struct OtherServer {
    dir: tempfile::TempDir,
}

impl OtherServer {
    fn bin() -> PathBuf {
        PathBuf::from("/usr/lib/postgresql/15/bin")
    }

    fn as_postgres(program: &str) -> Command {
        use std::os::unix::process::CommandExt;
        let uid: u32 = postgres_uid().parse().unwrap();
        let gid: u32 = fs::read_to_string("/etc/passwd")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("postgres:"))
            .and_then(|l| l.split(':').nth(3)?.parse().ok())
            .unwrap();
        let mut c = Command::new(Self::bin().join(program));
        c.uid(uid).gid(gid).current_dir("/");
        c
    }

    pub(crate) fn start() -> OtherServer {
        let dir = tempfile::Builder::new()
            .prefix("dbio-pgurl-")
            .tempdir_in("/dev/shm")
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let s = OtherServer { dir };
        let ok = Self::as_postgres("initdb")
            .args(["--auth=trust", "-U", "postgres", "-D"])
            .arg(s.data())
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}",
            String::from_utf8_lossy(&ok.stderr)
        );
        s.pg_ctl_start();
        let mut c = s.client("postgres");
        c.batch_execute("CREATE DATABASE bench").unwrap();
        c.batch_execute("CREATE DATABASE other").unwrap();
        s
    }

    /// `pg_ctl start` on the data directory (again, after a kill -9: the
    /// start removes what the dead server left).
    fn pg_ctl_start(&self) {
        let ok = Self::as_postgres("pg_ctl")
            .args(["start", "-w", "-s", "-D"])
            .arg(self.data())
            .arg("-o")
            .arg(format!(
                "-c listen_addresses='' -k {}",
                self.dir.path().display()
            ))
            .arg("-l")
            .arg(self.dir.path().join("log"))
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{}{}",
            String::from_utf8_lossy(&ok.stderr),
            fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
        );
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub(crate) fn url(&self, db: &str) -> String {
        format!(
            "postgresql:///{db}?host={}&user=postgres",
            self.dir.path().display()
        )
    }

    pub(crate) fn client(&self, db: &str) -> postgres::Client {
        postgres::Client::connect(&self.url(db), postgres::NoTls).unwrap()
    }

    fn setting(&self, name: &str) -> String {
        self.client("postgres")
            .query_one(&format!("SHOW {name}"), &[])
            .unwrap()
            .get(0)
    }
}

impl Drop for OtherServer {
    fn drop(&mut self) {
        let _ = Self::as_postgres("pg_ctl")
            .args(["stop", "-m", "fast", "-w", "-s", "-D"])
            .arg(self.data())
            .output();
    }
}

/// The leftover check holds a test to what its own servers left: a live
/// server's shared memory (another worktree's tests may run one beside
/// this test) is not left, a killed server's is, until a start on its data
/// directory removes it.
fn the_leftover_check_tells_a_killed_servers_shared_memory_from_a_live_ones() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let since = SystemTime::now();
    let srv = OtherServer::start();
    assert_eq!(
        pg_shared_memory_left(since),
        Vec::<String>::new(),
        "a live server's shared memory is held, not left"
    );
    let pid = fs::read_to_string(srv.data().join("postmaster.pid")).unwrap();
    let pid: i32 = pid.lines().next().unwrap().trim().parse().unwrap();
    // SAFETY: killing the test's own server.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(processes_left(&srv.data()), Vec::<i32>::new(), "children");
    let killed = pg_shared_memory_unheld(since);
    // A killed postmaster nobody reaped yet (a zombie) passes for a live
    // one in its lock file: the next start would refuse.
    let t0 = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    fs::remove_file(srv.data().join("postmaster.pid")).unwrap();
    srv.pg_ctl_start(); // removes the dead server's segments (asserted below)
    assert!(
        killed.iter().any(|l| l.starts_with("sysv shm")),
        "a killed server's segment is left: {killed:?}"
    );
    drop(srv);
    assert_eq!(
        pg_shared_memory_left(since),
        Vec::<String>::new(),
        "a restarted and stopped server's"
    );
}

fn pg_url_uses_only_a_schema_of_its_own_on_an_existing_server() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let srv = OtherServer::start();
    let buffers = srv.setting("shared_buffers");
    let run = |db: &str, extra: &[&str]| {
        dbio()
            .args(["run", "--workload", "pg", "--json", "--pg-url"])
            .arg(srv.url(db))
            .args(["--sessions", "2", "--scale", "200", "--work-unit", "8"])
            .args(["--update-pct", "50", "--work-loop", "20"])
            .args(extra)
            .output()
            .unwrap()
    };
    let r = json(&run("bench", &[]));
    let pg = &r["pg"];
    assert_eq!(pg["load"]["reused"], false);
    assert_eq!(f(pg, "updates"), 20.0);
    assert!(f(pg, "server.xact_commit") >= 40.0, "{}", pg["server"]);
    assert!(f(pg, "server.wal_bytes") > 0.0);
    assert!(pg["version"].as_str().unwrap().starts_with("PostgreSQL 15"));
    // The tables are in dbio's schema, marked as dbio's.
    let mut c = srv.client("bench");
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_class WHERE relnamespace = 'dbio'::regnamespace AND relname LIKE 'dbio_t%' AND relkind = 'r'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 2);
    // Reused by the next run; the server's settings are untouched.
    let r = json(&run("bench", &[]));
    assert_eq!(r["pg"]["load"]["reused"], true);
    assert_eq!(srv.setting("shared_buffers"), buffers);
    // A database named o'b\ whose strings take \ as an escape: its name
    // reaches the statistics query as a parameter, not as a literal.
    let mut c = srv.client("postgres");
    c.batch_execute("CREATE DATABASE \"o'b\\\"").unwrap();
    c.batch_execute("ALTER DATABASE \"o'b\\\" SET standard_conforming_strings = off")
        .unwrap();
    let out = run("o%27b%5C", &[]);
    let r = json(&out);
    assert!(
        f(&r["pg"], "server.xact_commit") >= 40.0,
        "the server's counters of o'b\\: {}",
        r["pg"]["server"]
    );
    // Options that would change the server are refused.
    let out = run("bench", &["--pg-set", "work_mem=64MB"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pg-set does not apply with --pg-url"));
    // A schema named dbio that dbio did not make: refused, left alone.
    srv.client("other")
        .batch_execute("CREATE SCHEMA dbio; CREATE TABLE dbio.mine (x int)")
        .unwrap();
    let out = run("other", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("did not create") && err.trim().lines().count() == 1,
        "{err}"
    );
    let out = dbio()
        .args(["clean", "--pg-url"])
        .arg(srv.url("other"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let mine: i64 = srv
        .client("other")
        .query_one("SELECT count(*) FROM dbio.mine", &[])
        .unwrap()
        .get(0);
    assert_eq!(mine, 0, "the user's schema is still there");
    // dbio clean drops dbio's own schema, and only that.
    let out = dbio()
        .args(["clean", "--pg-url"])
        .arg(srv.url("bench"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: i64 = srv
        .client("bench")
        .query_one(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'dbio'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
}

fn pg_memory_bounds_the_page_cache_so_reads_reach_the_device() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let mut dev = LoopDev::new(1 << 30, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let d = PgDir::under(&mnt);
    // 2 x 6000 pages = 94 MiB of heap; the server may use 80 MiB in all.
    let base = [
        "--sessions",
        "2",
        "--scale",
        "6000",
        "--cache",
        "16M",
        "--update-pct",
        "0",
        "--work-loop",
        "400",
    ];
    let unbounded = json(&d.run(&base));
    let mut args = base.to_vec();
    args.extend(["--pg-memory", "80M"]);
    let bounded = json(&d.run(&args));
    let pct = |r: &Value| f(&r["pg"]["physical_reads"], "absorbed_pct");
    eprintln!(
        "absorbed by the page cache: unbounded {:.1}%, bounded {:.1}%",
        pct(&unbounded),
        pct(&bounded)
    );
    assert!(
        pct(&unbounded) > 90.0,
        "{}",
        unbounded["pg"]["physical_reads"]
    );
    assert!(pct(&bounded) < 60.0, "{}", bounded["pg"]["physical_reads"]);
    assert_eq!(f(&bounded["pg"], "memory_limit_bytes"), 80.0 * 1048576.0);
    let cg = bounded["pg"]["cgroup"].as_str().unwrap().to_string();
    let cg_dir = cg.split(" (").next().unwrap();
    assert!(!Path::new(cg_dir).exists(), "cgroup {cg_dir} left behind");
    // Refused when it cannot hold shared_buffers and the processes.
    let mut args = base.to_vec();
    args.extend(["--pg-memory", "40M"]);
    let out = d.run(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--pg-memory"));
    drop(d);
    drop(dev);
}

/// A WAL too small for the updates forces checkpoints in the window: the
/// checkpointer's waits appear among the background events (not the
/// sessions' Top Events), in the JSON and in the terminal report.
fn checkpoints_show_in_the_background_events() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let args = [
        "--sessions",
        "4",
        "--scale",
        "4000",
        "--cache",
        "64M",
        "--update-pct",
        "100",
        "--time",
        "6",
        "--pg-set",
        "min_wal_size=32MB",
        "--pg-set",
        "max_wal_size=32MB",
    ];
    let r = json(&d.run(&args));
    let pg = &r["pg"];
    assert!(
        f(pg, "server.checkpoints_req") >= 1.0,
        "no checkpoint forced: {}",
        pg["server"]
    );
    let background = pg["background_waits"].as_array().expect("background_waits");
    let checkpointer: f64 = background
        .iter()
        .filter(|w| w["event"].as_str().unwrap().starts_with("checkpointer "))
        .map(|w| w["samples"].as_f64().unwrap())
        .sum();
    assert!(checkpointer >= 1.0, "{background:?}");
    let sampled: f64 = background
        .iter()
        .map(|w| w["samples"].as_f64().unwrap())
        .sum();
    let pct: f64 = background.iter().map(|w| w["pct"].as_f64().unwrap()).sum();
    assert!(
        (pct - 100.0).abs() < 1e-6 && sampled > 0.0,
        "{background:?}"
    );
    for w in pg["waits"].as_array().unwrap() {
        assert!(
            !w["event"].as_str().unwrap().starts_with("checkpointer"),
            "a background process among the sessions' events: {w}"
        );
    }
    assert_nothing_left(&d);

    // The terminal report of the same shape has the section.
    let out = dbio()
        .args(["run", "--workload", "pg", "--target"])
        .arg(&d.target)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let section = text
        .split("Background Events (the server's own processes)")
        .nth(1)
        .unwrap_or_else(|| panic!("no Background Events:\n{text}"));
    assert!(section.contains("  checkpointer "), "{text}");
    assert_nothing_left(&d);
}

/// The 16, 17 and 18 queries (pg_stat_io, pg_stat_checkpointer, WAL I/O
/// in pg_stat_io) run on this machine's PostgreSQL 15 against stand-in
/// views with those versions' columns, placed before pg_catalog: they
/// parse, and each counter comes from where that version keeps it. (Only
/// 15 is packaged here; the stand-ins' columns are the documented ones.)
fn newer_servers_counters_read_through_stand_in_views() {
    use dbio::workload::pg::stats::{COLUMNS, Delta, Snapshot, Sql};
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let srv = OtherServer::start();
    let mut c = srv.client("bench");
    c.batch_execute(
        "CREATE SCHEMA v16; \
         CREATE VIEW v16.pg_stat_io AS SELECT * FROM (VALUES \
           ('checkpointer'::text, 'relation'::text, 'normal'::text, 0::bigint, 0::float8, 5::bigint, 1.5::float8, \
            2::bigint, 0.1::float8, 0::bigint, 0::float8, 8192::bigint, 0::bigint, 0::bigint, 0::bigint, 3::bigint, 0.2::float8), \
           ('client backend', 'relation', 'normal', 7, 0.7, 11, 0.1, 0, 0, 0, 0, 8192, 100, 4, 0, 13, 0), \
           ('walwriter', 'wal', 'normal', 0, 0, 9, 0.9, 0, 0, 0, 0, 8192, 0, 0, 0, 8, 0.8)) \
           AS t(backend_type, object, context, reads, read_time, writes, write_time, writebacks, \
                writeback_time, extends, extend_time, op_bytes, hits, evictions, reuses, fsyncs, fsync_time); \
         CREATE VIEW v16.pg_stat_checkpointer AS SELECT 21::bigint AS num_timed, 22::bigint AS num_requested, \
           0::bigint AS restartpoints_timed, 0::bigint AS restartpoints_req, 0::bigint AS restartpoints_done, \
           23.0::float8 AS write_time, 24.0::float8 AS sync_time, 25::bigint AS buffers_written, now() AS stats_reset; \
         SET search_path = v16, pg_catalog",
    )
    .unwrap();
    let col = |name: &str| COLUMNS.iter().position(|c| *c == name).unwrap();
    let read = |c: &mut postgres::Client, v: i32| {
        Snapshot::read(c, &Sql::new("bench", v)).unwrap_or_else(|e| panic!("{v}: {e}"))
    };
    // 16: the counters where 15 has them, and pg_stat_io by backend type
    // over data files (the WAL row is not a data file).
    let s16 = read(&mut c, 160_000);
    let names: Vec<&str> = s16.1.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["checkpointer", "client backend"]);
    let d = Delta::between(&Snapshot(s16.0.clone(), Vec::new(), None), &s16);
    assert_eq!(
        (d.io[1].reads, d.io[1].writes, d.io[1].fsyncs),
        (7.0, 11.0, 13.0)
    );
    assert_eq!(d.io_reads(), Some(7.0));
    // 17: checkpoints from pg_stat_checkpointer, backends' writes from pg_stat_io.
    let s17 = read(&mut c, 170_000);
    for (name, want) in [
        ("checkpoints_timed", 21.0),
        ("checkpoints_req", 22.0),
        ("checkpoint_write_time", 23.0),
        ("checkpoint_sync_time", 24.0),
        ("buffers_checkpoint", 25.0),
        ("buffers_backend", 11.0),
        ("buffers_backend_fsync", 13.0),
    ] {
        assert_eq!(s17.0[col(name)], want, "{name}");
    }
    // 18: WAL writes and syncs from pg_stat_io's WAL rows.
    let s18 = read(&mut c, 180_000);
    assert_eq!(
        (s18.0[col("wal_write")], s18.0[col("wal_sync")]),
        (9.0, 8.0)
    );
    assert_eq!(s18.0[col("wal_sync_time")], 0.8);
    // 15 still reads pg_catalog's own views.
    let s15 = read(&mut c, 150_000);
    assert!(s15.1.is_empty());
    assert_ne!(s15.0[col("checkpoints_timed")], 21.0);
}

crate::tests! {
    pg_run_on_tmpfs_meets_the_invariants [Root, Postgres],
    checkpoints_show_in_the_background_events [Root, Postgres],
    newer_servers_counters_read_through_stand_in_views [Root, Postgres],
    a_bad_setting_fails_in_one_line_and_leaves_nothing_running [Root, Postgres],
    ctrl_c_stops_the_server_and_keeps_what_was_measured [Root, Postgres],
    clean_under_a_running_benchmark_is_refused_and_the_server_keeps_running [Root, Postgres],
    kill_9_leaves_a_server_the_next_run_and_clean_stop [Root, Postgres],
    a_server_killed_mid_run_fails_the_run_and_is_cleaned_up [Root, Postgres],
    ctrl_c_while_loading_stops_the_load_and_the_server [Root, Postgres],
    scans_hot_schema_and_think_time_keep_the_mix_exact [Root, Postgres],
    pg_url_uses_only_a_schema_of_its_own_on_an_existing_server [Root, Postgres],
    the_leftover_check_tells_a_killed_servers_shared_memory_from_a_live_ones [Root, Postgres],
    pg_run_on_xfs_reads_three_ways [Root, Postgres, Tool("mkfs.xfs")],
    pg_memory_bounds_the_page_cache_so_reads_reach_the_device [Root, Postgres, Tool("mkfs.xfs")],
}
