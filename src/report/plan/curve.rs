//! A latency-throughput curve's points (`dbio curve`, or any stored
//! open-loop runs): each run's rate asked and achieved, whether it kept up,
//! and the latency of what its rate paces from the due time and from the
//! issue — a raw run's reads and writes together, the SLOB model's
//! operations, a server's transactions (`open_loop.operations`) — read
//! from the run document's fields. The terminal table here; the HTML chart
//! (the hockey stick) is `report/html/curve.rs`.

use crate::config::Paced;
use crate::document::{Latency, Report};
use crate::units::{fmt_count, fmt_latency_ns};

/// One run of a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    pub run_id: i64,
    /// What the point is: `max`, `50%`, a rate.
    pub label: String,
    /// What its rates count.
    pub unit: Paced,
    /// The rate asked (`--rate`); None for the closed-loop maximum.
    pub asked_per_s: Option<f64>,
    pub achieved_per_s: f64,
    /// Below 97% of what fell due; None for a closed loop.
    pub saturated: Option<bool>,
    /// What the rate paces, from its due time (open loop only).
    pub due: Option<Latency>,
    /// The same from its issue or start; None for a closed loop of
    /// operations or transactions (timed only when paced).
    pub service: Option<Latency>,
}

impl CurvePoint {
    /// The point of run `run_id` (document `r`), called `label`.
    pub fn of(run_id: i64, label: &str, r: &Report) -> CurvePoint {
        let ol = r.open_loop.as_ref();
        let unit = unit(r);
        let (due, service) = match (unit, ol.and_then(|o| o.operations.as_ref())) {
            (_, Some(ops)) => (Some(ops.due.clone()), Some(ops.service.clone())),
            (Paced::Requests, None) => (r.total.due.clone(), Some(r.total.latency.clone())),
            (Paced::Operations | Paced::Transactions, None) => (None, None),
        };
        CurvePoint {
            run_id,
            label: label.to_string(),
            unit,
            asked_per_s: ol.map(|o| o.asked_per_s),
            achieved_per_s: ol.map_or_else(|| closed_rate(r), |o| o.achieved_per_s),
            saturated: ol.map(|o| o.saturated),
            due,
            service,
        }
    }
}

/// What run `r`'s rate counts (`--rate`): requests for raw (and replay,
/// which takes none), operations for the model, transactions for a server.
pub fn unit(r: &Report) -> Paced {
    r.config.workload.paced().unwrap_or(Paced::Requests)
}

/// Run `r`'s throughput in its rate's unit per second, measured without a
/// rate: the requests (reads and writes), the model's executes or the
/// server's operations (a select, an update with its commit, a scan: what
/// one paced transaction is) over the window.
pub fn closed_rate(r: &Report) -> f64 {
    let secs = r.measured_s.max(1e-9);
    let count = match unit(r) {
        Paced::Requests => return r.total.iops,
        Paced::Operations => r.slob.as_ref().map(|s| s.counters.executes),
        Paced::Transactions => {
            r.pg.as_ref()
                .map(|p| p.ops.executes())
                .or_else(|| r.mysql.as_ref().map(|m| m.ops.executes()))
        }
    };
    count.unwrap_or(0) as f64 / secs
}

/// A point's label from its variable in the set: `050%` as `50%`, `0400/s`
/// as `400/s` (the store pads them so that they sort as numbers).
pub fn label(variable: &str) -> &str {
    let padded = variable.len() > 1
        && variable.starts_with('0')
        && (variable.ends_with('%') || variable.ends_with("/s"));
    if !padded {
        return variable;
    }
    let trimmed = variable.trim_start_matches('0');
    if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
        trimmed
    } else {
        &variable[variable.len() - trimmed.len() - 1..]
    }
}

/// A column of latency: its heading and its field.
pub type Percentile = (&'static str, fn(&Latency) -> f64);

/// The columns of latency each row shows.
pub const PERCENTILES: [Percentile; 3] = [
    ("p50", |l| l.p50_us),
    ("p99", |l| l.p99_us),
    ("p99.9", |l| l.p99_9_us),
];

/// The curve as an aligned terminal table, one row per point, in the
/// order given.
pub fn table(points: &[CurvePoint]) -> String {
    let mut header = vec![
        "point".to_string(),
        "run".into(),
        "asked/s".into(),
        "achieved/s".into(),
        "saturated".into(),
    ];
    for basis in ["due", "service"] {
        header.extend(PERCENTILES.iter().map(|(p, _)| format!("{basis} {p}")));
    }
    let mut rows = vec![header];
    let lat = |l: Option<&Latency>, f: fn(&Latency) -> f64| {
        l.map_or("-".to_string(), |l| fmt_latency_ns(f(l) * 1e3))
    };
    for p in points {
        let mut row = vec![
            p.label.clone(),
            p.run_id.to_string(),
            p.asked_per_s.map_or("-".into(), fmt_count),
            fmt_count(p.achieved_per_s),
            match p.saturated {
                None => "-".into(),
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
            },
        ];
        row.extend(PERCENTILES.iter().map(|(_, f)| lat(p.due.as_ref(), *f)));
        row.extend(PERCENTILES.iter().map(|(_, f)| lat(p.service.as_ref(), *f)));
        rows.push(row);
    }
    crate::grid::text(&rows, "lr")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lat(p50: f64) -> Latency {
        Latency {
            p50_us: p50,
            p99_us: 10.0 * p50,
            p99_9_us: 20.0 * p50,
            ..Default::default()
        }
    }

    #[test]
    fn padded_variables_read_as_numbers() {
        assert_eq!(label("050%"), "50%");
        assert_eq!(label("100%"), "100%");
        assert_eq!(label("0400/s"), "400/s");
        assert_eq!(label("00/s"), "0/s");
        assert_eq!(label("max"), "max");
        assert_eq!(label("0ld"), "0ld");
    }

    #[test]
    fn the_table_shows_asked_achieved_and_both_latencies() {
        let points = [
            CurvePoint {
                run_id: 7,
                label: "max".into(),
                unit: Paced::Requests,
                asked_per_s: None,
                achieved_per_s: 412.0,
                saturated: None,
                due: None,
                service: Some(lat(2000.0)),
            },
            CurvePoint {
                run_id: 8,
                label: "50%".into(),
                unit: Paced::Requests,
                asked_per_s: Some(206.0),
                achieved_per_s: 205.5,
                saturated: Some(false),
                due: Some(lat(300.0)),
                service: Some(lat(250.0)),
            },
        ];
        let t = table(&points);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert!(lines[0].starts_with("point  run  asked/s"), "{t}");
        assert!(lines[0].ends_with("service p99.9"), "{t}");
        let max: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(&max[..6], ["max", "7", "-", "412", "-", "-"], "{t}");
        assert_eq!(max.last(), Some(&"40.00ms"));
        let half: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(
            half,
            [
                "50%", "8", "206", "206", "no", "300.0us", "3.00ms", "6.00ms", "250.0us", "2.50ms",
                "5.00ms"
            ],
            "{t}"
        );
    }
}
