//! The terminal lines of a steady-state run (`--steady-state`): the
//! verdict, the steady window's result (the run's result: the warm-up
//! before it left out), and every round with the band the range rule
//! allows around the last window's mean.

use std::fmt::Write as _;

use crate::document::Report;
use crate::document::steady::{preconditioned, value, verdict};
use crate::harness::rounds::{SteadyState, WindowOp};
use crate::units::{fmt_count, fmt_latency_ns};

/// Appends the steady-state section of `r` to `o` (nothing for other runs).
pub fn section(o: &mut String, r: &Report) {
    let Some(s) = &r.steady_state else {
        return;
    };
    if let Some(p) = &r.precondition {
        let _ = writeln!(o, "precondition  {}", preconditioned(p));
    }
    let _ = writeln!(o, "steady state  {}", verdict(s));
    if let Some(w) = &s.window {
        let what = if s.reached {
            "the result"
        } else {
            "the last window, not steady"
        };
        let _ = writeln!(
            o,
            "steady window rounds {}-{}, {} s to {} s after the start ({what}; per-second histograms, percentiles within 6%):",
            w.first_round, w.last_round, w.start_s, w.end_s
        );
        let _ = writeln!(
            o,
            "{:<7}{:>11}{:>10}{:>10} |{:>9}{:>9}{:>9}{:>9}",
            "", "requests", "IOPS", "MiB/s", "avg", "p50", "p99", "p99.9"
        );
        for (name, op) in [("read", &w.read), ("write", &w.write)] {
            if let Some(op) = op {
                window_row(o, name, op);
            }
        }
        if w.read.is_some() && w.write.is_some() {
            window_row(o, "total", &w.total);
        }
    }
    rounds(o, s);
    let _ = writeln!(
        o,
        "The table below covers the whole measured time after the ramp, the rounds before the steady window included.\n"
    );
}

fn window_row(o: &mut String, name: &str, op: &WindowOp) {
    let us = |v: f64| fmt_latency_ns(v * 1e3);
    let _ = writeln!(
        o,
        "{name:<7}{:>11}{:>10}{:>10.1} |{:>9}{:>9}{:>9}{:>9}",
        op.requests,
        fmt_count(op.iops),
        op.mib_per_s,
        us(op.mean_us),
        us(op.p50_us),
        us(op.p99_us),
        us(op.p99_9_us)
    );
}

/// Every round, marked `*` inside the last window judged, and the band.
fn rounds(o: &mut String, s: &SteadyState) {
    let m = s.rules.metric;
    let first = s.window.as_ref().map_or(u32::MAX, |w| w.first_round);
    let _ = writeln!(
        o,
        "rounds of {} s judged on {} ({}):",
        s.rules.round_s,
        m.name(),
        m.unit()
    );
    let _ = writeln!(
        o,
        "{:>7}{:>9}{:>10}{:>10}{:>10}{:>12}",
        "round", "start", "IOPS", "MiB/s", "p99", "value"
    );
    for r in &s.rounds {
        let mark = if r.round >= first { "*" } else { " " };
        let _ = writeln!(
            o,
            "{mark}{:>6}{:>8}s{:>10}{:>10.1}{:>10}{:>12}",
            r.round,
            r.start_s,
            fmt_count(r.iops),
            r.mib_per_s,
            fmt_latency_ns(r.p99_us * 1e3),
            value(m, r.value)
        );
    }
    if let Some(j) = &s.judged {
        let _ = writeln!(
            o,
            "band     {} .. {} {} (the last window's mean {} ± half its {}% range rule; * = that window)",
            value(m, j.band_low),
            value(m, j.band_high),
            m.unit(),
            value(m, j.mean),
            s.rules.range_pct
        );
    }
}
