//! `dbio compare`'s report: AWR's "compare period report" layout for two
//! runs or two selections of runs. Both sides are read from stored report
//! documents (docs/json.md), so a SLOB model run, a raw run, or a mix can be
//! compared: header with both settings, configuration and host differences,
//! load profile per second and per transaction with 1st, 2nd, Diff and
//! %Diff (and Welch's test when both sides have repeats), top timed events
//! side by side (events in one top list only marked), host CPU and device
//! statistics side by side. This file reads and averages the sides;
//! `compare_evidence.rs` weighs what their runs say (Welch per load line)
//! and holds one session count's comparison ([`Cell`]: runs of different
//! session counts are not one population, so the command compares cell by
//! cell, as SLOB.R's table does); `compare_text.rs` renders them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::document::db::ProfileLine;
use crate::document::{ReadError, Report, read};
use crate::storage::chain::Link;
use crate::workload::slob::events::Side as EventSide;

mod devices;
mod evidence;
pub mod json;
mod text;

/// Events shown per side in Top Timed Events.
pub(super) const TOP: usize = 5;

/// How a setting whose value differs between a side's own runs starts
/// (`(varies: 1, 2, 4)`): such a setting is never "the same on both".
pub const VARIES: &str = "(varies: ";

/// Whether a side's setting differs between its own runs.
pub fn varies(value: &str) -> bool {
    value.starts_with(VARIES)
}

/// One side of a comparison: its runs' report documents, averaged.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub label: String,
    pub run_ids: Vec<i64>,
    /// Settings that describe the side (workload, target, filesystem, ...);
    /// a setting that differs between its own runs shows its values,
    /// `(varies: 1, 2, 4)` ([`VARIES`]).
    #[serde(serialize_with = "json::settings")]
    pub settings: BTreeMap<String, String>,
    /// (name, values per run, per second; values per transaction).
    #[serde(serialize_with = "json::load")]
    pub load: Vec<LoadRow>,
    pub events: Vec<EventRow>,
    #[serde(serialize_with = "json::host")]
    pub host: Vec<(String, f64)>,
    /// (device, field, mean value).
    #[serde(serialize_with = "json::devices")]
    pub devices: Vec<(String, String, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadRow {
    pub name: String,
    /// One value per run.
    pub per_second: Vec<f64>,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EventRow {
    pub name: String,
    pub class: String,
    pub waits: f64,
    pub time_s: f64,
    pub avg_ms: f64,
    pub pct_db_time: f64,
}

pub(super) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// A stored run whose document does not read as this build's.
#[derive(Debug, thiserror::Error)]
#[error("run {id}'s stored document {source}")]
pub struct Unreadable {
    pub id: i64,
    pub source: ReadError,
}

/// A stored document as compare reads it.
enum Doc {
    /// One of dbio's runs, in the run document's types.
    Run(Box<Report>),
    /// A run another tool measured and dbio imported (fio): only the
    /// settings its importer wrote under `config`, a flat map.
    Imported(BTreeMap<String, String>),
}

impl Doc {
    /// `doc` read: a dbio run into its types, anything else as an import.
    fn read(doc: &Value) -> Result<Doc, ReadError> {
        if read::is_run(doc) {
            return Ok(Doc::Run(Box::new(Report::from_stored(doc)?)));
        }
        let config = doc.get("config").and_then(Value::as_object);
        let settings = config
            .into_iter()
            .flatten()
            .filter(|(k, _)| IMPORTED_SETTINGS.contains(&k.as_str()))
            .filter_map(|(k, v)| Some((k.clone(), scalar(v)?)))
            .collect();
        Ok(Doc::Imported(settings))
    }
}

/// The settings an import's `config` may name that compare shows.
const IMPORTED_SETTINGS: [&str; 9] = [
    "workload",
    "pattern",
    "sessions",
    "block_size",
    "files",
    "engine",
    "io_mode",
    "iodepth",
    "read_pct",
];

/// A JSON scalar as a setting's text (null: no setting).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The settings worth comparing, from one report.
fn settings(doc: &Doc) -> BTreeMap<String, String> {
    let r = match doc {
        Doc::Run(r) => r,
        Doc::Imported(s) => return s.clone(),
    };
    let c = &r.config;
    let mut s = BTreeMap::new();
    let mut put = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            s.insert(k.to_string(), v);
        }
    };
    let raw = c.workload.raw();
    put("workload", Some(c.workload.name().into()));
    put("pattern", raw.map(|r| r.pattern.name().into()));
    put("sessions", Some(c.sessions.to_string()));
    put("block_size", Some(c.block_size.to_string()));
    put("files", Some(c.files.to_string()));
    put("engine", Some(c.engine.name().into()));
    put("io_mode", Some(c.io_mode.name().into()));
    put("iodepth", Some(c.iodepth.to_string()));
    put("read_pct", raw.map(|r| r.read_pct.to_string()));
    if let Some(slob) = c.workload.shape() {
        let prefix = c.workload.name();
        // Every setting of the model, named as the document names it.
        let fields = serde_json::to_value(slob).unwrap_or_default();
        for (k, v) in fields.as_object().into_iter().flatten() {
            if let Some(v) = scalar(v) {
                s.insert(format!("{prefix}.{k}"), v);
            }
        }
    }
    s.insert(
        "target".into(),
        r.target.path.to_string_lossy().into_owned(),
    );
    for link in r.storage.iter().flat_map(|c| &c.links) {
        match link {
            Link::Filesystem {
                fs_type,
                mount_options,
                ..
            } => {
                s.entry("filesystem".into())
                    .or_insert_with(|| fs_type.clone());
                s.entry("mount options".into())
                    .or_insert_with(|| mount_options.clone());
            }
            Link::Device(d) => {
                for (what, v) in [("model", &d.model), ("scheduler", &d.scheduler)] {
                    if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
                        s.entry(format!("device {} {what}", d.name))
                            .or_insert_with(|| v.clone());
                    }
                }
            }
        }
    }
    let e = &r.environment;
    for (key, v) in [
        ("hostname", e.hostname.clone()),
        ("kernel", e.kernel.clone()),
        ("cpus", e.cpus.to_string()),
        ("memory_bytes", e.memory_bytes.to_string()),
    ] {
        s.insert(format!("host {key}"), v);
    }
    s
}

/// Load profile lines of one report: the model's own, a PostgreSQL or
/// a MariaDB run's (AWR's meanings: "Write IO (MB)" is the DB writers' data file
/// writes), then a raw run's lines from the report's `read`, `write`,
/// `sync` and `cpu` sections that are not among them. A database run has
/// those sections too (every I/O it did, redo included, timed as a raw
/// run's), so a SLOB run faces a raw or fio run on "Read MiB", the
/// latencies and CPU per I/O; the stored metrics of the same names
/// (`read.mib_per_s`, `read.latency.p99_us`, ...) hold the same numbers.
fn load_lines(doc: &Doc) -> Vec<(String, f64, Option<f64>)> {
    let Doc::Run(r) = doc else {
        return Vec::new();
    };
    let profile = |l: &ProfileLine| (l.name.clone(), l.per_second, l.per_transaction);
    let mut out: Vec<(String, f64, Option<f64>)> = match (&r.slob, &r.pg, &r.mysql) {
        (Some(s), _, _) => (s.load_profile.iter())
            .map(|l| (l.name.clone(), l.per_second, l.per_transaction))
            .collect(),
        (None, Some(p), _) => p.load_profile.iter().map(profile).collect(),
        (None, None, Some(m)) => m.load_profile.iter().map(profile).collect(),
        (None, None, None) => Vec::new(),
    };
    let (read, write, sync) = (r.read.as_ref(), r.write.as_ref(), r.sync.as_ref());
    let ms = |us: f64| us / 1e3;
    for (name, v) in [
        ("Read IO requests", read.map(|o| o.iops)),
        ("Write IO requests", write.map(|o| o.iops)),
        ("Read MiB", read.map(|o| o.mib_per_s)),
        ("Write MiB", write.map(|o| o.mib_per_s)),
        ("Read avg latency (ms)", read.map(|o| ms(o.latency.mean_us))),
        ("Read p99 latency (ms)", read.map(|o| ms(o.latency.p99_us))),
        (
            "Write avg latency (ms)",
            write.map(|o| ms(o.latency.mean_us)),
        ),
        (
            "Write p99 latency (ms)",
            write.map(|o| ms(o.latency.p99_us)),
        ),
        ("Sync avg latency (ms)", sync.map(|o| ms(o.latency.mean_us))),
        ("CPU per I/O (us)", Some(r.cpu.us_per_io)),
    ] {
        if out.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        if let Some(v) = v {
            out.push((name.to_string(), v, None));
        }
    }
    out
}

/// The foreground wait events of a SLOB run, with DB CPU first.
fn add_events(events: &mut Vec<EventRow>, doc: &Doc, n: f64) {
    let Some(s) = (match doc {
        Doc::Run(r) => r.slob.as_ref(),
        Doc::Imported(_) => None,
    }) else {
        return;
    };
    let (cpu, db) = (s.db_cpu_s, s.db_time_s);
    let pct = if db > 0.0 { 100.0 * cpu / db } else { 0.0 };
    add_event(events, "DB CPU", "", 0.0, cpu, 0.0, pct, n);
    for e in s.events.iter().filter(|e| e.side == EventSide::Foreground) {
        let waits = e.waits as f64;
        add_event(
            events,
            &e.name,
            &e.class,
            waits,
            e.time_s,
            e.avg_ms,
            e.pct_db_time,
            n,
        );
    }
}

/// The host's and each device's statistics over the window, a share `1/n`.
fn add_telemetry(
    host: &mut Vec<(String, f64)>,
    devices: &mut Vec<(String, String, f64)>,
    doc: &Doc,
    n: f64,
) {
    let Some(w) = (match doc {
        Doc::Run(r) => r.telemetry_window.as_ref(),
        Doc::Imported(_) => None,
    }) else {
        return;
    };
    let h = &w.host;
    for (field, v) in [
        ("user_pct", h.user_pct),
        ("system_pct", h.system_pct),
        ("iowait_pct", h.iowait_pct),
        ("idle_pct", h.idle_pct),
        ("load1", h.load1),
        ("ctxt_per_s", h.ctxt_per_s),
    ] {
        accumulate(host, field, v / n);
    }
    for d in &w.devices {
        let Some(r) = &d.rates else { continue };
        for (field, v) in [
            ("r_per_s", r.r_per_s),
            ("w_per_s", r.w_per_s),
            ("rkib_per_s", r.rkib_per_s),
            ("wkib_per_s", r.wkib_per_s),
            ("r_await_ms", r.r_await_ms),
            ("w_await_ms", r.w_await_ms),
            ("aqu_sz", r.aqu_sz),
            ("util_pct", r.util_pct),
        ] {
            match devices
                .iter_mut()
                .find(|(dn, f, _)| *dn == d.name && f == field)
            {
                Some(x) => x.2 += v / n,
                None => devices.push((d.name.clone(), field.to_string(), v / n)),
            }
        }
    }
}

impl Side {
    /// Averages the report documents of one side (`reports[i]` is run
    /// `run_ids[i]`'s); `Err` names a dbio run whose document does not read.
    pub fn from_reports(
        label: String,
        run_ids: Vec<i64>,
        reports: &[Value],
    ) -> Result<Side, Unreadable> {
        let reports: Vec<Doc> = (reports.iter().zip(&run_ids))
            .map(|(doc, &id)| Doc::read(doc).map_err(|source| Unreadable { id, source }))
            .collect::<Result<_, _>>()?;
        // Each setting's distinct values over the runs, in the order seen
        // ("-" for a run without it).
        let per_run: Vec<BTreeMap<String, String>> = reports.iter().map(settings).collect();
        let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for s in &per_run {
            for k in s.keys() {
                seen.entry(k.clone()).or_default();
            }
        }
        for (k, values) in seen.iter_mut() {
            for s in &per_run {
                let v = s.get(k).cloned().unwrap_or_else(|| "-".into());
                if !values.contains(&v) {
                    values.push(v);
                }
            }
        }
        let settings_all: BTreeMap<String, String> = seen
            .into_iter()
            .map(|(k, mut values)| {
                let v = if values.len() == 1 {
                    values.remove(0)
                } else {
                    format!("{VARIES}{})", values.join(", "))
                };
                (k, v)
            })
            .collect();
        // Load lines in the first report's order, values from every run.
        let mut load: Vec<LoadRow> = Vec::new();
        let mut per_tx: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in &reports {
            for (name, ps, pt) in load_lines(r) {
                match load.iter_mut().find(|l| l.name == name) {
                    Some(l) => l.per_second.push(ps),
                    None => load.push(LoadRow {
                        name: name.clone(),
                        per_second: vec![ps],
                        per_transaction: None,
                    }),
                }
                if let Some(t) = pt {
                    per_tx.entry(name).or_default().push(t);
                }
            }
        }
        for l in &mut load {
            l.per_transaction = per_tx.get(&l.name).map(|v| mean(v));
        }
        let n = reports.len().max(1) as f64;
        let mut events: Vec<EventRow> = Vec::new();
        for r in &reports {
            add_events(&mut events, r, n);
        }
        events.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        let mut host: Vec<(String, f64)> = Vec::new();
        let mut devices: Vec<(String, String, f64)> = Vec::new();
        for r in &reports {
            add_telemetry(&mut host, &mut devices, r, n);
        }
        Ok(Side {
            label,
            run_ids,
            settings: settings_all,
            load,
            events,
            host,
            devices,
        })
    }
}

fn accumulate(v: &mut Vec<(String, f64)>, name: &str, x: f64) {
    match v.iter_mut().find(|(n, _)| n == name) {
        Some(e) => e.1 += x,
        None => v.push((name.to_string(), x)),
    }
}

#[allow(clippy::too_many_arguments)]
fn add_event(
    v: &mut Vec<EventRow>,
    name: &str,
    class: &str,
    waits: f64,
    time_s: f64,
    avg_ms: f64,
    pct: f64,
    n: f64,
) {
    match v.iter_mut().find(|e| e.name == name) {
        Some(e) => {
            e.waits += waits / n;
            e.time_s += time_s / n;
            e.avg_ms += avg_ms / n;
            e.pct_db_time += pct / n;
        }
        None => v.push(EventRow {
            name: name.to_string(),
            class: class.to_string(),
            waits: waits / n,
            time_s: time_s / n,
            avg_ms: avg_ms / n,
            pct_db_time: pct / n,
        }),
    }
}

/// What `dbio compare` writes (through `report::export`'s text, JSON and
/// HTML).
pub enum Comparison {
    /// Each side of one session count (or none said): one cell.
    One(Box<Cell>),
    /// One cell per session count both sides have; `notes` and `left_out`
    /// (session counts only one side had) said under them.
    PerSessions {
        cells: Vec<Cell>,
        notes: Vec<String>,
        left_out: Vec<String>,
    },
}

impl Comparison {
    /// The cells, and what is said under them.
    pub fn cells_and_notes(&self) -> (&[Cell], Vec<String>) {
        match self {
            Comparison::One(c) => (std::slice::from_ref(c), Vec::new()),
            Comparison::PerSessions {
                cells,
                notes,
                left_out,
            } => (cells, [notes.as_slice(), left_out.as_slice()].concat()),
        }
    }
}

pub use evidence::{Cell, LoadTest, load_tests};
pub use text::{render, render_cells};
