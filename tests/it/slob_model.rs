//! The SLOB model (`--workload slob`) on real files: its accounting
//! invariants, the behaviours the issue names (no writes without updates, no
//! block read twice with a big cache, redo-bound with all updates), blocks on
//! disk that verify after DB writers wrote them, and bad input.

use std::path::Path;

use crate::common::run::{Run, dbio, num};
use crate::common::store::{store_path, temp_store};
use dbio::storage::block::verify;
use serde_json::Value;

/// A small, fast model on `dir`/data.
fn slob(dir: &Path, extra: &[&str]) -> Value {
    Run::slob(&dir.join("data")).args(extra).json()
}

fn n(v: &Value, path: &str) -> f64 {
    num(v, path)
}

/// The event named `name`: (waits, time_s), zero when absent.
fn event(r: &Value, name: &str) -> (u64, f64) {
    r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| (e["waits"].as_u64().unwrap(), e["time_s"].as_f64().unwrap()))
        .unwrap_or((0, 0.0))
}

/// The invariants every run must keep, on its whole-run totals.
fn check_invariants(r: &Value) {
    let t = |k: &str| n(r, &format!("slob.run_totals.{k}")) as u64;
    assert_eq!(
        t("logical_reads"),
        t("cache_hits") + t("physical_reads"),
        "logical reads = cache hits + physical reads"
    );
    assert!(
        t("physical_writes") <= t("blocks_dirtied"),
        "DB writers wrote {} blocks but only {} were dirtied",
        t("physical_writes"),
        t("blocks_dirtied")
    );
    assert!(t("blocks_dirtied") <= t("block_changes"));
    assert_eq!(
        t("redo_written_bytes"),
        t("redo_bytes") + t("redo_wastage_bytes"),
        "redo written = generated + wastage"
    );
    assert_eq!(t("transactions"), t("updates"), "one commit per update");
    assert_eq!(
        t("executes"),
        t("selects") + t("updates") + t("scans"),
        "every operation is a select, an update or a scan"
    );
}

fn invariants_hold_and_every_wait_is_in_one_event() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Small cache (evictions, DB writer batches, free buffer waits), small
    // redo logs (switches and checkpoints), updates, scans.
    let r = slob(
        dir.path(),
        &[
            "--sessions",
            "4",
            "--scale",
            "1000",
            "--cache",
            "512K",
            "--update-pct",
            "30",
            "--scan-pct",
            "10",
            "--scan-size",
            "8",
            "--redo-stress",
            "heavy",
            "--work-loop",
            "200",
        ],
    );
    assert_eq!(r["status"], "completed");
    check_invariants(&r);
    // A --work-loop run measures everything: window = whole run.
    assert_eq!(r["slob"]["counters"], r["slob"]["run_totals"]);
    let c = |k: &str| n(&r, &format!("slob.counters.{k}")) as u64;
    // Exact mix: 200 operations per session, 30% updates, 10% scans.
    assert_eq!(c("executes"), 4 * 200);
    assert_eq!(c("updates"), 4 * 60);
    assert_eq!(c("scans"), 4 * 20);
    // Every commit waited once in log file sync; every read request is one
    // read event; every log write one log file parallel write.
    assert_eq!(event(&r, "log file sync").0, c("transactions"));
    assert_eq!(
        event(&r, "db file sequential read").0 + event(&r, "db file scattered read").0,
        c("read_requests")
    );
    assert!(
        event(&r, "db file scattered read").0 > 0,
        "scans read multi-block"
    );
    assert_eq!(event(&r, "log file parallel write").0, c("redo_writes"));
    assert!(c("physical_writes") > 0, "the DB writer wrote dirty blocks");
    assert!(c("log_switches") > 0, "2 MiB redo logs switched");
    // Foreground waits fit in DB time; DB CPU is the rest.
    let fg: f64 = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["side"] == "foreground")
        .map(|e| e["time_s"].as_f64().unwrap())
        .sum();
    let db_time = n(&r, "slob.db_time_s");
    assert!(
        fg <= db_time * 1.001,
        "waits {fg} s exceed DB time {db_time} s"
    );
    let cpu = n(&r, "slob.db_cpu_s");
    assert!(cpu > 0.0, "sessions used CPU");
    assert!(
        cpu <= db_time * 1.01,
        "DB CPU {cpu} s within DB time {db_time} s"
    );
    let rest = n(&r, "slob.cpu_wait_s");
    assert!(
        (db_time - cpu - fg).max(0.0) - rest < 1e-6,
        "DB time = CPU + waits + CPU wait"
    );
    // The plain I/O statistics agree with the model's counters.
    assert_eq!(n(&r, "read.requests") as u64, c("read_requests"));
    assert_eq!(
        n(&r, "write.requests") as u64,
        c("write_requests") + c("redo_writes")
    );
    // What the DB writer wrote verifies: right block, right file, intact.
    let file = dir.path().join("data").join("dbio-data-0000.dat");
    let bytes = std::fs::read(&file).unwrap();
    let mut rewritten = 0;
    for (i, b) in bytes.chunks(8192).enumerate() {
        let h = verify(b, Some((0, i as u64))).unwrap_or_else(|e| panic!("block {i}: {e}"));
        rewritten += usize::from(h.generation > 0);
    }
    assert!(
        rewritten as u64 >= c("physical_writes").min(1),
        "no block carries a DB writer generation"
    );
}

fn update_pct_0_writes_nothing_and_generates_no_redo() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = slob(
        dir.path(),
        &[
            "--sessions",
            "3",
            "--scale",
            "800",
            "--cache",
            "256K",
            "--update-pct",
            "0",
            "--work-loop",
            "50",
        ],
    );
    check_invariants(&r);
    let c = |k: &str| n(&r, &format!("slob.counters.{k}")) as u64;
    assert!(c("physical_reads") > 0);
    for k in [
        "write_requests",
        "physical_writes",
        "redo_bytes",
        "redo_writes",
        "transactions",
        "block_changes",
    ] {
        assert_eq!(c(k), 0, "{k}");
    }
    assert!(r["write"].is_null(), "no write I/O at all");
    assert_eq!(event(&r, "log file sync").0, 0);
}

fn a_cache_larger_than_the_data_reads_each_block_at_most_once() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // 2 schemas x 256 blocks = 4 MiB of data, 32 MiB of cache.
    let r = slob(
        dir.path(),
        &[
            "--sessions",
            "2",
            "--scale",
            "256",
            "--cache",
            "32M",
            "--update-pct",
            "0",
            "--ramp",
            "1",
            "--time",
            "1",
        ],
    );
    check_invariants(&r);
    let c = |k: &str| n(&r, &format!("slob.counters.{k}")) as u64;
    assert!(c("logical_reads") > 1000, "sessions kept reading");
    assert!(
        n(&r, "slob.run_totals.physical_reads") > 0.0,
        "the blocks were read in"
    );
    every_block_is_read_at_most_once(&r);
}

/// With a cache that holds the data, no block is read from the device
/// twice: the run's physical reads are at most its blocks. Not "none in
/// the window": how many blocks a 1 s ramp touches depends on the CPU the
/// sessions got (on a loaded host the window read half of them).
fn every_block_is_read_at_most_once(r: &Value) {
    let blocks = n(r, "config.size_bytes") / n(r, "config.block_size_bytes");
    let read = n(r, "slob.run_totals.physical_reads");
    assert!(read <= blocks, "{read} physical reads of {blocks} blocks");
}

fn all_updates_with_a_big_cache_are_redo_bound() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = slob(
        dir.path(),
        &[
            "--sessions",
            "4",
            "--scale",
            "256",
            "--cache",
            "32M",
            "--update-pct",
            "100",
            "--redo-file-size",
            "64M",
            "--log-buffer",
            "1M",
            "--ramp",
            "1",
            "--time",
            "2",
        ],
    );
    check_invariants(&r);
    // The log writer is the busier writer: it writes for every commit
    // group, the DB writers only what a full cache of dirty blocks needs.
    // Counted in writes, not in seconds: on a loaded host one DB writer
    // write waiting for a CPU or a shared disk can outlast many small redo
    // writes (here 400-500 redo writes against 30-45 DB writer writes).
    let (lfpw_waits, _) = event(&r, "log file parallel write");
    let (dfpw_waits, _) = event(&r, "db file parallel write");
    assert!(
        lfpw_waits > 2 * dfpw_waits,
        "log file parallel write {lfpw_waits} writes should outnumber db file parallel write {dfpw_waits}"
    );
    // The top foreground wait is the commit.
    let top = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["side"] == "foreground")
        .max_by(|a, b| {
            a["time_s"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["time_s"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(top["name"], "log file sync");
    every_block_is_read_at_most_once(&r);
}

fn sessions_of_one_schema_share_blocks_and_wait_for_each_others_reads() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = slob(
        dir.path(),
        &[
            "--schemas",
            "1",
            "--threads-per-schema",
            "8",
            "--scale",
            "256",
            "--cache",
            "256K",
            "--update-pct",
            "0",
            "--work-loop",
            "100",
        ],
    );
    check_invariants(&r);
    assert_eq!(n(&r, "config.sessions"), 8.0);
    let (waits, _) = event(&r, "read by other session");
    assert!(waits > 0, "8 sessions on 256 shared blocks never met");
}

fn sessions_of_one_schema_wait_for_each_others_row_locks_and_schemas_never_do() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let run = |layout: &[&str]| {
        let mut args = layout.to_vec();
        args.extend([
            "--scale",
            "192",
            "--work-unit",
            "32",
            "--cache",
            "8M",
            "--update-pct",
            "100",
            "--work-loop",
            "300",
        ]);
        let r = slob(dir.path(), &args);
        check_invariants(&r);
        r
    };
    // Four threads updating 32 of the same 192 rows at a time, each holding
    // them until its commit is durable: they meet.
    let shared = run(&["--schemas", "1", "--threads-per-schema", "4"]);
    let (waits, time_s) = event(&shared, "enq: TX - row lock contention");
    assert!(
        waits > 0 && time_s > 0.0,
        "4 sessions on 192 rows never met"
    );
    let e = shared["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "enq: TX - row lock contention")
        .unwrap();
    assert_eq!(
        (e["class"].as_str(), e["side"].as_str()),
        (Some("Application"), Some("foreground"))
    );
    assert_eq!(n(&shared, "slob.run_totals.transactions"), 1200.0);
    // Four schemas of one thread each: disjoint rows, no row lock waits.
    let apart = run(&["--schemas", "4"]);
    assert_eq!(event(&apart, "enq: TX - row lock contention").0, 0);
    assert_eq!(n(&apart, "slob.run_totals.transactions"), 1200.0);
}

fn a_bigger_redo_block_wastes_more() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let run = |rb: &str| {
        slob(
            dir.path(),
            &[
                "--sessions",
                "2",
                "--scale",
                "256",
                "--cache",
                "8M",
                "--update-pct",
                "100",
                "--work-loop",
                "100",
                "--redo-block",
                rb,
            ],
        )
    };
    let (small, big) = (run("512"), run("4096"));
    check_invariants(&small);
    check_invariants(&big);
    let waste =
        |r: &Value| n(r, "slob.counters.redo_wastage_bytes") / n(r, "slob.counters.redo_writes");
    assert!(waste(&small) < 512.0);
    assert!(
        waste(&big) > waste(&small),
        "{} vs {}",
        waste(&big),
        waste(&small)
    );
    assert_eq!(
        n(&small, "slob.counters.redo_bytes"),
        n(&big, "slob.counters.redo_bytes"),
        "same operations, same redo"
    );
}

fn the_text_report_speaks_awr() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let out = dbio()
        .args([
            "run",
            "--quiet",
            "--workload",
            "slob",
            "--target",
            target.to_str().unwrap(),
            "--sessions",
            "2",
            "--scale",
            "300",
            "--cache",
            "256K",
            "--update-pct",
            "50",
            "--redo-file-size",
            "2M",
            "--log-buffer",
            "512K",
            "--work-loop",
            "30",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "Load Profile",
        "Per Transaction",
        "Top Timed Events",
        "DB CPU",
        "db file sequential read",
        "log file sync",
        "Commit",
        "Background Wait Events",
        "IO Profile by Function",
        "LGWR",
        "Wait Event Histogram",
    ] {
        assert!(text.contains(needle), "report lacks {needle:?}:\n{text}");
    }
    // The store keeps the model's metrics under the names analysis uses.
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM metrics WHERE name LIKE 'db.%' OR name LIKE 'event.%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for want in [
        "db.physical_reads_per_s",
        "db.redo_mib_per_s",
        "db.transactions_per_s",
        "event.log_file_sync.waits_per_s",
        "event.log_file_sync.avg_ms",
        "event.db_file_sequential_read.avg_ms",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "no metric {want} in {names:?}"
        );
    }
}

fn refused(args: &[&str], needles: &[&str]) {
    let out = dbio()
        .args(["run", "--workload", "slob"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
}

fn bad_model_settings_are_refused_in_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let t = t.to_str().unwrap();
    refused(
        &["--target", t, "--work-unit", "2"],
        &["--work-unit 2", "3 to 1024"],
    );
    refused(
        &["--target", t, "--update-pct", "101"],
        &["--update-pct 101", "0 to 100"],
    );
    refused(
        &["--target", t, "--sessions", "16", "--cache", "128K"],
        &["--cache 128 KiB", "minimum", "256 KiB"],
    );
    refused(
        &["--target", t, "--redo-file-size", "1M"],
        &[
            "--redo-file-size 1 MiB",
            "smaller than one log write",
            "4 MiB",
        ],
    );
    refused(
        &["--target", t, "--pattern", "randread"],
        &["--pattern", "--workload slob"],
    );
    refused(&["--target", t, "--ops", "10"], &["--ops", "--work-loop"]);
    // Model options without the model.
    let out = dbio()
        .args(["run", "--target", t, "--scale", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scale applies to --workload slob"));
    let out = dbio()
        .args(["run", "--target", t, "--dbwr-engine", "psync"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--dbwr-engine applies to --workload slob")
    );
    refused(
        &["--target", t, "--dbwr-engine", "aio"],
        &["aio", "psync", "io_uring"],
    );
    assert!(!dir.path().join("data").exists(), "nothing was laid out");
}

fn clean_removes_the_redo_logs_too_and_nothing_else() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    slob(
        dir.path(),
        &[
            "--sessions",
            "1",
            "--scale",
            "100",
            "--cache",
            "256K",
            "--work-loop",
            "5",
        ],
    );
    let data = dir.path().join("data");
    let redo = data.join("dbio-redo");
    assert_eq!(
        std::fs::read_dir(&redo).unwrap().count(),
        3 + 1,
        "3 logs + manifest"
    );
    std::fs::write(data.join("mine.txt"), "keep").unwrap();
    let out = dbio()
        .args(["clean", "--target", data.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!redo.exists(), "the redo directory dbio made is gone");
    assert_eq!(
        std::fs::read_to_string(data.join("mine.txt")).unwrap(),
        "keep"
    );
}

fn the_data_grows_with_the_schemas_and_is_reused_when_smaller() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let run = |sessions: &str| {
        slob(
            dir.path(),
            &[
                "--sessions",
                sessions,
                "--scale",
                "256",
                "--cache",
                "256K",
                "--update-pct",
                "0",
                "--work-loop",
                "5",
            ],
        )
    };
    let file = dir.path().join("data").join("dbio-data-0000.dat");
    let one = run("1");
    assert_eq!(one["target"]["layout"]["reused"], false);
    let small = std::fs::metadata(&file).unwrap().len();
    let three = run("3");
    assert_eq!(three["target"]["layout"]["reused"], false, "grown");
    let big = std::fs::metadata(&file).unwrap().len();
    assert!(big > small, "{big} > {small}");
    assert_eq!(
        three["target"]["layout"]["bytes"].as_u64().unwrap(),
        big - small,
        "only the tail was written"
    );
    let two = run("2");
    assert_eq!(
        two["target"]["layout"]["reused"], true,
        "a bigger layout serves fewer schemas"
    );
    assert_eq!(std::fs::metadata(&file).unwrap().len(), big);
    let bytes = std::fs::read(&file).unwrap();
    for (i, b) in bytes.chunks(8192).enumerate() {
        verify(b, Some((0, i as u64))).unwrap_or_else(|e| panic!("block {i}: {e}"));
    }
}

fn a_model_run_on_tmpfs_records_host_telemetry_like_a_raw_run() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").expect("a directory in /dev/shm");
    // tmpfs has no block device; the host is still sampled.
    let r = slob(
        dir.path(),
        &[
            "--sessions",
            "2",
            "--scale",
            "800",
            "--time",
            "1.2",
            "--interval",
            "0.5",
        ],
    );
    assert_eq!(r["storage"]["links"][0]["fs_type"], "tmpfs");
    let host = &r["telemetry_window"]["host"];
    assert!(
        host["user_pct"].as_f64().is_some(),
        "window host CPU: {host}"
    );
    let points = r["telemetry"].as_array().expect("telemetry points");
    assert!(points.len() >= 2, "a point every 0.5 s: {points:?}");
    assert!(points.iter().all(|p| p["host"]["idle_pct"].is_number()));
}

fn a_second_run_reuses_the_data_and_the_redo_logs() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        Run::slob(&dir.path().join("data"))
            .args(&[
                "--sessions",
                "2",
                "--scale",
                "400",
                "--update-pct",
                "50",
                "--work-loop",
                "40",
            ])
            .output()
    };
    let first = run();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // The first run's log writer overwrote the redo logs with redo: still dbio's.
    let second = run();
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{err}");
    assert!(!err.contains("laying it out again"), "{err}");
}

crate::tests! {
    a_second_run_reuses_the_data_and_the_redo_logs,
    invariants_hold_and_every_wait_is_in_one_event,
    update_pct_0_writes_nothing_and_generates_no_redo,
    a_cache_larger_than_the_data_reads_each_block_at_most_once,
    all_updates_with_a_big_cache_are_redo_bound,
    sessions_of_one_schema_share_blocks_and_wait_for_each_others_reads,
    sessions_of_one_schema_wait_for_each_others_row_locks_and_schemas_never_do,
    a_bigger_redo_block_wastes_more,
    the_text_report_speaks_awr,
    bad_model_settings_are_refused_in_one_line,
    clean_removes_the_redo_logs_too_and_nothing_else,
    the_data_grows_with_the_schemas_and_is_reused_when_smaller,
    a_model_run_on_tmpfs_records_host_telemetry_like_a_raw_run,
}
