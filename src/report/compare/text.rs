//! The terminal rendering of `dbio compare` (see [`super::compare`]):
//! settings that differ, Load Profile with 1st, 2nd, Diff, %Diff and what
//! Welch's test says in words that match the evidence, Top Timed Events
//! side by side, host and device statistics; one block per session count
//! when the sides span several ([`render_cells`]).
//!
//! Numbers are printed per row: the digits of a row's 1st, 2nd and Diff
//! are chosen together so that the difference shows ([`row_numbers`]), and
//! a latency row below 1 ms on both sides is printed in µs.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::devices::{device_names, pair_devices, pair_label, paired_settings};
use super::{Cell, EventRow, LoadRow, LoadTest, Side, TOP, load_tests, mean, varies};
use crate::analysis::compare::{MAX_RUNS, POWER};
use crate::report::plan::stats::ALPHA;

fn pct_diff(a: f64, b: f64) -> String {
    if !a.is_finite() || !b.is_finite() {
        "-".into()
    } else if a == 0.0 {
        if b == 0.0 { "0.0".into() } else { "-".into() }
    } else {
        format!("{:.1}", 100.0 * (b - a) / a.abs())
    }
}

/// One number on its own (events): 0 decimals from 1000, 1 from 10, else 3.
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

/// The most decimals a row is printed with.
const MAX_DECIMALS: usize = 6;

/// A row's 1st, 2nd and Diff with one number of decimals: enough for three
/// significant digits of each value and two of the difference (from none
/// at 100 and above, up to [`MAX_DECIMALS`]), so the difference always
/// shows: `4.20 4.70 0.50` µs, never `0.004 0.005 0.000` ms. "-" for a
/// value that is not finite.
pub(super) fn row_numbers(x: f64, y: f64) -> [String; 3] {
    let diff = y - x;
    let need = |v: f64, digits: i64| {
        if v.is_finite() && v != 0.0 {
            (digits - 1 - v.abs().log10().floor() as i64).clamp(0, MAX_DECIMALS as i64) as usize
        } else {
            0
        }
    };
    let decimals = need(x, 3).max(need(y, 3)).max(need(diff, 2));
    let show = |v: f64| {
        if v.is_finite() {
            format!("{v:.decimals$}")
        } else {
            "-".into()
        }
    };
    [show(x), show(y), show(diff)]
}

/// A latency row's unit: `(ms)` rows whose values are all below 1 ms are
/// shown in µs (name and values); others as they are.
fn row_unit(name: &str, values: &[f64]) -> (String, f64) {
    match name.strip_suffix("(ms)") {
        Some(stem)
            if values
                .iter()
                .filter(|v| v.is_finite())
                .all(|v| v.abs() < 1.0) =>
        {
            (format!("{stem}(µs)"), 1e3)
        }
        _ => (name.to_string(), 1.0),
    }
}

/// The Welch column of one line.
fn test_words(tests: &[LoadTest], name: &str) -> String {
    tests
        .iter()
        .find(|t| t.name == name)
        .map_or(String::new(), |t| t.evidence.words())
}

/// Several session counts, one comparison block each; `notes` (what was
/// left out, how to ask for one count) follow the first line.
pub fn render_cells(cells: &[Cell], notes: &[String]) -> String {
    let counts: Vec<String> = cells
        .iter()
        .map(|c| c.sessions.map_or("?".into(), |s| s.to_string()))
        .collect();
    let mut o = format!(
        "Compared cell by cell: the runs span several session counts, one block per count both sides have ({})\n",
        counts.join(", ")
    );
    for n in notes {
        let _ = writeln!(o, "{n}");
    }
    for (c, count) in cells.iter().zip(&counts) {
        let _ = writeln!(o, "\n=== sessions {count} ===");
        o += &render_tested(&c.first, &c.second, &c.tests);
    }
    o
}

/// The comparison as terminal text.
pub fn render(a: &Side, b: &Side) -> String {
    render_tested(a, b, &load_tests(a, b))
}

fn render_tested(a: &Side, b: &Side, tests: &[LoadTest]) -> String {
    let mut o = String::new();
    heading(&mut o, a, b);
    let (na, nb) = (device_names(a), device_names(b));
    let pairs = pair_devices(&na, &nb);
    settings(&mut o, a, b, &pairs);
    load_profile(&mut o, a, b, tests);
    top_events(&mut o, a, b);
    host(&mut o, a, b);
    devices(&mut o, a, b, &pairs);
    o
}

/// The report's title and the runs on each side.
fn heading(o: &mut String, a: &Side, b: &Side) {
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
}

/// Configuration and host: the settings that differ, one row each, then
/// those the same on both.
fn settings(o: &mut String, a: &Side, b: &Side, pairs: &[(Option<&str>, Option<&str>)]) {
    let _ = writeln!(o, "\nConfiguration and host");
    let _ = writeln!(o, "{:<26}{:<38}{:<38}", "setting", "1st", "2nd");
    // Settings of paired devices under one name (`device loop0/loop1 scheduler`).
    let (sa, sb) = (
        paired_settings(&a.settings, pairs, true),
        paired_settings(&b.settings, pairs, false),
    );
    let keys: BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    let mut same = Vec::new();
    for k in keys {
        let (x, y) = (sa.get(k), sb.get(k));
        // A setting that varies among a side's own runs is never the same.
        if x == y && !x.is_some_and(|v| varies(v)) {
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
}

/// Load Profile: each line per second and per transaction, with its test.
fn load_profile(o: &mut String, a: &Side, b: &Side, tests: &[LoadTest]) {
    let _ = writeln!(o, "\nLoad Profile");
    let _ = writeln!(
        o,
        "{:<26}{:>12}{:>12}{:>12}{:>8}  {:>10}{:>10}{:>8}  Welch's t-test (α = {ALPHA})",
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
        let (shown, k) = row_unit(name, &[x, y]);
        let [xs, ys, ds] = row_numbers(x * k, y * k);
        let per_tx = match (tx, ty) {
            (Some(p), Some(q)) => {
                let [ps, qs, _] = row_numbers(p * k, q * k);
                format!("{ps:>10}{qs:>10}{:>8}", pct_diff(p, q))
            }
            _ => format!("{:>28}", ""),
        };
        let line = format!(
            "{:<26}{xs:>12}{ys:>12}{ds:>12}{:>8}  {per_tx}  {}",
            truncate(&shown, 25),
            pct_diff(x, y),
            test_words(tests, name),
        );
        let _ = writeln!(o, "{}", line.trim_end());
    }
    if !tests.is_empty() {
        let _ = writeln!(
            o,
            "Welch: two-sided over each side's runs; d = Cohen's d (2nd − 1st over the pooled SD).\n\
             Not significant is not \"the same\": runs per side to detect it = for {:.0}% power (up to {MAX_RUNS}),\n\
             taking the difference and spread seen as true (a guide: both are estimated from these runs).",
            POWER * 100.0
        );
    }
}

/// Top Timed Events, the sides' top lists face to face.
fn top_events(o: &mut String, a: &Side, b: &Side) {
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
}

/// Host telemetry's window averages both sides have.
fn host(o: &mut String, a: &Side, b: &Side) {
    if !a.host.is_empty() || !b.host.is_empty() {
        let _ = writeln!(o, "\nHost (window averages)");
        let _ = writeln!(
            o,
            "{:<26}{:>12}{:>12}{:>12}{:>8}",
            "", "1st", "2nd", "Diff", "%Diff"
        );
        for (name, x) in &a.host {
            if let Some((_, y)) = b.host.iter().find(|(n, _)| n == name) {
                let [x_, y_, d] = row_numbers(*x, *y);
                let _ = writeln!(
                    o,
                    "{:<26}{:>12}{:>12}{:>12}{:>8}",
                    name,
                    x_,
                    y_,
                    d,
                    pct_diff(*x, *y)
                );
            }
        }
    }
}

/// Device statistics, paired devices face to face.
fn devices(o: &mut String, a: &Side, b: &Side, pairs: &[(Option<&str>, Option<&str>)]) {
    if !a.devices.is_empty() || !b.devices.is_empty() {
        let _ = writeln!(o, "\nDevice statistics (iostat -x, window averages)");
        let _ = writeln!(
            o,
            "{:<14}{:<12}{:>12}{:>12}{:>12}{:>8}",
            "device", "", "1st", "2nd", "Diff", "%Diff"
        );
        for &(da, db) in pairs {
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
                let [x_, y_, diff] = row_numbers(x.unwrap_or(f64::NAN), y.unwrap_or(f64::NAN));
                let pd = match (x, y) {
                    (Some(x), Some(y)) => pct_diff(x, y),
                    _ => "-".into(),
                };
                let _ = writeln!(
                    o,
                    "{:<14}{:<12}{:>12}{:>12}{:>12}{:>8}",
                    label, field, x_, y_, diff, pd
                );
            }
        }
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
