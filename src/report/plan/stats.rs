//! The statistics of a selection of runs, computed once for every report
//! that shows them (`dbio report --stats/--scaling` and the HTML page):
//! per cell (variable × session count, and each variable's Overall) n,
//! mean, CV, a 95% interval and the runs outside Tukey's fences; each
//! variable against a baseline at each session count (ratio, Welch's
//! t-test, a plain verdict); and per variable its scaling over sessions
//! (peak, knee, collapse, Universal Scalability Law fit).
//!
//! The numbers come from `analysis` (pure functions over values); this
//! module only groups runs into cells and keeps their ids.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::{self, CiMethod, Collapse, Peak, UslFit, Welch};

/// The significance level of the verdicts.
pub const ALPHA: f64 = 0.05;

/// One counted, completed run's value of the metric.
#[derive(Clone, Debug, PartialEq)]
pub struct RunValue {
    pub id: i64,
    pub variable: String,
    pub sessions: u32,
    pub value: f64,
}

impl From<&RunValue> for crate::report::plan::table::Point {
    fn from(r: &RunValue) -> Self {
        Self {
            variable: r.variable.clone(),
            sessions: r.sessions,
            value: r.value,
        }
    }
}

/// Runs by variable and session count, variables in name order.
pub type Cells<'a> = BTreeMap<&'a str, BTreeMap<u32, Vec<&'a RunValue>>>;

/// Groups the runs by variable and session count.
pub fn cells(runs: &[RunValue]) -> Cells<'_> {
    let mut m: Cells = BTreeMap::new();
    for r in runs {
        m.entry(&r.variable)
            .or_default()
            .entry(r.sessions)
            .or_default()
            .push(r);
    }
    m
}

/// The runs' values, in order.
pub fn values(rs: &[&RunValue]) -> Vec<f64> {
    rs.iter().map(|r| r.value).collect()
}

/// A 95% interval of the mean and how it was computed: the one shape of
/// every `ci95` in dbio's JSON (`report --stats`, the `report` table).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    pub method: CiMethod,
}

/// A run outside its cell's Tukey fences.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Outlier {
    pub run: i64,
    pub value: f64,
}

/// One cell of the table with its spread.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CellStats {
    pub variable: String,
    /// The session count; `None` for the variable's Overall cell.
    pub sessions: Option<u32>,
    pub n: usize,
    /// The SLOB.R value: the trimmed mean, or the plain mean when
    /// `trimmed` is false.
    pub value: f64,
    pub trimmed: bool,
    pub mean: f64,
    pub stddev: f64,
    pub cv: Option<f64>,
    /// The interval to show ([`analysis::ci95`]: Student t, or the
    /// bootstrap for a skewed cell).
    pub ci95: Option<Interval>,
    /// Both intervals, whichever is shown.
    pub ci95_t: Option<Interval>,
    pub ci95_bootstrap: Option<Interval>,
    pub outliers: Vec<Outlier>,
}

/// Summarizes one cell's runs; `None` when it has none (or a non-finite
/// value).
pub fn cell_stats(variable: &str, sessions: Option<u32>, rs: &[&RunValue]) -> Option<CellStats> {
    let vals = values(rs);
    let s = analysis::summarize(&vals)?;
    let ci95 = analysis::ci95(&vals, &s).map(|(low, high, method)| Interval { low, high, method });
    Some(CellStats {
        variable: variable.to_string(),
        sessions,
        n: s.n,
        value: s.value,
        trimmed: s.trimmed,
        mean: s.mean,
        stddev: s.stddev,
        cv: s.cv,
        ci95,
        ci95_t: s.ci95.map(|(low, high)| Interval {
            low,
            high,
            method: CiMethod::StudentT,
        }),
        ci95_bootstrap: s.bootstrap_ci95.map(|(low, high)| Interval {
            low,
            high,
            method: CiMethod::Bootstrap,
        }),
        outliers: outliers_within_cells(rs),
    })
}

/// The runs outside Tukey's fences of their own session count's runs: an
/// Overall cell (several session counts) lists the outliers of each of its
/// cells, never fences over runs of different session counts, whose
/// values differ because the configuration does.
fn outliers_within_cells(rs: &[&RunValue]) -> Vec<Outlier> {
    let mut by_sessions: BTreeMap<u32, Vec<&RunValue>> = BTreeMap::new();
    for r in rs {
        by_sessions.entry(r.sessions).or_default().push(r);
    }
    let mut out: Vec<Outlier> = by_sessions
        .values()
        .flat_map(|cell| {
            analysis::tukey_outliers(&values(cell))
                .into_iter()
                .map(|i| Outlier {
                    run: cell[i].id,
                    value: cell[i].value,
                })
        })
        .collect();
    out.sort_by_key(|o| rs.iter().position(|r| r.id == o.run));
    out
}

/// Every cell: per variable each session count, then its Overall.
pub fn all_cells(runs: &[RunValue]) -> Vec<CellStats> {
    let mut out = Vec::new();
    for (var, by_s) in cells(runs) {
        for (&n, rs) in &by_s {
            out.extend(cell_stats(var, Some(n), rs));
        }
        let all: Vec<&RunValue> = by_s.values().flatten().copied().collect();
        out.extend(cell_stats(var, None, &all));
    }
    out
}

/// One variable against the baseline at one session count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub variable: String,
    pub sessions: u32,
    pub n: usize,
    pub baseline_n: usize,
    /// The SLOB.R values of the two cells.
    pub value: f64,
    pub baseline_value: f64,
    /// value / baseline_value; `None` when the baseline is 0.
    pub ratio: Option<f64>,
    /// Welch's test on the runs; `None` with fewer than 2 runs on a side.
    pub welch: Option<Welch>,
    /// "significant difference", "no significant difference" (at
    /// [`ALPHA`]) or why there is no test.
    pub verdict: String,
}

/// What [`Comparison::verdict`] says when a side has fewer than 2 runs.
pub const NOT_TESTED: &str = "not tested: needs at least 2 runs on each side";

/// Each other variable against `baseline` at every session count both
/// have runs at. Empty when `baseline` has no runs.
pub fn comparisons(runs: &[RunValue], baseline: &str) -> Vec<Comparison> {
    let by = cells(runs);
    let Some(base) = by.get(baseline) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (var, by_s) in by.iter().filter(|(v, _)| **v != baseline) {
        for (&n, rs) in by_s {
            let Some(brs) = base.get(&n) else { continue };
            let (a, b) = (values(rs), values(brs));
            let (Some(sa), Some(sb)) = (analysis::summarize(&a), analysis::summarize(&b)) else {
                continue;
            };
            let welch = analysis::welch(&a, &b);
            out.push(Comparison {
                variable: var.to_string(),
                sessions: n,
                n: sa.n,
                baseline_n: sb.n,
                value: sa.value,
                baseline_value: sb.value,
                ratio: analysis::ratio(sa.value, sb.value),
                verdict: welch
                    .as_ref()
                    .map_or(NOT_TESTED, |w| analysis::verdict(w, ALPHA))
                    .to_string(),
                welch,
            });
        }
    }
    out
}

/// The baseline the other variables are compared with, and the comparisons.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub metric: String,
    pub cells: Vec<CellStats>,
    /// `None` with a single variable.
    pub baseline: Option<String>,
    /// Whether the baseline was named (`--relative-to`) or is the first
    /// variable.
    pub baseline_given: bool,
    pub alpha: f64,
    pub comparisons: Vec<Comparison>,
}

/// Every cell, and every other variable against `relative_to` (else the
/// first variable by name).
pub fn summary(metric: &str, runs: &[RunValue], relative_to: Option<&str>) -> Summary {
    let by = cells(runs);
    let baseline = match relative_to {
        Some(b) => Some(b.to_string()),
        None if by.len() > 1 => by.keys().next().map(|b| b.to_string()),
        None => None,
    };
    Summary {
        metric: metric.to_string(),
        cells: all_cells(runs),
        comparisons: baseline
            .as_deref()
            .map(|b| comparisons(runs, b))
            .unwrap_or_default(),
        baseline,
        baseline_given: relative_to.is_some(),
        alpha: ALPHA,
    }
}

/// Whether a metric is a rate that scaling analysis applies to (I/O or
/// database operations, bytes per second).
/// An earlier build's name (`db.physical_reads_s`) counts as its new one.
pub fn is_throughput(metric: &str) -> bool {
    let metric = crate::vocab::canonical_metric(metric);
    [
        "iops",
        "mib_per_s",
        ".r_per_s",
        ".w_per_s",
        "kib_per_s",
        "reads_per_s",
        "writes_per_s",
        "executes_per_s",
        "bytes_per_s",
    ]
    .iter()
    .any(|s| metric.ends_with(s))
}

/// One variable's throughput over sessions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScalingFit {
    pub variable: String,
    /// The distinct session counts measured.
    pub session_counts: Vec<u32>,
    /// (sessions, the SLOB.R value: the table's trimmed mean, or the plain
    /// mean where it gives none) per session count; peak, knee and collapse
    /// are read from these.
    pub means: Vec<(f64, f64)>,
    pub peak: Option<Peak>,
    pub knee: Option<f64>,
    pub collapse: Option<Collapse>,
    /// The Universal Scalability Law fit over every run ...
    pub usl: Option<UslFit>,
    /// ... or why there is none.
    pub no_fit: Option<String>,
    /// (sessions, value) of every run, with the run ids in `runs`.
    #[serde(skip)]
    pub points: Vec<(f64, f64)>,
    #[serde(skip)]
    pub runs: Vec<i64>,
}

impl ScalingFit {
    /// The lowest value after the peak, (sessions, throughput), when it is
    /// below the peak.
    pub fn lowest_after_peak(&self) -> Option<(f64, f64)> {
        let p = self.peak?;
        self.means
            .iter()
            .copied()
            .filter(|&(n, x)| n > p.sessions && x < p.throughput)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Peak, knee, collapse and the USL fit of each variable.
pub fn scaling(runs: &[RunValue]) -> Vec<ScalingFit> {
    cells(runs)
        .iter()
        .map(|(var, by_s)| {
            let all: Vec<&RunValue> = by_s.values().flatten().copied().collect();
            let points: Vec<(f64, f64)> =
                all.iter().map(|r| (r.sessions as f64, r.value)).collect();
            let usl = analysis::fit_usl(&points);
            ScalingFit {
                variable: var.to_string(),
                session_counts: by_s.keys().copied().collect(),
                means: analysis::per_n_values(&points),
                peak: analysis::peak(&points),
                knee: analysis::knee(&points),
                collapse: analysis::collapse(&points),
                no_fit: usl.as_ref().err().map(ToString::to_string),
                usl: usl.ok(),
                runs: all.iter().map(|r| r.id).collect(),
                points,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
