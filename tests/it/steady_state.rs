//! `--steady-state` on a really slow device: a direct-I/O loop device
//! throttled by the blkio cgroup, dbio started inside the cgroup. A
//! constant throttle is steady after one window of rounds; a throttle
//! lowered mid-run (800/s, then 400/s) is not called steady until the
//! window lies after the change, and the steady window's rate is the new
//! one; a throttle that keeps changing hits the cap and the report says so
//! in words. `--precondition` writes the device it was given twice over,
//! sequentially, before the rounds.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::common::blkio::Throttle;
use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};

/// `dbio run` of 4 KiB random reads by 8 psync sessions on `dev`, inside
/// `t`, with `extra` options; the child, started.
fn spawn(t: &Throttle, dev: &Path, extra: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    cmd.env("DBIO_DB", store_path())
        .args(["run", "--quiet", "--target"])
        .arg(dev)
        .args([
            "--pattern",
            "randread",
            "--bs",
            "4k",
            "--sessions",
            "8",
            "--seed",
            "5",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    t.inside(&mut cmd);
    cmd.spawn().expect("start dbio")
}

/// The child's stdout once it ended well.
fn finished(child: std::process::Child) -> Vec<u8> {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} in {v}"))
}

fn unix_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        * 1e3
}

fn a_constant_throttle_is_steady_after_one_window() {
    let _store = temp_store();
    let dev = LoopDev::new(64 << 20, true);
    let t = Throttle::new(&dev.path, 400, 400);
    let args = [
        "--json",
        "--steady-state",
        "--round",
        "1s",
        "--steady-window",
        "4",
        "--time",
        "30",
    ];
    let r: Value = serde_json::from_slice(&finished(spawn(&t, &dev.path, &args))).unwrap();
    let s = &r["steady_state"];
    assert_eq!(s["reached"], true, "{s}");
    let after = num(s, "reached_after_s");
    // One window is 4 s; a first round slower to start may push it a round on.
    assert!((4.0..=6.0).contains(&after), "steady after {after} s: {s}");
    assert!(num(&r, "measured_s") < after + 1.0, "{}", r["measured_s"]);
    let iops = num(s, "window.total.iops");
    assert!(
        (iops / 400.0 - 1.0).abs() < 0.1,
        "steady window {iops} I/O/s"
    );
    assert_eq!(s["rules"]["metric"], "iops");
    assert_eq!(s["rounds"].as_array().unwrap().len() as f64, after);
}

fn a_drift_is_not_steady_until_the_window_is_past_it() {
    let _store = temp_store();
    let dev = LoopDev::new(64 << 20, true);
    let t = Throttle::new(&dev.path, 800, 800);
    let (round, window) = (2.0, 4.0);
    let args = [
        "--json",
        "--steady-state",
        "--round",
        "2s",
        "--steady-window",
        "4",
        "--time",
        "40",
    ];
    let child = spawn(&t, &dev.path, &args);
    // Inside the second round: well before a first window (8 s) could end.
    std::thread::sleep(Duration::from_millis(3000));
    t.limit(&dev.path, 400, 400);
    let changed_ms = unix_ms();
    let r: Value = serde_json::from_slice(&finished(child)).unwrap();
    let change_s = (changed_ms - num(&r, "started_unix_ms")) / 1e3;
    assert!(
        change_s > 0.0 && change_s < round * window,
        "the throttle changed {change_s} s after the start: not inside the first window"
    );
    let s = &r["steady_state"];
    assert_eq!(s["reached"], true, "{s}");
    let rounds = s["rounds"].as_array().unwrap();
    let first = num(&rounds[0], "iops");
    assert!(
        first > 650.0,
        "the first round ran at the first throttle: {first}"
    );
    // The window starts after the change; a round holding the change may
    // be part of it only when the change fell in its first quarter (the
    // range rule lets a round 1/4 at 800 pass among rounds at 400).
    let start = num(s, "window.start_s");
    assert!(
        start >= change_s - round / 4.0,
        "steady window from {start} s, the change at {change_s:.2} s: {s}"
    );
    let after = num(s, "reached_after_s");
    assert!(
        after >= change_s + round * (window - 1.0),
        "{after} {change_s}"
    );
    let iops = num(s, "window.total.iops");
    eprintln!(
        "drift: throttle 800 -> 400/s at {change_s:.2} s; rounds {:?}; steady after {after} s, window from {start} s at {iops:.1} I/O/s",
        rounds.iter().map(|r| num(r, "iops")).collect::<Vec<_>>()
    );
    assert!(
        (iops / 400.0 - 1.0).abs() < 0.1,
        "steady window {iops} I/O/s"
    );
    // Measured until the window ended, not to the cap of 40 s.
    assert!(num(&r, "measured_s") < after + 1.0);
}

fn a_cap_without_steady_state_says_so_in_words() {
    let _store = temp_store();
    let dev = LoopDev::new(64 << 20, true);
    let t = Throttle::new(&dev.path, 800, 800);
    let args = [
        "--steady-state",
        "--round",
        "1s",
        "--steady-window",
        "3",
        "--time",
        "6",
    ];
    let child = spawn(&t, &dev.path, &args);
    // 200/s and 800/s by turns of 2 s: every window of three 1 s rounds
    // holds a change, so none is within 20% of its mean.
    let out = std::thread::scope(|sc| {
        sc.spawn(|| {
            for i in 0..5 {
                std::thread::sleep(Duration::from_millis(2000));
                let v = if i % 2 == 0 { 200 } else { 800 };
                t.limit(&dev.path, v, v);
            }
        });
        String::from_utf8(finished(child)).unwrap()
    });
    assert!(
        out.contains("steady state  not steady: the cap ended the run after 6 rounds"),
        "{out}"
    );
    assert!(
        out.contains("the last window (rounds 4-6) failed the range"),
        "{out}"
    );
    assert!(out.contains("rounds of 1 s judged on iops"), "{out}");
    assert!(out.contains("band "), "{out}");
}

/// A steady run's page (`runs show --html`) in Chromium: the verdict as
/// the report has it, the rounds chart drawn with its dashed band and the
/// steady window shaded, the window's table, no console message; and the
/// page's command line asks for the same steady state again.
fn a_steady_runs_page_draws_its_rounds_and_band_in_chromium() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    let out = crate::common::run::dbio()
        .args(["run", "--target"])
        .arg(&target)
        .args([
            "--size",
            "4M",
            "--engine",
            "null",
            "--rate",
            "2000",
            "--steady-state",
            "--round",
            "1s",
            "--steady-window",
            "3",
            "--time",
            "20",
            "--json",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["steady_state"]["reached"], true, "{}", r["steady_state"]);
    let id = r["run_id"].as_i64().unwrap().to_string();
    // The steady window's figures are stored metrics (report, compare, plans).
    let metrics = crate::common::run::dbio().arg("metrics").output().unwrap();
    let metrics = String::from_utf8_lossy(&metrics.stdout);
    for name in [
        "steady.total.iops",
        "steady.reached_after_s",
        "steady.read.p99_us",
    ] {
        assert!(metrics.contains(name), "{name} in: {metrics}");
    }
    let page = dir.path().join("run.html");
    let shown = crate::common::run::dbio()
        .args(["runs", "show", &id, "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let after = num(&r, "steady_state.reached_after_s");
    assert!(
        html.contains(&format!("Steady state: steady after {after} s (rounds ")),
        "verdict"
    );
    assert!(
        html.contains("--steady-state --round 1s --steady-window 3"),
        "command line"
    );
    let browser =
        crate::common::browser::chromium().expect("chromium (scripts/test.sh installs it)");
    let shot = crate::common::browser::render(&browser, &page, dir.path(), 3000);
    assert!(shot.console.is_empty(), "{:?}", shot.console);
    let svg = crate::common::browser::charts(&shot.dom)
        .into_iter()
        .find(|s| s.contains("Steady state: rounds of 1 s"))
        .expect("the rounds chart in the DOM");
    assert!(crate::common::browser::drawn(svg), "{svg}");
    assert!(svg.contains("stroke-dasharray"), "the band, dashed: {svg}");
    assert!(
        svg.contains(">steady<"),
        "the window shaded and named: {svg}"
    );
    assert_eq!(
        svg.matches("class=\"point\"").count(),
        3,
        "a point per round"
    );
    assert!(
        shot.dom.contains("class=\"steady-window\""),
        "the window's table"
    );
}

/// Sectors written to `dev` so far (/sys/block/NAME/stat, field 7).
fn sectors_written(dev: &LoopDev) -> u64 {
    let stat = std::fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    stat.split_whitespace().nth(6).unwrap().parse().unwrap()
}

/// `--precondition` on a device a read-only run names: the device is
/// written sequentially twice over (its own counters say so: exactly twice
/// its size, not a sector more), then the rounds run to steady state.
fn a_precondition_writes_the_device_twice_then_runs_to_steady() {
    let _store = temp_store();
    let dev = LoopDev::new(16 << 20, true);
    let before = sectors_written(&dev);
    let out = crate::common::run::dbio()
        .args(["run", "--target"])
        .arg(&dev.path)
        .args([
            "--pattern",
            "randread",
            "--bs",
            "64k",
            "--sessions",
            "2",
            "--precondition",
            "--round",
            "1s",
            "--steady-window",
            "3",
            "--time",
            "30",
            "--json",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = (sectors_written(&dev) - before) * 512;
    assert_eq!(written, 2 * (16 << 20), "bytes written to the device");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["precondition"]["passes"], 2, "{}", r["precondition"]);
    assert_eq!(r["precondition"]["bytes"], 2 * (16 << 20));
    assert_eq!(r["config"]["steady_state"]["precondition"], true);
    assert!(r["steady_state"]["rounds"].as_array().unwrap().len() >= 3);
    assert!(
        r["write"].is_null(),
        "the fill is not the run's result: {}",
        r["write"]
    );
}

/// `--precondition` writes, so the write gate applies to a device a
/// read-only run could use: one holding a filesystem is refused in one line
/// naming --destroy-device, and nothing is written to it.
fn a_precondition_goes_through_the_write_gate() {
    let _store = temp_store();
    let dev = LoopDev::new(16 << 20, true);
    dev.mkfs("ext4");
    let before = sectors_written(&dev);
    let out = crate::common::run::dbio()
        .args(["run", "--target"])
        .arg(&dev.path)
        .args([
            "--pattern",
            "randread",
            "--precondition",
            "--round",
            "1s",
            "--time",
            "10",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("ext4") && stderr.contains("--destroy-device"),
        "{stderr}"
    );
    assert_eq!(sectors_written(&dev), before, "nothing written");
    assert!(dev.fsck_clean(), "the filesystem is intact");
}

crate::tests! {
    a_precondition_writes_the_device_twice_then_runs_to_steady [Root],
    a_precondition_goes_through_the_write_gate [Root, Tool("mkfs.ext4")],
    a_steady_runs_page_draws_its_rounds_and_band_in_chromium [Tool("chromium")],
    a_constant_throttle_is_steady_after_one_window [Root, BlkioThrottle],
    a_drift_is_not_steady_until_the_window_is_past_it [Root, BlkioThrottle],
    a_cap_without_steady_state_says_so_in_words [Root, BlkioThrottle],
}
