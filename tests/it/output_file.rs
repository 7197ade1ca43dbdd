//! `--output FILE` for `run`, `report` and `compare`: stdout's text goes
//! to FILE (the JSON document, the report, the table) and an existing FILE
//! is kept when the command is refused before printing anything.

use serde_json::Value;

use crate::common::run::dbio;
use crate::common::store::temp_store;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn output_goes_to_the_file_and_a_refusal_keeps_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let t = t.to_str().unwrap();
    let run = |extra: &[&str]| {
        dbio()
            .args([
                "run", "--target", t, "--size", "4M", "--io", "buffered", "--ops", "500",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let json = dir.path().join("run.json");
    let out = run(&["--json", "--output", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        out.stdout.is_empty(),
        "stdout is empty: {}",
        text(&out.stdout)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "dbio.run.v2");
    assert_eq!(doc["total"]["requests"], 500);
    let id = doc["run_id"].as_i64().unwrap();

    // A refused run leaves the file as it was, and no partial file beside it.
    for bad in [
        &["--sessions", "0"][..],
        &["--read-pct", "50", "--pattern", "randread"],
    ] {
        let out = run(&[bad, &["--json", "--output", json.to_str().unwrap()]].concat());
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let again: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(again["run_id"], id, "{bad:?} kept the file");
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".dbio-")), "{names:?}");

    // The terminal report, the table and the comparison.
    let report = dir.path().join("run.txt");
    let out = run(&["--output", report.to_str().unwrap()]);
    assert!(out.status.success());
    let body = std::fs::read_to_string(&report).unwrap();
    assert!(
        body.contains("outliers") && body.contains("requests"),
        "{body}"
    );
    assert!(text(&out.stderr).contains(&format!("output written to {}", report.display())));
    let table = dir.path().join("table.csv");
    let out = dbio()
        .args([
            "report",
            "--format",
            "csv",
            "--output",
            table.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let csv = std::fs::read_to_string(&table).unwrap();
    assert!(csv.starts_with("variable,"), "{csv}");
    let cmp = dir.path().join("cmp.json");
    let ids = (id.to_string(), (id + 1).to_string());
    let out = dbio()
        .args([
            "compare",
            &ids.0,
            &ids.1,
            "--format",
            "json",
            "--output",
            cmp.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&cmp).unwrap()).unwrap();
    assert!(
        c["schema"].as_str().unwrap().starts_with("dbio.compare."),
        "{c}"
    );

    // A directory, or a directory that does not exist: one line, exit 2.
    for (path, says) in [
        (dir.path().to_path_buf(), "is a directory"),
        (
            dir.path().join("no/such/file"),
            "cannot create a file there",
        ),
    ] {
        let out = run(&["--output", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains("--output") && err.contains(says), "{err}");
    }
}

crate::tests! {
    output_goes_to_the_file_and_a_refusal_keeps_it,
}
