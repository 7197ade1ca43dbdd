//! What the HTML report shows, pulled out of the store once: the selected
//! runs' metric values, latency percentiles from their merged histograms,
//! each arm's settings and environments, and one run per arm with its
//! per-second series and telemetry.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::environment::add_environment;
use super::timeline::Timeline;
use crate::report::plan::curve::CurvePoint;
use crate::report::plan::select::{Measure, Pick};
use crate::store::{RunFilter, Store, StoreError, StoredRun, decode_histogram};

pub use crate::report::plan::stats::RunValue;

/// Latency percentiles of one kind in one cell, from the cell's histograms
/// merged (not an average of per-run percentiles).
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyCell {
    pub kind: String,
    pub variable: String,
    pub sessions: u32,
    pub runs: usize,
    pub ios: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
}

/// Where an arm's runs ran: host and storage, with the runs that share it.
#[derive(Clone, Debug, PartialEq)]
pub struct Environment {
    pub runs: Vec<i64>,
    pub host: Vec<(String, String)>,
    /// (layer, name, details) from the target down.
    pub storage: Vec<(String, String, String)>,
}

/// One arm (variable) of the selection.
#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub variable: String,
    pub runs: usize,
    /// Settings the same in all the arm's runs but not in every arm.
    pub settings: Vec<(String, String)>,
    pub environments: Vec<Environment>,
}

/// Everything the report page draws.
#[derive(Clone, Debug, Default)]
pub struct ReportData {
    /// What the values are: the metric, or the model's label.
    pub metric: String,
    /// The values are a throughput: scaling applies.
    pub throughput: bool,
    pub runs: Vec<RunValue>,
    /// `--model readwrite`: each run's reads/s and writes/s (the SLOB.R
    /// table trims them apart; `runs` holds their sum). Empty otherwise.
    pub readwrite: Vec<(f64, f64)>,
    /// Selected runs left out: not completed, warm-ups, or without the metric.
    pub left_out: usize,
    pub latency: Vec<LatencyCell>,
    pub arms: Vec<Arm>,
    /// Settings every run has, with the same value, in readable units.
    pub shared: Vec<(String, String)>,
    /// What the plans swept (from the runs' cell keys), with the values as
    /// the plan wrote them.
    pub swept: Vec<(String, Vec<String>)>,
    /// Runs not from a plan: settings that differ within an arm.
    pub varying: Vec<String>,
    /// Plan names among the runs.
    pub plans: Vec<String>,
    pub timelines: Vec<Timeline>,
    /// Every run's point on a latency-throughput curve, when any of them
    /// ran open loop (`dbio curve`, `--rate`); empty otherwise.
    pub curve: Vec<CurvePoint>,
}

/// Reads the selection from the store.
pub fn load(
    store: &Store,
    filter: &RunFilter,
    measure: &Measure,
) -> Result<ReportData, StoreError> {
    let rows = store.list(filter)?;
    let mut data = ReportData {
        metric: measure.label(),
        throughput: measure.is_throughput(),
        ..Default::default()
    };
    let mut configs: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    let mut hists = Cells::new();
    let mut envs: BTreeMap<String, Vec<Environment>> = BTreeMap::new();
    let mut last: BTreeMap<String, (u32, i64)> = BTreeMap::new();
    for r in &rows {
        if r.status != "completed" || r.warmup {
            data.left_out += 1;
            continue;
        }
        let run = store.get(r.id)?;
        let Pick::Value { value, split } = measure.pick(r.model.as_deref(), &run.metrics) else {
            data.left_out += 1;
            continue;
        };
        if let Some(rw) = split {
            data.readwrite.push(rw);
        }
        let variable = r.variable.clone().unwrap_or_else(|| "-".into());
        let sessions = r.sessions.unwrap_or(0) as u32;
        if let Ok(doc) = crate::document::Report::from_stored(&run.report) {
            let label = crate::report::plan::curve::label(&variable);
            data.curve.push(CurvePoint::of(r.id, label, &doc));
        }
        data.runs.push(RunValue {
            id: r.id,
            variable: variable.clone(),
            sessions,
            value,
        });
        if let Some(p) = &r.plan
            && !data.plans.contains(p)
        {
            data.plans.push(p.clone());
        }
        add_histograms(&mut hists, &run, &variable, sessions)?;
        if let Some(key) = &r.cell_key {
            add_swept(&mut data.swept, key);
        }
        configs.push((variable.clone(), flatten_config(run.report.get("config"))));
        add_environment(envs.entry(variable.clone()).or_default(), &run);
        // The timeline shows the arm's latest run at its largest session count.
        let best = last.entry(variable).or_insert((sessions, r.id));
        if sessions >= best.0 {
            *best = (sessions, r.id);
        }
    }
    data.latency = latency_cells(hists);
    if !data.curve.iter().any(|p| p.asked_per_s.is_some()) {
        data.curve.clear();
    }
    let (shared, varying, per_arm) = split_settings(&configs);
    data.shared = shared;
    if data.plans.is_empty() {
        data.varying = varying;
    }
    for (_, values) in &mut data.swept {
        values.sort_by(|a, b| natural(a, b));
    }
    data.arms = envs
        .into_iter()
        .map(|(variable, environments)| Arm {
            runs: data.runs.iter().filter(|r| r.variable == variable).count(),
            settings: per_arm.get(&variable).cloned().unwrap_or_default(),
            variable,
            environments,
        })
        .collect();
    for (variable, (_, id)) in last {
        let run = store.get(id)?;
        data.timelines.push(Timeline::from_run(&run, &variable));
    }
    Ok(data)
}

/// Each kind's histograms merged per cell (kind, variable, sessions), with
/// the number of runs merged.
type Cells = BTreeMap<(String, String, u32), (usize, Histogram<u64>)>;

/// Adds a run's histograms to its cell's.
fn add_histograms(
    hists: &mut Cells,
    run: &StoredRun,
    variable: &str,
    sessions: u32,
) -> Result<(), StoreError> {
    for (op, bytes) in &run.histograms {
        let h = decode_histogram(bytes)?;
        let e = hists
            .entry((op.clone(), variable.to_string(), sessions))
            .or_insert_with(|| (0, Histogram::new_from(&h)));
        e.0 += 1;
        e.1.add(&h).map_err(|e| StoreError::Histogram {
            msg: format!("{e:?}"),
        })?;
    }
    Ok(())
}

/// The latency percentiles of each cell with requests.
fn latency_cells(hists: Cells) -> Vec<LatencyCell> {
    hists
        .into_iter()
        .filter(|(_, (_, h))| !h.is_empty())
        .map(|((kind, variable, sessions), (runs, h))| LatencyCell {
            kind,
            variable,
            sessions,
            runs,
            ios: h.len(),
            p50_ms: h.value_at_quantile(0.5) as f64 / 1e6,
            p99_ms: h.value_at_quantile(0.99) as f64 / 1e6,
            p999_ms: h.value_at_quantile(0.999) as f64 / 1e6,
        })
        .collect()
}

/// The run's configuration as `key = value` strings, nested keys dotted.
pub(crate) fn flatten_config(config: Option<&Value>) -> BTreeMap<String, String> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, c, out);
                }
            }
            Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            Value::Null => {
                out.insert(prefix.to_string(), "-".into());
            }
            other => {
                out.insert(prefix.to_string(), readable(prefix, other));
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Some(c) = config {
        walk("", c, &mut out);
    }
    out
}

type Settings = Vec<(String, String)>;
/// Shared settings, keys that vary within an arm (the random per-run seed
/// left out), settings per arm.
type Split = (Settings, Vec<String>, BTreeMap<String, Settings>);

/// Splits the runs' settings: shared (every run has the key, with one
/// value), varying within an arm, and per arm (one value in each of the
/// arm's runs, but not shared: a value that differs between arms, or a key
/// only some arms have, such as a SLOB arm's `slob.*` beside raw arms).
fn split_settings(configs: &[(String, BTreeMap<String, String>)]) -> Split {
    let mut values: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (arm, cfg) in configs {
        for (k, v) in cfg {
            *count.entry(k).or_default() += 1;
            let vs = values.entry(k).or_default().entry(arm).or_default();
            if !vs.contains(&v.as_str()) {
                vs.push(v);
            }
        }
    }
    let (mut shared, mut varying, mut per_arm) =
        (Vec::new(), Vec::new(), BTreeMap::<String, Settings>::new());
    for (key, arms) in values {
        let mut all: Vec<&str> = arms.values().flatten().copied().collect();
        all.sort_by(|a, b| natural(a, b));
        all.dedup();
        if all.len() == 1 && count[key] == configs.len() {
            shared.push((key.to_string(), all[0].to_string()));
        } else if arms.values().any(|v| v.len() > 1) {
            if key != "seed" {
                varying.push(key.to_string());
            }
        } else {
            for (arm, v) in arms {
                per_arm
                    .entry(arm.to_string())
                    .or_default()
                    .push((key.to_string(), v[0].to_string()));
            }
        }
    }
    (shared, varying, per_arm)
}

/// Adds the swept settings of a cell key (`ARM|sessions=4|bs=8k|rep=2`,
/// plan/expand.rs) to `swept`.
fn add_swept(swept: &mut Vec<(String, Vec<String>)>, cell_key: &str) {
    let parts: Vec<&str> = cell_key.split('|').collect();
    let inner = parts
        .get(1..parts.len().saturating_sub(1))
        .unwrap_or_default();
    for kv in inner {
        let Some((k, v)) = kv.split_once('=') else {
            continue;
        };
        let i = match swept.iter().position(|(key, _)| key == k) {
            Some(i) => i,
            None => {
                swept.push((k.to_string(), Vec::new()));
                swept.len() - 1
            }
        };
        if !swept[i].1.iter().any(|x| x == v) {
            swept[i].1.push(v.to_string());
        }
    }
}

/// A number of the configuration in its unit: sizes in KiB/MiB/GiB,
/// seconds, milliseconds, percentages.
fn readable(key: &str, v: &Value) -> String {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let bytes = leaf.ends_with("_bytes")
        || matches!(
            leaf,
            "block_size" | "log_buffer" | "redo_file_size" | "redo_block"
        );
    match v.as_f64() {
        Some(n) if bytes && n >= 0.0 && n.fract() == 0.0 => crate::units::fmt_size(n as u64),
        Some(n) if leaf.ends_with("_ms") => format!("{n} ms"),
        Some(n) if leaf.ends_with("_pct") => format!("{n}%"),
        Some(n) if leaf.ends_with("_s") => format!("{n} s"),
        _ => v.to_string(),
    }
}

/// Numbers by value, anything else as text.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
