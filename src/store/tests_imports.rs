//! Schema version 2 and imported runs: a version-1 store migrates with its
//! runs intact, imported runs are saved whole or not at all, listed,
//! exported and shown.

use crate::cli::runs::RunsCommand;
use crate::commands::runs as commands;
use rusqlite::Connection;
use serde_json::json;

use super::tests::report;
use super::*;
use crate::report::export::runs as export;
use crate::vocab;

fn imported(variable: &str, iops: f64) -> ImportedRun {
    ImportedRun {
        row: RunRow {
            started_unix_ms: 1_790_000_000_000,
            ended_unix_ms: Some(1_790_000_060_000),
            status: "completed".into(),
            workload: Some("slob".into()),
            sessions: Some(8),
            plan: Some("slob-xfs".into()),
            variable: Some(variable.into()),
            tags: vec!["imported".into()],
            source: "awr-info".into(),
            source_file: Some("/data/awrinfo.txt".into()),
            model: Some("reads".into()),
            ..Default::default()
        },
        metrics: vec![(vocab::PHYSICAL_READS_S.into(), iops)],
        report: json!({"FILE": "x.8"}),
        report_text: "awr_info row\n".into(),
        environment: json!({}),
        ..Default::default()
    }
}

#[test]
fn a_version_1_store_migrates_to_version_2_with_its_runs_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.sqlite");
    // Build a store exactly as a version-1 dbio did.
    {
        let mut conn = Connection::open(&path).unwrap();
        schema::migrate(&mut conn, &schema::MIGRATIONS[..1], &path).unwrap();
        let v: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, 1);
        let cols: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('runs')")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(!cols.iter().any(|c| c == "source"), "{cols:?}");
    }
    // A run as version 1 stored it (the columns version 1 has).
    let id = {
        let conn = Connection::open(&path).unwrap();
        conn.execute(
            "INSERT INTO runs (started_unix_ms, status, workload, sessions, plan, variable, \
             saved_unix_ms, report_json, report_text, environment_json) \
             VALUES (1790000000000, 'completed', 'raw', 4, 'p', 'XFS', 1790000001000, ?1, 'text', '{}')",
            [report().to_string()],
        )
        .unwrap();
        let id = conn.last_insert_rowid();
        conn.execute("INSERT INTO run_tags VALUES (?1, 't')", [id])
            .unwrap();
        conn.execute("INSERT INTO metrics VALUES (?1, 'read.iops', 123.5)", [id])
            .unwrap();
        id
    };
    let before = {
        let conn = Connection::open(&path).unwrap();
        conn.query_row(
            "SELECT report_json, report_text FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
        )
        .unwrap()
    };
    let store = Store::open(&path).unwrap();
    let v: i64 = store
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    // Through version 2 to the current one.
    assert_eq!(v, super::schema::VERSION);
    assert!(v >= 2);
    let run = store.get(id).unwrap();
    assert_eq!(run.row.source, "dbio");
    assert_eq!(
        (run.row.source_file.as_deref(), run.row.model.as_deref()),
        (None, None)
    );
    assert_eq!(run.row.plan.as_deref(), Some("p"));
    assert_eq!(run.row.tags, ["t"]);
    assert_eq!(run.report, report());
    assert_eq!(run.metrics, vec![("read.iops".to_string(), 123.5)]);
    let after: (String, String) = store
        .conn
        .query_row(
            "SELECT report_json, report_text FROM runs WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(after, before);
    let view: (String, Option<String>) = store
        .conn
        .query_row(
            "SELECT source, source_file FROM run_summary WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(view, ("dbio".to_string(), None));
}

#[test]
fn imports_are_saved_in_one_transaction_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.sqlite");
    let mut store = Store::open(&path).unwrap();
    let ids = store
        .save_imports(&[imported("XFS", 100.0), imported("EXT4", 50.0)])
        .unwrap();
    assert_eq!(ids.len(), 2);
    let run = store.get(ids[1]).unwrap();
    assert_eq!(run.row.source, "awr-info");
    assert_eq!(run.row.model.as_deref(), Some("reads"));
    assert_eq!(
        run.metrics,
        vec![(vocab::PHYSICAL_READS_S.to_string(), 50.0)]
    );
    assert_eq!(
        store
            .imported_from("awr-info", "/data/awrinfo.txt")
            .unwrap(),
        ids
    );
    assert!(
        store
            .imported_from("fio", "/data/awrinfo.txt")
            .unwrap()
            .is_empty()
    );

    // A bad run (model outside the CHECK) rolls back the whole file.
    let mut bad = imported("ZFS", 1.0);
    bad.row.model = Some("everything".into());
    assert!(store.save_imports(&[imported("BTRFS", 1.0), bad]).is_err());
    let all = store.list(&RunFilter::default()).unwrap();
    assert_eq!(all.len(), 2, "nothing of the failed file is stored");

    let only = store
        .list(&RunFilter {
            source: Some("awr-info".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(only.len(), 2);
    let list = commands::list_table(&all);
    assert!(list.contains("awr-info:slob -"), "{list}");
    let mut out = Vec::new();
    export::write(
        export::Format::Csv,
        &all,
        &Default::default(),
        &Default::default(),
        &mut out,
    )
    .unwrap();
    let csv = String::from_utf8(out).unwrap();
    assert!(
        csv.lines().next().unwrap().ends_with(
            ",source,source_file,model,db_physical_reads_per_s,db_physical_writes_per_s"
        )
    );
    assert!(
        csv.contains(",awr-info,/data/awrinfo.txt,reads,100,\n"),
        "{csv}"
    );
    let mut shown = Vec::new();
    commands::execute(
        &mut store,
        RunsCommand::Show {
            id: ids[0],
            json: false,
            environment: false,
            html: None,
            format: None,
        },
        &mut shown,
    )
    .unwrap();
    let shown = String::from_utf8(shown).unwrap();
    assert!(shown.starts_with("awr_info row\n"), "{shown}");
    assert!(
        shown.contains(
            "imported from awr-info output /data/awrinfo.txt (model reads given at import)"
        ),
        "{shown}"
    );
}
