//! A replay's faithfulness as terminal text: the replay beside its capture
//! — requests by operation and size, the read/write mix, inter-arrival
//! times, issue-time error, achieved against captured rate, latency per
//! operation. (Its JSON is the core's `Faithfulness`, under `replay` in
//! the run document.)

use std::fmt::Write;

use crate::units::fmt_size;
use crate::workload::replay::faith::{Faithfulness, OpSide, Quantiles, SideSummary};

fn q(x: &Option<Quantiles>) -> String {
    match x {
        Some(q) => format!(
            "p50 {:.0} us, p99 {:.0} us, max {:.0} us",
            q.p50_us, q.p99_us, q.max_us
        ),
        None => "-".into(),
    }
}

fn op<'a>(s: &'a SideSummary, name: &str) -> Option<&'a OpSide> {
    s.ops.iter().find(|o| o.op == name)
}

fn sizes(o: Option<&OpSide>) -> String {
    let Some(o) = o else { return "-".into() };
    o.sizes
        .iter()
        .map(|s| {
            let pct = 100.0 * s.requests as f64 / o.requests.max(1) as f64;
            match pct < 1.0 {
                true => format!("≤{} <1%", fmt_size(s.up_to_bytes)),
                false => format!("≤{} {pct:.0}%", fmt_size(s.up_to_bytes)),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The faithfulness section under a replay's I/O table.
pub fn render(f: &Faithfulness) -> String {
    let mut o = String::new();
    counts(&mut o, f);
    timing(&mut o, f);
    latency(&mut o, f);
    sizes_and_discards(&mut o, f);
    o
}

/// The heading, then requests by operation, mean sizes, the read share,
/// span and rate side by side, and the rate achieved against the one asked.
fn counts(o: &mut String, f: &Faithfulness) {
    let (c, r) = (&f.captured, &f.replayed);
    let _ = writeln!(
        o,
        "\nreplay faithfulness (speed {}, offsets {})",
        f.speed,
        f.map.as_deref().unwrap_or("as captured")
    );
    let _ = writeln!(o, "{:<22}{:>22}{:>22}", "", "captured", "replayed");
    let mut line = |name: &str, a: String, b: String| {
        let _ = writeln!(o, "{name:<22}{a:>22}{b:>22}");
    };
    line("requests", c.requests.to_string(), r.requests.to_string());
    for name in ["read", "write", "flush", "discard"] {
        let (a, b) = (op(c, name), op(r, name));
        if a.is_none() && b.is_none() {
            continue;
        }
        let n = |x: Option<&OpSide>| x.map_or(0, |o| o.requests).to_string();
        let label = match name {
            "flush" => "flushes".to_string(),
            _ => format!("{name}s"),
        };
        line(&format!("  {label}"), n(a), n(b));
        if name == "read" || name == "write" {
            let m = |x: Option<&OpSide>| {
                x.map_or("-".into(), |o| format!("{:.0} B", o.mean_size_bytes))
            };
            line(&format!("  {name} mean size"), m(a), m(b));
        }
    }
    line(
        "read % (of r+w)",
        format!("{:.1}", c.read_pct),
        format!("{:.1}", r.read_pct),
    );
    line(
        "span",
        format!("{:.3} s", c.span_s),
        format!("{:.3} s", r.span_s),
    );
    line(
        "rate",
        format!("{:.0}/s", c.rate_per_s),
        format!("{:.0}/s", r.rate_per_s),
    );
    if let Some(e) = f.expected_rate_per_s {
        let _ = writeln!(
            o,
            "achieved {:.1}% of the rate asked ({:.0}/s)",
            100.0 * r.rate_per_s / e.max(f64::MIN_POSITIVE),
            e
        );
    }
}

/// Inter-arrival times per thread, and how late requests were issued.
fn timing(o: &mut String, f: &Faithfulness) {
    let (c, r) = (&f.captured, &f.replayed);
    let _ = writeln!(o, "inter-arrival per thread");
    let _ = writeln!(o, "  captured  {}", q(&c.inter_arrival));
    let _ = writeln!(o, "  replayed  {}", q(&r.inter_arrival));
    match &f.issue_error {
        Some(e) => {
            let _ = writeln!(
                o,
                "issue error (issue - due): p50 {:.1} us, p99 {:.1} us, max {:.1} us",
                e.p50_us, e.p99_us, e.max_us
            );
            if let (n @ 1.., Some(h)) = (f.waited_for_room, &f.issue_error_had_room) {
                let _ = writeln!(
                    o,
                    "  {n} waited for room in a full ring (the target fell behind, or --iodepth is below the trace's bursts); the others: p50 {:.1} us, p99 {:.1} us, max {:.1} us",
                    h.p50_us, h.p99_us, h.max_us
                );
            }
        }
        None => {
            let _ = writeln!(o, "issue error: none asked (--speed max)");
        }
    }
}

/// Latency per operation: captured, replayed, and from the due time.
fn latency(o: &mut String, f: &Faithfulness) {
    let (c, r) = (&f.captured, &f.replayed);
    let _ = writeln!(
        o,
        "latency (captured: the block layer's; replayed: dbio's, from issue)"
    );
    for name in ["read", "write", "flush"] {
        let (a, b) = (op(c, name), op(r, name));
        if a.is_none() && b.is_none() {
            continue;
        }
        let _ = writeln!(
            o,
            "  {name:<7} captured  {}",
            q(&a.and_then(|x| x.latency.clone()))
        );
        let _ = writeln!(
            o,
            "  {name:<7} replayed  {}",
            q(&b.and_then(|x| x.latency.clone()))
        );
        if let Some(d) = f.due_latency.iter().find(|d| d.op == name) {
            let _ = writeln!(o, "  {name:<7} from due  {}", q(&Some(d.latency.clone())));
        }
    }
}

/// Request sizes of reads and writes, and the discards not replayed.
fn sizes_and_discards(o: &mut String, f: &Faithfulness) {
    let (c, r) = (&f.captured, &f.replayed);
    for name in ["read", "write"] {
        let (a, b) = (op(c, name), op(r, name));
        if a.is_some() || b.is_some() {
            let _ = writeln!(o, "{name} sizes");
            let _ = writeln!(o, "  captured  {}", sizes(a));
            let _ = writeln!(o, "  replayed  {}", sizes(b));
        }
    }
    if f.skipped_discards > 0 {
        let _ = writeln!(
            o,
            "{} discards in the trace were not replayed",
            f.skipped_discards
        );
    }
}
