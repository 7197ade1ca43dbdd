//! Tests of `dbio runs`: export formats (CSV, JSON, Markdown), list, show,
//! tag, note, delete, and the clap definitions. Fixtures from tests.rs.

use serde_json::{Value, json};

use super::*;
use crate::report::export::runs::Format;
use crate::store::tests::{Fixture, environment, fixture, report, report_text, save};
use crate::store::*;

/// Three runs, one with awkward text, for the export tests.
fn export_fixture() -> (Fixture, Vec<i64>) {
    let mut f = fixture();
    let rep = report();
    let a = save(
        &mut f.store,
        &rep,
        Some("p1"),
        Some("bs"),
        &["xfs", "nightly"],
    );
    let b = save(&mut f.store, &rep, None, None, &[]);
    let c = save(&mut f.store, &rep, None, None, &[]);
    f.store
        .set_note(b, "quoted \"x\", with comma | pipe")
        .unwrap();
    (f, vec![a, b, c])
}

fn export(store: &mut Store, format: Format) -> String {
    let mut out = Vec::new();
    let cmd = RunsCommand::Export {
        format,
        metrics: Vec::new(),
        long: false,
        filter: Default::default(),
    };
    execute(store, cmd, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Splits one CSV record (RFC 4180 quoting, no embedded newlines).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted, mut chars) =
        (vec![], String::new(), false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

#[test]
fn export_csv_has_a_header_and_one_row_per_run() {
    let (mut f, ids) = export_fixture();
    let csv = export(&mut f.store, Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + ids.len(), "{csv}");
    let header = csv_fields(lines[0]);
    assert_eq!(header, export::column_names());
    for name in [
        "id",
        "started",
        "status",
        "workload",
        "pattern",
        "sessions",
        "bs",
        "engine",
        "io_mode",
        "target",
        "plan",
        "variable",
        "tags",
        "total_iops",
        "total_p99_us",
    ] {
        assert!(header.iter().any(|h| h == name), "{name}");
    }
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<Vec<String>> = lines[1..].iter().map(|l| csv_fields(l)).collect();
    for (row, id) in rows.iter().zip(&ids) {
        assert_eq!(row.len(), header.len());
        assert_eq!(row[col("id")], id.to_string());
        assert_eq!(row[col("started")], "2026-09-21T14:13:20Z");
        assert_eq!(row[col("total_iops")], "1000.1");
        assert_eq!(row[col("bs")], "8192");
    }
    assert_eq!(rows[0][col("tags")], "nightly xfs");
    assert_eq!(rows[0][col("plan")], "p1");
    assert_eq!(rows[1][col("note")], "quoted \"x\", with comma | pipe");
    assert_eq!(rows[1][col("plan")], "");
}

#[test]
fn export_json_is_an_array_of_objects() {
    let (mut f, ids) = export_fixture();
    let text = export(&mut f.store, Format::Json);
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), ids.len());
    assert_eq!(rows[0]["id"], ids[0]);
    assert_eq!(rows[0]["tags"], json!(["nightly", "xfs"]));
    assert_eq!(rows[0]["total_p99_us"], 1802.239);
    assert_eq!(rows[0]["sessions"], 16);
    assert_eq!(rows[1]["plan"], Value::Null);
    assert_eq!(rows[1]["note"], "quoted \"x\", with comma | pipe");
    assert_eq!(
        rows[0].as_object().unwrap().len(),
        export::column_names().len()
    );
    // Keys come in column order.
    let first = text.lines().nth(1).unwrap();
    assert!(first.find("\"id\"").unwrap() < first.find("\"started\"").unwrap());
    assert_eq!(export(&mut fixture().store, Format::Json).trim(), "[\n]");
}

#[test]
fn export_markdown_is_a_table() {
    let (mut f, ids) = export_fixture();
    let md = export(&mut f.store, Format::Markdown);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 2 + ids.len(), "{md}");
    let cols = export::column_names().len();
    // Cells split on unescaped pipes.
    let cells = |l: &str| l.replace("\\|", "").matches('|').count() - 1;
    for l in &lines {
        assert!(l.starts_with("| ") && l.ends_with(" |"), "{l}");
        assert_eq!(cells(l), cols, "{l}");
    }
    assert!(
        lines[1]
            .split('|')
            .filter(|c| !c.is_empty())
            .all(|c| c.trim() == "---")
    );
    assert!(
        lines[2].starts_with(&format!(
            "| {} | 2026-09-21T14:13:20Z | completed |",
            ids[0]
        )),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains("comma \\| pipe"), "{}", lines[3]);
    assert!(lines[2].contains("| 1000 | 7.81 | 1802 |"), "{}", lines[2]);
}

fn run_cmd(store: &mut Store, cmd: RunsCommand) -> Result<String, StoreError> {
    let mut out = Vec::new();
    execute(store, cmd, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

#[test]
fn commands_show_list_tag_note_and_delete() {
    let mut f = fixture();
    let rep = report();
    let a = save(&mut f.store, &rep, None, None, &[]);
    let b = save(&mut f.store, &rep, Some("p1"), Some("bs"), &["xfs"]);

    let shown = run_cmd(
        &mut f.store,
        RunsCommand::Show {
            id: a,
            json: false,
            environment: false,
            html: None,
            format: None,
        },
    )
    .unwrap();
    assert_eq!(shown, report_text(), "exactly as printed");
    let json_out = run_cmd(
        &mut f.store,
        RunsCommand::Show {
            id: a,
            json: true,
            environment: false,
            html: None,
            format: None,
        },
    )
    .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&json_out).unwrap(), rep);
    let env = run_cmd(
        &mut f.store,
        RunsCommand::Show {
            id: a,
            json: false,
            environment: true,
            html: None,
            format: None,
        },
    )
    .unwrap();
    assert_eq!(serde_json::from_str::<Value>(&env).unwrap(), environment());

    let out = run_cmd(
        &mut f.store,
        RunsCommand::Tag {
            id: a,
            tags: vec!["zfs".into(), "baseline".into()],
        },
    )
    .unwrap();
    assert_eq!(out, format!("run {a} tags: baseline zfs\n"));
    run_cmd(
        &mut f.store,
        RunsCommand::Note {
            id: a,
            text: vec!["after".into(), "firmware".into(), "update".into()],
        },
    )
    .unwrap();
    assert_eq!(
        f.store.get(a).unwrap().row.note.as_deref(),
        Some("after firmware update")
    );
    let shown = run_cmd(
        &mut f.store,
        RunsCommand::Show {
            id: a,
            json: false,
            environment: false,
            html: None,
            format: None,
        },
    )
    .unwrap();
    assert_eq!(
        shown,
        format!(
            "{}stored   run {a}: tags baseline zfs\nnote     after firmware update\n",
            report_text()
        )
    );

    let list = run_cmd(
        &mut f.store,
        RunsCommand::List {
            filter: Default::default(),
        },
    )
    .unwrap();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list}");
    for h in [
        "id",
        "started",
        "status",
        "workload",
        "sessions",
        "bs",
        "engine/io",
        "target",
        "plan/variable",
        "tags",
        "IOPS",
        "p99 ms",
    ] {
        assert!(lines[0].contains(h), "{h}: {}", lines[0]);
    }
    let row_b: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        row_b,
        [
            &b.to_string(),
            "2026-09-21T14:13:20Z",
            "completed",
            "raw",
            "randrw",
            "16",
            "8KiB",
            "psync/fsync",
            "/mnt/xfs/dbio",
            "p1/bs",
            "xfs",
            "1000",
            "1.80"
        ]
    );
    let filtered = run_cmd(
        &mut f.store,
        RunsCommand::List {
            filter: FilterArgs {
                tags: vec!["zfs".into()],
                ..Default::default()
            },
        },
    )
    .unwrap();
    assert_eq!(filtered.lines().count(), 2);
    let none = run_cmd(
        &mut f.store,
        RunsCommand::List {
            filter: FilterArgs {
                plan: Some("nope".into()),
                ..Default::default()
            },
        },
    )
    .unwrap();
    assert!(none.starts_with("no stored runs match"), "{none}");

    run_cmd(
        &mut f.store,
        RunsCommand::Note {
            id: a,
            text: vec!["".into()],
        },
    )
    .unwrap();
    assert_eq!(f.store.get(a).unwrap().row.note, None);
    assert!(matches!(
        run_cmd(
            &mut f.store,
            RunsCommand::Note {
                id: 99,
                text: vec!["x".into()]
            }
        ),
        Err(StoreError::NoSuchRun { id: 99, .. })
    ));
    assert!(matches!(
        run_cmd(
            &mut f.store,
            RunsCommand::Tag {
                id: 99,
                tags: vec!["x".into()]
            }
        ),
        Err(StoreError::NoSuchRun { id: 99, .. })
    ));

    // A missing id deletes nothing.
    let err = run_cmd(&mut f.store, RunsCommand::Delete { ids: vec![a, 99] }).unwrap_err();
    assert!(err.to_string().starts_with("no run 99 in "), "{err}");
    assert_eq!(f.store.list(&RunFilter::default()).unwrap().len(), 2);
    let out = run_cmd(&mut f.store, RunsCommand::Delete { ids: vec![a, b] }).unwrap();
    assert_eq!(out, "deleted 2 runs\n");
    assert!(f.store.list(&RunFilter::default()).unwrap().is_empty());
}

#[test]
fn the_runs_subcommand_parses() {
    use clap::Parser;
    #[derive(clap::Parser)]
    struct Cli {
        #[command(subcommand)]
        cmd: RunsCommand,
    }
    let parse = |args: &[&str]| {
        Cli::try_parse_from(std::iter::once("runs").chain(args.iter().copied())).map(|c| c.cmd)
    };
    match parse(&[
        "list",
        "--plan",
        "p1",
        "--tag",
        "a",
        "--tag",
        "b",
        "--since",
        "2026-11-01",
        "--limit",
        "5",
    ])
    .unwrap()
    {
        RunsCommand::List { filter } => {
            let f = filter.to_filter();
            assert_eq!(f.plan.as_deref(), Some("p1"));
            assert_eq!(f.tags, ["a", "b"]);
            assert_eq!(f.since_unix_ms, Some(parse_since("2026-11-01", 0).unwrap()));
            assert_eq!(f.limit, Some(5));
        }
        _ => panic!("not list"),
    }
    assert!(matches!(
        parse(&["export", "--format", "markdown"]).unwrap(),
        RunsCommand::Export {
            format: Format::Markdown,
            ..
        }
    ));
    assert!(matches!(
        parse(&["show", "3", "--json"]).unwrap(),
        RunsCommand::Show {
            id: 3,
            json: true,
            ..
        }
    ));
    assert!(parse(&["list", "--since", "yesterday"]).is_err());
    assert!(parse(&["delete"]).is_err());
    assert!(parse(&["tag", "3"]).is_err());
    assert!(parse(&["export", "--format", "xml"]).is_err());
}
