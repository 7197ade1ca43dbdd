//! Tests of `dbio compare`'s text: settings, rows whose digits show the
//! difference, latency units, the evidence words, cells per session count.

use super::*;
use serde_json::{Value, json};

fn report(target: &str, device: &str, r_per_s: f64) -> Value {
    json!({
        "config": {"workload": "raw", "sessions": 4},
        "target": {"path": target},
        "storage": {"links": [
            {"type": "filesystem", "fs_type": "xfs", "mount_options": "rw,noatime"},
            {"type": "device", "name": device, "scheduler": "none"},
        ]},
        "read": {"iops": r_per_s},
        "telemetry_window": {"devices": [{"name": device, "rates": {"r_per_s": r_per_s, "util_pct": 50.0}}]},
    })
}

#[test]
fn long_settings_are_shown_whole_and_lab_devices_face_each_other() {
    let long = "/root/.local/state/dbio/lab/mnt/plan-0123456789/";
    let a = Side::from_reports(
        "XFS".into(),
        vec![1],
        &[report(&format!("{long}XFS/dbio"), "loop0", 1000.0)],
    );
    let b = Side::from_reports(
        "EXT4".into(),
        vec![2],
        &[report(&format!("{long}EXT4/dbio"), "loop1", 1500.0)],
    );
    let text = render(&a, &b);
    assert!(text.contains(&format!("  1st  {long}XFS/dbio\n")), "{text}");
    assert!(
        text.contains(&format!("  2nd  {long}EXT4/dbio\n")),
        "{text}"
    );
    assert!(text.contains("(same on both:"), "{text}");
    // The two loop devices' settings are compared under one name: equal.
    let same = text
        .lines()
        .find(|l| l.starts_with("(same on both:"))
        .unwrap();
    assert!(same.contains("device loop0/loop1 scheduler"), "{text}");
    assert!(!text.contains("device loop0 scheduler"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("loop0/loop1") && l.contains("r_per_s"))
        .unwrap_or_else(|| panic!("{text}"));
    let cols: Vec<&str> = row.split_whitespace().collect();
    // One precision per row: the difference has the digits of its values.
    assert_eq!(cols[2..], ["1000", "1500", "500", "50.0"], "{row}");
}

#[test]
fn a_row_keeps_the_digits_its_difference_needs() {
    // The row: 0.004 and 0.005 with a Diff of 0.000.
    assert_eq!(
        row_numbers(0.0042, 0.0047),
        ["0.00420", "0.00470", "0.00050"]
    );
    assert_eq!(row_numbers(6719.0, 261.0), ["6719", "261", "-6458"]);
    assert_eq!(row_numbers(0.634, 11.556), ["0.634", "11.556", "10.922"]);
    assert_eq!(row_numbers(10091.0, 10092.0), ["10091.0", "10092.0", "1.0"]);
    assert_eq!(row_numbers(f64::NAN, 3.59), ["-", "3.59", "-"]);
    assert_eq!(row_numbers(0.0, 0.0), ["0", "0", "0"]);
}

/// A raw run's report with the given latencies (µs) and read IOPS.
fn raw(read_mean_us: f64, read_iops: f64) -> Value {
    json!({
        "config": {"workload": "raw", "sessions": 1},
        "read": {"iops": read_iops, "mib_per_s": read_iops * 8192.0 / 1048576.0,
                 "latency": {"mean_us": read_mean_us, "p99_us": 10.0 * read_mean_us}},
    })
}

fn side(label: &str, reports: &[Value]) -> Side {
    let ids = (1..=reports.len() as i64).collect();
    Side::from_reports(label.into(), ids, reports)
}

fn row<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no {name:?} row in\n{text}"))
}

#[test]
fn small_latencies_are_shown_in_microseconds() {
    let a = side("A", &[raw(4.2, 1000.0)]);
    let b = side("B", &[raw(4.7, 1000.0)]);
    let text = render(&a, &b);
    let cols: Vec<&str> = row(&text, "Read avg latency (µs)")
        .split_whitespace()
        .collect();
    assert_eq!(cols[4..8], ["4.20", "4.70", "0.50", "11.9"], "{text}");
    // p99 is 42 and 47 µs, still below a millisecond.
    assert!(text.contains("Read p99 latency (µs)"), "{text}");
    // Above a millisecond the row stays in ms.
    let a = side("A", &[raw(1500.0, 1000.0)]);
    let text = render(&a, &b);
    assert!(text.contains("Read avg latency (ms)"), "{text}");
}

#[test]
fn few_runs_far_apart_are_not_significant_never_the_same() {
    // p99 latency +2000% on average, but one of B's three runs is wild.
    let a = side(
        "A",
        &[raw(100.0, 1000.0), raw(110.0, 1010.0), raw(105.0, 990.0)],
    );
    let b = side(
        "B",
        &[raw(120.0, 1000.0), raw(6000.0, 1005.0), raw(500.0, 995.0)],
    );
    let text = render(&a, &b);
    let line = row(&text, "Read avg latency (ms)");
    assert!(
        line.contains("not significant at 3+3 runs (p=0.")
            && line.contains("runs per side to detect it"),
        "{line}"
    );
    assert!(!text.contains("same ("), "{text}");
    assert!(
        text.contains("Not significant is not \"the same\""),
        "{text}"
    );
    // The JSON carries the same evidence.
    let tests = load_tests(&a, &b);
    let t = tests
        .iter()
        .find(|t| t.name == "Read avg latency (ms)")
        .unwrap();
    assert!(!t.evidence.significant);
    assert!(t.evidence.runs_needed.is_some());
    assert_eq!((t.evidence.n_first, t.evidence.n_second), (3, 3));
}

#[test]
fn a_setting_that_varies_within_a_side_is_never_the_same() {
    let at = |sessions: u32| {
        let mut r = raw(100.0, 1000.0);
        r["config"]["sessions"] = json!(sessions);
        r
    };
    // Both sides pool runs of 1, 2 and 4 sessions.
    let a = side("A", &[at(1), at(2), at(4)]);
    let b = side("B", &[at(1), at(2), at(4)]);
    assert_eq!(a.settings["sessions"], "(varies: 1, 2, 4)");
    let text = render(&a, &b);
    let same = row(&text, "(same on both:");
    assert!(!same.contains("sessions"), "{text}");
    assert!(
        row(&text, "sessions").contains("(varies: 1, 2, 4)"),
        "{text}"
    );
    assert!(same.contains("workload"), "{text}");
}

#[test]
fn a_slob_run_faces_a_raw_run_line_by_line() {
    let slob = json!({
        "config": {"workload": "slob", "sessions": 1},
        "slob": {"load_profile": [
            {"name": "Read IO requests", "per_second": 2000.0, "per_transaction": null},
            {"name": "Read IO (MB)", "per_second": 15.625, "per_transaction": null},
            {"name": "Transactions", "per_second": 50.0, "per_transaction": null},
        ]},
        "read": {"iops": 2000.0, "mib_per_s": 15.625,
                 "latency": {"mean_us": 250.0, "p99_us": 2500.0}},
        "cpu": {"us_per_io": 12.0},
    });
    let a = side("RAW", &[raw(100.0, 1000.0)]);
    let b = side("SLOB", &[slob]);
    let text = render(&a, &b);
    for (name, want) in [
        ("Read IO requests", ["1000", "2000"]),
        ("Read MiB", ["7.81", "15.62"]),
        ("Read avg latency (µs)", ["100", "250"]),
        ("Read p99 latency (ms)", ["1.00", "2.50"]),
    ] {
        let cols: Vec<&str> = row(&text, name).split_whitespace().collect();
        let n = name.split_whitespace().count();
        assert_eq!(cols[n..n + 2], want, "{name}:\n{text}");
    }
    // The SLOB run's own lines stay, the raw side has none of them.
    assert!(row(&text, "Transactions").contains(" - "), "{text}");
    assert!(row(&text, "Read IO (MB)").contains(" - "), "{text}");
}
