//! Tests of `dbio compare`'s text: settings, rows whose digits show the
//! difference, latency units, the evidence words, cells per session count.

use super::*;
use crate::document::Report;
use crate::report::run::tests::{sample, slob_sample};
use crate::storage::chain::Link;
use serde_json::{Value, json};

/// A whole raw run document (the run report's sample) with only reads,
/// changed by `edit`.
fn doc(mut r: Report, edit: impl FnOnce(&mut Report)) -> Value {
    r.write = None;
    r.sync = None;
    edit(&mut r);
    serde_json::to_value(&r).unwrap()
}

fn report(target: &str, device: &str, r_per_s: f64) -> Value {
    doc(sample(), |r| {
        r.config.sessions = 4;
        r.target.path = target.into();
        for link in &mut r.storage.as_mut().unwrap().links {
            match link {
                Link::Filesystem { mount_options, .. } => *mount_options = "rw,noatime".into(),
                Link::Device(d) => d.name = device.into(),
            }
        }
        r.read.as_mut().unwrap().iops = r_per_s;
        let w = r.telemetry_window.as_mut().unwrap();
        w.devices[0].name = device.into();
        let rates = w.devices[0].rates.as_mut().unwrap();
        (rates.r_per_s, rates.util_pct) = (r_per_s, 50.0);
    })
}

#[test]
fn long_settings_are_shown_whole_and_lab_devices_face_each_other() {
    let long = "/root/.local/state/dbio/lab/mnt/plan-0123456789/";
    let a = Side::from_reports(
        "XFS".into(),
        vec![1],
        &[report(&format!("{long}XFS/dbio"), "loop0", 1000.0)],
    )
    .unwrap();
    let b = Side::from_reports(
        "EXT4".into(),
        vec![2],
        &[report(&format!("{long}EXT4/dbio"), "loop1", 1500.0)],
    )
    .unwrap();
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
    doc(sample(), |r| {
        r.config.sessions = 1;
        let read = r.read.as_mut().unwrap();
        read.iops = read_iops;
        read.mib_per_s = read_iops * 8192.0 / 1048576.0;
        (read.latency.mean_us, read.latency.p99_us) = (read_mean_us, 10.0 * read_mean_us);
        r.cpu.us_per_io = read_iops / 100.0;
    })
}

fn side(label: &str, reports: &[Value]) -> Side {
    let ids = (1..=reports.len() as i64).collect();
    Side::from_reports(label.into(), ids, reports).unwrap()
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
    let slob = doc(slob_sample(), |r| {
        r.config.sessions = 1;
        let line = |name: &str, per_second: f64| crate::document::awr::LoadLine {
            name: name.into(),
            per_second,
            per_transaction: None,
        };
        r.slob.as_mut().unwrap().load_profile = vec![
            line("Read IO requests", 2000.0),
            line("Read IO (MB)", 15.625),
            line("Transactions", 50.0),
        ];
        let read = r.read.as_mut().unwrap();
        (read.iops, read.mib_per_s) = (2000.0, 15.625);
        (read.latency.mean_us, read.latency.p99_us) = (250.0, 2500.0);
        r.cpu.us_per_io = 12.0;
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

#[test]
fn a_run_whose_document_does_not_read_is_named_and_an_import_gives_its_settings() {
    let mut bad = raw(1.0, 1.0);
    bad.as_object_mut().unwrap().remove("cpu");
    let err = Side::from_reports("A".into(), vec![7], &[bad]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "run 7's stored document does not read as a dbio.run.v2 document: missing field `cpu`"
    );
    let fio = json!({"schema": "dbio.import.fio.v1",
        "config": {"workload": "raw", "block_size": 4096, "engine": "libaio", "pattern": null}});
    let s = side("FIO", &[fio]);
    assert_eq!(s.settings["block_size"], "4096");
    assert_eq!(s.settings["engine"], "libaio");
    assert!(!s.settings.contains_key("pattern"));
    assert!(s.load.is_empty());
}

/// The whole comparison, pinned byte for byte: two raw sides of three runs
/// on paired devices (settings, load profile with Welch's test, host and
/// device rows), and a SLOB side against a raw one (top events).
#[test]
fn the_comparison_text_is_pinned() {
    let runs = |dev: &str, base: f64| -> Vec<Value> {
        [0.0, 30.0, -20.0]
            .iter()
            .map(|d| report("/mnt/x/dbio", dev, base + d))
            .collect()
    };
    let a = side("XFS", &runs("loop0", 1000.0));
    let b = side("EXT4", &runs("loop1", 1400.0));
    let mut text = render(&a, &b);
    let slob = doc(slob_sample(), |r| r.config.sessions = 1);
    text += &render(&side("RAW", &[raw(100.0, 1000.0)]), &side("SLOB", &[slob]));
    insta::assert_snapshot!(text);
}
