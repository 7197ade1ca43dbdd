//! The run document's names (`dbio.run.v2`, docs/json.md): a fresh `--json`
//! document of a raw and of a SLOB run names every rate `_per_s` and every
//! size with its unit, and says `_s` only for seconds; a `dbio.run.v1`
//! document — in the fixture store `tests/corpus/store_v1/` or a v1 `--json`
//! output (`tests/corpus/run_v1/`, made by the build before the rename) —
//! reads through `upgrade_v1` with the same numbers under the new names,
//! and every reader of stored runs (runs show, export, fio-json, compare,
//! HTML, report) sees the new names for old and new runs alike.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::run::{Run, dbio};
use crate::common::store::{store_path, temp_store};

crate::tests!(
    fresh_documents_name_rates_per_s_and_sizes_with_units,
    v1_documents_read_through_upgrade_with_the_same_numbers,
    readers_of_stored_runs_see_v2_names_for_old_and_new_runs,
    wait_histograms_are_continuous_and_old_ones_keep_their_bounds,
);

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");

/// dbio.run.v1's field names and dbio.run.v2's for them (docs/json.md's
/// changelog): the test's own list, not the code's.
const RENAMED: &[(&str, &str)] = &[
    ("ctxt_s", "ctxt_per_s"),
    ("intr_s", "intr_per_s"),
    ("dirty_kb", "dirty_kib"),
    ("writeback_kb", "writeback_kib"),
    ("r_s", "r_per_s"),
    ("w_s", "w_per_s"),
    ("d_s", "d_per_s"),
    ("f_s", "f_per_s"),
    ("rkb_s", "rkib_per_s"),
    ("wkb_s", "wkib_per_s"),
    ("dkb_s", "dkib_per_s"),
    ("rrqm_s", "rrqm_per_s"),
    ("wrqm_s", "wrqm_per_s"),
    ("rareq_sz_kb", "rareq_sz_kib"),
    ("wareq_sz_kb", "wareq_sz_kib"),
    ("read_mb_per_s", "read_mib_per_s"),
    ("write_mb_per_s", "write_mib_per_s"),
    ("block_size", "block_size_bytes"),
    ("redo_file_size", "redo_file_size_bytes"),
    ("redo_block", "redo_block_bytes"),
    ("log_buffer", "log_buffer_bytes"),
    ("logical_block", "logical_block_bytes"),
    ("physical_block", "physical_block_bytes"),
    ("page_size", "page_size_bytes"),
];

/// Keys ending in `_s` that are seconds (a duration or a time), not rates.
const SECONDS: &[&str] = &[
    "ramp_s",
    "measured_s",
    "time_s",
    "interval_s",
    "t_s",
    "user_s",
    "sys_s",
    "elapsed_s",
    "db_time_s",
    "db_cpu_s",
    "cpu_wait_s",
    "min_s",
    "max_s",
    "done_s",
    "first_done_s",
    "last_done_s",
];

/// Every leaf of `v` as (dotted path, value); array elements as `[i]`.
fn leaves(v: &Value) -> BTreeMap<String, Value> {
    fn walk(v: &Value, path: String, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, format!("{path}.{k}"), out);
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{path}[{i}]"), out);
                }
            }
            other => {
                out.insert(path, other.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out
}

/// Every key of `v`, with its path, for the naming rules.
fn keys(v: &Value) -> Vec<(String, String)> {
    fn walk(v: &Value, path: &str, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    out.push((path.to_string(), k.clone()));
                    walk(x, &format!("{path}.{k}"), out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, &format!("{path}[]"), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "", &mut out);
    out
}

/// The shape of a document: its key paths with array indexes dropped.
fn shape(v: &Value) -> std::collections::BTreeSet<String> {
    keys(v)
        .into_iter()
        .map(|(p, k)| format!("{p}.{k}"))
        .collect()
}

/// Whether `path` (as [`shape`] writes it) ends early in `doc` at a null,
/// an empty list or an empty object: absent by data, not by name.
fn empty_on_the_way(doc: &Value, path: &str) -> bool {
    let mut cur = vec![doc];
    for part in path.trim_start_matches('.').split('.') {
        let (key, lists) = (part.trim_end_matches("[]"), part.matches("[]").count());
        let mut next = Vec::new();
        for v in cur {
            let Some(mut x) = v.get(key) else { continue };
            let mut xs = vec![x];
            for _ in 0..lists {
                xs = xs
                    .iter()
                    .flat_map(|y| y.as_array().into_iter().flatten())
                    .collect();
            }
            if xs.is_empty() {
                return true;
            }
            for y in xs {
                x = y;
                if x.is_null() || x.as_object().is_some_and(|m| m.is_empty()) {
                    return true;
                }
                next.push(x);
            }
        }
        if next.is_empty() {
            return false;
        }
        cur = next;
    }
    false
}

/// Fails on any old name, `_s` that is not seconds, or a size or rate
/// without an exact unit.
fn check_names(what: &str, doc: &Value) {
    assert_eq!(doc["schema"], "dbio.run.v2", "{what}");
    for (path, key) in keys(doc) {
        // `settings` (pg/mysql) and SHOW GLOBAL STATUS keep the server's
        // own names; the database model's are not among them here.
        let at = format!("{what}: {path}.{key}");
        if let Some((_, new)) = RENAMED.iter().find(|(old, _)| *old == key) {
            panic!("{at}: v1 name (v2: {new})");
        }
        if key.ends_with("_s") && !key.ends_with("_per_s") {
            assert!(
                SECONDS.contains(&key.as_str()),
                "{at}: `_s` but not seconds"
            );
        }
        for bad in ["_kb", "_mb", "_mbs", "_kb_s"] {
            assert!(!key.ends_with(bad), "{at}: ambiguous unit {bad}");
        }
    }
}

fn fresh_raw(dir: &Path) -> Value {
    Run::raw(&dir.join("raw"))
        .args(&[
            "--size",
            "16M",
            "--time",
            "2",
            "--ramp",
            "0",
            "--pattern",
            "randrw",
        ])
        .args(&["--sessions", "2", "--seed", "7"])
        .json()
}

fn fresh_slob(dir: &Path) -> Value {
    Run::slob(&dir.join("slob"))
        .args(&[
            "--time",
            "2",
            "--ramp",
            "0",
            "--update-pct",
            "25",
            "--scale",
            "1000",
        ])
        .json()
}

fn v1_fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{CORPUS}/run_v1/{name}.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema"], "dbio.run.v1", "the fixture is a v1 document");
    v
}

/// Run document fields added after the v1 fixtures were made: a v1 document
/// lacks them because its build had no such setting (docs/json.md says
/// what their absence means).
const NEWER_THAN_V1: &[&str] = &[
    // Where the model's window sat in its checkpoint cycle (`--window`).
    ".slob.checkpoint_cycle",
    // The stored run's id, in `dbio run --json`'s output only.
    ".run_id",
    // --verify-sync-interval (periodic lost-write map sync points).
    ".config.verify",
    // --dbwr-nice (earlier builds ran the DB writers at the sessions'
    // priority).
    ".config.slob.dbwr_nice",
    // The DB writers' checkpoint writes and the sessions' own (buffers
    // written split as pg_stat_bgwriter splits them), counted since.
    ".slob.counters.checkpoint_writes",
    ".slob.run_totals.checkpoint_writes",
    ".slob.counters.backend_writes",
    ".slob.run_totals.backend_writes",
    // The log writer's syncs, counted since (each log write was one).
    ".slob.counters.redo_syncs",
    ".slob.run_totals.redo_syncs",
    // --fixedbufs, --registerfiles, --register-ring, --sqthread-poll,
    // --uring-taskrun (recorded for io_uring raw runs).
    ".config.uring",
];

fn fresh_documents_name_rates_per_s_and_sizes_with_units() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let raw = fresh_raw(dir.path());
    let slob = fresh_slob(dir.path());
    check_names("raw", &raw);
    check_names("slob", &slob);
    // What the rules are about is really there.
    assert!(
        raw["telemetry_window"]["host"]["ctxt_per_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(!raw["telemetry"].as_array().unwrap().is_empty());
    assert_eq!(raw["config"]["block_size_bytes"], 8192);
    assert_eq!(slob["config"]["slob"]["log_buffer_bytes"], 512 * 1024);
    assert!(
        slob["slob"]["io_by_function"][0]
            .get("read_mib_per_s")
            .is_some()
    );
    // A v1 document of the same run, upgraded, has exactly the fresh one's
    // shape: upgrade_v1 misses no renamed field.
    for (name, fresh) in [("raw", &raw), ("slob", &slob)] {
        let old = v1_fixture(name);
        check_v1_has_old_names(&old);
        let up = dbio::report::upgrade::upgrade_v1(old);
        check_names(&format!("{name} v1 upgraded"), &up);
        let (a, b) = (shape(fresh), shape(&up));
        // A key one run has under a list or an object the other run left
        // empty or null (an outlier listed, a wait event seen) is data,
        // not a name.
        // Settings that came after v1 (absent from a v1 document means the
        // old behaviour) are not renames either.
        let differ: Vec<&String> = a
            .difference(&b)
            .filter(|p| !empty_on_the_way(&up, p))
            .filter(|p| !NEWER_THAN_V1.iter().any(|n| p.starts_with(n)))
            .chain(b.difference(&a).filter(|p| !empty_on_the_way(fresh, p)))
            .collect();
        assert_eq!(
            differ,
            Vec::<&String>::new(),
            "{name}: fresh v2 and upgraded v1 differ in shape"
        );
    }
}

/// The v1 fixtures really have v1's names (else the test proves nothing).
fn check_v1_has_old_names(v1: &Value) {
    let ks: Vec<String> = keys(v1).into_iter().map(|(_, k)| k).collect();
    for old in ["ctxt_s", "r_s", "rkb_s", "block_size", "logical_block"] {
        assert!(ks.iter().any(|k| k == old), "v1 fixture lacks {old}");
    }
}

/// `v1` and `v2` hold the same numbers: every v1 leaf, under its new name,
/// has the same value in v2, and v2 has no other leaf (the schema aside).
fn same_numbers(what: &str, v1: &Value, v2: &Value) {
    let new_path = |p: &str| {
        let (head, last) = p.rsplit_once('.').unwrap();
        let (key, index) = match last.split_once('[') {
            Some((k, i)) => (k, format!("[{i}")),
            None => (last, String::new()),
        };
        let key = RENAMED
            .iter()
            .find(|(old, _)| *old == key)
            .map_or(key, |(_, new)| new);
        format!("{head}.{key}{index}")
    };
    let (a, b) = (leaves(v1), leaves(v2));
    assert_eq!(a.len(), b.len(), "{what}: leaf count");
    let mut renamed = 0;
    for (p, v) in &a {
        if p == ".schema" {
            continue;
        }
        let q = new_path(p);
        renamed += usize::from(q != *p);
        assert_eq!(b.get(&q), Some(v), "{what}: {p} → {q}");
    }
    assert!(renamed >= 20, "{what}: only {renamed} renamed leaves");
}

fn v1_documents_read_through_upgrade_with_the_same_numbers() {
    // The fixture store's run 1: the SQL text against `runs show --json`.
    let _store = temp_store();
    std::fs::copy(format!("{CORPUS}/store_v1/store.sqlite"), store_path()).unwrap();
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let stored: String = conn
        .query_row("SELECT report_json FROM runs WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    drop(conn);
    let v1: Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(v1["schema"], "dbio.run.v1");
    check_v1_has_old_names(&v1);
    let shown = show_json(1);
    check_names("store_v1 run 1", &shown);
    same_numbers("store_v1 run 1", &v1, &shown);
    assert_eq!(dbio::report::upgrade::upgrade_v1(v1), shown);
    // The v1 --json documents, as a pure rewrite.
    for name in ["raw", "slob"] {
        let v1 = v1_fixture(name);
        let up = dbio::report::upgrade::upgrade_v1(v1.clone());
        same_numbers(name, &v1, &up);
    }
}

fn show_json(id: i64) -> Value {
    let out = dbio()
        .args(["runs", "show", &id.to_string(), "--json"])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = dbio().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// Saves a report document as a run (as `dbio run` does) through the
/// library's store; its id.
fn save(report: &Value) -> i64 {
    let mut store = dbio::store::Store::open(&store_path()).unwrap();
    store
        .save_run(&dbio::store::NewRun {
            report,
            report_text: "v1 fixture\n",
            environment: &report["environment"],
            histograms: &[],
            plan: None,
            variable: None,
            cell_key: None,
            warmup: false,
            tags: &[],
        })
        .unwrap()
}

fn readers_of_stored_runs_see_v2_names_for_old_and_new_runs() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let old = v1_fixture("raw");
    let old_id = save(&old);
    let fresh = fresh_raw(dir.path());
    let new_id = old_id + 1;
    let r = |v: &Value, k: &str| {
        v["telemetry_window"]["devices"][0]["rates"][k]
            .as_f64()
            .unwrap()
    };
    // runs show --json: both v2.
    let shown_old = show_json(old_id);
    check_names("old run shown", &shown_old);
    assert_eq!(r(&shown_old, "r_per_s"), r(&old, "r_s"));
    assert_eq!(show_json(new_id)["schema"], "dbio.run.v2");
    // runs export: the device and host metrics under the new names, with
    // the document's values, for both runs.
    let rows: Value = serde_json::from_str(&ok(&[
        "runs",
        "export",
        "--metrics",
        "dev.*,host.*",
        "--format",
        "json",
    ]))
    .unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = |id: i64| {
        rows.iter()
            .find(|x| x["id"] == id)
            .unwrap_or_else(|| panic!("no run {id} in {rows:?}"))
    };
    assert_eq!(row(old_id)["dev.r_per_s"].as_f64(), Some(r(&old, "r_s")));
    assert_eq!(
        row(old_id)["dev.rkib_per_s"].as_f64(),
        Some(r(&old, "rkb_s"))
    );
    assert_eq!(
        row(old_id)["host.ctxt_per_s"].as_f64(),
        old["telemetry_window"]["host"]["ctxt_s"].as_f64()
    );
    assert_eq!(
        row(new_id)["dev.r_per_s"].as_f64(),
        Some(r(&fresh, "r_per_s"))
    );
    for x in rows {
        for k in x.as_object().unwrap().keys() {
            assert!(
                !k.ends_with(".r_s") && !k.ends_with("ctxt_s"),
                "old name {k}"
            );
        }
    }
    // compare --format json: each side's device fields under v2 names.
    let cmp: Value = serde_json::from_str(&ok(&[
        "compare",
        &old_id.to_string(),
        &new_id.to_string(),
        "--format",
        "json",
    ]))
    .unwrap();
    let dev = |side: &str| {
        let d = cmp[side]["devices"]
            .as_object()
            .unwrap_or_else(|| panic!("{cmp}"));
        d.values().next().unwrap().clone()
    };
    assert_eq!(dev("first")["r_per_s"].as_f64(), Some(r(&old, "r_s")));
    assert_eq!(
        dev("second")["r_per_s"].as_f64(),
        Some(r(&fresh, "r_per_s"))
    );
    assert_eq!(
        cmp["first"]["host"]["ctxt_per_s"].as_f64(),
        old["telemetry_window"]["host"]["ctxt_s"].as_f64()
    );
    assert_eq!(
        cmp["first"]["settings"]["block_size"],
        json!(8192),
        "block size of a v1 run: {cmp}"
    );
    // fio-json of the old run: its read IOPS.
    let fio: Value = serde_json::from_str(&ok(&[
        "runs",
        "show",
        &old_id.to_string(),
        "--format",
        "fio-json",
    ]))
    .unwrap();
    assert_eq!(
        fio["jobs"][0]["read"]["iops"].as_f64(),
        old["read"]["iops"].as_f64()
    );
    assert_eq!(fio["jobs"][0]["job options"]["bs"], "8192");
    // The HTML page of the old run draws its device panel from the
    // upgraded telemetry (r/s and read KiB/s lines).
    let page = dir.path().join("old.html");
    ok(&[
        "runs",
        "show",
        &old_id.to_string(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("r/s"),
        "no device r/s line on the old run's page"
    );
    // report over both: the device metric by its new and its old name
    // finds both runs, the same value; its ci95 is {low, high, method}.
    let cell = |name: &str| {
        let table: Value =
            serde_json::from_str(&ok(&["report", "--metric", name, "--format", "json"])).unwrap();
        table["rows"][0]["cells"][0].clone()
    };
    let (new, old_name) = (cell("dev.r_per_s"), cell("dev.r_s"));
    assert_eq!(new["n"], 2, "{new}");
    assert_eq!(new, old_name);
    let want = (r(&old, "r_s") + r(&fresh, "r_per_s")) / 2.0;
    assert!(
        (new["value"].as_f64().unwrap() - want).abs() < 1e-6 * want,
        "{new}"
    );
    assert!(new["ci95"]["low"].as_f64().unwrap() < new["ci95"]["high"].as_f64().unwrap());
    assert!(new["ci95"]["method"].is_string());
}

/// The bucket names of the wait event histogram table on `runs show ID
/// --html`'s page (`≤64us` … `≤1s`, then `>1s`).
fn wait_buckets(id: i64, dir: &Path) -> Vec<String> {
    let page = dir.join(format!("run{id}.html"));
    ok(&[
        "runs",
        "show",
        &id.to_string(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let html = std::fs::read_to_string(&page).unwrap();
    let mut names: Vec<String> = html
        .split("<th>")
        .skip(1)
        .filter_map(|t| t.split("</th>").next())
        .filter(|t| t.starts_with('≤'))
        .map(str::to_string)
        .collect();
    assert!(html.contains("<th>&gt;1s</th>"), "the open bucket");
    names.push(">1s".into());
    names
}

/// A new SLOB run's wait histogram doubles its bound from 64 µs to 512 ms
/// then 1 s (no jump from 64 ms to 1 s); a run stored by an earlier build
/// (13 counts) is read with the bounds it was made with.
fn wait_histograms_are_continuous_and_old_ones_keep_their_bounds() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let old = v1_fixture("slob");
    let old_id = save(&old);
    let fresh = fresh_slob(dir.path());
    let fresh_id = fresh["run_id"].as_i64().unwrap();
    let new = wait_buckets(fresh_id, dir.path());
    assert_eq!(
        new,
        [
            "≤64us", "≤128us", "≤256us", "≤512us", "≤1ms", "≤2ms", "≤4ms", "≤8ms", "≤16ms",
            "≤32ms", "≤64ms", "≤128ms", "≤256ms", "≤512ms", "≤1s", ">1s"
        ]
    );
    for e in fresh["slob"]["events"].as_array().unwrap() {
        assert_eq!(e["histogram"].as_array().unwrap().len(), new.len(), "{e}");
    }
    let was = wait_buckets(old_id, dir.path());
    assert_eq!(was.len(), 13);
    assert_eq!(&was[10..], ["≤64ms", "≤1s", ">1s"]);
    assert_eq!(
        old["slob"]["events"][0]["histogram"]
            .as_array()
            .unwrap()
            .len(),
        was.len()
    );
}
