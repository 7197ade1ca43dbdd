//! The results store under concurrency and crashes: two writers (threads,
//! then processes) on one file both succeed; `kill -9` of a writer at random
//! moments never loses a saved run nor corrupts the file. Child processes are
//! this test binary run again with `DBIO_STORE_CHILD` set (see
//! `child_writer`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use dbio::store::{NewRun, RunFilter, Store, StoredRun, encode_histogram};
use hdrhistogram::Histogram;
use rusqlite::Connection;
use serde_json::{Value, json};

const JSON_SNAPSHOT: &str = include_str!(
    "../../src/report/run/snapshots/dbio__report__run__tests__json_report_snapshot.snap"
);
/// Seconds in the fixture's series (longer transactions: more to interrupt).
const SERIES_POINTS: usize = 600;
/// Metric rows of the fixture: 60 summary numbers, 15 host and 2 x 19 device
/// telemetry numbers.
const METRICS: usize = 60 + 15 + 2 * 19;
const TAGS: [&str; 2] = ["crash", "test"];
const CHILD_ENV: &str = "DBIO_STORE_CHILD";
const CHILD_RUNS_ENV: &str = "DBIO_STORE_CHILD_RUNS";

/// A report of the real shape (the report module's JSON snapshot) with a
/// series of SERIES_POINTS seconds.
fn report() -> Value {
    let rest = JSON_SNAPSHOT.strip_prefix("---\n").unwrap();
    let body = &rest[rest.find("\n---\n").unwrap() + 5..];
    let mut v: Value = serde_json::from_str(body).unwrap();
    let point = v["series"][2].clone();
    v["series"] = (0..SERIES_POINTS)
        .map(|t| {
            let mut p = point.clone();
            p["t_s"] = t.into();
            p["ramp"] = (t < 2).into();
            p
        })
        .collect();
    v
}

fn report_text() -> String {
    "dbio test report\n".repeat(200)
}

fn histograms() -> Vec<(String, Vec<u8>)> {
    ["read", "write", "sync"]
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 2).unwrap();
            for v in 0..5000u64 {
                h.record(100_000 * (i as u64 + 1) + v * 97).unwrap();
            }
            (op.to_string(), encode_histogram(&h))
        })
        .collect()
}

fn save(store: &mut Store, report: &Value, text: &str, hist: &[(String, Vec<u8>)]) -> i64 {
    let tags: Vec<String> = TAGS.iter().map(|t| t.to_string()).collect();
    store
        .save_run(&NewRun {
            report,
            report_text: text,
            environment: &json!({"host": "test"}),
            histograms: hist,
            plan: Some("concurrency"),
            variable: None,
            cell_key: None,
            warmup: false,
            tags: &tags,
        })
        .expect("save_run")
}

/// Fails unless the file passes SQLite's own checks.
fn assert_integrity(path: &Path) {
    let c = Connection::open(path).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let orphans: i64 = c
        .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0, "rows without their run");
}

/// Fails unless a stored run has everything a save writes.
fn assert_complete(run: &StoredRun, report: &Value, text: &str) {
    let id = run.row.id;
    assert_eq!(&run.report, report, "run {id}: report_json");
    assert_eq!(run.report_text, text, "run {id}: report_text");
    assert_eq!(run.row.tags, TAGS, "run {id}: tags");
    assert_eq!(run.metrics.len(), METRICS, "run {id}: metrics");
    assert_eq!(run.histograms.len(), 3, "run {id}: histograms");
    assert_eq!(run.series.len(), SERIES_POINTS, "run {id}: series");
    assert_eq!(run.outliers.len(), 1, "run {id}: outliers");
}

/// Runs missing any of the rows a save writes (one query over the store).
fn incomplete_runs(path: &Path) -> Vec<i64> {
    let c = Connection::open(path).unwrap();
    let sql = format!(
        "SELECT id FROM runs r WHERE \
         (SELECT count(*) FROM metrics WHERE run_id = r.id) != {METRICS} \
         OR (SELECT count(*) FROM histograms WHERE run_id = r.id) != 3 \
         OR (SELECT count(*) FROM series WHERE run_id = r.id) != {SERIES_POINTS} \
         OR (SELECT count(*) FROM outliers WHERE run_id = r.id) != 1 \
         OR (SELECT count(*) FROM run_tags WHERE run_id = r.id) != {} \
         OR NOT json_valid(report_json) OR length(report_text) = 0",
        TAGS.len()
    );
    let mut stmt = c.prepare(&sql).unwrap();
    let ids = stmt.query_map([], |r| r.get(0)).unwrap();
    ids.collect::<Result<_, _>>().unwrap()
}

fn all_runs(path: &Path) -> Vec<i64> {
    let store = Store::open(path).unwrap();
    let rows = store.list(&RunFilter::default()).unwrap();
    rows.iter().map(|r| r.id).collect()
}

/// The writer process the other tests start (this test binary run again,
/// see `main`): when `DBIO_STORE_CHILD` is set, saves
/// `DBIO_STORE_CHILD_RUNS` runs into it, or forever, and returns true.
pub fn child_writer() -> bool {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return false;
    };
    let runs: Option<u64> = std::env::var(CHILD_RUNS_ENV)
        .ok()
        .map(|n| n.parse().unwrap());
    let (report, text, hist) = (report(), report_text(), histograms());
    let mut store = Store::open(Path::new(&path)).unwrap();
    let mut n = 0;
    while runs.is_none_or(|r| n < r) {
        save(&mut store, &report, &text, &hist);
        n += 1;
    }
    true
}

fn child(path: &Path, runs: Option<u64>) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CHILD_ENV, path)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Some(n) = runs {
        cmd.env(CHILD_RUNS_ENV, n.to_string());
    }
    cmd
}

fn two_threads_write_one_new_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/dbio.sqlite");
    let barrier = Arc::new(Barrier::new(2));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let (path, barrier) = (path.clone(), barrier.clone());
            std::thread::spawn(move || {
                let (report, text, hist) = (report(), report_text(), histograms());
                barrier.wait();
                // Both open (and so create and migrate) the file at once.
                let mut store = Store::open(&path).unwrap();
                (0..50)
                    .map(|_| save(&mut store, &report, &text, &hist))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut ids: Vec<i64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 100, "every save got its own id");
    assert_eq!(all_runs(&path), ids);
    assert_integrity(&path);
    let store = Store::open(&path).unwrap();
    for id in [ids[0], ids[57], ids[99]] {
        assert_complete(&store.get(id).unwrap(), &report(), &report_text());
    }
}

fn two_processes_write_one_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dbio.sqlite");
    let mut children: Vec<_> = (0..2)
        .map(|_| child(&path, Some(25)).spawn().unwrap())
        .collect();
    for c in &mut children {
        assert!(c.wait().unwrap().success(), "a writer failed");
    }
    assert_eq!(all_runs(&path).len(), 50);
    assert_integrity(&path);
}

/// A small xorshift generator: random kill moments without a dependency.
fn next_random(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn kill_9_mid_write_never_loses_a_saved_run_nor_corrupts_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dbio.sqlite");
    let (report, text) = (report(), report_text());
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("kill moments seed {seed}");
    let mut seen: Vec<i64> = Vec::new();
    for round in 0..20 {
        let delay = Duration::from_millis(5 + next_random(&mut seed) % 196);
        let mut writer = child(&path, None).spawn().unwrap();
        let start = Instant::now();
        std::thread::sleep(delay);
        writer.kill().unwrap(); // SIGKILL
        writer.wait().unwrap();
        let alive = start.elapsed();

        assert_integrity(&path);
        let ids = all_runs(&path);
        assert!(
            seen.iter().all(|id| ids.contains(id)),
            "round {round}: a saved run disappeared"
        );
        assert!(ids.len() >= seen.len(), "round {round}: count decreased");
        let store = Store::open(&path).unwrap();
        // New runs are compared whole; every run, old and new, still has
        // all its rows.
        for &id in ids.iter().filter(|id| !seen.contains(id)) {
            assert_complete(&store.get(id).unwrap(), &report, &text);
        }
        assert_eq!(incomplete_runs(&path), Vec::<i64>::new(), "round {round}");
        eprintln!(
            "round {round}: killed after {alive:?}, {} runs stored",
            ids.len()
        );
        seen = ids;
    }
    assert!(
        !seen.is_empty(),
        "the writer never saved a run before being killed"
    );
}

crate::tests! {
    two_threads_write_one_new_store_at_once,
    two_processes_write_one_store_at_once,
    kill_9_mid_write_never_loses_a_saved_run_nor_corrupts_the_store,
}
