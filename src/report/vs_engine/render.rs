//! The model-against-engine table written out: aligned text for the
//! terminal, Markdown (what docs/findings-*.md hold) and JSON
//! (`dbio.vs_engine.v1`). Per pair, one table of ratios (model / engine,
//! 95% interval) and one of both sides' per-operation means.

use std::fmt::Write;

use super::{CellRow, PairTable, Quantity, Ratio, VsEngine};
use crate::grid;

/// A ratio and its interval: `1.02 [0.95, 1.10]`; `-` when there is none.
pub(super) fn ratio_cell(r: &Ratio) -> String {
    match r {
        Ratio::Known(c) => format!(
            "{} [{}, {}]",
            grid::readable(c.ratio),
            grid::readable(c.low),
            grid::readable(c.high)
        ),
        Ratio::None { .. } => "-".into(),
    }
}

fn mean_cell(m: Option<f64>, e: Option<f64>) -> String {
    let f = |x: Option<f64>| x.map_or("-".to_string(), grid::readable);
    format!("{} / {}", f(m), f(e))
}

fn header(first: &[&str]) -> Vec<String> {
    first
        .iter()
        .map(|s| s.to_string())
        .chain(Quantity::ALL.iter().map(|q| q.header().to_string()))
        .collect()
}

fn lead(c: &CellRow) -> Vec<String> {
    vec![
        c.update_pct.to_string(),
        c.sessions.to_string(),
        format!("{}/{}", c.model_runs, c.engine_runs),
    ]
}

/// The ratio rows and the mean rows of one pair (headers first).
pub(super) fn rows(p: &PairTable) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let mut ratios = vec![header(&["UPD%", "sessions", "n model/engine"])];
    let mut means = vec![header(&["UPD%", "sessions", "n model/engine"])];
    for c in &p.cells {
        let mut r = lead(c);
        r.extend(c.quantities.iter().map(|q| ratio_cell(&q.ratio)));
        ratios.push(r);
        let mut m = lead(c);
        m.extend(
            c.quantities
                .iter()
                .map(|q| mean_cell(q.model_mean, q.engine_mean)),
        );
        means.push(m);
    }
    (ratios, means)
}

pub(super) fn title(p: &PairTable) -> String {
    format!(
        "--flavor {} against --workload {}",
        p.flavor,
        p.engine.workload()
    )
}

pub(super) const METHOD: &str = "ratio model / engine of the runs' means, [95% interval: log-ratio t, Welch df]; per op = per statement run; commits = the updates' commits";

fn empty_note(t: &VsEngine) -> String {
    format!(
        "no cell of plan {} has both a model flavor's runs and its engine's ({} completed run(s) left out)\n{}",
        t.plan,
        t.left_out.len(),
        left_out(t)
    )
}

/// A line per run left out of the table, with why.
fn left_out(t: &VsEngine) -> String {
    t.left_out
        .iter()
        .map(|l| format!("left out: {l}\n"))
        .collect()
}

/// The terminal table.
pub fn text(t: &VsEngine) -> String {
    let mut o = String::new();
    if t.pairs.is_empty() {
        return empty_note(t);
    }
    let _ = writeln!(o, "plan {}: {METHOD}", t.plan);
    for p in &t.pairs {
        let (ratios, means) = rows(p);
        let align = "rrr".to_string() + &"l".repeat(Quantity::ALL.len());
        let _ = writeln!(o, "\n{}: model / engine", title(p));
        o.push_str(&grid::text(&ratios, &align));
        let _ = writeln!(o, "\n{}: per operation, model / engine", title(p));
        o.push_str(&grid::text(&means, &align));
    }
    if !t.left_out.is_empty() {
        o.push('\n');
        o.push_str(&left_out(t));
    }
    o
}

/// The Markdown the findings documents hold.
pub fn markdown(t: &VsEngine) -> String {
    let mut o = String::new();
    if t.pairs.is_empty() {
        return empty_note(t);
    }
    let _ = writeln!(o, "Plan `{}`: {METHOD}.", t.plan);
    for p in &t.pairs {
        let (ratios, means) = rows(p);
        let _ = writeln!(o, "\n### `{}`: model / engine\n", title(p));
        o.push_str(&grid::markdown(&ratios));
        let _ = writeln!(o, "\n#### Per operation, model / engine\n");
        o.push_str(&grid::markdown(&means));
    }
    if !t.left_out.is_empty() {
        o.push('\n');
        for l in &t.left_out {
            let _ = writeln!(o, "* left out: {}", grid::markdown_cell(l));
        }
    }
    o
}

/// The JSON document.
pub fn json(t: &VsEngine) -> String {
    serde_json::to_string_pretty(t).expect("the table serializes") + "\n"
}
