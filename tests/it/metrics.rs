//! `dbio metrics`: the stored runs' metric names with units, run counts
//! and meanings, and an unknown `report --metric` answered with the
//! nearest stored names in one line.

use crate::common::run::dbio;
use crate::common::store::temp_store;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Two raw runs: one of reads, one of reads and writes.
fn two_runs(dir: &std::path::Path) {
    let t = dir.join("t");
    for pattern in ["randread", "randrw"] {
        let out = dbio()
            .args(["run", "--target", t.to_str().unwrap(), "--size", "4M"])
            .args([
                "--io",
                "buffered",
                "--pattern",
                pattern,
                "--ops",
                "400",
                "--quiet",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
}

fn metrics_lists_names_units_runs_and_meanings() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let empty = dbio().arg("metrics").output().unwrap();
    assert!(empty.status.success());
    assert!(
        text(&empty.stderr).contains("holds no runs yet"),
        "{}",
        text(&empty.stderr)
    );
    two_runs(dir.path());
    let out = dbio().arg("metrics").output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list = text(&out.stdout);
    let row = |name: &str| -> Vec<String> {
        let line = list
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name} not listed:\n{list}"));
        line.split_whitespace().map(String::from).collect()
    };
    let p99 = row("read.latency.p99_us");
    assert_eq!(p99[1..3], ["µs", "2"], "unit and runs: {p99:?}");
    assert!(p99.join(" ").contains("99th percentile latency"), "{p99:?}");
    let w = row("write.iops");
    assert_eq!(w[1..3], ["/s", "1"], "only the randrw run wrote: {w:?}");
    // Every stored name is listed once: as many rows as sqlite has names.
    let names = list.lines().skip(1).count();
    let db = crate::common::store::store_path();
    let sql = std::process::Command::new("sqlite3")
        .arg(&db)
        .arg("SELECT COUNT(DISTINCT name) FROM metrics")
        .output()
        .unwrap();
    assert_eq!(text(&sql.stdout).trim(), names.to_string(), "{list}");
    // A filter.
    let out = dbio().args(["metrics", "p99"]).output().unwrap();
    let only = text(&out.stdout);
    assert!(
        only.lines()
            .skip(1)
            .all(|l| l.starts_with(|c: char| c.is_alphabetic())
                && l.split_whitespace().next().unwrap().contains("p99")),
        "{only}"
    );
    assert!(only.lines().count() > 3, "{only}");
}

fn an_unknown_metric_is_answered_with_the_nearest_names() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    two_runs(dir.path());
    let html = dir.path().join("r.html");
    for extra in [&[][..], &["--html", html.to_str().unwrap()]] {
        let out = dbio()
            .args(["report", "--metric", "read.p99"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = text(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains("nearest stored names: read.latency.p99_us, read.latency.p99_9_us, read.latency.p99_99_us"),
            "{extra:?}: {err}"
        );
        assert!(err.contains("dbio metrics lists all"), "{err}");
    }
    assert!(!html.exists(), "no page written");
    let out = dbio().args(["metrics", "nosuchthing"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no stored metric name contains \"nosuchthing\""));
}

crate::tests! {
    metrics_lists_names_units_runs_and_meanings [Tool("sqlite3")],
    an_unknown_metric_is_answered_with_the_nearest_names,
}
