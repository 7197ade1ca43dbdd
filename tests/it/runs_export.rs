//! `dbio runs export` takes a run to a spreadsheet whole and safely: every
//! stored metric a `--metrics` glob selects, wide (a column each) or long
//! (`run,metric,value`), equal to the store's numbers; text cells a
//! spreadsheet would run as formulas (`=`, `+`, `-`, `@`) neutralised, numbers
//! left as numbers; patterns that select nothing refused in one line.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::run::{Run, dbio};
use crate::common::store::{store_path, temp_store};

/// One CSV record (RFC 4180 quoting, no line breaks inside fields).
fn fields(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted, mut chars) =
        (vec![], String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn export(args: &[&str]) -> String {
    let out = dbio()
        .args(["runs", "export"])
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// A small SLOB model run in `dir`; its id and stored metrics.
fn slob_run(dir: &Path) -> (i64, Vec<(String, f64)>) {
    let out = Run::slob(&dir.join("data"))
        .args(&["--sessions", "2", "--scale", "400", "--update-pct", "50"])
        .args(&["--work-loop", "40", "--quiet"])
        .output();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let id = store.list(&Default::default()).unwrap().last().unwrap().id;
    (id, store.metrics(id).unwrap())
}

fn a_slob_run_exports_whole_wide_and_long() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (id, stored) = slob_run(dir.path());
    let want: Vec<&(String, f64)> = stored
        .iter()
        .filter(|(n, _)| n.starts_with("db.") || n.starts_with("event."))
        .collect();
    assert!(want.len() > 20, "{stored:?}");

    // Long: every stored metric, one row each, the store's value exactly.
    let long = export(&["--long"]);
    let mut lines = long.lines();
    assert_eq!(lines.next(), Some("run,metric,value"));
    let rows: Vec<(i64, String, f64)> = lines
        .map(|l| {
            let f = fields(l);
            (f[0].parse().unwrap(), f[1].clone(), f[2].parse().unwrap())
        })
        .collect();
    let expect: Vec<(i64, String, f64)> = stored.iter().map(|(n, v)| (id, n.clone(), *v)).collect();
    assert_eq!(rows, expect);

    // Wide: the base columns, then exactly the selected metrics.
    let wide = export(&["--metrics", "db.*,event.*"]);
    let mut lines = wide.lines();
    let header = fields(lines.next().unwrap());
    let row = fields(lines.next().unwrap());
    let base = dbio::report::export::runs::column_names();
    assert_eq!(header[..base.len()], base[..]);
    let extra: Vec<&String> = header[base.len()..].iter().collect();
    assert_eq!(extra, want.iter().map(|(n, _)| n).collect::<Vec<_>>());
    let cells: BTreeMap<&String, &String> = header.iter().zip(&row).collect();
    for (n, v) in &want {
        assert_eq!(cells[n].parse::<f64>().unwrap(), *v, "{n}");
    }
    assert_eq!(cells[&"id".to_string()], &id.to_string());

    // Long JSON with a selection: objects {run, metric, value}, the value
    // written as the store's (shortest round-trip digits).
    let text = export(&["--long", "--metrics", "event.*", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let arr = json.as_array().unwrap();
    let events: Vec<&&(String, f64)> = want
        .iter()
        .filter(|(n, _)| n.starts_with("event."))
        .collect();
    assert_eq!(arr.len(), events.len());
    for (n, v) in events {
        let line = format!(
            "{{\"run\": {id}, \"metric\": \"{n}\", \"value\": {}}}",
            serde_json::Value::from(*v)
        );
        assert!(text.contains(&line), "{line} in {text}");
    }

    // Patterns that select nothing, or are not patterns, are refused.
    for (args, says) in [
        (
            vec!["--metrics", "db.*,nosuch.*"],
            "--metrics nosuch.* matches no metric",
        ),
        (vec!["--metrics", "db.$x"], "'$'"),
        (vec!["--metrics", ""], "empty pattern"),
    ] {
        let out = dbio().args(["runs", "export"]).args(&args).assert().code(2);
        let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

fn csv_formulas_are_neutralised_and_numbers_kept() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (id, _) = slob_run(dir.path());
    let id_s = id.to_string();
    dbio()
        .args(["runs", "tag", &id_s, "--", "=1+2", "-x"])
        .assert()
        .success();
    dbio()
        .args(["runs", "note", &id_s, "@SUM(A1)"])
        .assert()
        .success();
    let csv = export(&["--metrics", "db.block_size_bytes"]);
    let mut lines = csv.lines();
    let header = fields(lines.next().unwrap());
    let line = lines.next().unwrap();
    let row = fields(line);
    let cell = |name: &str| row[header.iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(cell("tags"), "'-x =1+2");
    assert_eq!(cell("note"), "'@SUM(A1)");
    assert!(line.contains(",\"'-x =1+2\","), "{line}");
    assert!(line.contains(",\"'@SUM(A1)\","), "{line}");
    assert_eq!(cell("sessions"), "2");
    assert_eq!(cell("db.block_size_bytes"), "8192");
    // JSON and Markdown are not spreadsheets: the text as it is.
    let json: serde_json::Value = serde_json::from_str(&export(&["--format", "json"])).unwrap();
    assert_eq!(json[0]["note"], "@SUM(A1)");
}

crate::tests! {
    a_slob_run_exports_whole_wide_and_long,
    csv_formulas_are_neutralised_and_numbers_kept,
}
