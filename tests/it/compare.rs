//! `dbio compare`: two runs, or two variables of a plan, in AWR's compare
//! period layout, from real runs in a temporary store.

use crate::common::cli::{dbio, ok};

fn two_variables_of_a_slob_plan_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "cmp"
repeats = 2

[workload]
workload = "slob"
sessions = 2
scale = "300"
cache = "256K"
work_loop = 40
redo_file_size = "2M"
log_buffer = "512K"

[variables]
LITE = {{ target = "{0}/a", redo_stress = "lite", update_pct = 50 }}
HEAVY = {{ target = "{0}/b", redo_stress = "heavy", update_pct = 50 }}
"#,
            dir.path().display()
        ),
    )
    .unwrap();
    ok(dbio(&db, &["plan", "run", plan.to_str().unwrap()]));
    let text = ok(dbio(&db, &["compare", "LITE", "HEAVY", "--plan", "cmp"]));
    for needle in [
        "Compare Period Report",
        "1st  LITE: 2 runs",
        "2nd  HEAVY: 2 runs",
        "slob.redo_stress",
        "Load Profile",
        "Redo size (bytes)",
        "Welch",
        "Top Timed Events",
        "log file sync",
    ] {
        assert!(text.contains(needle), "lacks {needle:?}:\n{text}");
    }
    // HEAVY changes all 19 columns: 9.5x the redo per changed block.
    let json: serde_json::Value = serde_json::from_str(&ok(dbio(
        &db,
        &[
            "compare", "LITE", "HEAVY", "--plan", "cmp", "--format", "json",
        ],
    )))
    .unwrap();
    let per_tx = |side: &str| {
        json[side]["load"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == "Redo size (bytes)")
            .unwrap()["per_transaction"]
            .as_f64()
            .unwrap()
    };
    // Per transaction: one update of the 64-row work unit plus its commit record.
    assert_eq!(per_tx("first"), (64 * 256 + 64) as f64);
    assert_eq!(per_tx("second"), (64 * 2432 + 64) as f64);
    assert_eq!(json["first"]["run_ids"].as_array().unwrap().len(), 2);
}

fn two_runs_by_id_and_bad_sides() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let t = dir.path().join("data");
    for pattern in ["randread", "randwrite"] {
        ok(dbio(
            &db,
            &[
                "run",
                "--quiet",
                "--target",
                t.to_str().unwrap(),
                "--size",
                "4M",
                "--pattern",
                pattern,
                "--ops",
                "2000",
                "--io",
                "buffered",
            ],
        ));
    }
    // Short metric names resolve to stored ones, latencies in ms.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let p99_us: f64 = conn
        .query_row(
            "SELECT value FROM metrics WHERE run_id = 1 AND name = 'read.latency.p99_us'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    let t: serde_json::Value = serde_json::from_str(&ok(dbio(
        &db,
        &["report", "--metric", "p99_read_ms", "--format", "json"],
    )))
    .unwrap();
    let cell = &t["rows"][0]["cells"][0];
    assert_eq!(cell["n"], 1);
    assert!(
        (cell["value"].as_f64().unwrap() - p99_us / 1e3).abs() < 1e-9,
        "{cell}"
    );
    let text = ok(dbio(&db, &["compare", "1", "2"]));
    assert!(text.contains("pattern"), "{text}");
    assert!(
        text.contains("randread") && text.contains("randwrite"),
        "{text}"
    );
    assert!(text.contains("Read IO requests") || text.contains("Write IO requests"));
    for (a, b, needle) in [
        ("1", "99", "no run 99"),
        ("NOPE", "1", "no completed run of variable \"NOPE\""),
    ] {
        let out = dbio(&db, &["compare", a, b]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
}

crate::tests! {
    two_variables_of_a_slob_plan_side_by_side,
    two_runs_by_id_and_bad_sides,
}
