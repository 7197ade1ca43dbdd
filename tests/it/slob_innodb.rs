//! `--flavor innodb` and the log writer's page-shaped writes, on real
//! devices: an InnoDB-flavoured run on XFS over a direct-io loop device
//! writes every page twice (the doublewrite area, then in place), fsyncs
//! each commit group and each batch, in 16 KiB pages, and names its waits
//! as InnoDB does; a PostgreSQL-flavoured run writes its WAL in whole 8 KiB
//! pages; `dbio clean` removes the doublewrite file with the rest.

use std::path::Path;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio, num};
use crate::common::store::temp_store;
use crate::common::trace::disk_fields;
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The device's write requests, bytes written and flush requests.
fn device_writes(dev: &str) -> [u64; 3] {
    let f = disk_fields(dev);
    [f[4], f[6] * 512, f[15]]
}

fn t(r: &Value, k: &str) -> u64 {
    num(r, &format!("slob.run_totals.{k}")) as u64
}

/// Two sessions, half updates, on `target` with `extra`.
fn run(target: &Path, extra: &[&str]) -> Value {
    Run::slob(target)
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "1000",
            "--cache",
            "4M",
            "--update-pct",
            "50",
            "--work-loop",
            "60",
            "--io",
            "direct",
        ])
        .args(extra)
        .json()
}

/// A run's target on XFS over a new direct-io loop device of 512 MiB
/// (unmounted and detached when the device drops).
fn on_xfs() -> (LoopDev, std::path::PathBuf) {
    let mut dev = LoopDev::new(512 * MIB, true);
    dev.mkfs("xfs");
    let target = dev.mount().join("data");
    (dev, target)
}

/// The InnoDB flavor with one page cleaner.
const INNODB: [&str; 4] = ["--flavor", "innodb", "--db-writers", "1"];

fn innodb_pages_are_written_twice_and_each_commit_group_is_fsynced() {
    let _store = temp_store();
    let (mut dev, target) = on_xfs();
    let innodb = INNODB;
    // Laid out first: the measured run writes only what the model writes.
    run(&target, &innodb);
    let before = device_writes(&dev.name());
    let r = run(&target, &innodb);
    let after = device_writes(&dev.name());
    let [requests, bytes, flushes] = [0, 1, 2].map(|i| after[i] - before[i]);

    assert_eq!(r["config"]["slob"]["flavor"], "innodb");
    assert_eq!(
        r["config"]["slob"]["block_size_bytes"], 16384,
        "InnoDB's page"
    );
    assert_eq!(r["config"]["slob"]["redo_block_bytes"], 512);
    assert_eq!(r["config"]["slob"]["redo_sync"], "fdatasync");
    let pages = t(&r, "physical_writes");
    assert!(pages > 0, "the page cleaner wrote nothing");
    // The doublewrite: every page once more, one write and one fsync per batch.
    assert_eq!(t(&r, "doublewrite_bytes"), pages * 16384);
    let batches = t(&r, "doublewrite_writes");
    assert!(batches > 0 && batches <= pages);
    assert_eq!(t(&r, "write_requests"), pages + batches);
    assert_eq!(t(&r, "write_bytes"), 2 * pages * 16384);
    // One datafile: the doublewrite file and it, fsynced after each batch,
    // and the doublewrite file once more after a batch that wrote undo
    // pages in place there.
    let syncs = t(&r, "datafile_syncs");
    assert!(
        syncs >= 2 * batches && syncs <= 3 * batches,
        "{syncs} fsyncs for {batches} batches"
    );
    assert_eq!(syncs > 2 * batches, t(&r, "undo_writes") > 0);
    // Redo: a write (and its fsync) per commit group, never more than one
    // per commit, per checkpoint its record's group and its block, and per
    // batch at most one ahead of its pages.
    let groups = t(&r, "redo_writes");
    let checkpoints = r["slob"]["run_totals"]["log_checkpoints"]
        .as_u64()
        .unwrap_or(0);
    let tx = t(&r, "transactions");
    assert!(
        groups > 0 && groups <= tx + 2 * checkpoints + batches,
        "{groups} log writes for {tx} commits, {checkpoints} checkpoints, {batches} batches"
    );
    assert_eq!(t(&r, "redo_written_bytes") % 512, 0);

    // At the device: each page twice plus the redo (XFS adds a little).
    let expected = 2 * pages * 16384 + t(&r, "redo_written_bytes");
    assert!(
        bytes >= expected && bytes <= expected + expected / 10 + MIB,
        "device wrote {bytes} B, the model {expected} B"
    );
    let writes = pages + batches + groups;
    assert!(
        requests >= writes.saturating_sub(writes / 20) && requests <= writes + writes / 5 + 64,
        "device write requests {requests}, the model's {writes}"
    );
    // A flush per redo write and per fsync after a batch.
    let syncs = groups + t(&r, "datafile_syncs");
    assert!(
        flushes >= syncs,
        "{flushes} device flushes for {syncs} fsyncs"
    );
    // Waits under InnoDB's names, in the JSON and the text.
    let names: Vec<&str> = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"innodb_log_file sync (commit)"),
        "{names:?}"
    );
    assert!(names.contains(&"page cleaner flush batch"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("db file")), "{names:?}");

    // The doublewrite file sits beside the redo logs, one batch per writer
    // and then the 256 undo pages, and `dbio clean` removes it with them.
    let dw = target.join("dbio-dblwr");
    let file = std::fs::read_dir(&dw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dat"))
        .expect("the doublewrite file");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), (128 + 256) * 16384);
    dbio()
        .args(["clean", "--target"])
        .arg(&target)
        .assert()
        .success();
    assert!(!dw.exists(), "dbio clean left {}", dw.display());
    dev.umount();
}

/// The InnoDB flavor's run on `target` with `sessions` sessions, O_DIRECT,
/// the `shape` and `work` options: run twice, the first laying out and
/// warming, the second measured (its JSON).
fn measured(target: &Path, sessions: &str, shape: &[&str], work: &[&str]) -> Value {
    let run = || {
        Run::slob(target)
            .args(&INNODB)
            .args(&["--sessions", sessions, "--io", "direct"])
            .args(shape)
            .args(work)
            .json()
    };
    run();
    run()
}

/// The counter `k` of the run's totals, 0 when the JSON leaves it out
/// (counters that are zero are left out).
fn t0(r: &Value, k: &str) -> u64 {
    r["slob"]["run_totals"][k].as_u64().unwrap_or(0)
}

/// InnoDB's group commit (MariaDB 10.11's `log_write_up_to`): no log
/// writer thread; a committing session whose redo is not yet durable
/// writes and fsyncs the log itself when no write is in progress. One
/// session alone leads (nearly) every commit: a log write and an fsync of
/// its own per commit; the page cleaner's flush rounds each end in a
/// checkpoint (the log made durable, then a checkpoint block written and
/// fsynced). Eight sessions committing at once mostly find a write in
/// progress and are covered by it: fewer log writes than commits. Every
/// fsync reaches the device as a flush.
fn innodb_sessions_write_and_fsync_the_log_themselves() {
    let _store = temp_store();
    let (mut dev, target) = on_xfs();
    let one = [&INNODB[..], &["--sessions", "1"]].concat();
    let solo = |extra: &[&str]| {
        Run::slob(&target)
            .args(&["--scale", "1000", "--cache", "4M", "--update-pct", "50"])
            .args(&["--work-loop", "120", "--io", "direct"])
            .args(extra)
            .json()
    };
    solo(&one);
    let before = device_writes(&dev.name());
    let r = solo(&one);
    let flushes = device_writes(&dev.name())[2] - before[2];

    let tx = t(&r, "transactions");
    assert!(tx > 20, "{tx} commits");
    let led = t0(&r, "commits_led");
    assert!(
        led <= tx && led >= tx - tx / 10,
        "one session led {led} of its {tx} commits"
    );
    let checkpoints = t0(&r, "log_checkpoints");
    assert!(checkpoints > 0, "no checkpoint after the flush rounds");
    let (writes, syncs) = (t(&r, "redo_writes"), t(&r, "redo_syncs"));
    assert!(
        writes >= led + checkpoints,
        "{writes} log writes for {led} groups and {checkpoints} checkpoints"
    );
    assert_eq!(syncs, writes, "a write and an fsync, each time");
    let all = syncs + t(&r, "datafile_syncs");
    assert!(flushes >= all, "{flushes} device flushes for {all} fsyncs");
    // The sessions' row of the I/O profile has their log writes.
    let sessions = &r["slob"]["io_by_function"][0];
    assert_eq!(sessions["function"], "Sessions");
    assert!(sessions["write_requests_per_s"].as_f64().unwrap() > 0.0);

    // Eight sessions, every operation a commit, the data in the cache:
    // commits overlap, and a leader's write covers its followers'.
    let r = measured(
        &target,
        "8",
        &["--scale", "64", "--cache", "16M", "--update-pct", "100"],
        &["--work-unit", "4", "--work-loop", "150"],
    );
    let tx = t(&r, "transactions");
    let led = t0(&r, "commits_led");
    assert!(led > 0, "no session led a group");
    assert!(
        led < tx - tx / 10,
        "eight sessions led {led} groups for {tx} commits: no group commit"
    );
    assert!(t(&r, "redo_writes") < tx, "a log write per commit");
    dev.umount();
}

/// Four sessions always updating 1000 blocks through a 4 MiB cache (256
/// pages: flush rounds come often), 100 operations each, with `extra`.
fn four_updating(target: &Path, extra: &[&str]) -> Value {
    let work = [&["--work-loop", "100"][..], extra].concat();
    let shape = ["--scale", "1000", "--cache", "4M", "--update-pct", "100"];
    measured(target, "4", &shape, &work)
}

/// MariaDB's page cleaner writes the log ahead of its pages (traced at 8
/// sessions: 0.25-0.31 log writes a commit besides its checkpoints', and
/// 0.11-0.14 by the I/O threads that complete doublewrite batches): each
/// flush round begins with everything generated so far made durable
/// (`buf_flush_LRU`'s `log_buffer_flush_to_disk`), and InnoDB logs a
/// row's change as it is made, so there is redo not yet durable between
/// commits. With sessions always updating, the log writer (standing for
/// the page cleaner) leads a group for most flush rounds beside the
/// checkpoints' own two writes (its FILE_CHECKPOINT record, when not
/// joined, and the checkpoint block) — at least one for every two rounds
/// (a session's group may cover it: 0.87 a round in one run, MariaDB's
/// 0.9-1.2 a checkpoint); before, it led almost none.
fn each_flush_round_begins_with_the_log_made_durable() {
    let _store = temp_store();
    let (mut dev, target) = on_xfs();
    let r = four_updating(&target, &[]);
    let tx = t(&r, "transactions");
    let led = t0(&r, "commits_led");
    let checkpoints = t0(&r, "log_checkpoints");
    assert!(
        checkpoints > 10,
        "{checkpoints} flush rounds in {tx} commits"
    );
    let background = t(&r, "redo_writes") - led;
    let beside = background.saturating_sub(2 * checkpoints);
    let rounds = t0(&r, "flush_rounds");
    assert!(
        2 * beside >= rounds,
        "the log writer led {background} groups for {checkpoints} checkpoints: \
         {beside} beside the checkpoints', fewer than one in two of {rounds} flush rounds"
    );
    // The sessions still lead most commits' groups.
    assert!(led > tx / 2, "the sessions led {led} of {tx} commits");
    dev.umount();
}

/// MariaDB 10.11's page cleaner (`buf_flush_page_cleaner`, buf0flu.cc)
/// ends an LRU flush round when the free list is refilled, at the LRU
/// list's end or after `innodb_io_capacity_max` pages, and then calls
/// `log_checkpoint`, which writes a checkpoint only when the pool's oldest
/// modification moved since the last (`log_checkpoint_low`). In a real
/// run: the rounds are counted (`flush_rounds`, MariaDB's
/// `buffer_LRU_batch_num_scan`), no more checkpoints than rounds, and
/// every checkpoint is in the model's cycle book, so the report says how
/// many the window held and how much redo its last left behind (the
/// checkpoint age); before, the book had none of them.
fn innodb_checkpoints_follow_the_flush_rounds_and_are_in_the_cycle() {
    let _store = temp_store();
    let (mut dev, target) = on_xfs();
    // Log files too large to switch: every checkpoint is a page cleaner's.
    let r = four_updating(&target, &["--redo-file-size", "32M"]);
    assert_eq!(t0(&r, "log_switches"), 0, "a log switch's checkpoint");
    let rounds = t0(&r, "flush_rounds");
    let checkpoints = t0(&r, "log_checkpoints");
    assert!(rounds > 5, "{rounds} flush rounds counted");
    assert!(
        checkpoints > 0 && checkpoints <= rounds,
        "{checkpoints} checkpoints after {rounds} flush rounds"
    );
    let cycle = &r["slob"]["checkpoint_cycle"];
    let inside = |k: &str| cycle[k].as_f64().unwrap_or(0.0) as u64;
    let counted = r["slob"]["counters"]["log_checkpoints"]
        .as_u64()
        .unwrap_or(0);
    assert!(counted > 0, "no checkpoint inside the window");
    assert_eq!(
        (inside("checkpoints_begun"), inside("checkpoints_completed")),
        (counted, counted),
        "the cycle book's checkpoints inside the window: {cycle}"
    );
    // The last checkpoint is at the pool's oldest modification: at or
    // below the log's end, so its age is within the redo generated.
    let age = cycle["close_log_bytes_since"].as_f64().unwrap();
    let redo = t(&r, "redo_bytes") as f64;
    assert!(
        age >= 0.0 && age <= redo,
        "checkpoint age {age} of {redo} redo bytes"
    );
    dev.umount();
}

/// The device's read requests.
fn device_reads(dev: &str) -> u64 {
    disk_fields(dev)[0]
}

/// Undo pages at the device: with the redo logs (and so the doublewrite
/// file, which holds the undo pages) on a device of their own, every update
/// changes its rollback segment's undo log page and header and the purge
/// of the session's transaction before it changes that one's header (3
/// changes a transaction, 2 for a session's first); the page cleaners write
/// them in place there and the sessions read them there — where the log
/// writer and the doublewrite alone never read.
fn undo_pages_are_changed_written_and_read_where_the_doublewrite_is() {
    let _store = temp_store();
    let mut data_dev = LoopDev::new(512 * MIB, true);
    data_dev.mkfs("xfs");
    let data_mnt = data_dev.mount();
    let mut log_dev = LoopDev::new(512 * MIB, true);
    log_dev.mkfs("xfs");
    let log_mnt = log_dev.mount();
    let target = data_mnt.join("data");
    let innodb = [
        "--flavor",
        "innodb",
        "--db-writers",
        "1",
        "--redo-dir",
        log_mnt.to_str().unwrap(),
    ];
    run(&target, &innodb);
    let (reads0, writes0) = (
        device_reads(&log_dev.name()),
        device_writes(&log_dev.name()),
    );
    let r = run(&target, &innodb);
    let reads = device_reads(&log_dev.name()) - reads0;
    let writes = device_writes(&log_dev.name())[0] - writes0[0];

    let tx = t(&r, "transactions");
    assert!(tx > 2, "{tx} transactions");
    assert_eq!(t(&r, "undo_changes"), 3 * tx - 2, "two sessions");
    assert!(t(&r, "block_changes") > t(&r, "undo_changes"));
    let undo_writes = t(&r, "undo_writes");
    assert!(
        undo_writes > 0 && undo_writes <= t(&r, "physical_writes"),
        "{undo_writes} undo pages written"
    );
    // Each undo page the sessions touched was read in from the undo area
    // at least once (the cache starts empty).
    assert!(reads > 0, "no reads on the undo pages' device");
    assert!(reads <= t(&r, "read_requests"));
    // Written in place there, beside the redo and the doublewrite.
    let own = t(&r, "redo_writes") + t(&r, "doublewrite_writes") + undo_writes;
    assert!(
        writes >= own - own / 20,
        "{writes} write requests on the log device for {own}"
    );
    data_dev.umount();
    log_dev.umount();
}

/// Under `--memory` the InnoDB flavor keeps O_DIRECT (InnoDB's
/// `innodb_flush_method=O_DIRECT`, which `--mysql-memory` leaves alone):
/// every read the model makes reaches the device, none is absorbed by the
/// bounded page cache.
fn memory_keeps_the_innodb_flavor_direct() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 * MIB, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let target = mnt.join("data");
    let args = [
        "--flavor",
        "innodb",
        "--db-writers",
        "1",
        "--memory",
        "128M",
    ];
    run(&target, &args);
    let before = device_reads(&dev.name());
    let r = run(&target, &args);
    let reads = device_reads(&dev.name()) - before;
    assert_eq!(r["config"]["io_mode"], "direct", "{}", r["config"]);
    assert_eq!(r["config"]["slob"]["memory_bytes"], 128u64 << 20);
    let model = t(&r, "read_requests");
    assert!(model > 100, "{model} reads");
    assert!(
        reads >= model - model / 20,
        "device {reads} reads, the model {model}"
    );
    dev.umount();
}

fn postgres_writes_its_wal_in_whole_8k_pages() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&dir.path().join("data"), &["--flavor", "postgres"]);
    assert_eq!(r["config"]["slob"]["redo_block_bytes"], 8192);
    let (writes, written) = (t(&r, "redo_writes"), t(&r, "redo_written_bytes"));
    assert!(writes > 0);
    // Every write is whole pages: a partly filled page is written again,
    // fuller, by the next write (not padded and skipped).
    assert_eq!(written % 8192, 0, "{written} B in {writes} writes");
    assert!(written >= 8192 * writes);
    assert_eq!(written, t(&r, "redo_bytes") + t(&r, "redo_wastage_bytes"));
}

fn the_innodb_flavor_is_refused_with_redo_stress() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let out = dbio()
        .args(["run", "--workload", "slob", "--target"])
        .arg(&t)
        .args(["--flavor", "innodb", "--redo-stress", "heavy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--redo-stress") && err.contains("--flavor innodb"),
        "{err}"
    );
    assert!(!t.exists(), "nothing laid out");
}

/// Bytes free to an unprivileged file on the filesystem at `dir`.
fn free_bytes(dir: &Path) -> u64 {
    let st = rustix::fs::statvfs(dir).unwrap();
    st.f_bavail * st.f_frsize
}

/// The free-space check counts the doublewrite file: on a filesystem that
/// holds the data files and redo logs with 5–7 MiB to spare, an 8 MiB
/// doublewrite file (one page cleaner's batch of 256 pages, then 256 undo
/// pages) is refused in one line before anything is laid out, and a
/// 4.1 MiB one (batches of 8) runs.
fn the_space_check_counts_the_doublewrite_file() {
    let _store = temp_store();
    let mut dev = LoopDev::new(64 * MIB, false);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let target = mnt.join("data");
    // One schema of 128 pages: one extent, 2 MiB of data file.
    let data = 128 * 16384;
    let free = free_bytes(&mnt);
    let redo_file = (free - data - 5 * MIB) / 2 / MIB;
    let redo_file = format!("{redo_file}M");
    let with_batch = |batch: &str| {
        Run::slob(&target)
            .args(&[
                "--flavor",
                "innodb",
                "--sessions",
                "1",
                "--scale",
                "128",
                "--cache",
                "1M",
                "--work-loop",
                "20",
                "--redo-files",
                "2",
                "--redo-file-size",
                &redo_file,
                "--db-writers",
                "1",
                "--dbwr-batch",
                batch,
            ])
            .output()
    };

    let out = with_batch("256");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for want in [
        "not enough free space in ",
        "a doublewrite file of 8 MiB (--db-writers 1 x --dbwr-batch 256 pages, and 256 undo pages)",
        "--dbwr-batch",
    ] {
        assert!(err.contains(want), "{want:?} not in {err}");
    }
    assert!(
        !target.exists(),
        "refused, yet {} was made",
        target.display()
    );

    let out = with_batch("8");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(target.join("dbio-dblwr").exists());
    dbio()
        .args(["clean", "--target"])
        .arg(&target)
        .assert()
        .success();
    dev.umount();
}

crate::tests! {
    innodb_pages_are_written_twice_and_each_commit_group_is_fsynced [Root, Tool("mkfs.xfs")],
    innodb_sessions_write_and_fsync_the_log_themselves [Root, Tool("mkfs.xfs")],
    each_flush_round_begins_with_the_log_made_durable [Root, Tool("mkfs.xfs")],
    innodb_checkpoints_follow_the_flush_rounds_and_are_in_the_cycle [Root, Tool("mkfs.xfs")],
    undo_pages_are_changed_written_and_read_where_the_doublewrite_is [Root, Tool("mkfs.xfs")],
    memory_keeps_the_innodb_flavor_direct [Root, Tool("mkfs.xfs")],
    postgres_writes_its_wal_in_whole_8k_pages,
    the_innodb_flavor_is_refused_with_redo_stress,
    the_space_check_counts_the_doublewrite_file [Root, Tool("mkfs.ext4")],
}
