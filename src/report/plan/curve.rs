//! A latency-throughput curve's points (`dbio curve`, or any stored
//! open-loop runs): each run's rate asked and achieved, whether it kept up,
//! and its latency of reads and writes together from the due time and from
//! the issue — read from the run document's fields. The terminal table
//! here; the HTML chart (the hockey stick) is `report/html/curve.rs`.

use crate::document::{Latency, Report};
use crate::units::{fmt_count, fmt_latency_ns};

/// One run of a curve.
#[derive(Clone, Debug, PartialEq)]
pub struct CurvePoint {
    pub run_id: i64,
    /// What the point is: `max`, `50%`, a rate.
    pub label: String,
    /// The rate asked (`--rate`); None for the closed-loop maximum.
    pub asked_per_s: Option<f64>,
    pub achieved_per_s: f64,
    /// Below 97% of what fell due; None for a closed loop.
    pub saturated: Option<bool>,
    /// Reads and writes together from their due time (open loop only).
    pub due: Option<Latency>,
    /// Reads and writes together from their issue.
    pub service: Latency,
}

impl CurvePoint {
    /// The point of run `run_id` (document `r`), called `label`.
    pub fn of(run_id: i64, label: &str, r: &Report) -> CurvePoint {
        let ol = r.open_loop.as_ref();
        CurvePoint {
            run_id,
            label: label.to_string(),
            asked_per_s: ol.map(|o| o.asked_per_s),
            achieved_per_s: ol.map_or(r.total.iops, |o| o.achieved_per_s),
            saturated: ol.map(|o| o.saturated),
            due: r.total.due.clone(),
            service: r.total.latency.clone(),
        }
    }
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
        row.extend(PERCENTILES.iter().map(|(_, f)| lat(Some(&p.service), *f)));
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
                asked_per_s: None,
                achieved_per_s: 412.0,
                saturated: None,
                due: None,
                service: lat(2000.0),
            },
            CurvePoint {
                run_id: 8,
                label: "50%".into(),
                asked_per_s: Some(206.0),
                achieved_per_s: 205.5,
                saturated: Some(false),
                due: Some(lat(300.0)),
                service: lat(250.0),
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
