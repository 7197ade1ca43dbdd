//! What the HTML report shows, pulled out of the store once: the selected
//! runs' metric values, latency percentiles from their merged histograms,
//! each arm's settings and environments, and one run per arm with its
//! per-second series and telemetry.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde_json::Value;

use super::environment::add_environment;
use super::timeline::Timeline;
use crate::store::{RunFilter, Store, StoreError, decode_histogram};

pub use crate::report::stats::RunValue;

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
    pub metric: String,
    pub runs: Vec<RunValue>,
    /// Selected runs left out: not completed, warm-ups, or without the metric.
    pub left_out: usize,
    pub latency: Vec<LatencyCell>,
    pub arms: Vec<Arm>,
    /// Settings the same in every run.
    pub shared: Vec<(String, String)>,
    /// Settings that vary within arms, with their values (the sweep).
    pub swept: Vec<(String, Vec<String>)>,
    /// Plan names among the runs.
    pub plans: Vec<String>,
    pub timelines: Vec<Timeline>,
}

/// Reads the selection from the store.
pub fn load(store: &Store, filter: &RunFilter, metric: &str) -> Result<ReportData, StoreError> {
    let rows = store.list(filter)?;
    let mut data = ReportData {
        metric: metric.to_string(),
        ..Default::default()
    };
    let mut configs: Vec<(String, BTreeMap<String, String>)> = Vec::new();
    let mut hists: BTreeMap<(String, String, u32), (usize, Histogram<u64>)> = BTreeMap::new();
    let mut envs: BTreeMap<String, Vec<Environment>> = BTreeMap::new();
    let mut last: BTreeMap<String, (u32, i64)> = BTreeMap::new();
    for r in &rows {
        if r.status != "completed" || r.warmup {
            data.left_out += 1;
            continue;
        }
        let run = store.get(r.id)?;
        let Some(value) = crate::vocab::lookup(&run.metrics, metric) else {
            data.left_out += 1;
            continue;
        };
        let variable = r.variable.clone().unwrap_or_else(|| "-".into());
        let sessions = r.sessions.unwrap_or(0) as u32;
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
        for (op, bytes) in &run.histograms {
            let h = decode_histogram(bytes)?;
            let e = hists
                .entry((op.clone(), variable.clone(), sessions))
                .or_insert_with(|| (0, Histogram::new_from(&h)));
            e.0 += 1;
            e.1.add(&h).map_err(|e| StoreError::Histogram {
                msg: format!("{e:?}"),
            })?;
        }
        configs.push((variable.clone(), flatten_config(run.report.get("config"))));
        add_environment(envs.entry(variable.clone()).or_default(), &run);
        // The timeline shows the arm's latest run at its largest session count.
        let best = last.entry(variable).or_insert((sessions, r.id));
        if sessions >= best.0 {
            *best = (sessions, r.id);
        }
    }
    data.latency = hists
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
        .collect();
    let (shared, swept, per_arm) = split_settings(&configs);
    data.shared = shared;
    data.swept = swept;
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
                out.insert(prefix.to_string(), other.to_string());
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
/// Shared settings, swept ones with their values, settings per arm.
type Split = (
    Settings,
    Vec<(String, Vec<String>)>,
    BTreeMap<String, Settings>,
);

/// Splits the runs' settings into shared by all, swept (varying within an
/// arm; the random per-run seed is left out) and per arm (constant within
/// the arm, different between arms).
fn split_settings(configs: &[(String, BTreeMap<String, String>)]) -> Split {
    let mut values: BTreeMap<&str, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for (arm, cfg) in configs {
        for (k, v) in cfg {
            let vs = values.entry(k).or_default().entry(arm).or_default();
            if !vs.contains(&v.as_str()) {
                vs.push(v);
            }
        }
    }
    let (mut shared, mut swept, mut per_arm) =
        (Vec::new(), Vec::new(), BTreeMap::<String, Settings>::new());
    for (key, arms) in values {
        let mut all: Vec<&str> = arms.values().flatten().copied().collect();
        all.sort_by(|a, b| natural(a, b));
        all.dedup();
        if all.len() == 1 {
            shared.push((key.to_string(), all[0].to_string()));
        } else if arms.values().any(|v| v.len() > 1) {
            if key != "seed" {
                swept.push((key.to_string(), all.iter().map(|s| s.to_string()).collect()));
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
    (shared, swept, per_arm)
}

/// Numbers by value, anything else as text.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn settings_split_into_shared_swept_and_per_arm() {
        let configs = vec![
            (
                "PSYNC".to_string(),
                cfg(&[
                    ("engine", "psync"),
                    ("bs", "8192"),
                    ("sessions", "1"),
                    ("seed", "5"),
                ]),
            ),
            (
                "PSYNC".to_string(),
                cfg(&[
                    ("engine", "psync"),
                    ("bs", "8192"),
                    ("sessions", "10"),
                    ("seed", "6"),
                ]),
            ),
            (
                "URING".to_string(),
                cfg(&[
                    ("engine", "io_uring"),
                    ("bs", "8192"),
                    ("sessions", "2"),
                    ("seed", "7"),
                ]),
            ),
        ];
        let (shared, swept, arms) = split_settings(&configs);
        assert_eq!(shared, vec![("bs".to_string(), "8192".to_string())]);
        assert_eq!(
            swept,
            vec![(
                "sessions".to_string(),
                vec!["1".into(), "2".into(), "10".into()]
            )]
        );
        assert_eq!(
            arms["URING"],
            vec![("engine".to_string(), "io_uring".to_string())]
        );
    }

    #[test]
    fn nested_config_flattens_to_dotted_keys() {
        let v: Value = serde_json::json!({"length": {"time": {"time_s": 1.0}}, "hotspot": null, "engine": "psync"});
        let f = flatten_config(Some(&v));
        assert_eq!(f["length.time.time_s"], "1.0");
        assert_eq!(f["hotspot"], "-");
        assert_eq!(f["engine"], "psync");
    }
}
