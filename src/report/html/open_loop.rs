//! An open-loop run's part of its page (`--rate`): the verdict in words,
//! each operation's latency from its due time beside its service time (a
//! raw run's reads and writes; the model's operations, a server's
//! transactions), how late they were started, and the warning when the
//! sessions bound the rate. Nothing for a closed-loop run.

use super::page::{table, td};
use crate::chart::escape;
use crate::document::{Latency, Report};
use crate::units::fmt_latency_ns;

/// The section's HTML, or an empty string for a closed-loop run (or a
/// document that did not read).
pub fn section(report: Option<&Report>) -> String {
    let Some((r, ol)) = report.and_then(|r| r.open_loop.as_ref().map(|ol| (r, ol))) else {
        return String::new();
    };
    let mut o = format!(
        "<p class=\"note\">Open loop, {} arrivals: {}.</p>\n",
        ol.arrival.name(),
        escape(&ol.verdict)
    );
    // The run's percentile columns from p50 on.
    let columns = &super::run_summary::LATENCY[2..];
    let mut header = vec!["latency".to_string()];
    header.extend(columns.iter().map(|(h, _)| h.to_string()));
    let row = |name: &str, l: &Latency| {
        let mut cells = vec![td(name)];
        for (_, field) in columns {
            let s = fmt_latency_ns(field(l) * 1e3);
            cells.push(format!("<td class=\"num\">{}</td>", escape(&s)));
        }
        cells
    };
    let mut rows = Vec::new();
    for (kind, op) in [("read", &r.read), ("write", &r.write)] {
        if let Some((op, due)) = op.as_ref().and_then(|op| op.due.as_ref().map(|d| (op, d))) {
            rows.push(row(&format!("{kind} from due time"), due));
            rows.push(row(&format!("{kind} service"), &op.latency));
        }
    }
    if let Some(p) = &ol.operations {
        rows.push(row(&format!("{} from due time", p.unit), &p.due));
        rows.push(row(&format!("{} service", p.unit), &p.service));
    }
    let late = &ol.lateness;
    let (unit, issued, from, label) = match &ol.operations {
        Some(p) => (p.unit.as_str(), "started", "its start", "start lateness"),
        None => ("requests", "issued", "the issue", "issue lateness"),
    };
    rows.push(row(label, &late.latency));
    o += &table("pct", &header, &rows);
    o += &format!(
        "<p class=\"note\">{} of {} {} ({:.1}%) were {issued} more than {} after their due time. From the due time = what a user of the storage waits; service = from {from}.</p>\n",
        late.late,
        late.requests,
        escape(unit),
        late.late_pct,
        fmt_latency_ns(late.late_after_us * 1e3)
    );
    if let Some(b) = &ol.bound {
        o += &format!("<p class=\"note\">Warning: {}.</p>\n", escape(b));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arrival;
    use crate::document::open_loop::{Lateness, OpenLoop};

    #[test]
    fn an_open_loop_run_shows_due_and_service_side_by_side() {
        let lat = |p50: f64| Latency {
            min_us: p50,
            mean_us: p50,
            p50_us: p50,
            p90_us: p50,
            p99_us: p50,
            p99_9_us: p50,
            p99_99_us: p50,
            max_us: p50,
        };
        let mut report = crate::report::run::tests::sample();
        let closed = section(Some(&report));
        let read = report.read.as_mut().expect("the sample reads");
        read.latency = lat(100.0);
        read.due = Some(lat(2500.0));
        report.write = None;
        report.open_loop = Some(OpenLoop {
            arrival: Arrival::Poisson,
            asked_per_s: 800.0,
            due_per_s: 800.0,
            achieved_per_s: 419.0,
            saturated: true,
            verdict: "asked 800/s, achieved 419/s: saturated".into(),
            lateness: Lateness {
                late_after_us: 10.0,
                requests: 10,
                late: 5,
                late_pct: 50.0,
                latency: lat(2400.0),
            },
            bound: Some("4 psync sessions <busy>".into()),
            operations: None,
        });
        let h = section(Some(&report));
        assert!(h.contains("asked 800/s, achieved 419/s: saturated"), "{h}");
        assert!(
            h.contains("read from due time") && h.contains("2.50ms"),
            "{h}"
        );
        assert!(h.contains("read service") && h.contains("100.0us"), "{h}");
        assert!(h.contains("5 of 10 requests (50.0%)"), "{h}");
        assert!(h.contains("&lt;busy&gt;"), "escaped: {h}");
        assert_eq!(closed, "");
        assert_eq!(section(None), "");
    }
}
