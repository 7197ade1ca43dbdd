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

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |cur, k| cur.get(k))?.as_f64()
}

fn text(v: &Value, path: &str) -> Option<String> {
    let x = path.split('.').try_fold(v, |cur, k| cur.get(k))?;
    match x {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The settings worth comparing, from one report.
fn settings(r: &Value) -> BTreeMap<String, String> {
    let mut s = BTreeMap::new();
    for key in [
        "workload",
        "pattern",
        "sessions",
        "block_size",
        "files",
        "engine",
        "io_mode",
        "iodepth",
        "read_pct",
    ] {
        // In bytes: `config.block_size_bytes` (an import's `config.block_size`).
        let v = text(r, &format!("config.{key}")).or_else(|| {
            (key == "block_size")
                .then(|| text(r, "config.block_size_bytes"))
                .flatten()
        });
        if let Some(v) = v {
            s.insert(key.to_string(), v);
        }
    }
    let db = r["config"]["slob"]
        .as_object()
        .map(|m| ("slob", m))
        .or(r["config"]["pg"]["slob"].as_object().map(|m| ("pg", m)))
        .or(r["config"]["mysql"]["slob"]
            .as_object()
            .map(|m| ("mysql", m)));
    if let Some((prefix, slob)) = db {
        for (k, v) in slob {
            let v = match v {
                Value::String(x) => x.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            s.insert(format!("{prefix}.{k}"), v);
        }
    }
    if let Some(t) = text(r, "target.path") {
        s.insert("target".into(), t);
    }
    for link in r["storage"]["links"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match link["type"].as_str() {
            Some("filesystem") => {
                if let Some(t) = link["fs_type"].as_str() {
                    s.entry("filesystem".into())
                        .or_insert_with(|| t.to_string());
                }
                if let Some(o) = link["mount_options"].as_str() {
                    s.entry("mount options".into())
                        .or_insert_with(|| o.to_string());
                }
            }
            Some("device") => {
                let name = link["name"].as_str().unwrap_or("?");
                for (what, key) in [("model", "model"), ("scheduler", "scheduler")] {
                    if let Some(v) = link[key].as_str().filter(|v| !v.is_empty()) {
                        s.entry(format!("device {name} {what}"))
                            .or_insert_with(|| v.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    for key in ["hostname", "kernel", "cpus", "memory_bytes"] {
        if let Some(v) = text(r, &format!("environment.{key}")) {
            s.insert(format!("host {key}"), v);
        }
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
fn load_lines(r: &Value) -> Vec<(String, f64, Option<f64>)> {
    let db = r["slob"]["load_profile"]
        .as_array()
        .or(r["pg"]["load_profile"].as_array())
        .or(r["mysql"]["load_profile"].as_array());
    let mut out: Vec<(String, f64, Option<f64>)> = db
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|l| {
            Some((
                l["name"].as_str()?.to_string(),
                l["per_second"].as_f64()?,
                l["per_transaction"].as_f64(),
            ))
        })
        .collect();
    for (name, path) in [
        ("Read IO requests", "read.iops"),
        ("Write IO requests", "write.iops"),
        ("Read MiB", "read.mib_per_s"),
        ("Write MiB", "write.mib_per_s"),
        ("Read avg latency (ms)", "read.latency.mean_us"),
        ("Read p99 latency (ms)", "read.latency.p99_us"),
        ("Write avg latency (ms)", "write.latency.mean_us"),
        ("Write p99 latency (ms)", "write.latency.p99_us"),
        ("Sync avg latency (ms)", "sync.latency.mean_us"),
        ("CPU per I/O (us)", "cpu.us_per_io"),
    ] {
        if out.iter().any(|(n, _, _)| n == name) {
            continue;
        }
        if let Some(v) = num(r, path) {
            let v = if path.contains("latency") { v / 1e3 } else { v };
            out.push((name.to_string(), v, None));
        }
    }
    out
}

impl Side {
    /// Averages the report documents of one side.
    pub fn from_reports(label: String, run_ids: Vec<i64>, reports: &[Value]) -> Side {
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
        for r in reports {
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
        for r in reports {
            let cpu = num(r, "slob.db_cpu_s");
            let db = num(r, "slob.db_time_s").unwrap_or(0.0);
            if let Some(cpu) = cpu {
                add_event(
                    &mut events,
                    "DB CPU",
                    "",
                    0.0,
                    cpu,
                    0.0,
                    if db > 0.0 { 100.0 * cpu / db } else { 0.0 },
                    n,
                );
            }
            for e in r["slob"]["events"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if e["side"] != "foreground" {
                    continue;
                }
                add_event(
                    &mut events,
                    e["name"].as_str().unwrap_or("?"),
                    e["class"].as_str().unwrap_or(""),
                    e["waits"].as_f64().unwrap_or(0.0),
                    e["time_s"].as_f64().unwrap_or(0.0),
                    e["avg_ms"].as_f64().unwrap_or(0.0),
                    e["pct_db_time"].as_f64().unwrap_or(0.0),
                    n,
                );
            }
        }
        events.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        let mut host: Vec<(String, f64)> = Vec::new();
        let mut devices: Vec<(String, String, f64)> = Vec::new();
        for r in reports {
            let w = &r["telemetry_window"];
            for field in [
                "user_pct",
                "system_pct",
                "iowait_pct",
                "idle_pct",
                "load1",
                "ctxt_per_s",
            ] {
                if let Some(v) = w["host"][field].as_f64() {
                    accumulate(&mut host, field, v / n);
                }
            }
            for d in w["devices"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let name = d["name"].as_str().unwrap_or("?").to_string();
                for field in [
                    "r_per_s",
                    "w_per_s",
                    "rkib_per_s",
                    "wkib_per_s",
                    "r_await_ms",
                    "w_await_ms",
                    "aqu_sz",
                    "util_pct",
                ] {
                    if let Some(v) = d["rates"][field].as_f64() {
                        match devices
                            .iter_mut()
                            .find(|(dn, f, _)| *dn == name && f == field)
                        {
                            Some(x) => x.2 += v / n,
                            None => devices.push((name.clone(), field.to_string(), v / n)),
                        }
                    }
                }
            }
        }
        Side {
            label,
            run_ids,
            settings: settings_all,
            load,
            events,
            host,
            devices,
        }
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

pub use evidence::{Cell, LoadTest, load_tests};
pub use text::{render, render_cells};
