//! The model as PostgreSQL does its data I/O (`--flavor postgres`, issue
//! 29 item 2): `--memory` bounding the page cache under buffered datafiles
//! (device reads below the model's own, its cgroup gone after a run that
//! succeeded, failed or was interrupted; with `--flavor postgres` holding
//! beside its page cache what PostgreSQL's cgroup holds), sessions writing dirty buffers
//! themselves when the DB writers are capped (the report's split of buffer
//! writes), and a checkpoint spread over the seconds of its cycle.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio, num};
use crate::common::store::{store_path, temp_store};

/// The model on `target` with `args` as a child process (its pid names its
/// cgroup), JSON on stdout.
fn spawn(target: &Path, redo: &Path, args: &[&str]) -> Child {
    spawn_under(&[], target, redo, args)
}

/// [`spawn`] under `wrapper` (a program and its arguments, dbio's command
/// line after them), or as itself when `wrapper` is empty.
fn spawn_under(wrapper: &[&OsStr], target: &Path, redo: &Path, args: &[&str]) -> Child {
    let dbio = assert_cmd::cargo::cargo_bin("dbio");
    let mut c = match wrapper.split_first() {
        Some((program, before)) => {
            let mut c = Command::new(program);
            c.args(before).arg(dbio);
            c
        }
        None => Command::new(dbio),
    };
    c.env("DBIO_DB", store_path())
        .args([
            "run",
            "--workload",
            "slob",
            "--seed",
            "7",
            "--json",
            "--target",
        ])
        .arg(target)
        .arg("--redo-dir")
        .arg(redo)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The memory cgroup process `pid` is in (v1), as a directory.
fn memory_cgroup_of(pid: u32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let line = text
        .lines()
        .find(|l| l.split(':').nth(1) == Some("memory"))?;
    let rel = line.splitn(3, ':').nth(2)?;
    Some(Path::new("/sys/fs/cgroup/memory").join(rel.trim_start_matches('/')))
}

/// Waits until `child` is in its own `dbio-model-PID` cgroup; returns it.
fn its_cgroup(child: &mut Child) -> PathBuf {
    let want = format!("dbio-model-{}", child.id());
    let t0 = Instant::now();
    loop {
        if let Some(cg) = memory_cgroup_of(child.id()).filter(|p| p.ends_with(&want)) {
            return cg;
        }
        assert!(child.try_wait().unwrap().is_none(), "dbio ended early");
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "never entered {want}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`, which must succeed and leave no cgroup `cg` behind.
fn succeeded(child: Child, cg: &Path) -> std::process::Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cgroup_gone(cg);
    out
}

/// Reads per second the run's device telemetry saw on `dev` (`loopN`).
fn device_reads_per_s(r: &Value, dev: &str) -> f64 {
    let devices = r["telemetry_window"]["devices"].as_array().unwrap();
    let d = devices
        .iter()
        .find(|d| d["name"] == dev)
        .unwrap_or_else(|| panic!("no {dev} in {devices:?}"));
    d["rates"]["r_per_s"].as_f64().unwrap()
}

fn model_reads_per_s(r: &Value) -> f64 {
    num(r, "slob.counters.read_requests") / num(r, "slob.elapsed_s")
}

fn cgroup_gone(cg: &Path) {
    assert!(!cg.exists(), "{} left behind", cg.display());
}

const READS: &[&str] = &[
    "--sessions",
    "2",
    "--scale",
    "96M",
    "--cache",
    "4M",
    "--update-pct",
    "0",
];

fn memory_bounds_the_page_cache_and_its_cgroup_goes() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 << 20, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let target = mnt.join("data");
    let redo = tempfile::tempdir().unwrap();
    let name = dev.name();
    // Without --memory the model reads with O_DIRECT: every read reaches the device.
    let direct = Run::slob(&target)
        .args(&["--redo-dir", redo.path().to_str().unwrap()])
        .args(READS)
        .args(&["--time", "5"])
        .json();
    let ratio = device_reads_per_s(&direct, &name) / model_reads_per_s(&direct);
    assert!(ratio > 0.9, "O_DIRECT: device/model reads {ratio:.2}");
    // With --memory the datafiles go through the page cache, bounded: 128 MiB
    // for a 4 MiB cache and 96 MiB of data holds part of it, so some reads
    // are absorbed and some reach the device.
    let mut child = spawn(
        &target,
        redo.path(),
        &[READS, &["--time", "8", "--memory", "128M"]].concat(),
    );
    let cg = its_cgroup(&mut child);
    let limit = std::fs::read_to_string(cg.join("memory.limit_in_bytes")).unwrap();
    assert_eq!(limit.trim(), (128u64 << 20).to_string());
    let out = succeeded(child, &cg);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["config"]["io_mode"], "buffered", "{}", r["config"]);
    assert_eq!(r["config"]["slob"]["memory_bytes"], 128u64 << 20);
    let ratio = device_reads_per_s(&r, &name) / model_reads_per_s(&r);
    assert!(
        (0.05..0.9).contains(&ratio),
        "--memory 128M: device/model reads {ratio:.2}"
    );
}

fn a_failing_or_interrupted_run_leaves_no_cgroup() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let args = [READS, &["--time", "60", "--memory", "128M"]].concat();
    // Interrupted: exit 130, the cgroup removed.
    let mut child = spawn(&target, dir.path(), &args);
    let cg = its_cgroup(&mut child);
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cgroup_gone(&cg);
    // Failed: its datafile cut short under it, a read fails: exit 1, the
    // failure named, the cgroup removed.
    let mut child = spawn(&target, dir.path(), &args);
    let cg = its_cgroup(&mut child);
    std::thread::sleep(Duration::from_secs(1));
    let data = std::fs::read_dir(&target)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "dat"))
        .expect("a datafile");
    std::fs::File::options()
        .write(true)
        .open(&data)
        .unwrap()
        .set_len(8192)
        .unwrap();
    let t0 = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t0.elapsed() < Duration::from_secs(40),
        "the failure ended the run"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("failed"), "{err}");
    cgroup_gone(&cg);
}

/// A model run with the DB writers capped at one buffer a second.
fn capped(dir: &Path, flavor: &str) -> Value {
    Run::slob(&dir.join("data"))
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "4096",
            "--cache",
            "4M",
            "--update-pct",
            "50",
            "--time",
            "3",
            "--redo-file-size",
            "64M",
            "--dbwr-rate",
            "1",
            "--flavor",
            flavor,
        ])
        .json()
}

fn capped_db_writers_leave_the_writing_to_the_sessions() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let pg = capped(dir.path(), "postgres");
    let c = |r: &Value, k: &str| num(r, &format!("slob.run_totals.{k}"));
    let backend = c(&pg, "backend_writes");
    let writes = c(&pg, "physical_writes");
    assert!(
        backend > 0.9 * writes,
        "backend {backend} of {writes} writes"
    );
    assert!(writes <= c(&pg, "blocks_dirtied"));
    let events = pg["slob"]["events"].as_array().unwrap();
    let ev = events
        .iter()
        .find(|e| e["name"] == "backend buffer write")
        .expect("the sessions' writes are a wait event");
    assert_eq!(
        ev["waits"].as_f64().unwrap(),
        num(&pg, "slob.counters.backend_writes")
    );
    // The sessions' writes are in the run's write statistics, and the report
    // splits the buffer writes as pg_stat_bgwriter does.
    assert!(num(&pg, "write.requests") >= num(&pg, "slob.counters.backend_writes"));
    let shown = dbio().args(["runs", "show", "1"]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("buffer writes: "))
        .unwrap_or_else(|| panic!("{text}"));
    let share = 100.0 * num(&pg, "slob.counters.backend_writes")
        / num(&pg, "slob.counters.physical_writes");
    assert!(
        line.contains(&format!(
            "sessions (backend) {} ({share:.1}%)",
            num(&pg, "slob.counters.backend_writes")
        )),
        "{line}"
    );
    // What the sessions wrote is stamped as the DB writers stamp: it verifies.
    let v = dbio()
        .args(["verify", "--json", "--target"])
        .arg(dir.path().join("data"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&v.stdout).unwrap();
    assert_eq!(v["findings"]["intact"], v["findings"]["blocks"], "{v}");
    // Oracle's sessions never write: they wait for the DB writer.
    let ora = capped(dir.path(), "oracle");
    assert!(ora["slob"]["run_totals"].get("backend_writes").is_none());
    assert!(
        ora["slob"]["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "free buffer waits")
    );
}

/// PostgreSQL's clock takes a dirty buffer as it takes a clean one (the
/// session writes it first), so a block an update changed leaves the cache
/// as soon as any block would: in 512 buffers over 4,096 blocks, where a
/// block is read again about 64 operations later and the cache turns over
/// in about 9, the select that reads a changed block next finds it written
/// and dirties it again (hint bits, pruning) — PostgreSQL writes such a
/// block twice. Before, misses skipped dirty buffers, which stayed until
/// nothing clean was left: most changed blocks were still dirty when the
/// select came (0.37 re-dirtied per change here, now 0.7).
fn dirty_buffers_leave_the_cache_as_clean_ones_do() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // 4,096 blocks through 512 buffers, 5% updates: the same churn for
    // both flavors.
    let churn = |extra: &[&str]| {
        Run::slob(&dir.path().join("data"))
            .args(&["--sessions", "2", "--scale", "4096", "--cache", "4M"])
            .args(&["--update-pct", "5"])
            .args(extra)
            .json()
    };
    // By work done, not by time: a loaded host's 3 s held a third of the
    // changes, still in the cache's first turns (0.52 re-dirtied).
    let pg = churn(&[
        "--work-loop",
        "300",
        "--redo-file-size",
        "64M",
        "--dbwr-rate",
        "1",
        "--flavor",
        "postgres",
    ]);
    let c = |k: &str| num(&pg, &format!("slob.run_totals.{k}"));
    let (changes, hinted) = (c("block_changes"), c("hint_dirtied"));
    assert!(changes >= 500.0, "{changes} block changes: too few to tell");
    assert!(
        hinted >= 0.55 * changes,
        "selects dirtied {hinted} blocks again after {changes} changes"
    );
    // The sessions wrote their dirty victims (the DB writers, capped at a
    // buffer a second, almost nothing).
    let (victims, backend) = (c("victim_writes"), c("backend_writes"));
    assert!(
        victims >= 0.5 * backend && victims <= backend,
        "{victims} of {backend}"
    );
    assert!(c("physical_writes") >= 0.8 * c("blocks_dirtied"));
    // Oracle's sessions never write, so none of it is theirs.
    let ora = churn(&["--time", "1"]);
    assert!(ora["slob"]["run_totals"].get("victim_writes").is_none());
}

/// Per second of the run, writes beyond the commits (the log writer
/// writes at most once per commit): the DB writers' writes, at least.
fn db_writes_per_second(r: &Value) -> Vec<f64> {
    r["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| num(p, "write.ops") - num(p, "sync.ops"))
        .collect()
}

/// Updates at a steady 100 a second on 1024 blocks, all in the cache, the
/// DB writers capped at one buffer a second outside checkpoints: what they
/// write is the checkpoints' (every 2 MiB of redo).
fn checkpointed(dir: &Path, flavor: &str, extra: &[&str]) -> Value {
    Run::slob(&dir.join("data"))
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "512",
            "--cache",
            "64M",
            "--update-pct",
            "100",
            "--work-unit",
            "16",
            "--rate",
            "100",
            "--time",
            "16",
            "--redo-file-size",
            "2M",
            "--dbwr-rate",
            "1",
            "--flavor",
            flavor,
        ])
        .args(extra)
        .json()
}

/// Of the seconds from the first with checkpoint writes on, the share with some.
fn busy_share(r: &Value) -> f64 {
    let w = db_writes_per_second(r);
    let from = w
        .iter()
        .position(|&n| n > 20.0)
        .expect("a checkpoint wrote");
    let busy = w[from..].iter().filter(|&&n| n > 10.0).count();
    busy as f64 / (w.len() - from) as f64
}

fn the_checkpointer_spreads_its_writes_over_the_cycle() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let pg = checkpointed(dir.path(), "postgres", &[]);
    let c = |r: &Value, k: &str| num(r, &format!("slob.counters.{k}"));
    assert!(c(&pg, "log_switches") >= 2.0, "{}", pg["slob"]["counters"]);
    assert!(c(&pg, "checkpoint_writes") > 0.95 * c(&pg, "physical_writes"));
    let spread = busy_share(&pg);
    assert!(
        spread > 0.75,
        "postgres: writes in {spread:.2} of the seconds: {:?}",
        db_writes_per_second(&pg)
    );
    // Oracle's DB writer writes a checkpoint at once: a spike per log switch.
    let ora = checkpointed(dir.path(), "oracle", &[]);
    let spikes = busy_share(&ora);
    assert!(
        spikes < 0.6,
        "oracle: writes in {spikes:.2} of the seconds: {:?}",
        db_writes_per_second(&ora)
    );
}

/// Through the page cache (`--io buffered`, as under `--memory`), the
/// postgres flavor's DB writers ask the kernel to write back what they
/// wrote every 256 kB of checkpoint writes (`checkpoint_flush_after`) and
/// 512 kB of others (`bgwriter_flush_after`), sorted and joined into
/// ranges, and at the end of each checkpoint pass: a hint covers at least
/// one page and at most the 64 of a full context. With O_DIRECT there is
/// no page cache to hint, and Oracle's flavor never hints.
fn the_db_writers_hint_writeback_through_the_page_cache() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let c = |r: &Value, k: &str| r["slob"]["run_totals"].get(k).and_then(Value::as_f64);
    let pg = checkpointed(dir.path(), "postgres", &["--io", "buffered"]);
    let hints = c(&pg, "writeback_hints").expect("hints counted");
    let written = c(&pg, "physical_writes").unwrap() - c(&pg, "backend_writes").unwrap_or(0.0);
    assert!(
        c(&pg, "log_switches").unwrap() >= 2.0,
        "{}",
        pg["slob"]["run_totals"]
    );
    assert!(
        hints >= written / 64.0 && hints <= written,
        "{hints} hints for {written} pages the DB writers wrote"
    );
    let writes = ["--sessions", "2", "--scale", "512", "--update-pct", "100"];
    let args = [&writes[..], &["--time", "3", "--redo-file-size", "1M"]].concat();
    postgres_through_the_page_cache_only(
        &dir.path().join("data"),
        &args,
        "physical_writes",
        "writeback_hints",
    );
}

/// Runs of `args` with O_DIRECT in the postgres flavor and through the page
/// cache in Oracle's: each counts `did` and not `counter`.
fn postgres_through_the_page_cache_only(target: &Path, args: &[&str], did: &str, counter: &str) {
    for (flavor, io) in [("postgres", "direct"), ("oracle", "buffered")] {
        let r = Run::slob(target)
            .args(args)
            .args(&["--io", io, "--flavor", flavor])
            .json();
        let totals = &r["slob"]["run_totals"];
        assert!(totals[did].as_f64().unwrap() > 0.0, "{flavor}: no {did}");
        assert_eq!(totals.get(counter), None, "{flavor} --io {io}");
    }
}

/// Flush requests device `dev` completed in the run's window (iostat's f/s
/// times the window's seconds).
pub(crate) fn device_flushes(r: &Value, dev: &str) -> f64 {
    let devices = r["telemetry_window"]["devices"].as_array().unwrap();
    let d = devices
        .iter()
        .find(|d| d["name"] == dev)
        .unwrap_or_else(|| panic!("no {dev} in {devices:?}"));
    d["rates"]["f_per_s"].as_f64().unwrap() * num(r, "telemetry_window.seconds")
}

/// PostgreSQL's `wal_sync_method = fdatasync` (its Linux default): the WAL
/// is written without a sync and fdatasynced when a commit waits, so the
/// whole pages written while no commit waits (selects' prune records and
/// images) cost no flush of their own. Before, every log write was O_DSYNC:
/// on XFS over a loop device, two device flushes per log write.
fn wal_is_synced_when_a_commit_waits_not_at_every_write() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 << 20, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let r = Run::slob(&mnt.join("data"))
        .args(&[
            "--flavor",
            "postgres",
            "--sessions",
            "4",
            "--scale",
            "2048",
            "--cache",
            "4M",
            "--update-pct",
            "25",
            "--redo-file-size",
            "64M",
            // By work done, not by time: a busy host still makes about
            // 300 commits, enough writes for the ratios below.
            "--work-loop",
            "300",
        ])
        .json();
    let c = |k: &str| num(&r, &format!("slob.counters.{k}"));
    let (writes, flushes) = (c("redo_writes"), device_flushes(&r, &dev.name()));
    assert!(c("transactions") >= 250.0, "{}", r["slob"]["counters"]);
    assert!(
        flushes < 0.9 * writes,
        "{flushes} device flushes for {writes} log writes"
    );
    assert_eq!(
        r["config"]["slob"]["redo_sync"], "fdatasync",
        "{}",
        r["config"]["slob"]
    );
    let (syncs, commits) = (c("redo_syncs"), c("transactions"));
    // Syncs: one per commit group at most, plus the WAL writer's timed
    // flushes (every 200 ms) and one per log file filled.
    let timed = num(&r, "slob.elapsed_s") / 0.2 + 1.0;
    assert!(
        syncs >= 1.0 && syncs <= commits + timed + c("log_switches"),
        "{syncs} syncs for {commits} commits"
    );
    // Some writes were left to the next sync.
    assert!(writes > syncs, "{writes} writes, {syncs} syncs");
    // What reaches the device: a flush per sync (and a few of XFS's own),
    // not one per write.
    assert!(
        flushes >= 0.8 * syncs && flushes <= syncs + 0.05 * writes + 10.0,
        "{flushes} device flushes, {syncs} syncs, {writes} writes"
    );
}

/// The cgroup's own anonymous memory (memory.stat `rss`), bytes.
fn cgroup_rss(cg: &Path) -> Option<u64> {
    let stat = std::fs::read_to_string(cg.join("memory.stat")).ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("rss "))
        .and_then(|v| v.trim().parse().ok())
}

/// The cgroup's memory beside its page cache: anonymous memory
/// (memory.stat `rss`) and the kernel's (`memory.kmem.usage_in_bytes`), bytes.
fn cgroup_footprint(cg: &Path) -> Option<u64> {
    let kmem = std::fs::read_to_string(cg.join("memory.kmem.usage_in_bytes")).ok()?;
    Some(cgroup_rss(cg)? + kmem.trim().parse::<u64>().ok()?)
}

/// The largest of `measure` on the model's cgroup over a run of `flavor`
/// at 32 sessions under `--memory`.
fn peak_in_cgroup(dir: &Path, flavor: &str, measure: fn(&Path) -> Option<u64>) -> u64 {
    let target = dir.join("data");
    let args = [
        "--flavor",
        flavor,
        "--sessions",
        "32",
        "--scale",
        "1024",
        "--cache",
        "4M",
        "--update-pct",
        "25",
        "--time",
        "4",
        "--memory",
        "256M",
        "--redo-file-size",
        "32M",
    ];
    let mut child = spawn(&target, dir, &args);
    let cg = its_cgroup(&mut child);
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        peak = peak.max(measure(&cg).unwrap_or(0));
        std::thread::sleep(Duration::from_millis(50));
    }
    succeeded(child, &cg);
    peak
}

/// With `--flavor postgres` the bound holds what PostgreSQL's backends hold
/// of their own (1.42 MiB of anonymous memory each, measured), so at 64
/// sessions the page cache has what PostgreSQL's has, not a fifth more.
/// Oracle's flavor holds nothing more.
fn memory_holds_the_backends_own_memory() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let pg = peak_in_cgroup(dir.path(), "postgres", cgroup_rss);
    let ora = peak_in_cgroup(dir.path(), "oracle", cgroup_rss);
    let backends = 32 * 1300 * 1024;
    assert!(
        pg >= backends + (4 << 20),
        "postgres: rss {pg} at 32 sessions"
    );
    assert!(ora < backends, "oracle: rss {ora} at 32 sessions");
    assert!(pg >= ora + backends * 9 / 10, "postgres {pg}, oracle {ora}");
}

/// What `--pg-memory`'s cgroup held beside its page cache under SLOB's load
/// (anonymous, shared and kernel memory beside `shared_buffers`, measured
/// with 8 and 64 backends: 28.5 and 130.6 MiB), for 32 backends: with
/// `--flavor postgres` the model's cgroup holds as much beside its page
/// cache — its cache, its own memory (the kernel's included) and what it
/// holds for the backends — so that its page cache is PostgreSQL's. Before,
/// it held the backends' anonymous memory only, less its sessions' own:
/// about 57 MiB at 32 sessions where PostgreSQL's cgroup held 76 MiB.
fn memory_holds_what_postgresql_holds_beside_its_page_cache() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    let beside_shared_buffers = |n: f64| 28.5 + (130.6 - 28.5) / 56.0 * (n - 8.0);
    let want = 4.0 + beside_shared_buffers(32.0);
    let model = mib(peak_in_cgroup(dir.path(), "postgres", cgroup_footprint));
    assert!(
        (0.95 * want..1.15 * want).contains(&model),
        "32 sessions, --cache 4M: the model's cgroup held {model:.1} MiB beside its page cache, PostgreSQL's {want:.1}"
    );
}

/// `--flavor postgres` through the page cache advises each block a miss
/// reads before reading it (`posix_fadvise(WILLNEED)` of exactly that
/// block, as PostgreSQL's bitmap heap scan does): the run counts one advice
/// per single-block read, each the "data file prefetch" wait, and strace
/// sees the process make exactly that many WILLNEED calls. With O_DIRECT,
/// and in Oracle's flavor, nothing is advised.
fn a_postgres_miss_is_advised_before_it_is_read() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let trace = dir.path().join("strace.out");
    let reads = [
        "--sessions",
        "2",
        "--scale",
        "4096",
        "--cache",
        "4M",
        "--update-pct",
        "0",
    ];
    let strace = ["strace", "-f", "-qq", "-e", "trace=fadvise64", "-o"].map(OsStr::new);
    let wrapper = [&strace[..], &[trace.as_os_str()]].concat();
    let run = [
        "--time",
        "3",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
    ];
    let pg = ["--io", "buffered", "--flavor", "postgres"];
    let args = [&reads[..], &run, &pg].concat();
    let out = spawn_under(&wrapper, &target, dir.path(), &args)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = |k: &str| r["slob"]["run_totals"].get(k).and_then(Value::as_f64);
    let advised = total("prefetches").expect("advice counted");
    assert!(advised > 100.0, "{advised} blocks advised");
    assert_eq!(Some(advised), total("physical_reads"), "one per miss");
    let willneed = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains("POSIX_FADV_WILLNEED"))
        .count();
    assert_eq!(willneed as f64, advised, "WILLNEED calls strace saw");
    let events = r["slob"]["events"].as_array().unwrap();
    let ev = events
        .iter()
        .find(|e| e["name"] == "data file prefetch")
        .expect("the advice is a wait event");
    assert_eq!(
        ev["waits"].as_f64(),
        Some(num(&r, "slob.counters.prefetches"))
    );
    let args = [&reads[..], &["--time", "2"]].concat();
    postgres_through_the_page_cache_only(&target, &args, "physical_reads", "prefetches");
}

/// Two runs of the model in one process (a plan's repeats, as a lab runs
/// its arms): once settled, each run's cgroup holds beside its page cache
/// what PostgreSQL's would at 64 backends, the second as the first. Before,
/// the held memory assumed the model's own was charged to the cgroup; the
/// second run reused memory the first had freed, charged to the first's
/// cgroup, and its cgroup held 9% less anonymous memory, its page cache
/// that much more room than PostgreSQL's.
fn a_second_run_in_one_process_charges_its_cgroup_as_the_first() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("twice.toml");
    let target = dir.path().join("data");
    let text = format!(
        "name = \"pgreads-twice\"\nrepeats = 2\nwarmup = 0\n\n[workload]\n\
         workload = \"slob\"\nflavor = \"postgres\"\nsessions = 64\nscale = 1024\n\
         cache = \"4M\"\nupdate_pct = 25\ntime = 4\nramp = 1\nmemory = \"256M\"\n\
         redo_file_size = \"32M\"\nseed = 7\n\n[variables]\nmodel = {{ target = {:?} }}\n",
        target.display().to_string()
    );
    std::fs::write(&plan, text).unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(["plan", "run"])
        .arg(&plan)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cg = memory_cgroup_of(std::process::id())
        .unwrap()
        .join(format!("dbio-model-{}", child.id()));
    // Each run's cgroup, sampled while it exists: it is made as a run
    // starts and removed as it ends.
    let (mut runs, mut samples, t0) = (Vec::new(), Vec::new(), Instant::now());
    while child.try_wait().unwrap().is_none() {
        match cgroup_footprint(&cg) {
            Some(bytes) => samples.push(bytes),
            None if !samples.is_empty() => runs.push(std::mem::take(&mut samples)),
            None => {}
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the plan never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    succeeded(child, &cg);
    if !samples.is_empty() {
        runs.push(samples);
    }
    assert_eq!(runs.len(), 2, "two runs' cgroups seen");
    // What each run's cgroup held once settled: the median of its last half.
    let settled: Vec<u64> = runs
        .iter_mut()
        .map(|s| {
            let half = s.len() / 2;
            let last = &mut s[half..];
            last.sort_unstable();
            last[last.len() / 2]
        })
        .collect();
    let second = settled[1] as f64 / settled[0] as f64;
    eprintln!("the runs' cgroups beside their page cache, settled: {settled:?}");
    assert!(
        (0.97..1.03).contains(&second),
        "the second run's cgroup held {second:.3} of the first's beside its page cache: {settled:?}"
    );
    // Both hold what PostgreSQL's cgroup would: `shared_buffers` (4 MiB)
    // and its footprint beside it for 64 backends, 130.6 MiB measured.
    let want = 4.0 + 130.6;
    for (i, &b) in settled.iter().enumerate() {
        let mib = b as f64 / (1 << 20) as f64;
        assert!(
            (0.95 * want..1.05 * want).contains(&mib),
            "run {}: {mib:.1} MiB beside the page cache, PostgreSQL's {want}",
            i + 1
        );
    }
}

crate::tests! {
    memory_bounds_the_page_cache_and_its_cgroup_goes [Root, Tool("mkfs.xfs")],
    memory_holds_the_backends_own_memory [Root],
    memory_holds_what_postgresql_holds_beside_its_page_cache [Root],
    wal_is_synced_when_a_commit_waits_not_at_every_write [Root, Tool("mkfs.xfs")],
    a_failing_or_interrupted_run_leaves_no_cgroup [Root],
    capped_db_writers_leave_the_writing_to_the_sessions,
    dirty_buffers_leave_the_cache_as_clean_ones_do,
    the_checkpointer_spreads_its_writes_over_the_cycle,
    the_db_writers_hint_writeback_through_the_page_cache,
    a_postgres_miss_is_advised_before_it_is_read [Tool("strace")],
    a_second_run_in_one_process_charges_its_cgroup_as_the_first [Root],
}
