//! `dbio report` over runs made outside a plan: runs of different kinds
//! (raw patterns, the model) are not pooled into one row without a word —
//! the report names the kinds with their `--workload` choice, and each
//! choice gives its own table.

use crate::common::run::{Run, dbio};
use crate::common::store::temp_store;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn mixed_runs_are_refused_with_the_choices_and_each_choice_reports() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    for (pattern, n) in [("randread", 2), ("randrw", 1)] {
        for _ in 0..n {
            let out = Run::raw(&t)
                .args(&["--size", "4M", "--io", "buffered", "--pattern", pattern])
                .args(&["--ops", "300", "--quiet"])
                .output();
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
    }
    let out = Run::slob(&dir.path().join("s"))
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "400",
            "--work-loop",
            "40",
            "--quiet",
        ])
        .output();
    assert!(out.status.success(), "{}", text(&out.stderr));

    let html = dir.path().join("r.html");
    for extra in [&[][..], &["--html", html.to_str().unwrap()]] {
        let out = dbio().arg("report").args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = text(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for choice in [
            "of 3 kinds",
            "--workload randread (2 runs)",
            "--workload randrw (1 run)",
            "--workload slob (1 run)",
        ] {
            assert!(err.contains(choice), "{err} lacks {choice}");
        }
    }
    assert!(!html.exists());
    // Each choice is a table of its own runs.
    let out = dbio()
        .args(["report", "--workload", "randread", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "one row: {csv}");
    assert!(
        lines[0].starts_with("variable,4,"),
        "the randread runs' 4 sessions: {csv}"
    );
    let out = dbio()
        .args([
            "report",
            "--workload",
            "slob",
            "--metric",
            "db.physical_reads_per_s",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

crate::tests! {
    mixed_runs_are_refused_with_the_choices_and_each_choice_reports,
}
