//! The terminal rendering of `dbio compare` (see [`super::compare`]):
//! settings that differ, Load Profile with 1st, 2nd, Diff, %Diff and Welch's
//! verdict, Top Timed Events side by side, host and device statistics.

use std::fmt::Write;

use super::compare::{EventRow, LoadRow, Side, TOP, mean};
use crate::analysis::compare::{verdict, welch};

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
    // Settings of paired devices under one name (`device loop0/loop1 scheduler`).
    let (na, nb) = (device_names(a), device_names(b));
    let pairs = pair_devices(&na, &nb);
    let (sa, sb) = (
        paired_settings(&a.settings, &pairs, true),
        paired_settings(&b.settings, &pairs, false),
    );
    let keys: std::collections::BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    let mut same = Vec::new();
    for k in keys {
        let (x, y) = (sa.get(k), sb.get(k));
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
        for &(da, db) in &pairs {
            let Some(label) = pair_label(da, db) else {
                continue;
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

/// A side's devices in the order they were first seen.
fn device_names(s: &Side) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for (d, _, _) in &s.devices {
        if !v.contains(d) {
            v.push(d.clone());
        }
    }
    v
}

/// `loop0/loop1` for two devices paired across the sides, else the one name.
fn pair_label(a: Option<&str>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Some(format!("{x}/{y}")),
        (Some(x), _) | (None, Some(x)) => Some(x.to_string()),
        (None, None) => None,
    }
}

/// A side's settings with `device NAME …` keys renamed to the pair's label.
fn paired_settings(
    settings: &std::collections::BTreeMap<String, String>,
    pairs: &[(Option<&str>, Option<&str>)],
    first: bool,
) -> std::collections::BTreeMap<String, String> {
    settings
        .iter()
        .map(|(k, v)| {
            let renamed = k.strip_prefix("device ").and_then(|rest| {
                pairs.iter().find_map(|&(da, db)| {
                    let mine = if first { da } else { db }?;
                    let what = rest.strip_prefix(mine)?.strip_prefix(' ')?;
                    Some(format!("device {} {what}", pair_label(da, db)?))
                })
            });
            (renamed.unwrap_or_else(|| k.clone()), v.clone())
        })
        .collect()
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
    use serde_json::{Value, json};

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
        // The two loop devices' settings are compared under one name: equal.
        let same = text
            .lines()
            .find(|l| l.starts_with("(same on both:"))
            .unwrap();
        assert!(same.contains("device loop0/loop1 scheduler"), "{text}");
        assert!(!text.contains("device loop0 scheduler"), "{text}");
        let row = text
            .lines()
            .find(|l| l.starts_with("loop0/loop1") && l.contains("r_s"))
            .unwrap_or_else(|| panic!("{text}"));
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[2..], ["1000", "1500", "500.0", "50.0"], "{row}");
    }
}
