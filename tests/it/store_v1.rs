//! A store written by the build before the metric rename keeps working:
//! `tests/corpus/store_v1/store.sqlite` was made by that build (run 1 a
//! `--workload slob` run, runs 2–3 an awr_info import of
//! `tests/corpus/store_v1/awr.txt`; see its README) and holds the old names
//! (`db.physical_reads_s`, `db.redo_mbs`, `event.*.waits_s`). Every reader
//! — runs list/show/export, report --metric and --model, compare, the HTML
//! page — reads them under the new names (`db.physical_reads_per_s`, …) and
//! accepts the old ones typed by a user; a run stored now uses the new
//! names; `compare --format json` is `dbio.compare.v2`.

use std::path::Path;

use serde_json::Value;

use crate::common::run::{Run, dbio};
use crate::common::store::{store_path, temp_store};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/store_v1");

/// The fixture copied into this test's own store (never written in place).
fn v1_store() -> crate::common::store::TempStore {
    let s = temp_store();
    std::fs::copy(Path::new(FIXTURE).join("store.sqlite"), store_path()).unwrap();
    s
}

fn ok(args: &[&str]) -> String {
    let out = dbio().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// What the fixture stores for run `id` under `name`, read with SQL.
fn stored(id: i64, name: &str) -> f64 {
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    conn.query_row(
        "SELECT value FROM metrics WHERE run_id = ?1 AND name = ?2",
        rusqlite::params![id, name],
        |r| r.get(0),
    )
    .unwrap()
}

fn old_names_read_as_new_ones() {
    let _store = v1_store();
    // The fixture really has the old names (and not the new).
    let reads = stored(1, "db.physical_reads_s");
    assert!(reads > 0.0);
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let new_rows: i64 = conn
        .query_row(
            "SELECT count(*) FROM metrics WHERE name LIKE '%\\_per\\_s' ESCAPE '\\' AND name LIKE 'db.%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(new_rows, 0, "the fixture was made before the rename");

    // Export: the new names, the stored values, no old name left.
    let rows: Value = serde_json::from_str(&ok(&[
        "runs",
        "export",
        "--metrics",
        "db.*,event.log_file_sync.*",
        "--format",
        "json",
    ]))
    .unwrap();
    let run1 = &rows[0];
    assert_eq!(run1["db.physical_reads_per_s"].as_f64(), Some(reads));
    assert_eq!(run1["db_physical_reads_per_s"].as_f64(), Some(reads));
    assert_eq!(
        run1["db.redo_mib_per_s"].as_f64(),
        Some(stored(1, "db.redo_mbs"))
    );
    assert_eq!(
        run1["event.log_file_sync.waits_per_s"].as_f64(),
        Some(stored(1, "event.log_file_sync.waits_s"))
    );
    let keys: Vec<&String> = run1.as_object().unwrap().keys().collect();
    assert!(
        !keys
            .iter()
            .any(|k| k.ends_with("reads_s") || k.ends_with("_mbs")),
        "{keys:?}"
    );
    assert_eq!(rows[1]["db_physical_reads_per_s"].as_f64(), Some(1000.0));

    // report --metric: the new name and the old one give the same table.
    let by = |m: &str| ok(&["report", "--metric", m, "--format", "csv"]);
    let new = by("db.physical_reads_per_s");
    assert_eq!(new, by("db.physical_reads_s"));
    assert!(new.contains("26794"), "{new}");
    assert!(new.contains("1100"), "{new}");
    // The SLOB.R model of the imported runs: (1000 + 1200) / 2.
    let model = ok(&["report", "--model", "reads", "--format", "csv"]);
    assert!(model.contains("1100"), "{model}");
}

fn every_reader_opens_a_v1_store() {
    let _store = v1_store();
    let list = ok(&["runs", "list"]);
    assert_eq!(list.lines().count(), 4, "{list}");
    let show = ok(&["runs", "show", "1"]);
    assert!(show.contains("Load Profile"), "{show}");
    let doc: Value = serde_json::from_str(&ok(&["runs", "show", "1", "--json"])).unwrap();
    // Stored as dbio.run.v1, read through upgrade_v1 (tests/it/run_v2.rs).
    assert_eq!(doc["schema"], "dbio.run.v2");
    assert!(
        doc["telemetry_window"]["host"]["ctxt_per_s"].is_number(),
        "{doc}"
    );
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("run1.html");
    ok(&["runs", "show", "1", "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("db file sequential read"), "no events drawn");

    // compare --format json: a schema, snake_case keys, numbers as numbers.
    let c: Value = serde_json::from_str(&ok(&["compare", "2", "3", "--format", "json"])).unwrap();
    assert_eq!(c["schema"], "dbio.compare.v2");
    assert_eq!(c["sessions"], 8);
    let c: Value = serde_json::from_str(&ok(&["compare", "1", "2", "--format", "json"])).unwrap();
    let first = &c["first"];
    assert_eq!(first["settings"]["sessions"], 4);
    assert_eq!(first["settings"]["block_size"], 8192);
    assert_eq!(first["settings"]["engine"], "psync");
    for l in first["load"].as_array().unwrap() {
        let key = l["key"].as_str().unwrap();
        assert!(
            key.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{key}"
        );
        assert!(l["per_second"][0].is_number(), "{l}");
    }
    let iops = first["load"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["key"] == "read_io_requests")
        .expect("a read_io_requests line");
    assert_eq!(iops["name"], "Read IO requests");
    assert!(first["host"].is_object(), "{}", first["host"]);
}

fn a_new_run_stores_the_new_names() {
    let _store = v1_store();
    let dir = tempfile::tempdir().unwrap();
    Run::slob(&dir.path().join("data"))
        .args(&["--time", "1", "--ramp", "0", "--scale", "300"])
        .json();
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM metrics WHERE run_id = 4 ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for want in [
        "db.physical_reads_per_s",
        "db.redo_mib_per_s",
        "db.db_time_per_s",
        "event.db_file_sequential_read.waits_per_s",
    ] {
        assert!(names.iter().any(|n| n == want), "no {want} in {names:?}");
    }
    let renamed: Vec<&String> = names
        .iter()
        .filter(|n| dbio::vocab::canonical_metric(n) != n.as_str())
        .collect();
    assert!(renamed.is_empty(), "old names stored: {renamed:?}");
    // The old run and the new one under one name.
    let rows: Value = serde_json::from_str(&ok(&[
        "runs",
        "export",
        "--metrics",
        "db.physical_reads_per_s",
        "--format",
        "json",
    ]))
    .unwrap();
    let got: Vec<bool> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["db.physical_reads_per_s"]
                .as_f64()
                .is_some_and(|v| v > 0.0)
        })
        .collect();
    assert_eq!(got, [true, true, true, true]);
}

crate::tests!(
    old_names_read_as_new_ones,
    every_reader_opens_a_v1_store,
    a_new_run_stores_the_new_names,
);
