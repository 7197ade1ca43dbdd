//! The text `dbio runs show` prints for an imported fio run: where it came
//! from, its settings, and per direction requests, IOPS, MiB/s and latency
//! (µs) as fio measured them.

use std::fmt::Write;

use serde_json::Value;

use super::fio::{DIRECTIONS, Entry, FioOutput};
use super::fio_agg::{Agg, WithSync};

fn pct(a: &Agg, p: f64) -> String {
    a.percentiles
        .iter()
        .find(|(q, _)| *q == p)
        .map_or("-".into(), |(_, ns)| format!("{:.1}", *ns as f64 / 1e3))
}

/// Renders one run (one fio group).
#[allow(clippy::too_many_arguments)]
pub fn render(
    out: &FioOutput,
    group: i64,
    entries: &[&Entry],
    hosts: &[String],
    aggs: &[Option<Agg>; 4],
    total: Option<&Agg>,
    config: &Value,
    source_file: &str,
    with_sync: Option<&WithSync>,
) -> String {
    let mut o = String::new();
    let mut names: Vec<&str> = entries.iter().map(|e| e.jobname.as_str()).collect();
    names.dedup();
    let on = if hosts.is_empty() {
        String::new()
    } else {
        format!(" on {}", hosts.join(", "))
    };
    let _ = writeln!(
        o,
        "imported  {} output {source_file}, group {group}: {} entr{} ({}){on}",
        if out.version.is_empty() {
            "fio"
        } else {
            &out.version
        },
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" },
        names.join(", ")
    );
    let c = |k: &str| match config.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".into(),
        Some(v) => v.to_string(),
    };
    let _ = writeln!(
        o,
        "config    {} bs {} sessions {} engine {} iodepth {} io {} target {}",
        c("pattern"),
        c("block_size"),
        c("sessions"),
        c("engine"),
        c("iodepth"),
        c("io_mode"),
        c("target")
    );
    if let Some(a) = aggs.iter().flatten().next() {
        let from = match a.percentiles_from {
            "fio" => "percentiles as fio printed them",
            "json+ bins" => "percentiles of the merged json+ bins (fio's method)",
            _ => "no percentiles",
        };
        let _ = writeln!(
            o,
            "measured  {:.3} s; latency is fio's {}, {from}",
            a.runtime_ms as f64 / 1e3,
            a.basis
        );
    }
    let _ = writeln!(
        o,
        "{:<6} {:>10} {:>11} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "µs",
        "requests",
        "IOPS",
        "MiB/s",
        "min",
        "mean",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "p99.99",
        "max"
    );
    let rows = DIRECTIONS
        .iter()
        .zip(aggs.iter())
        .filter_map(|(n, a)| a.as_ref().map(|a| (*n, a)))
        .chain(total.map(|t| ("total", t)));
    for (name, a) in rows {
        let label = match (name, with_sync) {
            ("write" | "total", Some(_)) => format!("{name}*"),
            _ => name.to_string(),
        };
        let _ = writeln!(
            o,
            "{:<6} {:>10} {:>11.1} {:>9.2} {:>9.1} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10.1}",
            label,
            a.requests,
            if name == "sync" { f64::NAN } else { a.iops },
            a.bw_bytes / 1_048_576.0,
            a.lat.min / 1e3,
            a.lat.mean / 1e3,
            pct(a, 50.0),
            pct(a, 90.0),
            pct(a, 99.0),
            pct(a, 99.9),
            pct(a, 99.99),
            a.lat.max / 1e3
        );
    }
    if let Some(w) = with_sync {
        let _ = writeln!(
            o,
            "* fio's write alone, without the sync after it (stored as write.alone.*, total.alone.*); with its sync, as dbio times a write: mean write {:.1} µs, total {:.1} µs",
            w.write_mean_us, w.total_mean_us
        );
    }
    for (name, a) in DIRECTIONS.iter().zip(aggs.iter()) {
        if let Some(a) = a.as_ref().filter(|a| !a.clat_percentiles.is_empty()) {
            let _ = writeln!(
                o,
                "{name}: fio printed percentiles of clat only (completion, not submit to reap as dbio and fio's lat): stored as {name}.clat.latency.*, p99 {}",
                a.clat_percentiles
                    .iter()
                    .find(|(p, _)| *p == 99.0)
                    .map_or("-".into(), |(_, ns)| format!("{:.1} µs", *ns as f64 / 1e3))
            );
        }
    }
    o.replace("NaN", "-")
}
