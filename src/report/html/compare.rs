//! `dbio compare A B --html FILE`: AWR's compare period report as a page —
//! per session count both sides have, the sides and their runs, the
//! settings that differ, the load profile with each line's change and
//! Welch's verdict, and the change of every line drawn as a bar.

use super::page::{Page, figure, table, td};
use crate::chart::scale::value_label;
use crate::chart::{HBar, HBarChart, color, escape};
use crate::report::compare::{Cell, Side, mean, varies};

/// The page of `cells` (one per session count), with `notes` under the title.
pub fn compare_page(cells: &[Cell], notes: &[String], generated: &str) -> String {
    let (a, b) = match cells.first() {
        Some(c) => (c.first.label.clone(), c.second.label.clone()),
        None => ("-".into(), "-".into()),
    };
    let mut p = Page::new(
        &format!("dbio compare: {a} vs {b}"),
        &format!("1st {a}, 2nd {b}; AWR's compare period report, one part per session count"),
    );
    for n in notes {
        p.para("note", n);
    }
    for (i, c) in cells.iter().enumerate() {
        let count = c.sessions.map_or("?".into(), |s| s.to_string());
        p.section(&format!("cell{i}"), &format!("Sessions {count}"));
        p.html(&sides(&c.first, &c.second));
        p.html(&settings(&c.first, &c.second));
        p.html(&load(c));
        if let Some(chart) = change_chart(c) {
            let fig = figure(
                &chart.render(),
                "Each load line's change from the 1st side to the 2nd (means of the runs).",
            );
            p.html(&format!("<div class=\"charts\">{fig}</div>"));
        }
    }
    p.finish(&format!(
        "dbio {} · generated {generated} UTC",
        env!("CARGO_PKG_VERSION")
    ))
}

fn sides(a: &Side, b: &Side) -> String {
    let row = |which: &str, s: &Side| {
        let ids: Vec<String> = s.run_ids.iter().map(i64::to_string).collect();
        vec![td(which), td(&s.label), td(&ids.join(", "))]
    };
    table(
        "sides",
        &["side".into(), "label".into(), "runs".into()],
        &[row("1st", a), row("2nd", b)],
    )
}

/// The settings that differ between the sides (or among a side's runs).
fn settings(a: &Side, b: &Side) -> String {
    let keys: std::collections::BTreeSet<&String> =
        a.settings.keys().chain(b.settings.keys()).collect();
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .filter_map(|k| {
            let (x, y) = (a.settings.get(k), b.settings.get(k));
            if x == y && !x.is_some_and(|v| varies(v)) {
                return None;
            }
            let show = |v: Option<&String>| td(v.map_or("-", String::as_str));
            Some(vec![td(k), show(x), show(y)])
        })
        .collect();
    if rows.is_empty() {
        return "<p class=\"note\">The sides' settings are the same.</p>\n".into();
    }
    table(
        "settings",
        &["setting that differs".into(), "1st".into(), "2nd".into()],
        &rows,
    )
}

/// A change in percent, or None when it cannot be said.
fn change(x: f64, y: f64) -> Option<f64> {
    (x.is_finite() && y.is_finite() && x != 0.0).then(|| 100.0 * (y - x) / x.abs())
}

fn load(c: &Cell) -> String {
    let num = |v: f64| match v.is_finite() {
        true => format!("<td class=\"num\">{}</td>", escape(&value_label(v))),
        false => "<td class=\"num\">-</td>".into(),
    };
    let rows: Vec<Vec<String>> = c
        .first
        .load
        .iter()
        .map(|la| {
            let lb = c.second.load.iter().find(|l| l.name == la.name);
            let x = mean(&la.per_second);
            let y = lb.map_or(f64::NAN, |l| mean(&l.per_second));
            let pct = change(x, y).map_or("-".into(), |p| format!("{p:+.1}%"));
            let verdict = c.tests.iter().find(|t| t.name == la.name).map_or(
                "one run a side: no test".to_string(),
                |t| match t.evidence.significant {
                    true => format!("differs (p = {:.3})", t.evidence.welch.p_two_sided),
                    false => format!("not shown (p = {:.3})", t.evidence.welch.p_two_sided),
                },
            );
            vec![
                td(&la.name),
                num(x),
                num(y),
                format!("<td class=\"num\">{pct}</td>"),
                td(&verdict),
            ]
        })
        .collect();
    let header = ["load line", "1st /s", "2nd /s", "change", "Welch's t-test"].map(String::from);
    table("load", &header, &rows)
}

/// Each load line's change as a bar (lines without one left out).
fn change_chart(c: &Cell) -> Option<HBarChart> {
    let mut chart = HBarChart::new(
        "Change, 2nd against 1st",
        "% change (bars from zero: magnitude; sign in the label)",
    );
    for la in &c.first.load {
        let Some(lb) = c.second.load.iter().find(|l| l.name == la.name) else {
            continue;
        };
        let Some(pct) = change(mean(&la.per_second), mean(&lb.per_second)) else {
            continue;
        };
        chart.bars.push(HBar {
            name: la.name.clone(),
            value: pct.abs(),
            text: format!("{pct:+.1}%"),
            color: color(usize::from(pct < 0.0)),
            tip: format!("{}: {pct:+.1}%", la.name),
        });
    }
    chart.has_data().then_some(chart)
}
