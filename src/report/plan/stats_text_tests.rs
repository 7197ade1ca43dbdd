//! Snapshots of the `--stats` and `--scaling` renderings, built from fixed
//! runs (seed 001's shape: XFS peaks at 4 sessions and collapses at 16).

use super::*;
use crate::report::plan::stats::{self, RunValue};

fn sample() -> Vec<RunValue> {
    let mut runs = Vec::new();
    let mut add = |variable: &str, sessions: u32, values: &[f64]| {
        for &value in values {
            runs.push(RunValue {
                id: runs.len() as i64 + 1,
                variable: variable.into(),
                sessions,
                value,
            });
        }
    };
    add("XFS", 1, &[14000.0, 15000.0, 16000.0]);
    add("XFS", 4, &[39000.0, 40000.0, 41000.0]);
    add("XFS", 8, &[30000.0, 31000.0, 29000.0]);
    add("XFS", 16, &[12000.0, 12500.0, 11500.0]);
    add("EXT4", 1, &[5000.0, 5100.0, 4900.0, 5050.0, 9000.0]);
    add("EXT4", 4, &[10000.0, 10100.0, 9900.0]);
    add("EXT4", 8, &[11000.0, 11100.0, 10900.0]);
    add("EXT4", 16, &[11500.0, 11600.0, 11400.0]);
    add("RAW", 16, &[11500.0]);
    runs
}

#[test]
fn stats_text_snapshot() {
    let s = stats::summary("write.iops", &sample(), None);
    let t = summary(&s, Style::Text);
    assert!(t.contains("Against EXT4 (the first variable"), "{t}");
    insta::assert_snapshot!(t);
}

#[test]
fn stats_markdown_snapshot() {
    let s = stats::summary("write.iops", &sample(), Some("XFS"));
    insta::assert_snapshot!(summary(&s, Style::Markdown));
}

#[test]
fn stats_csv_has_a_line_per_cell_with_its_comparison() {
    let s = stats::summary("write.iops", &sample(), Some("EXT4"));
    let csv = summary_csv(&s);
    let lines: Vec<&str> = csv.lines().collect();
    // 1 header + EXT4 (4 + Overall) + RAW (1 + Overall) + XFS (4 + Overall).
    assert_eq!(lines.len(), 1 + 5 + 2 + 5, "{csv}");
    let xfs4: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("XFS,4,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(xfs4[3], "40000");
    assert_eq!(xfs4[16], "EXT4");
    assert_eq!(xfs4[17], (40000.0f64 / 10000.0).to_string());
    assert_eq!(xfs4[21], "significant difference");
    let ext4_1 = lines.iter().find(|l| l.starts_with("EXT4,1,")).unwrap();
    assert_eq!(ext4_1.split(',').nth(15), Some("17"), "{ext4_1}"); // the 9000 run
    // RAW at 16 has one run: no test.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("RAW,16,") && l.ends_with(stats::NOT_TESTED))
    );
}

#[test]
fn scaling_text_snapshot() {
    let s = stats::scaling(&sample());
    insta::assert_snapshot!(scaling("write.iops", &s, Style::Text));
}

#[test]
fn scaling_markdown_snapshot() {
    let s = stats::scaling(&sample());
    insta::assert_snapshot!(scaling("write.iops", &s, Style::Markdown));
}

#[test]
fn scaling_csv_says_why_there_is_no_fit() {
    let csv = scaling_csv(&stats::scaling(&sample()));
    let raw = csv.lines().find(|l| l.starts_with("RAW,")).unwrap();
    assert!(
        raw.ends_with(",\"needs at least 4 distinct session counts, got 1\""),
        "{raw}"
    );
    let xfs: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("XFS,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(&xfs[1..6], &["1 4 8 16", "40000", "4", xfs[4], "8"]);
}
