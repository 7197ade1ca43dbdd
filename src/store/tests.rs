//! Store tests: save/get round trip, list filters, delete cascade,
//! migrations and refusals, default path, histograms (export and the
//! `dbio runs` commands are in tests_commands.rs). The report fixture is the
//! report module's JSON snapshot: the real shape.

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;
use rusqlite::Connection;
use serde_json::{Value, json};

use super::*;

const JSON_SNAPSHOT: &str =
    include_str!("../report/run/snapshots/dbio__report__run__tests__json_report_snapshot.snap");
const TEXT_SNAPSHOT: &str =
    include_str!("../report/run/snapshots/dbio__report__run__tests__text_report_snapshot.snap");

/// The body of an insta snapshot (after its `---` header).
pub(crate) fn snapshot_body(snap: &str) -> &str {
    let rest = snap.strip_prefix("---\n").expect("snapshot header");
    &rest[rest.find("\n---\n").expect("end of header") + 5..]
}

pub(crate) fn report() -> Value {
    serde_json::from_str(snapshot_body(JSON_SNAPSHOT)).unwrap()
}

/// The SLOB model's settings as a run document holds them.
fn slob_settings() -> Value {
    let slob = crate::options::slob::SlobArgs {
        dbwr_engine: Some(crate::config::EngineKind::Psync),
        db_writers: Some(1),
        ..Default::default()
    }
    .into_config(
        Some(4),
        8192,
        1,
        None,
        Some(std::path::Path::new("/mnt/xfs/dbio")),
    )
    .expect("defaults are valid");
    serde_json::to_value(slob).unwrap()
}

pub(crate) fn report_text() -> &'static str {
    snapshot_body(TEXT_SNAPSHOT)
}

pub(crate) fn environment() -> Value {
    json!({"host": "lab1", "kernel": "6.18.0", "cpu": {"model": "virt", "cores": 2}})
}

/// Latency histograms like the runner's (1 ns .. 60 s, 2 digits).
pub(crate) fn histogram(base_ns: u64, n: u64) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 60_000_000_000, 2).unwrap();
    for i in 0..n {
        h.record(base_ns + i * 37).unwrap();
    }
    h
}

pub(crate) fn encoded() -> Vec<(String, Vec<u8>)> {
    vec![
        ("read".into(), encode_histogram(&histogram(100_000, 7000))),
        ("write".into(), encode_histogram(&histogram(900_000, 3001))),
        ("sync".into(), encode_histogram(&histogram(700_000, 3000))),
    ]
}

pub(crate) struct Fixture {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
    pub store: Store,
}

pub(crate) fn fixture() -> Fixture {
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
pub(crate) fn save(
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

pub(crate) fn count(conn: &Connection, table: &str, id: i64) -> i64 {
    conn.query_row(
        &format!("SELECT count(*) FROM {table} WHERE run_id = ?1"),
        [id],
        |r| r.get(0),
    )
    .unwrap()
}

#[test]
fn histograms_of_different_ranges_merge_in_either_order() {
    // A run's histograms cover only the latencies it recorded.
    let small = crate::measure::stats::OpStats::default();
    let (mut fast, mut slow) = (small.clone(), small);
    fast.record(2_000, 0);
    slow.record(3_000_000_000, 0);
    let fast = decode_histogram(&encode_histogram(&fast.hist)).unwrap();
    let slow = decode_histogram(&encode_histogram(&slow.hist)).unwrap();
    let mut a = fast.clone();
    a.add(&slow).unwrap();
    let mut b = slow;
    b.add(&fast).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.len(), 2);
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

    // 13 numbers in each of read/write/sync/total, 3 in cpu, 5 extras; the
    // telemetry window: 15 host numbers, 19 per device as dev.vdb.* and again
    // as dev.* (the first device).
    assert_eq!(run.metrics.len(), 4 * 13 + 3 + 5 + 15 + 2 * 19);
    let metric = |name: &str| run.metrics.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    assert_eq!(metric("read.iops"), Some(700.0));
    assert_eq!(metric("read.mib_per_s"), Some(5.46875));
    assert_eq!(metric("write.latency.p99_us"), Some(1826.815));
    assert_eq!(metric("write.latency.p99_99_us"), Some(612000.0));
    assert_eq!(metric("total.requests"), Some(10001.0));
    assert_eq!(metric("cpu.user_s"), Some(0.25));
    assert_eq!(metric("measured_s"), Some(10.0));
    assert_eq!(metric("outliers.count"), Some(1.0));
    assert_eq!(metric("host.iowait_pct"), Some(30.0));
    assert_eq!(metric("dev.vdb.util_pct"), Some(62.5));
    assert_eq!(metric("dev.w_await_ms"), Some(1.4));
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
        let err = save_run(&mut f.store, &bad).unwrap_err();
        assert!(matches!(err, StoreError::BadReport { .. }), "{err}");
    }
    let err = f.store.add_tags(1, &["two words".into()]).unwrap_err();
    assert!(matches!(err, StoreError::BadTag { .. }), "{err}");
    assert!(f.store.list(&RunFilter::default()).unwrap().is_empty());
}

/// The ids `list` returns for the filter `set` builds.
fn ids(store: &Store, set: impl FnOnce(&mut RunFilter)) -> Vec<i64> {
    let mut f = RunFilter::default();
    set(&mut f);
    store.list(&f).unwrap().iter().map(|r| r.id).collect()
}

#[test]
fn list_filters_by_plan_variable_tag_workload_and_since() {
    let mut f = fixture();
    let mut rep = report();
    let (t0, day) = (1_790_000_000_000, 86_400_000);
    let mut at = |t: i64, workload: &str, pattern: &str| {
        rep["started_unix_ms"] = t.into();
        rep["config"]["workload"] = workload.into();
        rep["config"]["pattern"] = pattern.into();
        let mut r = rep.clone();
        if workload == "slob" {
            // A model run's document carries the model's settings.
            r["config"]["slob"] = slob_settings();
        }
        r
    };
    let (ra, rb) = (at(t0, "raw", "randread"), at(t0 + day, "raw", "randwrite"));
    let (rc, rd) = (
        at(t0 + 2 * day, "slob", "randrw"),
        at(t0 - day, "raw", "randrw"),
    );
    let s = &mut f.store;
    let a = save(s, &ra, Some("p1"), Some("bs"), &["xfs"]);
    let b = save(s, &rb, Some("p1"), Some("sessions"), &["ext4", "nightly"]);
    let c = save(s, &rc, Some("p2"), Some("bs"), &["xfs", "nightly"]);
    let d = save(s, &rd, None, None, &[]);
    let s = &f.store;
    let text = |v: &str| Some(v.to_string());
    assert_eq!(ids(s, |_| {}), [d, a, b, c], "oldest first");
    assert_eq!(ids(s, |f| f.plan = text("p1")), [a, b]);
    assert_eq!(ids(s, |f| f.variable = text("bs")), [a, c]);
    assert_eq!(
        ids(s, |f| (f.plan, f.variable) = (text("p1"), text("bs"))),
        [a]
    );
    assert_eq!(ids(s, |f| f.tags = vec!["nightly".into()]), [b, c]);
    assert_eq!(
        ids(s, |f| f.tags = vec!["nightly".into(), "xfs".into()]),
        [c],
        "every tag"
    );
    assert!(ids(s, |f| f.tags = vec!["none".into()]).is_empty());
    assert_eq!(ids(s, |f| f.workload = text("raw")), [d, a, b]);
    // c, a slob run saved by an earlier build with the raw default
    // `randrw` in its config, has no raw pattern.
    assert_eq!(ids(s, |f| f.workload = text("randrw")), [d], "pattern");
    assert_eq!(ids(s, |f| f.since_unix_ms = Some(t0)), [a, b, c]);
    assert_eq!(ids(s, |f| f.since_unix_ms = Some(t0 + 1)), [b, c]);
    assert_eq!(ids(s, |f| f.limit = Some(2)), [b, c], "the latest two");
    assert_eq!(
        ids(s, |f| (f.tags, f.since_unix_ms) =
            (vec!["xfs".into()], Some(t0 + 1))),
        [c]
    );
    let rows = s.list(&RunFilter::default()).unwrap();
    assert_eq!(rows[2].tags, ["ext4", "nightly"]);
    assert_eq!(rows[2].metrics.read_iops, Some(700.0));
    assert_eq!(rows[0].plan, None);
    assert_eq!(rows[3].id, c);
    assert_eq!(
        (rows[3].workload.as_deref(), rows[3].pattern.as_deref()),
        (Some("slob"), None)
    );
    assert_eq!(rows[0].pattern.as_deref(), Some("randrw"));
    let old = s.get(c).unwrap().report;
    assert!(old["config"]["pattern"].is_null() && old["config"]["read_pct"].is_null());
    assert_eq!(s.get(d).unwrap().report["config"]["pattern"], "randrw");
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

/// A run document is read into its types before anything is saved: one
/// that lacks a section the type needs is refused naming the field, and
/// the store keeps nothing of it.
#[test]
fn a_run_document_that_does_not_read_is_refused_naming_the_field() {
    let mut f = fixture();
    let mut bad = report();
    bad.as_object_mut().unwrap().remove("total");
    let err = save_run(&mut f.store, &bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("the report does not read as a dbio.run.v2 document: missing field `total`"),
        "{err}"
    );
    assert!(f.store.list(&RunFilter::default()).unwrap().is_empty());
}

fn save_run(store: &mut Store, report: &Value) -> Result<i64, StoreError> {
    store.save_run(&NewRun {
        report,
        report_text: "",
        environment: &json!({}),
        histograms: &[],
        plan: None,
        variable: None,
        cell_key: None,
        warmup: false,
        tags: &[],
    })
}
