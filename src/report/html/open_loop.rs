//! An open-loop run's part of its page (`--rate`): the verdict in words,
//! each operation's latency from its due time beside its service time, how
//! late requests were issued, and the warning when the sessions bound the
//! rate. Nothing for a closed-loop run.

use serde_json::Value;

use super::page::{table, td};
use crate::chart::escape;
use crate::units::fmt_latency_ns;

/// Percentiles shown: the run's table's from p50 on (report field, heading).
const COLUMNS: &[(&str, &str)] = super::run_summary::LATENCY.split_at(2).1;

/// The section's HTML, or an empty string for a closed-loop run.
pub fn section(report: &Value) -> String {
    let Some(ol) = report.get("open_loop").filter(|v| v.is_object()) else {
        return String::new();
    };
    let text = |k: &str| ol.get(k).and_then(Value::as_str).unwrap_or("");
    let mut o = format!(
        "<p class=\"note\">Open loop, {} arrivals: {}.</p>\n",
        escape(text("arrival")),
        escape(text("verdict"))
    );
    let mut header = vec!["latency".to_string()];
    header.extend(COLUMNS.iter().map(|(_, h)| h.to_string()));
    let mut rows = Vec::new();
    for kind in ["read", "write"] {
        let Some(v) = report.get(kind).filter(|v| v.get("due").is_some()) else {
            continue;
        };
        rows.push(row(&format!("{kind} from due time"), &v["due"]));
        rows.push(row(&format!("{kind} service"), &v["latency"]));
    }
    rows.push(row("issue lateness", &ol["lateness"]["latency"]));
    o += &table("pct", &header, &rows);
    let late = &ol["lateness"];
    o += &format!(
        "<p class=\"note\">{} of {} requests ({:.1}%) were issued more than {} after their due time. From the due time = what a user of the storage waits; service = from the issue.</p>\n",
        late["late"].as_u64().unwrap_or(0),
        late["requests"].as_u64().unwrap_or(0),
        late["late_pct"].as_f64().unwrap_or(0.0),
        fmt_latency_ns(late["late_after_us"].as_f64().unwrap_or(0.0) * 1e3)
    );
    if let Some(b) = ol.get("bound").and_then(Value::as_str) {
        o += &format!("<p class=\"note\">Warning: {}.</p>\n", escape(b));
    }
    o
}

fn row(name: &str, l: &Value) -> Vec<String> {
    let mut r = vec![td(name)];
    for &(field, _) in COLUMNS {
        let v = l.get(field).and_then(Value::as_f64);
        let s = v.map_or_else(|| "-".into(), |us| fmt_latency_ns(us * 1e3));
        r.push(format!("<td class=\"num\">{}</td>", escape(&s)));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_loop_run_shows_due_and_service_side_by_side() {
        let lat = |p50: f64| serde_json::json!({"p50_us": p50, "p90_us": p50, "p99_us": p50, "p99_9_us": p50, "p99_99_us": p50, "max_us": p50});
        let report = serde_json::json!({
            "read": {"latency": lat(100.0), "due": lat(2500.0)},
            "open_loop": {
                "arrival": "poisson",
                "verdict": "asked 800/s, achieved 419/s: saturated",
                "lateness": {"late": 5, "requests": 10, "late_pct": 50.0, "late_after_us": 10.0, "latency": lat(2400.0)},
                "bound": "4 psync sessions <busy>"
            }
        });
        let h = section(&report);
        assert!(h.contains("asked 800/s, achieved 419/s: saturated"), "{h}");
        assert!(
            h.contains("read from due time") && h.contains("2.50ms"),
            "{h}"
        );
        assert!(h.contains("read service") && h.contains("100.0us"), "{h}");
        assert!(h.contains("5 of 10 requests (50.0%)"), "{h}");
        assert!(h.contains("&lt;busy&gt;"), "escaped: {h}");
        assert_eq!(
            section(&serde_json::json!({"read": {"latency": lat(1.0)}})),
            ""
        );
    }
}
