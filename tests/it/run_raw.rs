//! The `dbio` command as a user meets it: bad input, runs on a temporary
//! directory, reuse and cleaning of layouts, JSON output, Ctrl-C.

use std::path::Path;
use std::process::Command as StdCommand;
use std::time::Duration;

use crate::common::run::{dbio, wait_for_cpu};
use crate::common::store::{store_path, temp_store};
use dbio::storage::block::verify;
use serde_json::Value;

/// Runs dbio with --json and returns the parsed report.
fn run_json(args: &[&str]) -> Value {
    let out = dbio().args(["run", "--json"]).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "dbio {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn assert_one_line_error(args: &[&str], needles: &[&str]) {
    let out = dbio().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?} printed more than one line:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
    assert!(out.stdout.is_empty());
}

fn bad_input_is_one_line_naming_option_value_and_allowed() {
    let _store = temp_store();
    assert_one_line_error(&["run", "--bs", "3000"], &["--bs", "3000", "power of two"]);
    assert_one_line_error(&["run", "--sessions", "0"], &["--sessions", "0"]);
    assert_one_line_error(
        &["run", "--sessions", "4097"],
        &["--sessions", "4097", "1..=4096"],
    );
    assert_one_line_error(&["run", "--read-pct", "101"], &["--read-pct", "101"]);
    assert_one_line_error(
        &["run", "--pattern", "randomread"],
        &["--pattern", "randomread", "randread"],
    );
    assert_one_line_error(&["run", "--io", "odirect"], &["--io", "odirect", "direct"]);
    assert_one_line_error(&["run", "--iodepth", "8"], &["--iodepth 8", "io_uring"]);
    assert_one_line_error(
        &["run", "--pattern", "seqread", "--read-pct", "5"],
        &["--read-pct", "randrw"],
    );
    assert_one_line_error(&["run", "--time", "0"], &["--time", "0"]);
    assert_one_line_error(&["run", "--size", "12x"], &["--size", "12x", "suffix"]);
    assert_one_line_error(&["run", "--dist", "zipf"], &["--dist", "zipf"]);
    assert_one_line_error(
        &["run", "--target", "/etc/hostname"],
        &["/etc/hostname", "neither a directory nor a block device"],
    );
    assert_one_line_error(
        &["clean", "--target", "/tmp"],
        &["no dbio-manifest.json", "nothing"],
    );
}

fn verify_all_blocks(path: &Path, file: u32, bs: usize) -> (usize, usize) {
    let bytes = std::fs::read(path).unwrap();
    let mut rewritten = 0;
    for (i, b) in bytes.chunks(bs).enumerate() {
        let h = verify(b, Some((file, i as u64))).unwrap_or_else(|e| panic!("block {i}: {e}"));
        if h.generation > 0 {
            rewritten += 1;
        }
    }
    (bytes.len() / bs, rewritten)
}

fn ops_run_measures_exactly_and_writes_verifiable_blocks() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("data");
    let t = target.to_str().unwrap();
    let r = run_json(&[
        "--target",
        t,
        "--size",
        "8M",
        "--files",
        "2",
        "--bs",
        "4k",
        "--pattern",
        "randrw",
        "--read-pct",
        "70",
        "--sessions",
        "3",
        "--ops",
        "3001",
        "--seed",
        "42",
    ]);
    assert_eq!(r["schema"], "dbio.run.v2");
    assert_eq!(r["status"], "completed");
    let reads = r["read"]["requests"].as_u64().unwrap();
    let writes = r["write"]["requests"].as_u64().unwrap();
    assert_eq!(reads + writes, 3001);
    assert_eq!(r["total"]["requests"], 3001);
    assert_eq!(r["total"]["bytes"].as_u64().unwrap(), 3001 * 4096);
    assert!((reads as f64 / 3001.0 - 0.7).abs() < 0.05, "{reads}");
    assert!(r["sync"].is_null());
    let lat = &r["read"]["latency"];
    assert!(lat["min_us"].as_f64().unwrap() <= lat["p50_us"].as_f64().unwrap());
    assert!(lat["p50_us"].as_f64().unwrap() <= lat["p99_us"].as_f64().unwrap());
    assert!(lat["p99_us"].as_f64().unwrap() <= lat["max_us"].as_f64().unwrap());
    assert!(r["cpu"]["us_per_io"].as_f64().unwrap() > 0.0);
    let files = r["target"]["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let mut rewritten = 0;
    for (i, f) in files.iter().enumerate() {
        let (blocks, re) = verify_all_blocks(Path::new(f.as_str().unwrap()), i as u32, 4096);
        assert_eq!(blocks, 1024);
        rewritten += re;
    }
    assert!(
        rewritten > 0 && rewritten <= writes as usize,
        "{rewritten} of {writes}"
    );
}

fn layouts_are_reused_and_clean_removes_only_dbio_files() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    std::fs::write(dir.path().join("precious.dbf"), b"not dbio's").unwrap();
    let first = run_json(&[
        "--target",
        t,
        "--size",
        "4M",
        "--ops",
        "100",
        "--pattern",
        "randread",
    ]);
    assert_eq!(first["target"]["layout"]["reused"], false);
    let second = run_json(&[
        "--target",
        t,
        "--size",
        "4M",
        "--ops",
        "100",
        "--pattern",
        "seqread",
    ]);
    assert_eq!(second["target"]["layout"]["reused"], true);
    dbio().args(["clean", "--target", t]).assert().success();
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("precious.dbf")]);
    // A directory dbio created itself goes away with clean.
    let made = dir.path().join("made-by-dbio");
    run_json(&[
        "--target",
        made.to_str().unwrap(),
        "--size",
        "1M",
        "--ops",
        "10",
    ]);
    dbio()
        .args(["clean", "--target", made.to_str().unwrap()])
        .assert()
        .success();
    assert!(!made.exists());
}

fn io_uring_fsync_mode_times_the_sync_apart() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    for engine in ["io_uring", "psync"] {
        let depth = if engine == "psync" { "1" } else { "8" };
        let r = run_json(&[
            "--target",
            t,
            "--size",
            "4M",
            "--pattern",
            "randwrite",
            "--engine",
            engine,
            "--iodepth",
            depth,
            "--io",
            "fdatasync",
            "--ops",
            "400",
        ]);
        let writes = r["write"]["requests"].as_u64().unwrap();
        assert_eq!(writes, 400, "{engine}");
        assert_eq!(
            r["sync"]["requests"].as_u64().unwrap(),
            writes,
            "{engine}: one sync per write"
        );
        let w = r["write"]["latency"]["mean_us"].as_f64().unwrap();
        let s = r["sync"]["latency"]["mean_us"].as_f64().unwrap();
        assert!(
            s > 0.0 && s < w,
            "{engine}: sync {s} must be part of write {w}"
        );
    }
}

/// Every io_uring setup option through the CLI on a tmpfs file (O_DIRECT):
/// the run's reads are verified block by block, and the setup is recorded.
fn io_uring_options_each_read_verified_blocks_and_are_recorded() {
    let _store = temp_store();
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let t = dir.path().to_str().unwrap();
    let cases: &[(&[&str], &str, Value)] = &[
        (&[], "fixedbufs", Value::Bool(true)),
        (&["--fixedbufs", "false"], "fixedbufs", Value::Bool(false)),
        (
            &["--registerfiles", "false"],
            "registerfiles",
            Value::Bool(false),
        ),
        (
            &["--register-ring", "true"],
            "register_ring",
            Value::Bool(true),
        ),
        (
            &["--sqthread-poll", "50"],
            "sqthread_poll_ms",
            Value::from(50),
        ),
        (&["--uring-taskrun", "coop"], "taskrun", Value::from("coop")),
        (&["--uring-taskrun", "none"], "taskrun", Value::from("none")),
        (
            &["--uring-taskrun", "defer"],
            "taskrun",
            Value::from("defer"),
        ),
        (&[], "submit", Value::from("auto")),
        (&["--uring-submit", "each"], "submit", Value::from("each")),
        (&["--uring-submit", "batch"], "submit", Value::from("batch")),
    ];
    for (opts, key, want) in cases {
        let mut args = vec![
            "--target",
            t,
            "--size",
            "8M",
            "--bs",
            "4k",
            "--pattern",
            "randrw",
            "--engine",
            "io_uring",
            "--iodepth",
            "8",
            "--io",
            "direct",
            "--ops",
            "3000",
            "--verify",
        ];
        args.extend_from_slice(opts);
        let r = run_json(&args);
        // A block read wrong would have failed the run (--verify).
        assert_eq!(r["status"], "completed", "{opts:?}");
        assert_eq!(r["config"]["uring"][key], *want, "{opts:?}");
        assert!(r["read"]["requests"].as_u64().unwrap() > 1000, "{opts:?}");
    }
    // Without io_uring nothing is recorded, and the options are refused.
    let r = run_json(&["--target", t, "--size", "8M", "--ops", "100"]);
    assert!(r["config"].get("uring").is_none());
    assert_one_line_error(
        &["run", "--target", t, "--sqthread-poll", "10"],
        &["--sqthread-poll", "--engine io_uring"],
    );
    // A setting the kernel refuses fails the run (exit 1) with one line
    // naming it and the way out.
    let out = dbio()
        .args([
            "run", "--json", "--target", t, "--size", "8M", "--ops", "100",
        ])
        .args([
            "--engine",
            "io_uring",
            "--sqthread-poll",
            "10",
            "--uring-taskrun",
            "defer",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "failed");
    let err = r["error"].as_str().unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    for needle in ["--sqthread-poll 10", "DEFER_TASKRUN cannot go with SQPOLL"] {
        assert!(err.contains(needle), "{err:?} lacks {needle:?}");
    }
}

fn timed_run_with_ramp_has_a_series_and_honours_rate() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let r = run_json(&[
        "--target",
        t,
        "--size",
        "4M",
        "--pattern",
        "randread",
        "--io",
        "buffered",
        "--sessions",
        "2",
        "--time",
        "2",
        "--ramp",
        "1",
        "--rate",
        "400",
    ]);
    assert_eq!(r["measured_s"], 2.0);
    let series = r["series"].as_array().unwrap();
    assert_eq!(series.len(), 3, "one point per second of ramp + time");
    assert_eq!(series[0]["ramp"], true);
    assert_eq!(series[2]["ramp"], false);
    let iops = r["read"]["iops"].as_f64().unwrap();
    assert!((360.0..=420.0).contains(&iops), "rate 400 gave {iops}");
    let per_sec: u64 = series
        .iter()
        .map(|p| p["read"]["ops"].as_u64().unwrap())
        .sum();
    assert!((1100..=1220).contains(&per_sec), "{per_sec}");
}

fn ctrl_c_prints_results_so_far_marked_interrupted() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    // Lay out first so the signal lands in the run itself.
    run_json(&["--target", t, "--size", "4M", "--ops", "10"]);
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let child = StdCommand::new(bin)
        .env("DBIO_DB", store_path())
        .args([
            "run",
            "--json",
            "--target",
            t,
            "--size",
            "4M",
            "--pattern",
            "randread",
            "--io",
            "buffered",
            "--time",
            "60",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A second of CPU: one session reading is working, however loaded the machine.
    wait_for_cpu(&child, Duration::from_secs(1));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "interrupted");
    let m = r["measured_s"].as_f64().unwrap();
    assert!(m > 0.5 && m < 10.0, "{m}");
    assert!(r["read"]["requests"].as_u64().unwrap() > 0);
}

fn text_report_names_requests_blocks_and_outliers() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let out = dbio()
        .args([
            "run",
            "--target",
            t,
            "--size",
            "2M",
            "--ops",
            "200",
            "--outlier-ms",
            "0.000001",
            "--seed",
            "5",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "requests",
        "blocks",
        "IOPS",
        "p99.99",
        "us of dbio CPU per I/O",
        "200 I/Os slower than",
        "... 180 more",
        "seed 5",
    ] {
        assert!(text.contains(needle), "report lacks {needle:?}:\n{text}");
    }
}

/// More sessions than the thread limit allows: the run fails in one line
/// naming the limit, promptly, instead of hanging the threads that started.
fn a_thread_limit_fails_the_run_in_one_line_without_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = dir.path().join("data");
    let db = dir.path().join("store.sqlite");
    let started = std::time::Instant::now();
    // As nobody (root ignores RLIMIT_NPROC), with room for about 40 threads.
    let out = StdCommand::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["prlimit", "--nproc=40"])
        .arg(assert_cmd::cargo::cargo_bin("dbio"))
        .args([
            "run",
            "--engine",
            "null",
            "--size",
            "1M",
            "--sessions",
            "300",
        ])
        .args(["--time", "30", "--json", "--target"])
        .arg(&target)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it did not hang"
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).expect("the report of the failed run");
    assert_eq!(r["status"], "failed");
    let error = r["error"].as_str().unwrap();
    assert!(
        error.starts_with("cannot start thread")
            && error.contains("ulimit -u")
            && !error.contains('\n'),
        "{error}"
    );
    assert!(
        r["measured_s"].as_f64().unwrap() < 1.0,
        "the window ended at once"
    );
}

/// `--load-parallel 4` over 3 files: the streams' regions cross file
/// boundaries; `dbio verify` finds every block as laid out, a run with
/// another stream count reuses the layout, bad values are one line.
fn load_parallel_layout_verifies_clean_and_is_reused() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("d");
    let t = target.to_str().unwrap();
    let shape = [
        "--files",
        "3",
        "--size",
        "10M",
        "--ops",
        "20",
        "--pattern",
        "randread",
    ];
    let first = run_json(&[&["--target", t, "--load-parallel", "4"], &shape[..]].concat());
    assert_eq!(first["target"]["layout"]["reused"], false);
    assert_eq!(
        first["target"]["layout"]["bytes"],
        3 * ((10 << 20) / 8192 / 3) * 8192
    );
    let out = dbio()
        .args(["verify", "--json", "--quiet", "--target", t])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).expect("verify's JSON");
    let f = &doc["findings"];
    assert_eq!(out.status.code(), Some(0), "{f:#}");
    assert_eq!(f["blocks"], 3 * ((10 << 20) / 3 / 8192), "{f:#}");
    assert_eq!(f["blocks"], f["intact"], "{f:#}");
    let second = run_json(&[&["--target", t, "--load-parallel", "1"], &shape[..]].concat());
    assert_eq!(second["target"]["layout"]["reused"], true);
    for bad in ["0", "65", "two", "-1"] {
        assert_one_line_error(
            &["run", "--target", t, "--load-parallel", bad],
            &["--load-parallel", bad],
        );
    }
    assert_one_line_error(
        &[
            "run",
            "--workload",
            "pg",
            "--target",
            t,
            "--load-parallel",
            "2",
        ],
        &["--load-parallel", "server"],
    );
}

/// The terminal table's latencies carry their unit, each the one that
/// reads best (fio's way), and equal the JSON document's numbers.
fn text_latencies_carry_the_unit_that_reads_best() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().to_str().unwrap();
    let out = dbio()
        .args([
            "run", "--target", t, "--size", "2M", "--ops", "2000", "--io", "buffered",
        ])
        .args(["--pattern", "randrw", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc = dbio()
        .args(["runs", "show", "1", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&doc.stdout).unwrap();
    assert!(
        text.contains("in the unit each value reads best in"),
        "{text}"
    );
    for kind in ["read", "write", "total"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{kind} ")))
            .unwrap_or_else(|| panic!("no {kind} row:\n{text}"));
        let cells: Vec<&str> = row.split('|').nth(1).unwrap().split_whitespace().collect();
        let fields = [
            "min_us",
            "mean_us",
            "p50_us",
            "p90_us",
            "p99_us",
            "p99_9_us",
            "p99_99_us",
            "max_us",
        ];
        assert_eq!(cells.len(), fields.len(), "{row}");
        for (cell, f) in cells.iter().zip(fields) {
            let us = doc[kind]["latency"][f].as_f64().unwrap();
            assert_eq!(
                *cell,
                dbio::units::fmt_latency_ns(us * 1e3),
                "{kind} {f}: {row}"
            );
            assert!(
                ["ns", "us", "ms", "s"].iter().any(|u| cell.ends_with(u)),
                "{cell}"
            );
        }
    }
}

crate::tests! {
    text_latencies_carry_the_unit_that_reads_best,
    bad_input_is_one_line_naming_option_value_and_allowed,
    ops_run_measures_exactly_and_writes_verifiable_blocks,
    layouts_are_reused_and_clean_removes_only_dbio_files,
    load_parallel_layout_verifies_clean_and_is_reused,
    io_uring_fsync_mode_times_the_sync_apart,
    io_uring_options_each_read_verified_blocks_and_are_recorded,
    timed_run_with_ramp_has_a_series_and_honours_rate,
    ctrl_c_prints_results_so_far_marked_interrupted,
    text_report_names_requests_blocks_and_outliers,
    a_thread_limit_fails_the_run_in_one_line_without_a_hang [Root, Tool("setpriv"), Tool("prlimit")],
}
