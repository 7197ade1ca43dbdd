//! `dbio compare`: two runs, or two variables of a plan, in AWR's compare
//! period layout, from real runs in a temporary store.

use crate::common::cli::{dbio, ok};
use crate::common::run::Run;
use crate::common::store::{store_path, temp_store};

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

/// A raw plan of two variables at sessions 1 and 2, two repeats each.
fn two_session_counts(dir: &std::path::Path, db: &std::path::Path) {
    let plan = dir.join("s.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "s"
repeats = 2

[workload]
size = "2M"
pattern = "randrw"
io = "buffered"
ops = 2000

[sweep]
sessions = [1, 2]

[variables]
A = {{ target = "{0}/a" }}
B = {{ target = "{0}/b", bs = "4k" }}
"#,
            dir.display()
        ),
    )
    .unwrap();
    ok(dbio(db, &["plan", "run", plan.to_str().unwrap()]));
}

/// Run ids by (variable or "-", sessions), read back with `dbio runs export`.
fn ids_by_cell(db: &std::path::Path) -> std::collections::BTreeMap<(String, u64), Vec<i64>> {
    let rows: serde_json::Value =
        serde_json::from_str(&ok(dbio(db, &["runs", "export", "--format", "json"]))).unwrap();
    let mut m: std::collections::BTreeMap<(String, u64), Vec<i64>> = Default::default();
    for r in rows.as_array().unwrap() {
        if r["warmup"] == true || r["status"] != "completed" {
            continue;
        }
        m.entry((
            r["variable"].as_str().unwrap_or("-").to_string(),
            r["sessions"].as_u64().unwrap(),
        ))
        .or_default()
        .push(r["id"].as_i64().unwrap());
    }
    m
}

fn session_counts_are_compared_cell_by_cell_never_pooled() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    two_session_counts(dir.path(), &db);
    let cells = ids_by_cell(&db);
    let text = ok(dbio(&db, &["compare", "A", "B", "--plan", "s"]));
    assert!(
        text.starts_with("Compared cell by cell:") && text.contains("(1, 2)"),
        "{text}"
    );
    for n in [1u64, 2] {
        let block = text
            .split(&format!("=== sessions {n} ===\n"))
            .nth(1)
            .unwrap_or_else(|| panic!("no block for {n} sessions:\n{text}"));
        let block = block.split("=== sessions").next().unwrap();
        let ids = |v: &str| {
            let list: Vec<String> = cells[&(v.to_string(), n)]
                .iter()
                .map(i64::to_string)
                .collect();
            format!("@ {n} sessions: 2 runs ({})", list.join(", "))
        };
        assert!(block.contains(&format!("1st  A {}", ids("A"))), "{block}");
        assert!(block.contains(&format!("2nd  B {}", ids("B"))), "{block}");
        // Welch's words at 2+2 runs; never "same".
        let read = block
            .lines()
            .find(|l| l.starts_with("Read IO requests"))
            .unwrap();
        assert!(read.contains("significant at 2+2 runs (p"), "{read}");
        assert!(!block.contains("same ("), "{block}");
    }
    // Sessions is never "the same on both" in a pooled comparison: by ids,
    // each side holds runs of 1 and 2 sessions, compared cell by cell too.
    let a: Vec<String> = [1, 2]
        .iter()
        .map(|&n| cells[&("A".to_string(), n)][0].to_string())
        .collect();
    let b1 = cells[&("B".to_string(), 1)][0].to_string();
    let b2 = cells[&("B".to_string(), 2)][0].to_string();
    let text = ok(dbio(&db, &["compare", &a.join(","), &format!("{b1},{b2}")]));
    assert!(text.contains("=== sessions 1 ===") && text.contains("=== sessions 2 ==="));
    // Only one count on both sides: the other is named as left out.
    let text = ok(dbio(&db, &["compare", &a.join(","), &b1]));
    assert!(text.contains("=== sessions 1 ===") && !text.contains("=== sessions 2"));
    assert!(
        text.contains(&format!("left out: run {} at sessions 2", a.join(","))),
        "{text}"
    );
    // JSON: one object per cell, each side's runs all of that count.
    let json: serde_json::Value = serde_json::from_str(&ok(dbio(
        &db,
        &["compare", "A", "B", "--plan", "s", "--format", "json"],
    )))
    .unwrap();
    let got: Vec<u64> = json["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(got, [1, 2]);
    for c in json["cells"].as_array().unwrap() {
        let n = c["sessions"].as_u64().unwrap();
        for (side, v) in [("first", "A"), ("second", "B")] {
            let mut ids: Vec<i64> = c[side]["run_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_i64().unwrap())
                .collect();
            ids.sort_unstable();
            let mut want = cells[&(v.to_string(), n)].clone();
            want.sort_unstable();
            assert_eq!(ids, want, "{side} at {n}");
            assert_eq!(c[side]["settings"]["sessions"], n);
        }
        let t = &c["tests"][0];
        assert_eq!(
            (t["n_first"].as_u64(), t["n_second"].as_u64()),
            (Some(2), Some(2))
        );
    }
    // With --sessions: one comparison, as before.
    let text = ok(dbio(
        &db,
        &["compare", "A", "B", "--plan", "s", "--sessions", "2"],
    ));
    assert!(
        text.starts_with("Compare Period Report\n1st  A @ 2 sessions: 2 runs"),
        "{text}"
    );
}

fn sides_without_a_shared_session_count_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    two_session_counts(dir.path(), &db);
    let x = dir.path().join("x");
    ok(dbio(
        &db,
        &[
            "run",
            "--quiet",
            "--target",
            x.to_str().unwrap(),
            "--size",
            "2M",
            "--sessions",
            "3",
            "--ops",
            "2000",
            "--io",
            "buffered",
        ],
    ));
    let cells = ids_by_cell(&db);
    let a1 = cells[&("A".to_string(), 1)][0].to_string();
    let a2 = cells[&("A".to_string(), 2)][0].to_string();
    let b2 = cells[&("B".to_string(), 2)][0].to_string();
    let x3 = cells[&("-".to_string(), 3)][0].to_string();
    // A side spanning 1 and 2 sessions against a run at 3: nothing to
    // compare cell by cell, and pooling is not an answer.
    let out = dbio(&db, &["compare", &format!("{a1},{a2}"), &x3]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "run {a1},{a2} has runs at sessions 1, 2 and run {x3} at 3"
        )) && err.contains("give runs of one session count on each side"),
        "{err}"
    );
    // One count on each side (1 against 2): one comparison, and the
    // sessions setting is a difference, not "the same".
    let text = ok(dbio(&db, &["compare", &a1, &b2]));
    let row = text.lines().find(|l| l.starts_with("sessions ")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["sessions", "1", "2"]
    );
}

fn a_slob_run_and_a_raw_run_show_both_sides_numbers() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    Run::raw(&dir.path().join("raw"))
        .args(&["--size", "4M", "--pattern", "randrw", "--ops", "2000"])
        .args(&["--io", "buffered"])
        .json();
    Run::slob(&dir.path().join("slob"))
        .sessions(2)
        .args(&["--scale", "300", "--cache", "256K", "--work-loop", "40"])
        .json();
    let db = store_path();
    let json: serde_json::Value =
        serde_json::from_str(&ok(dbio(&db, &["compare", "1", "2", "--format", "json"]))).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let metric = |name: &str| -> f64 {
        conn.query_row(
            "SELECT value FROM metrics WHERE run_id = 2 AND name = ?1",
            [name],
            |r| r.get(0),
        )
        .unwrap()
    };
    let line = |side: &str, name: &str| -> Option<f64> {
        json[side]["load"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == name)
            .map(|l| l["per_second"][0].as_f64().unwrap())
    };
    // The SLOB side's MiB and latencies are its stored metrics.
    for (name, stored, scale) in [
        ("Read MiB", "read.mib_per_s", 1.0),
        ("Write MiB", "write.mib_per_s", 1.0),
        ("Read avg latency (ms)", "read.latency.mean_us", 1e-3),
        ("Read p99 latency (ms)", "read.latency.p99_us", 1e-3),
        ("Write avg latency (ms)", "write.latency.mean_us", 1e-3),
    ] {
        let got = line("second", name).unwrap_or_else(|| panic!("no {name} on the SLOB side"));
        let want = metric(stored) * scale;
        assert!(
            (got - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{name}: {got} vs {want}"
        );
        assert!(line("first", name).is_some(), "{name}");
    }
    let text = ok(dbio(&db, &["compare", "1", "2"]));
    for name in [
        "Read MiB",
        "Write MiB",
        "Read avg latency",
        "Write p99 latency",
    ] {
        let row = text.lines().find(|l| l.starts_with(name)).unwrap();
        let cols: Vec<&str> = row.split_whitespace().collect();
        let n = name.split_whitespace().count() + usize::from(name.contains("latency"));
        assert!(cols[n] != "-" && cols[n + 1] != "-", "{row}\n{text}");
    }
}

crate::tests! {
    two_variables_of_a_slob_plan_side_by_side,
    two_runs_by_id_and_bad_sides,
    session_counts_are_compared_cell_by_cell_never_pooled,
    sides_without_a_shared_session_count_are_refused,
    a_slob_run_and_a_raw_run_show_both_sides_numbers,
}
