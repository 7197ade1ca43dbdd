//! The report's charts over a selection of runs: the metric over sessions
//! per variable (IObench style: the SLOB.R value with the 95% CI the
//! table shows as a whisker and every run as a dot, variables dodged apart),
//! latency percentiles over sessions, bars relative to a baseline, and the
//! scaling view (peak, knee, collapse, the USL fit drawn over the points).

use super::data::{LatencyCell, ReportData, RunValue};
use crate::analysis;
use crate::chart::scale::value_label;
use crate::chart::{
    Axis, BarChart, BarSeries, Dash, Marker, Note, ScaleKind, Series, VLine, XyChart, color,
};
use crate::report::plan::stats::{self, ScalingFit, values};
pub use crate::report::plan::stats::{Cells, cells, is_throughput};

/// The distinct session counts, sorted.
fn session_counts(runs: &[RunValue]) -> Vec<u32> {
    let mut s: Vec<u32> = runs.iter().map(|r| r.sessions).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// A sessions axis with a tick at every count measured; logarithmic when
/// the counts span 8x or more (1, 4, 16, 64 evenly spaced, as IObench).
fn sessions_axis(counts: &[u32]) -> Axis {
    let ticks: Vec<f64> = counts.iter().map(|&s| s as f64).collect();
    let (lo, hi) = (
        counts.first().copied().unwrap_or(1),
        counts.last().copied().unwrap_or(1),
    );
    let axis = if lo >= 1 && hi >= 8 * lo {
        Axis::log("sessions")
    } else {
        Axis::linear("sessions")
    };
    axis.with_ticks(ticks)
}

/// A percentile's name, line style and value in a cell.
type Percentile = (&'static str, Dash, fn(&LatencyCell) -> f64);

/// Pixels between the dodged positions of variables at one session count.
const DODGE_PX: f64 = 9.0;

/// The metric over sessions: one line per variable through the SLOB.R
/// values, a whisker for each cell's 95% CI (the table's: Student t, or the
/// bootstrap for a skewed cell) and a dot per run; variables dodged apart
/// so whiskers at the same session count do not overlap.
pub fn metric_vs_sessions(data: &ReportData) -> XyChart {
    let counts = session_counts(&data.runs);
    let y = Axis::linear(&data.metric);
    let y = if data.runs.iter().all(|r| r.value >= 0.0) {
        y.from_zero()
    } else {
        y
    };
    let mut c = XyChart::new(
        &format!("{} vs sessions", data.metric),
        sessions_axis(&counts),
        y,
    );
    let by_var = cells(&data.runs);
    let k = by_var.len() as f64;
    let mut dots = Vec::new();
    for (i, (var, by_s)) in by_var.iter().enumerate() {
        let offset = (i as f64 - (k - 1.0) / 2.0) * DODGE_PX;
        let mut s = Series::new(var, color(i));
        s.dash = Dash::nth(i / 8);
        s.marker = Marker::nth(i);
        s.offset_px = offset;
        let mut runs = Series::new(&format!("{var} runs"), color(i));
        runs.line = false;
        runs.legend = false;
        runs.marker = Marker::Circle;
        runs.radius = 2.2;
        runs.offset_px = offset;
        for (&n, rs) in by_s {
            let Some(cell) = stats::cell_stats(var, Some(n), rs) else {
                continue;
            };
            s.points.push((n as f64, cell.value));
            let ci = cell.ci95.as_ref().map_or(String::new(), |ci| {
                format!(
                    ", 95% CI {} – {}",
                    value_label(ci.low),
                    value_label(ci.high)
                )
            });
            s.tips.push(format!(
                "{var}, {n} sessions: {} {} ({}, n = {}{ci})",
                value_label(cell.value),
                data.metric,
                if cell.trimmed {
                    "SLOB.R trimmed mean"
                } else {
                    "plain mean"
                },
                cell.n,
            ));
            if let Some(ci) = &cell.ci95 {
                s.whiskers.push((n as f64, ci.low, ci.high));
            }
            for r in rs {
                runs.points.push((n as f64, r.value));
                runs.tips
                    .push(format!("run {}: {}", r.id, value_label(r.value)));
            }
        }
        c.series.push(s);
        dots.push(runs);
    }
    // The dots under the lines and whiskers.
    dots.append(&mut c.series);
    c.series = dots;
    c
}

/// Latency percentiles over sessions, one chart per kind (read, write,
/// sync): colour = variable, line style = percentile, log scale.
pub fn latency_vs_sessions(data: &ReportData) -> Vec<XyChart> {
    let counts = session_counts(&data.runs);
    let variables: Vec<&str> = cells(&data.runs).keys().copied().collect();
    let mut out = Vec::new();
    for kind in ["read", "write", "sync"] {
        let of_kind: Vec<&LatencyCell> = data.latency.iter().filter(|c| c.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let mut c = XyChart::new(
            &format!("{kind} latency percentiles vs sessions"),
            sessions_axis(&counts),
            Axis::log("ms (log scale)"),
        );
        for (i, var) in variables.iter().enumerate() {
            let cells: Vec<&&LatencyCell> = of_kind.iter().filter(|c| c.variable == *var).collect();
            if cells.is_empty() {
                continue;
            }
            let pcts: [Percentile; 3] = [
                ("p50", Dash::Solid, |c| c.p50_ms),
                ("p99", Dash::Dashed, |c| c.p99_ms),
                ("p99.9", Dash::Dotted, |c| c.p999_ms),
            ];
            for (name, dash, f) in pcts {
                let mut s = Series::new(&format!("{var} {name}"), color(i));
                s.dash = dash;
                s.marker = Marker::nth(i);
                for cell in &cells {
                    s.points.push((cell.sessions as f64, f(cell)));
                    s.tips.push(format!(
                        "{var}, {} sessions: {kind} {name} {} ms ({} I/Os over {} runs, histograms merged)",
                        cell.sessions,
                        value_label(f(cell)),
                        cell.ios,
                        cell.runs
                    ));
                }
                c.series.push(s);
            }
        }
        out.push(c);
    }
    out
}

/// Each variable's cells divided by the baseline's, per session count and
/// Overall (SLOB.R trimmed means on both sides).
pub fn relative_bars(data: &ReportData, baseline: &str) -> BarChart {
    let counts = session_counts(&data.runs);
    let mut groups: Vec<String> = counts.iter().map(|s| s.to_string()).collect();
    groups.push("Overall".into());
    let cells = cells(&data.runs);
    let cell_value = |var: &str, n: Option<u32>| -> Option<f64> {
        let by_s = cells.get(var)?;
        let vals: Vec<f64> = match n {
            Some(n) => values(by_s.get(&n)?),
            None => by_s.values().flat_map(|rs| values(rs)).collect(),
        };
        analysis::summarize(&vals).map(|s| s.value)
    };
    let mut c = BarChart::new(
        &format!("{} relative to {baseline}", data.metric),
        "sessions",
        &format!("× {baseline}"),
        groups,
    );
    c.reference = Some((1.0, format!("{baseline} = 1")));
    c.value_suffix = "×".into();
    for (i, var) in cells.keys().enumerate() {
        let mut s = BarSeries {
            name: var.to_string(),
            color: color(i),
            values: Vec::new(),
            tips: Vec::new(),
        };
        for n in counts.iter().map(|&n| Some(n)).chain([None]) {
            let v = cell_value(var, n)
                .zip(cell_value(baseline, n))
                .and_then(|(a, b)| analysis::ratio(a, b));
            let at = n.map_or("Overall".to_string(), |n| format!("{n} sessions"));
            s.tips.push(match v {
                Some(v) => format!("{var} / {baseline}, {at}: {v:.3}"),
                None => format!("{var} / {baseline}, {at}: no value"),
            });
            s.values.push(v);
        }
        c.series.push(s);
    }
    c
}

/// Scaling of one variable.
#[derive(Clone, Debug)]
pub struct Scaling {
    pub fit: ScalingFit,
    pub chart: XyChart,
}

/// Peak, knee, collapse and the USL fit per variable, each drawn over the
/// variable's runs.
pub fn scaling(data: &ReportData) -> Vec<Scaling> {
    let counts = session_counts(&data.runs);
    stats::scaling(&data.runs)
        .into_iter()
        .enumerate()
        .map(|(i, fit)| {
            let var = &fit.variable;
            let mut c = XyChart::new(
                &format!("{var}: scaling of {}", data.metric),
                sessions_axis(&counts),
                Axis::linear(&data.metric).from_zero(),
            );
            let mut runs = Series::new(&format!("{var} runs"), color(i));
            runs.line = false;
            runs.marker = Marker::nth(i);
            runs.tips = fit
                .runs
                .iter()
                .zip(&fit.points)
                .map(|(id, (n, x))| format!("run {id}: {n} sessions, {}", value_label(*x)))
                .collect();
            runs.points = fit.points.clone();
            c.series.push(runs);
            if let Some(usl) = &fit.usl {
                let hi = counts.last().copied().unwrap_or(1) as f64;
                let lo = counts.first().copied().unwrap_or(1).max(1) as f64;
                let log = c.x.kind == ScaleKind::Log;
                let mut curve = Series::new(&format!("USL fit (R² {:.3})", usl.r2), "#000000");
                curve.dash = Dash::Dashed;
                curve.marker = Marker::None;
                curve.points = (0..=120)
                    .map(|k| {
                        let f = k as f64 / 120.0;
                        let n = if log {
                            lo * (hi / lo).powf(f)
                        } else {
                            lo + (hi - lo) * f
                        };
                        (n, analysis::usl(usl, n))
                    })
                    .collect();
                c.series.push(curve);
                if let Some(pn) = usl.peak_n.filter(|&p| p >= lo && p <= hi) {
                    c.vlines.push(VLine {
                        x: pn,
                        label: format!("USL peak N≈{pn:.1}"),
                        color: "#000000",
                    });
                }
            }
            if let Some(k) = fit.knee {
                c.vlines.push(VLine {
                    x: k,
                    label: format!("knee {k}"),
                    color: "#555555",
                });
            }
            if let Some(p) = fit.peak {
                c.notes.push(Note {
                    x: p.sessions,
                    y: p.throughput,
                    text: format!("peak {}", value_label(p.throughput)),
                    color: color(i),
                });
            }
            if let Some(col) = fit.collapse.filter(|c| c.flagged()) {
                c.notes.push(Note {
                    x: col.at_sessions,
                    y: col.to,
                    text: format!("collapse −{:.0}%", col.drop_pct),
                    color: "#D55E00",
                });
            }
            Scaling { fit, chart: c }
        })
        .collect()
}
