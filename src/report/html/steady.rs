//! A steady-state run's part of its page (`--steady-state`): the verdict in
//! words, the rounds charted with the band the range rule allows around
//! the last window's mean and that window shaded, and the steady window's
//! result as a table. Nothing for other runs.

use super::page::{figure, table, td};
use crate::chart::escape;
use crate::chart::palette::{Dash, Marker, color};
use crate::chart::xy::{Axis, Band, Series, XyChart};
use crate::document::Report;
use crate::document::steady::{preconditioned, value, verdict};
use crate::harness::rounds::{SteadyState, WindowOp};
use crate::units::{fmt_count, fmt_latency_ns};

/// The section's HTML, or an empty string for a run without steady state.
pub fn section(report: Option<&Report>) -> String {
    let Some((r, s)) = report.and_then(|r| r.steady_state.as_ref().map(|s| (r, s))) else {
        return String::new();
    };
    let mut o = String::new();
    if let Some(p) = &r.precondition {
        o += &format!(
            "<p class=\"note\">Preconditioned: {}.</p>\n",
            escape(&preconditioned(p))
        );
    }
    o += &format!(
        "<p class=\"note\" id=\"steady-verdict\">Steady state: {}.</p>\n",
        escape(&verdict(s))
    );
    if let Some(c) = chart(s) {
        o += &format!(
            "<div class=\"charts\">{}</div>\n",
            figure(
                &c.render(),
                "Each round's value at its end; the dashed lines are the band the range rule allows around the last window's mean, the shaded range that window (the steady one when steady state was reached)."
            )
        );
    }
    if let Some(w) = &s.window {
        let header = [
            "", "requests", "IOPS", "MiB/s", "avg", "p50", "p99", "p99.9",
        ]
        .map(String::from)
        .to_vec();
        let mut rows = Vec::new();
        for (name, op) in [("read", &w.read), ("write", &w.write)] {
            if let Some(op) = op {
                rows.push(row(name, op));
            }
        }
        if w.read.is_some() && w.write.is_some() {
            rows.push(row("total", &w.total));
        }
        o += &format!(
            "<p class=\"note\">{} window, rounds {}–{} ({} s to {} s after the start), from the per-second series (percentiles within 6%); the summary above covers the whole time measured after the ramp.</p>\n",
            if s.reached {
                "The steady"
            } else {
                "The last (not steady)"
            },
            w.first_round,
            w.last_round,
            w.start_s,
            w.end_s
        );
        o += &table("steady-window", &header, &rows);
    }
    o
}

fn row(name: &str, op: &WindowOp) -> Vec<String> {
    let num = |s: String| format!("<td class=\"num\">{}</td>", escape(&s));
    let us = |v: f64| num(fmt_latency_ns(v * 1e3));
    vec![
        td(name),
        num(op.requests.to_string()),
        num(fmt_count(op.iops)),
        num(format!("{:.1}", op.mib_per_s)),
        us(op.mean_us),
        us(op.p50_us),
        us(op.p99_us),
        us(op.p99_9_us),
    ]
}

/// The rounds over time, the band and the window (None: no round ended).
fn chart(s: &SteadyState) -> Option<XyChart> {
    let m = s.rules.metric;
    let mut c = XyChart::new(
        &format!("Steady state: rounds of {} s", s.rules.round_s),
        Axis::linear("seconds since start"),
        Axis::linear(&format!("{} ({})", m.name(), m.unit())).from_zero(),
    );
    let mut rounds = Series::new("round", color(0));
    for r in &s.rounds {
        rounds.points.push((f64::from(r.end_s), r.value));
        rounds.tips.push(format!(
            "round {}: {} {}",
            r.round,
            value(m, r.value),
            m.unit()
        ));
    }
    c.series.push(rounds);
    if let (Some(j), Some(w)) = (&s.judged, &s.window) {
        let (x0, x1) = (f64::from(w.start_s), f64::from(w.end_s));
        for (name, y, legend) in [("band", j.band_high, true), ("band low", j.band_low, false)] {
            let mut b = Series::new(name, color(1));
            b.dash = Dash::Dashed;
            b.marker = Marker::None;
            b.legend = legend;
            b.points = vec![(x0, y), (x1, y)];
            c.series.push(b);
        }
        c.bands.push(Band {
            x0,
            x1,
            label: if s.reached { "steady" } else { "last window" }.into(),
        });
    }
    c.has_data().then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::steady::fed as state;

    #[test]
    fn the_chart_has_every_round_the_band_and_the_window() {
        let s = state(&[800, 400, 400, 400]);
        let c = chart(&s).expect("a chart");
        assert_eq!(c.series[0].points.len(), 4);
        let j = s.judged.unwrap();
        assert_eq!(
            c.series[1].points,
            vec![(1.0, j.band_high), (4.0, j.band_high)]
        );
        assert_eq!(
            c.series[2].points,
            vec![(1.0, j.band_low), (4.0, j.band_low)]
        );
        assert_eq!((c.bands[0].x0, c.bands[0].x1), (1.0, 4.0));
        assert_eq!(c.bands[0].label, "steady");
        let svg = c.render();
        assert!(svg.contains("stroke-dasharray"), "the band is dashed");
    }
}
