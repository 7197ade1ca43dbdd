//! `dbio compare`'s report: AWR's "compare period report" layout for two
//! runs or two selections of runs. Both sides are read from stored report
//! documents (docs/json.md), so a SLOB model run, a raw run, or a mix can be
//! compared: header with both settings, configuration and host differences,
//! load profile per second and per transaction with 1st, 2nd, Diff and
//! %Diff (and Welch's test when both sides have repeats), top timed events
//! side by side (events in one top list only marked), host CPU and device
//! statistics side by side.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use serde_json::Value;

use crate::analysis::compare::{verdict, welch};

/// Events shown per side in Top Timed Events.
const TOP: usize = 5;

/// One side of a comparison: its runs' report documents, averaged.
#[derive(Clone, Debug, Serialize)]
pub struct Side {
    pub label: String,
    pub run_ids: Vec<i64>,
    /// Settings that describe the side (workload, target, filesystem, ...);
    /// a setting that differs between its own runs shows as "(varies)".
    pub settings: BTreeMap<String, String>,
    /// (name, values per run, per second; values per transaction).
    pub load: Vec<LoadRow>,
    pub events: Vec<EventRow>,
    pub host: Vec<(String, f64)>,
    /// (device, field, mean value).
    pub devices: Vec<(String, String, f64)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadRow {
    pub name: String,
    /// One value per run.
    pub per_second: Vec<f64>,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EventRow {
    pub name: String,
    pub class: String,
    pub waits: f64,
    pub time_s: f64,
    pub avg_ms: f64,
    pub pct_db_time: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn num(v: &Value, path: &str) -> Option<f64> {
    path.split('.').try_fold(v, |cur, k| cur.get(k))?.as_f64()
}

fn text(v: &Value, path: &str) -> Option<String> {
    let x = path.split('.').try_fold(v, |cur, k| cur.get(k))?;
    match x {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The settings worth comparing, from one report.
fn settings(r: &Value) -> BTreeMap<String, String> {
    let mut s = BTreeMap::new();
    for key in [
        "workload",
        "pattern",
        "sessions",
        "block_size",
        "files",
        "engine",
        "io_mode",
        "iodepth",
        "read_pct",
    ] {
        if let Some(v) = text(r, &format!("config.{key}")) {
            s.insert(key.to_string(), v);
        }
    }
    if let Some(slob) = r["config"]["slob"].as_object() {
        for (k, v) in slob {
            let v = match v {
                Value::String(x) => x.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            s.insert(format!("slob.{k}"), v);
        }
    }
    if let Some(t) = text(r, "target.path") {
        s.insert("target".into(), t);
    }
    for link in r["storage"]["links"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match link["type"].as_str() {
            Some("filesystem") => {
                if let Some(t) = link["fs_type"].as_str() {
                    s.entry("filesystem".into())
                        .or_insert_with(|| t.to_string());
                }
                if let Some(o) = link["mount_options"].as_str() {
                    s.entry("mount options".into())
                        .or_insert_with(|| o.to_string());
                }
            }
            Some("device") => {
                let name = link["name"].as_str().unwrap_or("?");
                for (what, key) in [("model", "model"), ("scheduler", "scheduler")] {
                    if let Some(v) = link[key].as_str().filter(|v| !v.is_empty()) {
                        s.entry(format!("device {name} {what}"))
                            .or_insert_with(|| v.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    for key in ["hostname", "kernel", "cpus", "memory_bytes"] {
        if let Some(v) = text(r, &format!("environment.{key}")) {
            s.insert(format!("host {key}"), v);
        }
    }
    s
}

/// Load profile lines of one report: the model's own, or a raw run's.
fn load_lines(r: &Value) -> Vec<(String, f64, Option<f64>)> {
    if let Some(lines) = r["slob"]["load_profile"].as_array() {
        return lines
            .iter()
            .filter_map(|l| {
                Some((
                    l["name"].as_str()?.to_string(),
                    l["per_second"].as_f64()?,
                    l["per_transaction"].as_f64(),
                ))
            })
            .collect();
    }
    let mut out = Vec::new();
    for (name, path) in [
        ("Read IO requests", "read.iops"),
        ("Write IO requests", "write.iops"),
        ("Read MiB", "read.mib_per_s"),
        ("Write MiB", "write.mib_per_s"),
        ("Read avg latency (ms)", "read.latency.mean_us"),
        ("Read p99 latency (ms)", "read.latency.p99_us"),
        ("Write avg latency (ms)", "write.latency.mean_us"),
        ("Write p99 latency (ms)", "write.latency.p99_us"),
        ("Sync avg latency (ms)", "sync.latency.mean_us"),
        ("CPU per I/O (us)", "cpu.us_per_io"),
    ] {
        if let Some(v) = num(r, path) {
            let v = if path.contains("latency") { v / 1e3 } else { v };
            out.push((name.to_string(), v, None));
        }
    }
    out
}

impl Side {
    /// Averages the report documents of one side.
    pub fn from_reports(label: String, run_ids: Vec<i64>, reports: &[Value]) -> Side {
        let mut settings_all: BTreeMap<String, String> = BTreeMap::new();
        for (i, r) in reports.iter().enumerate() {
            let s = settings(r);
            if i == 0 {
                settings_all = s;
            } else {
                for (k, v) in settings_all.iter_mut() {
                    if s.get(k) != Some(v) {
                        *v = "(varies)".into();
                    }
                }
            }
        }
        // Load lines in the first report's order, values from every run.
        let mut load: Vec<LoadRow> = Vec::new();
        let mut per_tx: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for r in reports {
            for (name, ps, pt) in load_lines(r) {
                match load.iter_mut().find(|l| l.name == name) {
                    Some(l) => l.per_second.push(ps),
                    None => load.push(LoadRow {
                        name: name.clone(),
                        per_second: vec![ps],
                        per_transaction: None,
                    }),
                }
                if let Some(t) = pt {
                    per_tx.entry(name).or_default().push(t);
                }
            }
        }
        for l in &mut load {
            l.per_transaction = per_tx.get(&l.name).map(|v| mean(v));
        }
        let n = reports.len().max(1) as f64;
        let mut events: Vec<EventRow> = Vec::new();
        for r in reports {
            let cpu = num(r, "slob.db_cpu_s");
            let db = num(r, "slob.db_time_s").unwrap_or(0.0);
            if let Some(cpu) = cpu {
                add_event(
                    &mut events,
                    "DB CPU",
                    "",
                    0.0,
                    cpu,
                    0.0,
                    if db > 0.0 { 100.0 * cpu / db } else { 0.0 },
                    n,
                );
            }
            for e in r["slob"]["events"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if e["side"] != "foreground" {
                    continue;
                }
                add_event(
                    &mut events,
                    e["name"].as_str().unwrap_or("?"),
                    e["class"].as_str().unwrap_or(""),
                    e["waits"].as_f64().unwrap_or(0.0),
                    e["time_s"].as_f64().unwrap_or(0.0),
                    e["avg_ms"].as_f64().unwrap_or(0.0),
                    e["pct_db_time"].as_f64().unwrap_or(0.0),
                    n,
                );
            }
        }
        events.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
        let mut host: Vec<(String, f64)> = Vec::new();
        let mut devices: Vec<(String, String, f64)> = Vec::new();
        for r in reports {
            let w = &r["telemetry_window"];
            for field in [
                "user_pct",
                "system_pct",
                "iowait_pct",
                "idle_pct",
                "load1",
                "ctxt_s",
            ] {
                if let Some(v) = w["host"][field].as_f64() {
                    accumulate(&mut host, field, v / n);
                }
            }
            for d in w["devices"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                let name = d["name"].as_str().unwrap_or("?").to_string();
                for field in [
                    "r_s",
                    "w_s",
                    "rkb_s",
                    "wkb_s",
                    "r_await_ms",
                    "w_await_ms",
                    "aqu_sz",
                    "util_pct",
                ] {
                    if let Some(v) = d["rates"][field].as_f64() {
                        match devices
                            .iter_mut()
                            .find(|(dn, f, _)| *dn == name && f == field)
                        {
                            Some(x) => x.2 += v / n,
                            None => devices.push((name.clone(), field.to_string(), v / n)),
                        }
                    }
                }
            }
        }
        Side {
            label,
            run_ids,
            settings: settings_all,
            load,
            events,
            host,
            devices,
        }
    }
}

fn accumulate(v: &mut Vec<(String, f64)>, name: &str, x: f64) {
    match v.iter_mut().find(|(n, _)| n == name) {
        Some(e) => e.1 += x,
        None => v.push((name.to_string(), x)),
    }
}

#[allow(clippy::too_many_arguments)]
fn add_event(
    v: &mut Vec<EventRow>,
    name: &str,
    class: &str,
    waits: f64,
    time_s: f64,
    avg_ms: f64,
    pct: f64,
    n: f64,
) {
    match v.iter_mut().find(|e| e.name == name) {
        Some(e) => {
            e.waits += waits / n;
            e.time_s += time_s / n;
            e.avg_ms += avg_ms / n;
            e.pct_db_time += pct / n;
        }
        None => v.push(EventRow {
            name: name.to_string(),
            class: class.to_string(),
            waits: waits / n,
            time_s: time_s / n,
            avg_ms: avg_ms / n,
            pct_db_time: pct / n,
        }),
    }
}

fn pct_diff(a: f64, b: f64) -> String {
    if !a.is_finite() || !b.is_finite() {
        "-".into()
    } else if a == 0.0 {
        if b == 0.0 { "0.0".into() } else { "-".into() }
    } else {
        format!("{:.1}", 100.0 * (b - a) / a.abs())
    }
}

fn fmt(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

/// The comparison as terminal text.
pub fn render(a: &Side, b: &Side) -> String {
    let mut o = String::new();
    let ids = |s: &Side| {
        let list: Vec<String> = s.run_ids.iter().map(i64::to_string).collect();
        format!(
            "{} run{} ({})",
            s.run_ids.len(),
            if s.run_ids.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    };
    let _ = writeln!(o, "Compare Period Report");
    let _ = writeln!(o, "1st  {}: {}", a.label, ids(a));
    let _ = writeln!(o, "2nd  {}: {}", b.label, ids(b));

    let _ = writeln!(o, "\nConfiguration and host");
    let _ = writeln!(o, "{:<26}{:<38}{:<38}", "setting", "1st", "2nd");
    let keys: std::collections::BTreeSet<&String> =
        a.settings.keys().chain(b.settings.keys()).collect();
    let mut same = Vec::new();
    for k in keys {
        let (x, y) = (a.settings.get(k), b.settings.get(k));
        if x == y {
            same.push(k.as_str());
            continue;
        }
        let (x, y) = (
            x.map(String::as_str).unwrap_or("-"),
            y.map(String::as_str).unwrap_or("-"),
        );
        if x.chars().count() < 38 && y.chars().count() < 38 {
            let _ = writeln!(o, "{k:<26}{x:<38}{y:<38}");
        } else {
            // Whole, one line each: the difference may be at the end.
            let _ = writeln!(o, "{k}\n  1st  {x}\n  2nd  {y}");
        }
    }
    if !same.is_empty() {
        let _ = writeln!(o, "(same on both: {})", same.join(", "));
    }

    let _ = writeln!(o, "\nLoad Profile");
    let _ = writeln!(
        o,
        "{:<26}{:>12}{:>12}{:>12}{:>8}  {:>10}{:>10}{:>8}  Welch (p)",
        "", "1st /s", "2nd /s", "Diff /s", "%Diff", "1st /txn", "2nd /txn", "%Diff"
    );
    let mut names: Vec<&str> = a.load.iter().map(|l| l.name.as_str()).collect();
    for l in &b.load {
        if !names.contains(&l.name.as_str()) {
            names.push(&l.name);
        }
    }
    let none = LoadRow {
        name: String::new(),
        per_second: Vec::new(),
        per_transaction: None,
    };
    for name in names {
        let la = a.load.iter().find(|l| l.name == name).unwrap_or(&none);
        let lb = b.load.iter().find(|l| l.name == name).unwrap_or(&none);
        let (x, y) = (mean(&la.per_second), mean(&lb.per_second));
        let (tx, ty) = (la.per_transaction, lb.per_transaction);
        let per_tx = match (tx, ty) {
            (Some(p), Some(q)) => format!("{:>10}{:>10}{:>8}", fmt(p), fmt(q), pct_diff(p, q)),
            _ => format!("{:>28}", ""),
        };
        let test = welch(&la.per_second, &lb.per_second)
            .map(|w| {
                format!(
                    "{} (p={:.3})",
                    short_verdict(verdict(&w, 0.05)),
                    w.p_two_sided
                )
            })
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "{:<26}{:>12}{:>12}{:>12}{:>8}  {per_tx}  {test}",
            truncate(name, 25),
            fmt(x),
            fmt(y),
            fmt(y - x),
            pct_diff(x, y),
        );
    }

    if !a.events.is_empty() || !b.events.is_empty() {
        let _ = writeln!(o, "\nTop Timed Events    (* = in this top list only)");
        let top = |s: &Side| s.events.iter().take(TOP).cloned().collect::<Vec<_>>();
        let (ta, tb) = (top(a), top(b));
        let _ = writeln!(
            o,
            "{:<1}{:<30}{:>10}{:>9}{:>7}{:>6} | {:<1}{:<30}{:>10}{:>9}{:>7}{:>6}",
            "",
            "1st event",
            "waits",
            "time(s)",
            "avg ms",
            "%DB",
            "",
            "2nd event",
            "waits",
            "time(s)",
            "avg ms",
            "%DB"
        );
        for i in 0..ta.len().max(tb.len()) {
            let cell = |list: &[EventRow], other: &[EventRow]| match list.get(i) {
                None => format!("{:<63}", ""),
                Some(e) => format!(
                    "{}{:<30}{:>10}{:>9}{:>7}{:>6.1}",
                    if other.iter().any(|x| x.name == e.name) {
                        " "
                    } else {
                        "*"
                    },
                    truncate(&e.name, 29),
                    if e.name == "DB CPU" {
                        String::new()
                    } else {
                        fmt(e.waits)
                    },
                    fmt(e.time_s),
                    if e.name == "DB CPU" {
                        String::new()
                    } else {
                        fmt(e.avg_ms)
                    },
                    e.pct_db_time
                ),
            };
            let _ = writeln!(o, "{} | {}", cell(&ta, &tb), cell(&tb, &ta));
        }
    }

    if !a.host.is_empty() || !b.host.is_empty() {
        let _ = writeln!(o, "\nHost (window averages)");
        let _ = writeln!(
            o,
            "{:<26}{:>12}{:>12}{:>12}{:>8}",
            "", "1st", "2nd", "Diff", "%Diff"
        );
        for (name, x) in &a.host {
            if let Some((_, y)) = b.host.iter().find(|(n, _)| n == name) {
                let _ = writeln!(
                    o,
                    "{:<26}{:>12}{:>12}{:>12}{:>8}",
                    name,
                    fmt(*x),
                    fmt(*y),
                    fmt(y - x),
                    pct_diff(*x, *y)
                );
            }
        }
    }
    if !a.devices.is_empty() || !b.devices.is_empty() {
        let _ = writeln!(o, "\nDevice statistics (iostat -x, window averages)");
        let _ = writeln!(
            o,
            "{:<14}{:<12}{:>12}{:>12}{:>12}{:>8}",
            "device", "", "1st", "2nd", "Diff", "%Diff"
        );
        let names = |s: &'_ Side| {
            let mut v: Vec<String> = Vec::new();
            for (d, _, _) in &s.devices {
                if !v.contains(d) {
                    v.push(d.clone());
                }
            }
            v
        };
        let (na, nb) = (names(a), names(b));
        for (da, db) in pair_devices(&na, &nb) {
            let label = match (da, db) {
                (Some(x), Some(y)) if x != y => format!("{x}/{y}"),
                (Some(x), _) | (None, Some(x)) => x.to_string(),
                (None, None) => continue,
            };
            let fields = |s: &'_ Side, d: Option<&str>| -> Vec<(String, f64)> {
                s.devices
                    .iter()
                    .filter(|(n, _, _)| Some(n.as_str()) == d)
                    .map(|(_, f, v)| (f.clone(), *v))
                    .collect()
            };
            let (fa, fb) = (fields(a, da), fields(b, db));
            let mut order: Vec<&String> = fa.iter().map(|(f, _)| f).collect();
            order.extend(
                fb.iter()
                    .map(|(f, _)| f)
                    .filter(|f| !fa.iter().any(|(g, _)| g == *f)),
            );
            for field in order {
                let x = fa.iter().find(|(f, _)| f == field).map(|t| t.1);
                let y = fb.iter().find(|(f, _)| f == field).map(|t| t.1);
                let show = |v: Option<f64>| v.map_or("-".to_string(), fmt);
                let (diff, pd) = match (x, y) {
                    (Some(x), Some(y)) => (fmt(y - x), pct_diff(x, y)),
                    _ => ("-".into(), "-".into()),
                };
                let _ = writeln!(
                    o,
                    "{:<14}{:<12}{:>12}{:>12}{:>12}{:>8}",
                    label,
                    field,
                    show(x),
                    show(y),
                    diff,
                    pd
                );
            }
        }
    }
    o
}

/// Pairs the devices of two sides: the same device by name first, then the
/// rest in the order of their storage chains, so that a lab's loop0 under
/// one arm faces loop1 under the other. Unpaired devices stand alone.
fn pair_devices<'a>(a: &'a [String], b: &'a [String]) -> Vec<(Option<&'a str>, Option<&'a str>)> {
    let mut rest_b: Vec<&str> = b
        .iter()
        .map(String::as_str)
        .filter(|d| !a.iter().any(|x| x == d))
        .collect();
    rest_b.reverse();
    let mut out = Vec::new();
    for d in a {
        if b.contains(d) {
            out.push((Some(d.as_str()), Some(d.as_str())));
        } else {
            out.push((Some(d.as_str()), rest_b.pop()));
        }
    }
    out.extend(rest_b.into_iter().rev().map(|d| (None, Some(d))));
    out
}

fn short_verdict(v: &str) -> &str {
    if v.starts_with("significant") {
        "differ"
    } else {
        "same"
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn devices_pair_by_name_then_by_chain_order() {
        let (a, b) = (names(&["loop0", "vda"]), names(&["loop1", "vda"]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("loop0"), Some("loop1")), (Some("vda"), Some("vda"))]
        );
        // The root filesystem against a loop device on the same disk.
        let (a, b) = (names(&["vda"]), names(&["loop3", "vda"]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("vda"), Some("vda")), (None, Some("loop3"))]
        );
        let (a, b) = (names(&["sdb", "sdc"]), names(&[]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("sdb"), None), (Some("sdc"), None)]
        );
    }

    fn report(target: &str, device: &str, r_s: f64) -> Value {
        json!({
            "config": {"workload": "raw", "sessions": 4},
            "target": {"path": target},
            "storage": {"links": [
                {"type": "filesystem", "fs_type": "xfs", "mount_options": "rw,noatime"},
                {"type": "device", "name": device, "scheduler": "none"},
            ]},
            "read": {"iops": r_s},
            "telemetry_window": {"devices": [{"name": device, "rates": {"r_s": r_s, "util_pct": 50.0}}]},
        })
    }

    #[test]
    fn long_settings_are_shown_whole_and_lab_devices_face_each_other() {
        let long = "/root/.local/state/dbio/lab/mnt/plan-0123456789/";
        let a = Side::from_reports(
            "XFS".into(),
            vec![1],
            &[report(&format!("{long}XFS/dbio"), "loop0", 1000.0)],
        );
        let b = Side::from_reports(
            "EXT4".into(),
            vec![2],
            &[report(&format!("{long}EXT4/dbio"), "loop1", 1500.0)],
        );
        let text = render(&a, &b);
        assert!(text.contains(&format!("  1st  {long}XFS/dbio\n")), "{text}");
        assert!(
            text.contains(&format!("  2nd  {long}EXT4/dbio\n")),
            "{text}"
        );
        assert!(text.contains("(same on both:"), "{text}");
        assert!(text.contains("device loop0 scheduler"), "{text}");
        let row = text
            .lines()
            .find(|l| l.starts_with("loop0/loop1") && l.contains("r_s"))
            .unwrap_or_else(|| panic!("{text}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[2..], ["1000", "1500", "500.0", "50.0"], "{row}");
    }
}
