//! The hockey stick: latency against achieved throughput for a selection
//! with open-loop runs (`dbio curve`, or runs made with `--rate`). Each
//! run is a point at its achieved rate; p50, p99 and p99.9 of what the
//! rate paces (reads and writes together, the model's operations, a
//! server's transactions) from the due time (what a user waits) and from the
//! issue (service), on a log scale, so the knee where the due-time lines
//! leave the service lines shows where the storage stops keeping up. The
//! closed-loop maximum is a vertical line. Points and the table under the
//! chart come from `report::plan::curve`.

use super::page::{table, td};
use crate::chart::scale::{linear_ticks, value_label};
use crate::chart::{Axis, Dash, Marker, Series, VLine, XyChart, escape};
use crate::config::Paced;
use crate::document::Latency;
use crate::report::plan::curve::{CurvePoint, PERCENTILES};
use crate::units::{fmt_count, fmt_latency_ns};

/// Due-time lines and service lines: a colour each.
const DUE: &str = "#D55E00";
const SERVICE: &str = "#0072B2";

/// The chart of `points` (open-loop points sorted by achieved rate; the
/// closed-loop maximum as a vertical line).
pub fn chart(points: &[CurvePoint]) -> XyChart {
    // Room right of the closed-loop maximum for its line's label.
    let widest = points.iter().map(|p| p.achieved_per_s).fold(0.0, f64::max);
    let (_, _, ticks) = linear_ticks(0.0, widest * 1.12, 6);
    let mut open: Vec<&CurvePoint> = points.iter().filter(|p| p.asked_per_s.is_some()).collect();
    let (title, unit) = titles(&open);
    let mut c = XyChart::new(
        &format!("Latency against throughput ({title})"),
        Axis::linear(&format!("achieved {unit}/s"))
            .from_zero()
            .with_ticks(ticks),
        Axis::log("ms (log scale)"),
    );
    open.sort_by(|a, b| a.achieved_per_s.total_cmp(&b.achieved_per_s));
    let dashes = [Dash::Solid, Dash::Dashed, Dash::Dotted];
    for (basis, color, lat) in [
        (
            "due time",
            DUE,
            (|p: &CurvePoint| p.due.clone()) as fn(&CurvePoint) -> Option<Latency>,
        ),
        ("service", SERVICE, |p: &CurvePoint| p.service.clone()),
    ] {
        for ((name, field), dash) in PERCENTILES.iter().zip(dashes) {
            let mut s = Series::new(&format!("{basis} {name}"), color);
            s.dash = dash;
            s.marker = if basis == "service" {
                Marker::Square
            } else {
                Marker::Circle
            };
            for p in &open {
                let Some(l) = lat(p) else { continue };
                let ms = field(&l) / 1e3;
                s.points.push((p.achieved_per_s, ms));
                s.tips.push(format!(
                    "{} (run {}): asked {}/s, achieved {}/s{}; {basis} {name} {} ms",
                    p.label,
                    p.run_id,
                    fmt_count(p.asked_per_s.unwrap_or_default()),
                    fmt_count(p.achieved_per_s),
                    if p.saturated == Some(true) {
                        ", saturated"
                    } else {
                        ""
                    },
                    value_label(ms)
                ));
            }
            if !s.points.is_empty() {
                c.series.push(s);
            }
        }
    }
    for p in points.iter().filter(|p| p.asked_per_s.is_none()) {
        c.vlines.push(VLine {
            x: p.achieved_per_s,
            label: format!("{} {}/s", p.label, fmt_count(p.achieved_per_s)),
            color: "#000000",
        });
    }
    c
}

/// The chart's title and the x axis's unit: what the open-loop `points`
/// paced, when they all paced the same.
fn titles(open: &[&CurvePoint]) -> (&'static str, &'static str) {
    let Some(first) = open.first() else {
        return ("reads and writes together", "requests");
    };
    if open.iter().any(|p| p.unit != first.unit) {
        return ("what each run paced", "paced units");
    }
    match first.unit {
        Paced::Requests => ("reads and writes together", "requests"),
        Paced::Operations => ("the model's operations", "operations"),
        Paced::Transactions => ("transactions", "transactions"),
    }
}

/// The points as a table under the chart: asked, achieved, saturated and
/// both latencies' percentiles.
pub fn points_table(points: &[CurvePoint]) -> String {
    let mut header: Vec<String> = ["point", "run", "asked/s", "achieved/s", "saturated"]
        .map(String::from)
        .to_vec();
    for basis in ["due", "service"] {
        header.extend(PERCENTILES.iter().map(|(p, _)| format!("{basis} {p}")));
    }
    let num = |s: String| format!("<td class=\"num\">{}</td>", escape(&s));
    let lat = |l: Option<&Latency>, f: fn(&Latency) -> f64| {
        num(l.map_or("-".into(), |l| fmt_latency_ns(f(l) * 1e3)))
    };
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row = vec![
                td(&p.label),
                num(p.run_id.to_string()),
                num(p.asked_per_s.map_or("-".into(), fmt_count)),
                num(fmt_count(p.achieved_per_s)),
                td(match p.saturated {
                    None => "-",
                    Some(true) => "yes",
                    Some(false) => "no",
                }),
            ];
            row.extend(PERCENTILES.iter().map(|(_, f)| lat(p.due.as_ref(), *f)));
            row.extend(PERCENTILES.iter().map(|(_, f)| lat(p.service.as_ref(), *f)));
            row
        })
        .collect();
    table("curve", &header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(id: i64, label: &str, asked: Option<f64>, achieved: f64, due: f64) -> CurvePoint {
        let lat = |p50: f64| Latency {
            p50_us: p50,
            p99_us: 4.0 * p50,
            p99_9_us: 8.0 * p50,
            ..Default::default()
        };
        CurvePoint {
            run_id: id,
            label: label.into(),
            unit: Paced::Requests,
            asked_per_s: asked,
            achieved_per_s: achieved,
            saturated: asked.map(|a| achieved < 0.97 * a),
            due: asked.map(|_| lat(due)),
            service: Some(lat(500.0)),
        }
    }

    #[test]
    fn the_chart_has_due_and_service_lines_in_throughput_order_and_the_maximum() {
        let points = [
            point(1, "max", None, 410.0, 0.0),
            point(3, "100%", Some(410.0), 380.0, 90_000.0),
            point(2, "50%", Some(205.0), 205.0, 600.0),
        ];
        let c = chart(&points);
        let names: Vec<&str> = c.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "due time p50",
                "due time p99",
                "due time p99.9",
                "service p50",
                "service p99",
                "service p99.9"
            ]
        );
        // Sorted by achieved rate; ms on the y axis.
        assert_eq!(c.series[0].points, [(205.0, 0.6), (380.0, 90.0)]);
        assert_eq!(c.series[4].points, [(205.0, 2.0), (380.0, 2.0)]);
        assert!(
            c.series[0].tips[1].contains("saturated"),
            "{:?}",
            c.series[0].tips
        );
        assert_eq!(c.vlines.len(), 1);
        assert_eq!(c.vlines[0].x, 410.0);
        let svg = c.render();
        assert!(svg.contains("due time p99"), "{svg}");
        let t = points_table(&points);
        assert!(t.contains("<td>100%</td>") && t.contains("90.00ms"), "{t}");
    }
}
