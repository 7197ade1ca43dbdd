//! Where a model run's window sits in the model's own checkpoint cycle
//! (`--workload slob`, issue 29 item 3): every report says it (JSON, the
//! `cycle` line, the stored `slob.cycle.*` metrics), its numbers agree with
//! the model's own counters, `--window after-checkpoint` opens the window as
//! the model's checkpoint begins, `--window cycles:N` closes it once N have
//! completed, and bad values are refused in one line.

use std::path::Path;

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio, num, refused_in_one_line};
use crate::common::store::{store_path, temp_store};
use crate::slob_pgmodel::device_flushes;

/// A model with updates on `dir`/data: 4 sessions, half updates, 2 MiB redo
/// logs unless a test sets its own (a checkpoint begins at every switch), a
/// 4 MiB cache.
fn model(dir: &Path, extra: &[&str]) -> Run {
    Run::slob(&dir.join("data"))
        .args(&["--redo-dir", dir.to_str().unwrap()])
        .args(&["--sessions", "4", "--scale", "2000", "--cache", "4M"])
        .args(&["--update-pct", "50"])
        .args(extra)
}

/// The checkpoint cycle section of a model run's report.
fn cycle(r: &Value) -> &Value {
    let c = &r["slob"]["checkpoint_cycle"];
    assert!(c.is_object(), "no checkpoint_cycle in {}", r["slob"]);
    c
}

fn f(c: &Value, k: &str) -> f64 {
    num(c, k)
}

/// Window any, over several log switches: the section is there, its
/// checkpoints are the model's log switches, and (in a run with redo logs
/// too big to switch) the redo since the checkpoint grows by the window's
/// redo from open to close. The text report and `dbio metrics` show it.
fn the_models_report_says_where_its_window_sat_in_its_cycle() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = model(dir.path(), &["--ramp", "1", "--time", "6"])
        .args(&["--redo-file-size", "1M"])
        .json();
    let c = cycle(&r);
    assert_eq!(c["window"], "any");
    let switches = num(&r, "slob.counters.log_switches");
    assert!(switches >= 2.0, "1 MiB redo logs switched: {}", r["slob"]);
    // A checkpoint begins at each switch; a switch is counted once the
    // next file is free, so one at the window's edge may fall either side.
    let begun = f(c, "checkpoints_begun");
    assert!(
        (begun - switches).abs() <= 1.0,
        "{begun} begun, {switches} switches"
    );
    // Checkpoints begun before the window may complete inside it: with the
    // default 3 redo files, up to 2 can be pending (a switch waits for its
    // file's), as a slow host's debug build shows.
    let completed = f(c, "checkpoints_completed");
    assert!(completed >= 1.0 && completed <= begun + 2.0, "{c}");
    // Each distance is less than one redo file: a checkpoint begins at each.
    for k in ["open_log_bytes_since", "close_log_bytes_since"] {
        assert!((0.0..=f64::from(1 << 20)).contains(&f(c, k)), "{k}: {c}");
    }
    assert!(f(c, "open_transactions_since") >= 0.0, "{c}");
    assert!(f(c, "open_seconds_since") <= 1.5, "{c}");
    assert!(
        c["first_change_share"].is_null(),
        "Oracle logs no images: {c}"
    );
    // The stored run's page has the section, with the run's numbers.
    let id = r["run_id"].to_string();
    let page = dir.path().join("run.html");
    let out = dbio()
        .args(["runs", "show", &id, "--html", page.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h2 id=\"cycle\""), "no cycle section");
    let open = format!("<td>{:.0}</td>", f(c, "open_log_bytes_since"));
    assert!(html.contains(&open) && html.contains("redo bytes since the last checkpoint, at open"));

    // Redo logs no window fills: only the run's start as a checkpoint, so
    // from open to close the distance grows by the window's redo.
    let big = model(dir.path(), &["--ramp", "1", "--time", "3"])
        .args(&["--redo-file-size", "256M", "--log-buffer", "1M"])
        .json();
    let c = cycle(&big);
    assert_eq!(num(&big, "slob.counters.log_switches"), 0.0);
    assert_eq!(
        (f(c, "checkpoints_begun"), f(c, "checkpoints_completed")),
        (0.0, 0.0)
    );
    let (open, close) = (f(c, "open_log_bytes_since"), f(c, "close_log_bytes_since"));
    let redo = num(&big, "slob.counters.redo_bytes");
    assert!(open > 0.0, "the ramp's redo since the start: {c}");
    let grown = close - open;
    assert!(
        (grown - redo).abs() <= 0.05 * redo,
        "{grown} bytes from open to close, {redo} in the window"
    );
    // Since the start: the ramp's commits, about a second of them.
    let tx_s = num(&big, "slob.counters.transactions") / num(&big, "slob.elapsed_s");
    let since = f(c, "open_transactions_since");
    assert!(
        since > 0.3 * tx_s && since < 3.0 * tx_s,
        "{since} vs {tx_s}/s"
    );

    let text = model(dir.path(), &["--ramp", "1", "--time", "2"]).output();
    assert!(text.status.success());
    let text =
        String::from_utf8_lossy(&text.stderr).to_string() + &String::from_utf8_lossy(&text.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("cycle    window any; at open "))
        .unwrap_or_else(|| panic!("no cycle line in\n{text}"));
    assert!(
        line.contains("redo") && line.contains("completed inside"),
        "{line}"
    );
    let out = dbio().args(["metrics", "slob.cycle"]).output().unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    for name in [
        "slob.cycle.open_log_bytes_since",
        "slob.cycle.open_transactions_since",
        "slob.cycle.checkpoints_completed",
    ] {
        let row = listed
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name} not in\n{listed}"));
        assert!(row.contains("model's checkpoint cycle"), "{row}");
    }
}

/// `--window cycles:1`: the window closes when one of the model's own
/// checkpoints has completed, long before `--time`; the section and the
/// stored configuration say so.
fn whole_cycles_end_the_models_window_after_a_completed_checkpoint() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = model(dir.path(), &["--ramp", "1", "--time", "60"])
        .args(&["--window", "cycles:1"])
        .json();
    assert_eq!(r["status"], "completed");
    assert_eq!(r["config"]["slob"]["window"]["cycles"], 1);
    let c = cycle(&r);
    assert_eq!(c["window"], "cycles:1");
    assert!(f(c, "checkpoints_completed") >= 1.0, "{c}");
    assert!(f(c, "checkpoints_begun") >= 1.0, "{c}");
    let secs = num(&r, "slob.elapsed_s");
    assert!(secs < 30.0, "the window ran {secs} s of --time 60");
    // Opened at dbio's checkpoint: nothing since it yet.
    assert!(f(c, "open_log_bytes_since") < 65536.0, "{c}");
}

/// `--window after-checkpoint` with PostgreSQL's redo: the window opens as
/// the model's checkpoint begins — no redo or commits since it — and every
/// block's first change in the window logs its image again, where a window
/// opened late in a long cycle finds most images logged already.
fn after_checkpoint_opens_the_window_at_the_models_checkpoint() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let run = |window: &str| {
        model(dir.path(), &["--ramp", "4", "--time", "2"])
            .args(&["--flavor", "postgres", "--redo-file-size", "256M"])
            .args(&["--log-buffer", "1M", "--window", window])
            .json()
    };
    let after = run("after-checkpoint");
    assert_eq!(after["config"]["slob"]["window"], "after_checkpoint");
    let c1 = cycle(&after).clone();
    assert_eq!(c1["window"], "after-checkpoint");
    assert!(f(&c1, "open_log_bytes_since") < 65536.0, "{c1}");
    assert!(f(&c1, "open_transactions_since") <= 4.0, "{c1}");
    assert!(f(&c1, "open_seconds_since") < 0.1, "{c1}");
    let any = run("any");
    let c2 = cycle(&any);
    assert!(
        f(c2, "open_log_bytes_since") > 100.0 * f(&c1, "open_log_bytes_since").max(1.0),
        "{c2} vs {c1}"
    );
    let (share1, share2) = (f(&c1, "first_change_share"), f(c2, "first_change_share"));
    assert!(share1 > 1.5 * share2, "{share1} vs {share2}");
}

/// `--window after-checkpoint` with PostgreSQL's flavor: the checkpoint
/// dbio begins as the window opens is immediate, as PostgreSQL's
/// `CHECKPOINT` (not spread over a redo file), and its writes fall inside
/// the window, as the server's do now that its window opens before its
/// `CHECKPOINT`: with 256 MiB redo files a spread pass would have written
/// a few of the cache's dirty buffers in a 2 s window, the immediate one
/// writes them all at once.
fn the_checkpoint_at_the_open_is_immediate_and_its_writes_are_in_the_window() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = model(dir.path(), &["--ramp", "2", "--time", "2"])
        .args(&["--flavor", "postgres", "--redo-file-size", "256M"])
        .args(&["--log-buffer", "1M"])
        .args(&["--window", "after-checkpoint"])
        .json();
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    let c = cycle(&r);
    assert!(f(c, "open_log_bytes_since") < 65536.0, "{c}");
    assert_eq!(
        f(c, "checkpoints_begun"),
        0.0,
        "dbio's own is not counted: {c}"
    );
    // 512 buffers of 8 KiB, most of them dirty after 2 s of half updates.
    let ckpt = num(&r, "slob.counters.checkpoint_writes");
    let redo = num(&r, "slob.counters.redo_bytes");
    let spread_share = redo / (0.9 * 256.0 * 1048576.0);
    assert!(
        ckpt >= 100.0 && ckpt > 6.0 * spread_share * 512.0,
        "{ckpt} checkpoint writes after {redo} bytes of redo"
    );
}

/// `--flavor postgres` on XFS over a direct-io loop device: each checkpoint
/// ends as PostgreSQL's checkpointer ends it — its commit log page,
/// visibility map and control file written and fsynced, the replication
/// origin checkpoint renamed into place durably — so the device sees
/// flushes beyond the WAL's syncs at every checkpoint (PostgreSQL's
/// checkpointer made about a dozen a checkpoint on XFS; the model, with its
/// datafiles written O_DIRECT, none). The files are gone after the run.
fn a_postgres_checkpoint_ends_with_postgresqls_control_files_fsynced() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 << 20, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let data = mnt.join("data");
    let r = Run::slob(&data)
        .args(&["--flavor", "postgres", "--sessions", "4", "--scale", "2048"])
        .args(&["--cache", "4M", "--update-pct", "50", "--ramp", "1"])
        .args(&["--time", "60", "--window", "cycles:3"])
        .json();
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    let c = cycle(&r);
    let ended = f(c, "checkpoints_completed") + 1.0; // dbio's at the open too
    let flushes = device_flushes(&r, &dev.name());
    let syncs = num(&r, "slob.counters.redo_syncs");
    assert!(
        flushes - syncs >= 3.0 * ended,
        "{flushes} device flushes, {syncs} WAL syncs, {ended} checkpoints ended"
    );
    let redo = data.join("dbio-redo");
    let left: Vec<_> = std::fs::read_dir(&redo)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dbio-pg-"))
        .collect();
    assert!(left.is_empty(), "left in {}: {left:?}", redo.display());
}

/// A `--flavor postgres` run killed with -9 leaves its checkpoint's small
/// files (`dbio-pg-*`) in the redo log directory; `dbio clean` removes
/// them with the redo logs and the data, and the directories dbio made.
fn clean_removes_the_checkpoint_files_a_killed_postgres_run_left() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args([
            "run",
            "--workload",
            "slob",
            "--flavor",
            "postgres",
            "--target",
        ])
        .arg(&data)
        .args(["--sessions", "2", "--scale", "2000", "--cache", "4M"])
        .args(["--update-pct", "50", "--redo-file-size", "2M"])
        .args(["--log-buffer", "512K", "--time", "120"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let control = data.join("dbio-redo").join("dbio-pg-control");
    let t0 = std::time::Instant::now();
    while !control.exists() && t0.elapsed() < std::time::Duration::from_secs(60) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(control.exists(), "the run made its checkpoint files");
    let out = dbio()
        .args(["clean", "--target", data.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!control.exists(), "{} left", control.display());
    assert!(!data.exists(), "{} left", data.display());
}

/// Bad values are one line and exit 2, before anything starts: a window
/// for a workload with no checkpoints, a cycle count out of range, whole
/// cycles with a fixed amount of work.
fn bad_window_values_for_the_model_are_refused_in_one_line() {
    let _store = temp_store();
    for (args, says) in [
        (
            &["--workload", "slob", "--window", "cycles:0"][..],
            "cycles:N",
        ),
        (&["--workload", "slob", "--window", "later"][..], "cycles:N"),
        (
            &[
                "--workload",
                "slob",
                "--window",
                "cycles:2",
                "--work-loop",
                "5",
            ][..],
            "--time",
        ),
        (
            &["--workload", "raw", "--window", "any"][..],
            "--workload raw",
        ),
        (
            &["--workload", "replay", "--window", "after-checkpoint"][..],
            "--window",
        ),
    ] {
        let out = dbio()
            .args(["run", "--target", "/nonexistent/dbio-cycle"])
            .args(args)
            .output()
            .unwrap();
        refused_in_one_line(&out, &format!("{args:?}"), says);
    }
}

crate::tests! {
    the_models_report_says_where_its_window_sat_in_its_cycle,
    whole_cycles_end_the_models_window_after_a_completed_checkpoint,
    after_checkpoint_opens_the_window_at_the_models_checkpoint,
    the_checkpoint_at_the_open_is_immediate_and_its_writes_are_in_the_window,
    a_postgres_checkpoint_ends_with_postgresqls_control_files_fsynced [Root, Tool("mkfs.xfs")],
    clean_removes_the_checkpoint_files_a_killed_postgres_run_left,
    bad_window_values_for_the_model_are_refused_in_one_line,
}
