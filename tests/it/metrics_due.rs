//! Due-time latency served live (`--rate` with `--metrics-listen`,
//! docs/metrics.md): a paced run above a throttled loop device's rate
//! serves a due-time p99 far above its service p99 — at the endpoint, on
//! the live page's data and in the textfile, which promtool accepts — and
//! the textfile's last state agrees with the stored report; a paced SLOB
//! model run serves each operation it paced; a closed-loop run serves no
//! due-time series at all.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::blkio::Throttle;
use crate::common::prometheus::get;
use crate::common::run::num;
use crate::common::store::{store_path, temp_store};
use crate::metrics_live::{ANY_PORT, Serving, promtool_accepts, stderr};

/// Reads per second the throttled device serves, and what the run asks.
const THROTTLE: u32 = 400;
const ASKED: u32 = 2 * THROTTLE;

/// `dbio run --json` of `args` on `target`, serving metrics on any port
/// and writing the textfile into `textdir`, inside `throttle` if given.
fn spawn(target: &Path, textdir: &Path, throttle: Option<&Throttle>, args: &[&str]) -> Serving {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store_path())
        .args(["run", "--json", "--target"])
        .arg(target)
        .args(args)
        .args(["--metrics-listen", ANY_PORT, "--metrics-textfile"])
        .arg(textdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(t) = throttle {
        t.inside(&mut c);
    }
    Serving::start(c.spawn().unwrap())
}

/// A histogram family's `(le, cumulative count)` for `op="read"`.
fn buckets(text: &str, family: &str) -> Vec<(f64, f64)> {
    let prefix = format!("{family}_bucket{{");
    text.lines()
        .filter(|l| l.starts_with(&prefix) && l.contains("op=\"read\""))
        .map(|l| {
            let le = l.split(",le=\"").nth(1).unwrap().split('"').next().unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            let value = l.rsplit_once("} ").unwrap().1.split(' ').next().unwrap();
            (le, value.parse().unwrap())
        })
        .collect()
}

/// The upper edge (seconds) of the bucket holding quantile `q`, as a
/// reader of the exposition bounds it; None for an empty histogram.
fn quantile(buckets: &[(f64, f64)], q: f64) -> Option<f64> {
    let total = buckets.last()?.1;
    if total == 0.0 {
        return None;
    }
    buckets
        .iter()
        .find(|(_, n)| *n >= q * total)
        .map(|(le, _)| *le)
}

/// `family`'s read p99 in `text` (seconds), failing with the text if absent.
fn p99(text: &str, family: &str) -> f64 {
    quantile(&buckets(text, family), 0.99)
        .unwrap_or_else(|| panic!("no {family} for reads in:\n{text}"))
}

/// The only sample of `name{…op="read"…}`.
fn read_sample(text: &str, name: &str) -> f64 {
    let prefix = format!("{name}{{");
    let l = text
        .lines()
        .find(|l| l.starts_with(&prefix) && l.contains("op=\"read\""))
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"));
    l.rsplit_once("} ")
        .unwrap()
        .1
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn a_paced_run_above_a_throttle_serves_due_time_p99_far_above_service_p99() {
    let _store = temp_store();
    let dev = crate::open_loop::device();
    let t = Throttle::new(&dev.path, THROTTLE, THROTTLE);
    let dir = tempfile::tempdir().unwrap();
    let asked = ASKED.to_string();
    let args = [
        "--pattern",
        "randread",
        "--bs",
        "4k",
        "--engine",
        "psync",
        "--sessions",
        "4",
        "--time",
        "12",
        "--rate",
        &asked,
        "--seed",
        "3",
    ];
    let mut run = spawn(&dev.path, dir.path(), Some(&t), &args);
    // 6 s of a 12 s run: a busy host's poll has seconds to see it.
    let live = run.wait_elapsed(6.0);
    let text = get(&run.addr, "/metrics", None).unwrap().body;
    // Asked twice what the device serves: the backlog grows, requests wait
    // for a session for seconds, while each one's service stays the
    // throttle's.
    let (due, service) = (
        p99(&text, "dbio_request_due_seconds"),
        p99(&text, "dbio_request_service_seconds"),
    );
    eprintln!("served read p99: due {due} s, service {service} s");
    assert!(due >= 0.5, "due-time p99 {due} s:\n{text}");
    assert!(due > 10.0 * service, "due {due} s, service {service} s");
    assert!(p99(&text, "dbio_request_lateness_seconds") > 5.0 * service);
    // Every read served came with its due time.
    assert_eq!(
        read_sample(&text, "dbio_request_due_seconds_count"),
        read_sample(&text, "dbio_request_service_seconds_count"),
    );
    promtool_accepts("endpoint", &text);
    // The live page's seconds: the due-time p99 beside the service p99,
    // far above it once the backlog has built up.
    let last = live["run"]["seconds"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    let (page_due, page_service) = (
        last["due_p99_us"][0]
            .as_f64()
            .expect("due_p99_us in a paced run"),
        last["p99_us"][0].as_f64().unwrap(),
    );
    assert!(page_due > 10.0 * page_service, "page: {last}");

    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = std::fs::read_to_string(dir.path().join("dbio.prom")).unwrap();
    promtool_accepts("textfile", &file);
    // The run's last state against the stored report (its window only, the
    // tail after it aside): the same p99 within the buckets' width.
    let served = p99(&file, "dbio_request_due_seconds");
    let stored = num(&report, "read.due.p99_us") / 1e6;
    eprintln!("due-time p99: served {served} s, stored {stored} s");
    assert!(
        served >= 0.95 * stored && served < 2.0 * stored,
        "served {served} s, stored {stored} s"
    );
}

fn an_unpaced_run_serves_no_due_time_series() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--size",
        "8M",
        "--pattern",
        "randrw",
        "--io",
        "buffered",
        "--sessions",
        "2",
        "--time",
        "6",
    ];
    // Seconds are collected whole: a run a little longer than the wait
    // leaves a busy host's poll more than one second to see it.
    let mut run = spawn(&dir.path().join("t"), dir.path(), None, &args);
    let live = run.wait_elapsed(2.0);
    let text = get(&run.addr, "/metrics", None).unwrap().body;
    assert!(
        text.contains("dbio_request_service_seconds_bucket{"),
        "{text}"
    );
    for family in ["dbio_request_due_seconds", "dbio_request_lateness_seconds"] {
        assert!(!text.contains(family), "{family} in a closed loop:\n{text}");
    }
    for s in live["run"]["seconds"].as_array().unwrap() {
        assert!(s["due_p99_us"].is_null(), "{s}");
    }
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let file = std::fs::read_to_string(dir.path().join("dbio.prom")).unwrap();
    assert!(!file.contains("dbio_request_due_seconds"), "{file}");
}

/// `family`'s count for `op` in `text`.
fn op_count(text: &str, family: &str, op: &str) -> f64 {
    let (prefix, label) = (format!("{family}_count{{"), format!("op=\"{op}\""));
    let l = text
        .lines()
        .find(|l| l.starts_with(&prefix) && l.contains(&label))
        .unwrap_or_else(|| panic!("no {family} {op} in:\n{text}"));
    let value = l.rsplit_once("} ").unwrap().1.split(' ').next().unwrap();
    value.parse().unwrap()
}

/// `family`'s count over read and write in `text`.
fn count_both(text: &str, family: &str) -> f64 {
    op_count(text, family, "read") + op_count(text, family, "write")
}

fn a_paced_slob_run_serves_its_operations_due_times_as_stored() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let sessions = 2;
    let model = [
        "--workload",
        "slob",
        "--seed",
        "7",
        "--sessions",
        "2",
        "--scale",
        "2000",
        "--cache",
        "1M",
        "--update-pct",
        "30",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
        "--time",
        "4",
        "--rate",
        "400",
    ];
    let run = spawn(&dir.path().join("data"), dir.path(), None, &model);
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let last = std::fs::read_to_string(dir.path().join("dbio.prom")).unwrap();
    promtool_accepts("textfile", &last);
    // Every paced operation (selects as read, updates as write), the ones
    // that ended just after the window (one a session at most) included.
    let ops = &report["open_loop"]["operations"];
    let stored = num(ops, "count");
    let served = count_both(&last, "dbio_request_due_seconds");
    assert!(
        stored > 0.0 && served >= stored && served <= stored + f64::from(sessions),
        "served {served} operations, stored {stored}"
    );
    assert_eq!(served, count_both(&last, "dbio_request_lateness_seconds"));
    // The model's selects are reads and its updates writes: both paced.
    for op in ["read", "write"] {
        assert!(
            op_count(&last, "dbio_request_due_seconds", op) > 0.0,
            "{op}"
        );
    }
}

crate::tests! {
    a_paced_run_above_a_throttle_serves_due_time_p99_far_above_service_p99 [Root, BlkioThrottle, Tool("promtool")],
    an_unpaced_run_serves_no_due_time_series,
    a_paced_slob_run_serves_its_operations_due_times_as_stored [Tool("promtool")],
}
