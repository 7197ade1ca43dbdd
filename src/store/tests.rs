//! Store tests: save/get round trip, list filters, delete cascade,
//! migrations and refusals, export formats, the `dbio runs` commands. The
//! report fixture is the report module's JSON snapshot (the real shape).

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use rusqlite::Connection;
use serde_json::{Value, json};

use super::commands::FilterArgs;
use super::*;

const JSON_SNAPSHOT: &str =
    include_str!("../report/snapshots/dbio__report__tests__json_report_snapshot.snap");
const TEXT_SNAPSHOT: &str =
    include_str!("../report/snapshots/dbio__report__tests__text_report_snapshot.snap");

/// The body of an insta snapshot (after its `---` header).
fn snapshot_body(snap: &str) -> &str {
    let rest = snap.strip_prefix("---\n").expect("snapshot header");
    &rest[rest.find("\n---\n").expect("end of header") + 5..]
}

fn report() -> Value {
    serde_json::from_str(snapshot_body(JSON_SNAPSHOT)).unwrap()
}

fn report_text() -> &'static str {
    snapshot_body(TEXT_SNAPSHOT)
}

fn environment() -> Value {
    json!({"host": "lab1", "kernel": "6.18.0", "cpu": {"model": "virt", "cores": 2}})
}

/// Latency histograms like the runner's (1 ns .. 60 s, 2 digits).
fn histogram(base_ns: u64, n: u64) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 60_000_000_000, 2).unwrap();
    for i in 0..n {
        h.record(base_ns + i * 37).unwrap();
    }
    h
}

fn encoded() -> Vec<(String, Vec<u8>)> {
    vec![
        ("read".into(), encode_histogram(&histogram(100_000, 7000))),
        ("write".into(), encode_histogram(&histogram(900_000, 3001))),
        ("sync".into(), encode_histogram(&histogram(700_000, 3000))),
    ]
}

struct Fixture {
    _dir: tempfile::TempDir,
    path: PathBuf,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/dir/dbio.sqlite");
    let store = Store::open(&path).unwrap();
    Fixture {
        _dir: dir,
        path,
        store,
    }
}

/// Saves `report` with the other parts of a run fixed.
fn save(
    store: &mut Store,
    report: &Value,
    plan: Option<&str>,
    var: Option<&str>,
    tags: &[&str],
) -> i64 {
    let tags: Vec<String> = tags.iter().map(|t| t.to_string()).collect();
    let hist = encoded();
    store
        .save_run(&NewRun {
            report,
            report_text: report_text(),
            environment: &environment(),
            histograms: &hist,
            plan,
            variable: var,
            cell_key: plan.map(|_| "bs=8k"),
            warmup: false,
            tags: &tags,
        })
        .unwrap()
}

fn count(conn: &Connection, table: &str, id: i64) -> i64 {
    conn.query_row(
        &format!("SELECT count(*) FROM {table} WHERE run_id = ?1"),
        [id],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn histograms_decode_equal_and_merge() {
    let (a, b) = (histogram(100_000, 7000), histogram(612_000_000, 5));
    let a2 = decode_histogram(&encode_histogram(&a)).unwrap();
    let b2 = decode_histogram(&encode_histogram(&b)).unwrap();
    assert_eq!(a2, a);
    assert_eq!(a2.len(), 7000);
    assert_eq!(a2.value_at_quantile(0.99), a.value_at_quantile(0.99));
    let mut merged = a.clone();
    merged.add(&b).unwrap();
    let mut merged2 = a2;
    merged2.add(&b2).unwrap();
    assert_eq!(merged2, merged);
    assert_eq!(merged2.len(), 7005);
    assert_eq!(merged2.max(), merged.max());
    assert!(decode_histogram(b"not a histogram").is_err());
}

#[test]
fn save_then_get_returns_everything() {
    let mut f = fixture();
    let rep = report();
    let id = save(
        &mut f.store,
        &rep,
        Some("p1"),
        Some("bs"),
        &["xfs", "baseline", "xfs"],
    );
    let run = f.store.get(id).unwrap();
    assert_eq!(run.report, rep);
    assert_eq!(run.report_text, report_text());
    assert_eq!(run.environment, environment());
    let r = &run.row;
    assert_eq!(r.tags, ["baseline", "xfs"]);
    assert_eq!(
        (
            r.plan.as_deref(),
            r.variable.as_deref(),
            r.cell_key.as_deref()
        ),
        (Some("p1"), Some("bs"), Some("bs=8k"))
    );
    assert_eq!(r.status, "completed");
    assert_eq!(r.started_unix_ms, 1_790_000_000_000);
    assert_eq!(
        r.ended_unix_ms,
        Some(1_790_000_012_000),
        "start + ramp + measured"
    );
    assert_eq!(
        (r.workload.as_deref(), r.pattern.as_deref()),
        (Some("raw"), Some("randrw"))
    );
    assert_eq!((r.sessions, r.block_size), (Some(16), Some(8192)));
    assert_eq!(
        (r.engine.as_deref(), r.io_mode.as_deref()),
        (Some("psync"), Some("fsync"))
    );
    assert_eq!(r.target.as_deref(), Some("/mnt/xfs/dbio"));
    assert_eq!(r.dbio_version.as_deref(), Some("0.0.0-test"));
    assert!(!r.warmup && r.note.is_none());
    assert_eq!(r.metrics.total_iops, Some(1000.1));
    assert_eq!(r.metrics.total_p99_us, Some(1802.239));
    assert_eq!(r.metrics.sync_p99_us, Some(1327.103));
    assert_eq!(r.metrics.cpu_us_per_io, Some(99.9900009999));

    // 13 numbers in each of read/write/sync/total, 3 in cpu, 5 extras.
    assert_eq!(run.metrics.len(), 4 * 13 + 3 + 5);
    let metric = |name: &str| run.metrics.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    assert_eq!(metric("read.iops"), Some(700.0));
    assert_eq!(metric("read.mib_per_s"), Some(5.46875));
    assert_eq!(metric("write.latency.p99_us"), Some(1826.815));
    assert_eq!(metric("write.latency.p99_99_us"), Some(612000.0));
    assert_eq!(metric("total.requests"), Some(10001.0));
    assert_eq!(metric("cpu.user_s"), Some(0.25));
    assert_eq!(metric("measured_s"), Some(10.0));
    assert_eq!(metric("outliers.count"), Some(1.0));
    let mut names: Vec<_> = run.metrics.iter().map(|(n, _)| n.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        run.metrics
            .iter()
            .map(|(n, _)| n.clone())
            .collect::<Vec<_>>(),
        "sorted"
    );

    let ops: Vec<_> = run.histograms.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(ops, ["read", "write", "sync"]);
    for ((op, bytes), (op0, bytes0)) in run.histograms.iter().zip(encoded()) {
        assert_eq!(op, &op0);
        assert_eq!(
            decode_histogram(bytes).unwrap(),
            decode_histogram(&bytes0).unwrap()
        );
    }
    assert_eq!(
        decode_histogram(&run.histograms[0].1).unwrap(),
        histogram(100_000, 7000)
    );

    assert_eq!(run.series.len(), 3);
    assert_eq!(
        run.series[2],
        SeriesRow {
            t_s: 2,
            ramp: false,
            read: SeriesKind {
                ops: 700,
                bytes: 5_734_400,
                lat_mean_us: 250.0,
                lat_p99_us: 900.0
            },
            write: SeriesKind {
                ops: 300,
                bytes: 2_457_600,
                lat_mean_us: 250.0,
                lat_p99_us: 900.0
            },
            sync: SeriesKind {
                ops: 300,
                bytes: 2_457_600,
                lat_mean_us: 250.0,
                lat_p99_us: 900.0
            },
        }
    );
    assert!(run.series[0].ramp && run.series[1].ramp);
    assert_eq!(
        run.outliers,
        [OutlierRow {
            t_s: 7.25,
            op: "write".into(),
            session: 3,
            file: 0,
            offset_bytes: 4_194_304,
            len_bytes: 8192,
            latency_ms: 612.0,
        }]
    );
    assert!(matches!(f.store.get(id + 1), Err(StoreError::NoSuchRun { id: i, .. }) if i == id + 1));
}

#[test]
fn a_document_that_is_not_a_report_is_refused_and_nothing_is_saved() {
    let mut f = fixture();
    for bad in [
        json!([1, 2]),
        json!({"schema": "other"}),
        json!({"schema": "dbio.run.v1", "status": "completed"}),
    ] {
        let err = f
            .store
            .save_run(&NewRun {
                report: &bad,
                report_text: "",
                environment: &json!({}),
                histograms: &[],
                plan: None,
                variable: None,
                cell_key: None,
                warmup: false,
                tags: &[],
            })
            .unwrap_err();
        assert!(matches!(err, StoreError::BadReport { .. }), "{err}");
    }
    let err = f.store.add_tags(1, &["two words".into()]).unwrap_err();
    assert!(matches!(err, StoreError::BadTag { .. }), "{err}");
    assert!(f.store.list(&RunFilter::default()).unwrap().is_empty());
}

fn ids(store: &Store, f: RunFilter) -> Vec<i64> {
    store.list(&f).unwrap().iter().map(|r| r.id).collect()
}

#[test]
fn list_filters_by_plan_variable_tag_workload_and_since() {
    let mut f = fixture();
    let mut rep = report();
    let day = 86_400_000;
    let mut at = |t: i64, workload: &str, pattern: &str| {
        rep["started_unix_ms"] = t.into();
        rep["config"]["workload"] = workload.into();
        rep["config"]["pattern"] = pattern.into();
        rep.clone()
    };
    let t0 = 1_790_000_000_000;
    let a = save(
        &mut f.store,
        &at(t0, "raw", "randread"),
        Some("p1"),
        Some("bs"),
        &["xfs"],
    );
    let b = save(
        &mut f.store,
        &at(t0 + day, "raw", "randwrite"),
        Some("p1"),
        Some("sessions"),
        &["ext4", "nightly"],
    );
    let c = save(
        &mut f.store,
        &at(t0 + 2 * day, "slob", "randrw"),
        Some("p2"),
        Some("bs"),
        &["xfs", "nightly"],
    );
    let d = save(
        &mut f.store,
        &at(t0 - day, "raw", "randrw"),
        None,
        None,
        &[],
    );
    let all = RunFilter::default;
    assert_eq!(ids(&f.store, all()), [d, a, b, c], "oldest first");
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                plan: Some("p1".into()),
                ..all()
            }
        ),
        [a, b]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                variable: Some("bs".into()),
                ..all()
            }
        ),
        [a, c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                plan: Some("p1".into()),
                variable: Some("bs".into()),
                ..all()
            }
        ),
        [a]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                tags: vec!["nightly".into()],
                ..all()
            }
        ),
        [b, c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                tags: vec!["nightly".into(), "xfs".into()],
                ..all()
            }
        ),
        [c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                tags: vec!["none".into()],
                ..all()
            }
        ),
        Vec::<i64>::new()
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                workload: Some("raw".into()),
                ..all()
            }
        ),
        [d, a, b]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                workload: Some("randrw".into()),
                ..all()
            }
        ),
        [d, c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                since_unix_ms: Some(t0),
                ..all()
            }
        ),
        [a, b, c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                since_unix_ms: Some(t0 + 1),
                ..all()
            }
        ),
        [b, c]
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                limit: Some(2),
                ..all()
            }
        ),
        [b, c],
        "the most recent two"
    );
    assert_eq!(
        ids(
            &f.store,
            RunFilter {
                tags: vec!["xfs".into()],
                since_unix_ms: Some(t0 + 1),
                ..all()
            }
        ),
        [c]
    );
    let rows = f.store.list(&all()).unwrap();
    assert_eq!(rows[2].tags, ["ext4", "nightly"]);
    assert_eq!(rows[2].metrics.read_iops, Some(700.0));
    assert_eq!(rows[0].plan, None);
}

#[test]
fn delete_cascades_to_every_table() {
    let mut f = fixture();
    let rep = report();
    let a = save(&mut f.store, &rep, None, None, &["x"]);
    let b = save(&mut f.store, &rep, None, None, &["y"]);
    let tables = ["run_tags", "metrics", "histograms", "series", "outliers"];
    for t in tables {
        assert!(count(&f.store.conn, t, a) > 0, "{t}");
    }
    assert_eq!(f.store.delete(&[a, 999]).unwrap(), 1);
    for t in tables {
        assert_eq!(count(&f.store.conn, t, a), 0, "{t} of the deleted run");
        assert!(count(&f.store.conn, t, b) > 0, "{t} of the kept run");
    }
    assert!(matches!(f.store.get(a), Err(StoreError::NoSuchRun { .. })));
    assert_eq!(f.store.get(b).unwrap().row.tags, ["y"]);
    // Ids are never reused after a delete.
    let c = save(&mut f.store, &rep, None, None, &[]);
    assert!(c > b);
    assert_eq!(f.store.delete(&[b, c]).unwrap(), 2);
    assert_eq!(f.store.delete(&[b]).unwrap(), 0);
}

fn pragma_i64(conn: &Connection, name: &str) -> i64 {
    conn.pragma_query_value(None, name, |r| r.get(0)).unwrap()
}

#[test]
fn a_new_store_is_migrated_and_reopening_is_idempotent() {
    let mut f = fixture();
    assert_eq!(pragma_i64(&f.store.conn, "user_version"), schema::VERSION);
    assert_eq!(
        pragma_i64(&f.store.conn, "application_id"),
        i64::from(schema::APPLICATION_ID)
    );
    let mode: String = f
        .store
        .conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert_eq!(pragma_i64(&f.store.conn, "synchronous"), 2, "FULL");
    assert_eq!(pragma_i64(&f.store.conn, "foreign_keys"), 1);
    let id = save(&mut f.store, &report(), None, None, &["t"]);
    drop(f.store);
    let schema_sql = |c: &Connection| -> Vec<String> {
        let mut s = c
            .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let before = schema_sql(&Connection::open(&f.path).unwrap());
    for _ in 0..2 {
        let store = Store::open(&f.path).unwrap();
        assert_eq!(pragma_i64(&store.conn, "user_version"), schema::VERSION);
        assert_eq!(schema_sql(&store.conn), before);
        assert_eq!(store.get(id).unwrap().row.tags, ["t"]);
    }
    // A zero-byte file (e.g. from `touch`) becomes a store.
    let empty = f.path.with_file_name("empty.sqlite");
    std::fs::write(&empty, b"").unwrap();
    let store = Store::open(&empty).unwrap();
    assert_eq!(pragma_i64(&store.conn, "user_version"), schema::VERSION);
}

#[test]
fn migrations_run_forward_from_an_older_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let mut store = Store::open(&path).unwrap();
    let id = save(&mut store, &report(), None, None, &[]);
    // A later schema version: the real list plus one step.
    let mut next: Vec<&str> = schema::MIGRATIONS.to_vec();
    next.push("ALTER TABLE runs ADD COLUMN added_later TEXT DEFAULT 'x';");
    schema::migrate(&mut store.conn, &next, &path).unwrap();
    assert_eq!(pragma_i64(&store.conn, "user_version"), schema::VERSION + 1);
    let added: String = store
        .conn
        .query_row("SELECT added_later FROM runs WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(added, "x");
    schema::migrate(&mut store.conn, &next, &path).unwrap();
    assert_eq!(store.get(id).unwrap().report, report(), "data survives");
    drop(store);
    // This dbio does not know version VERSION + 1: refused, untouched.
    let bytes = std::fs::read(&path).unwrap();
    let err = Store::open(&path).err().expect("a newer store is refused");
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == schema::VERSION + 1),
        "{err}"
    );
    assert!(err.to_string().contains("upgrade dbio"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

fn assert_refused_untouched(path: &Path, want: fn(&StoreError) -> bool) -> String {
    let before = std::fs::read(path).unwrap();
    let err = Store::open(path).err().expect("refused");
    assert!(want(&err), "{err}");
    assert_eq!(std::fs::read(path).unwrap(), before, "file changed");
    for side in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(side);
        assert!(!Path::new(&p).exists(), "{side} created");
    }
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("--db") && !msg.contains('\n'), "{msg}");
    msg
}

#[test]
fn other_files_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = dir.path().join("other.sqlite");
    {
        let c = Connection::open(&sqlite).unwrap();
        c.execute_batch("CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let msg = assert_refused_untouched(&sqlite, |e| matches!(e, StoreError::NotDbio { .. }));
    assert!(msg.contains("not a dbio store"), "{msg}");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "shopping list\n".repeat(50)).unwrap();
    let msg = assert_refused_untouched(&text, |e| matches!(e, StoreError::NotSqlite { .. }));
    assert!(msg.contains("not a SQLite database"), "{msg}");

    let short = dir.path().join("short");
    std::fs::write(&short, "SQLite").unwrap();
    assert_refused_untouched(&short, |e| matches!(e, StoreError::NotSqlite { .. }));
}

#[test]
fn default_path_follows_db_env_then_xdg_then_home() {
    let s = |v: &str| Some(std::ffi::OsString::from(v));
    assert_eq!(
        default_path_from(s("/x/my.db"), s("/xdg"), s("/home/u")),
        PathBuf::from("/x/my.db")
    );
    assert_eq!(
        default_path_from(None, s("/xdg"), s("/home/u")),
        PathBuf::from("/xdg/dbio/dbio.sqlite")
    );
    assert_eq!(
        default_path_from(s(""), s(""), s("/home/u")),
        PathBuf::from("/home/u/.local/share/dbio/dbio.sqlite")
    );
    assert_eq!(
        default_path_from(None, s("relative"), s("/home/u")),
        PathBuf::from("/home/u/.local/share/dbio/dbio.sqlite")
    );
    assert_eq!(
        default_path_from(None, None, None),
        PathBuf::from("dbio.sqlite")
    );
}

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
