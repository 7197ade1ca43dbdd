//! The terminal lines of an open-loop run (`--rate`): the verdict, each
//! operation's latency from its due time under its service time (a raw
//! run's reads and writes; the model's operations, a server's
//! transactions), lateness, and a warning when the sessions bound the rate.

use std::fmt::Write as _;

use crate::document::open_loop::OpenLoop;
use crate::document::{Latency, Report};
use crate::units::fmt_latency_ns;

/// Appends the open-loop section of `r` to `o` (nothing for a closed loop).
pub fn section(o: &mut String, r: &Report) {
    let Some(ol) = &r.open_loop else {
        return;
    };
    let _ = writeln!(
        o,
        "\nopen loop  {} arrivals; {}",
        ol.arrival.name(),
        ol.verdict
    );
    let rows = [("read", &r.read), ("write", &r.write)];
    for (name, s) in rows {
        let Some(due) = s.as_ref().and_then(|s| s.due.as_ref()) else {
            continue;
        };
        let service = &s.as_ref().expect("a due time is an operation's").latency;
        row(o, &format!("{name} due"), due);
        row(o, &format!("{name} service"), service);
    }
    if let Some(p) = &ol.operations {
        let name = short(&p.unit);
        row(o, &format!("{name} due"), &p.due);
        row(o, &format!("{name} service"), &p.service);
    }
    lateness(o, ol);
    if let Some(b) = &ol.bound {
        let _ = writeln!(o, "warning: {b}");
    }
}

fn row(o: &mut String, name: &str, l: &Latency) {
    let us = |v: f64| fmt_latency_ns(v * 1e3);
    let _ = writeln!(
        o,
        "{name:<16} p50 {:>8}  p90 {:>8}  p99 {:>8}  p99.9 {:>8}  max {:>8}",
        us(l.p50_us),
        us(l.p90_us),
        us(l.p99_us),
        us(l.p99_9_us),
        us(l.max_us)
    );
}

/// A row's name for a paced unit ("operations" → "op").
fn short(unit: &str) -> &'static str {
    match unit {
        "transactions" => "txn",
        _ => "op",
    }
}

fn lateness(o: &mut String, ol: &OpenLoop) {
    let l = &ol.lateness;
    let us = |v: f64| fmt_latency_ns(v * 1e3);
    let (unit, issued) = match &ol.operations {
        Some(p) => (p.unit.as_str(), "started"),
        None => ("requests", "issued"),
    };
    let _ = writeln!(
        o,
        "lateness {} of {} {unit} ({:.1}%) {issued} more than {} after their due time; p50 {}, p99 {}, p99.9 {}, max {}",
        l.late,
        l.requests,
        l.late_pct,
        us(l.late_after_us),
        us(l.latency.p50_us),
        us(l.latency.p99_us),
        us(l.latency.p99_9_us),
        us(l.latency.max_us)
    );
    let _ = match &ol.operations {
        Some(p) => writeln!(
            o,
            "{0} due = latency from the time each of the {1} fell due (what a user of the storage waits); {0} service = from its start.",
            short(&p.unit),
            p.unit
        ),
        None => writeln!(
            o,
            "due = latency from the time a request fell due (what a user of the storage waits); service = from its issue."
        ),
    };
}
