//! The SLOB model beyond the basics: the io_uring DB writer (batches in
//! flight), Ctrl-C in the middle of a run, and a tablespace on a block
//! device (root: a loop device) with its redo logs in a directory.

use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::common::loopdev::LoopDev;
use crate::common::run::{dbio, num, wait_for_cpu};
use crate::common::store::{store_path, temp_store};
use dbio::storage::block::verify;
use serde_json::Value;

fn n(v: &Value, path: &str) -> u64 {
    num(v, path) as u64
}

fn json_run(args: &[&str]) -> Value {
    let out = dbio()
        .args(["run", "--json", "--workload", "slob"])
        .args(args)
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).expect("one JSON document")
}

fn the_io_uring_db_writer_writes_batches_and_keeps_the_invariants() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let r = json_run(&[
        "--target",
        target.to_str().unwrap(),
        "--dbwr-engine",
        "io_uring",
        "--dbwr-batch",
        "16",
        "--sessions",
        "3",
        "--scale",
        "600",
        "--cache",
        "384K",
        "--update-pct",
        "40",
        "--redo-stress",
        "heavy",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
        "--work-loop",
        "150",
        "--seed",
        "11",
    ]);
    let t = |k: &str| n(&r, &format!("slob.run_totals.{k}"));
    assert_eq!(t("logical_reads"), t("cache_hits") + t("physical_reads"));
    assert!(t("physical_writes") > 0 && t("physical_writes") <= t("blocks_dirtied"));
    assert_eq!(
        t("redo_written_bytes"),
        t("redo_bytes") + t("redo_wastage_bytes")
    );
    assert_eq!(t("transactions"), 3 * 60);
    assert_eq!(r["config"]["slob"]["dbwr_engine"], "io_uring");
    assert_eq!(
        r["config"]["engine"], "psync",
        "the sessions read with pread"
    );
    // Batches: fewer parallel-write waits than blocks written.
    let batches = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "db file parallel write")
        .map(|e| e["waits"].as_u64().unwrap())
        .expect("the DB writer wrote");
    assert!(
        batches < t("write_requests"),
        "{batches} batches for {} writes",
        t("write_requests")
    );
    let bytes = std::fs::read(target.join("dbio-data-0000.dat")).unwrap();
    for (i, b) in bytes.chunks(8192).enumerate() {
        verify(b, Some((0, i as u64))).unwrap_or_else(|e| panic!("block {i}: {e}"));
    }
}

fn ctrl_c_stops_every_thread_and_keeps_what_was_measured() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let shape = [
        "--sessions",
        "4",
        "--scale",
        "500",
        "--cache",
        "256K",
        "--update-pct",
        "30",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
    ];
    // Lay out first, so the signal lands in the run however slow the machine.
    json_run(
        &[
            &["--target", target.to_str().unwrap(), "--time", "0.2"][..],
            &shape,
        ]
        .concat(),
    );
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(["run", "--json", "--workload", "slob", "--target"])
        .arg(&target)
        .args(shape)
        .args(["--time", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Half a second of its CPU: sessions have executed and committed, on a
    // quiet machine after about as long, on a loaded one whenever they got it.
    wait_for_cpu(&child, Duration::from_millis(500));
    let t = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "slow to stop: {:?}",
        t.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert!(n(&r, "slob.counters.executes") > 0);
    assert!(n(&r, "slob.counters.transactions") > 0);
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let status: String = conn
        .query_row(
            "SELECT status FROM runs ORDER BY id DESC LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(status, "interrupted");
}

fn a_tablespace_on_a_block_device_with_redo_in_a_directory() {
    let _store = temp_store();
    let dev = LoopDev::new(64 << 20, true);
    let path = dev.path.to_str().unwrap().to_string();
    let redo = tempfile::tempdir().unwrap();
    let common = [
        "--sessions",
        "2",
        "--scale",
        "1000",
        "--cache",
        "256K",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
        "--work-loop",
        "40",
    ];
    // The redo logs need a directory.
    let out = dbio()
        .args(["run", "--workload", "slob", "--target", &path])
        .args(common)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--redo-dir is needed"));
    // A filesystem on it: updates (DB writer writes) are refused without --destroy-device.
    dev.mkfs("ext4");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "--target",
            path.as_str(),
            "--redo-dir",
            redo.path().to_str().unwrap(),
        ];
        a.extend_from_slice(&common);
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let out = dbio()
        .args(["run", "--workload", "slob"])
        .args(args(&["--update-pct", "20"]))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("ext4"), "{err}");
    // Reads only are fine; with the device named, updates run and their blocks verify.
    let r = json_run(
        &args(&["--update-pct", "0"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(n(&r, "slob.counters.write_requests"), 0);
    let r = json_run(
        &args(&["--update-pct", "50", "--destroy-device", &path])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(n(&r, "slob.run_totals.physical_writes") > 0);
    let bytes = std::fs::read(&dev.path).unwrap();
    let mut written = 0;
    for (i, b) in bytes.chunks(8192).take(2 * 1000).enumerate() {
        if let Ok(h) = verify(b, Some((0, i as u64))) {
            written += usize::from(h.generation > 0);
        }
    }
    assert!(written > 0, "DB writer blocks on the device verify");
    assert!(redo.path().join("dbio-redo").is_dir());
}

fn reusing_a_log_before_its_checkpoint_waits_and_says_so() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    // Two 512 KiB logs filled by heavy redo every few commits, while the DB
    // writer must write every changed block out before a log is reused.
    let r = json_run(&[
        "--target",
        target.to_str().unwrap(),
        "--sessions",
        "4",
        "--scale",
        "2000",
        "--cache",
        "64M",
        "--update-pct",
        "100",
        "--redo-stress",
        "heavy",
        "--redo-files",
        "2",
        "--redo-file-size",
        "512K",
        "--log-buffer",
        "512K",
        "--work-loop",
        "40",
    ]);
    let t = |k: &str| n(&r, &format!("slob.run_totals.{k}"));
    assert_eq!(t("transactions"), 4 * 40);
    assert!(t("log_switches") >= 10, "{} switches", t("log_switches"));
    assert!(t("physical_writes") > 0, "checkpoints wrote dirty blocks");
    assert_eq!(
        t("redo_written_bytes"),
        t("redo_bytes") + t("redo_wastage_bytes")
    );
    let waits = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "log file switch (checkpoint incomplete)")
        .map(|e| e["waits"].as_u64().unwrap())
        .unwrap_or(0);
    assert!(waits > 0, "no session waited for a checkpoint");
}

/// A short 2-session run with half its operations updates on `target`, with `extra` options.
fn small_update_run(target: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec![
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
        "40",
    ];
    args.extend_from_slice(extra);
    json_run(&args)
}

fn the_db_writer_is_asynchronous_where_the_kernel_allows_and_psync_on_request() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let run = |extra: &[&str]| small_update_run(&target, extra);
    let default = run(&[]);
    let want = if dbio::engine::uring::available() {
        "io_uring"
    } else {
        "psync"
    };
    assert_eq!(default["config"]["slob"]["dbwr_engine"], want);
    let psync = run(&["--dbwr-engine", "psync"]);
    assert_eq!(psync["config"]["slob"]["dbwr_engine"], "psync");
    let writes = n(&psync, "slob.run_totals.physical_writes");
    assert!(writes > 0, "the psync DB writer wrote");
}

/// On tmpfs io_uring hands every write to an io-wq worker: the DB writers
/// write with psync there unless asked otherwise (docs/slob.md).
fn the_db_writer_writes_with_psync_on_tmpfs_unless_asked() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = dir.path().join("data");
    let run = |extra: &[&str]| small_update_run(&target, extra);
    let default = run(&[]);
    assert_eq!(default["config"]["slob"]["dbwr_engine"], "psync");
    assert!(n(&default, "slob.run_totals.physical_writes") > 0);
    if dbio::engine::uring::available() {
        let uring = run(&["--dbwr-engine", "io_uring"]);
        assert_eq!(uring["config"]["slob"]["dbwr_engine"], "io_uring");
        assert!(n(&uring, "slob.run_totals.physical_writes") > 0);
    }
}

crate::tests! {
    the_io_uring_db_writer_writes_batches_and_keeps_the_invariants,
    ctrl_c_stops_every_thread_and_keeps_what_was_measured,
    a_tablespace_on_a_block_device_with_redo_in_a_directory [Root],
    reusing_a_log_before_its_checkpoint_waits_and_says_so,
    the_db_writer_is_asynchronous_where_the_kernel_allows_and_psync_on_request,
    the_db_writer_writes_with_psync_on_tmpfs_unless_asked,
}
