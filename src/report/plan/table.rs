//! The SLOB.R table over stored runs: one row per variable, one column per
//! session count plus "Overall", each cell the SLOB.R trimmed mean of the
//! chosen metric over that cell's runs (the plain mean, marked `*`, where
//! the trimmed mean yields nothing), optionally scaled to a baseline
//! variable (seed 002 scales to RAW = 1).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::rformat;
use super::stats::Interval;
use crate::analysis::{CellSummary, CiMethod, readwrite_cell, summarize};
use crate::grid;

/// One run's value of the metric.
#[derive(Clone, Debug)]
pub struct Point {
    pub variable: String,
    pub sessions: u32,
    pub value: f64,
}

/// A cell of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub n: usize,
    /// The trimmed mean (or plain mean when `trimmed` is false), after
    /// scaling to the baseline if one was asked for.
    pub value: f64,
    pub trimmed: bool,
    pub cv: Option<f64>,
    /// The 95% confidence interval of the mean (scaled like `value`) and
    /// how it was made: Student t, the bootstrap (a skewed cell) or
    /// log-normal (a rate whose t interval would reach zero);
    /// `analysis::ci95`. The same shape as `report --stats`'s.
    pub ci95: Option<Interval>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub variable: String,
    /// One per column of `Table::sessions`, then Overall; None = no runs.
    pub cells: Vec<Option<Cell>>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub metric: String,
    pub relative_to: Option<String>,
    pub sessions: Vec<u32>,
    pub rows: Vec<Row>,
    /// Print cells with this many significant digits, column by column as
    /// R prints a matrix (SLOB.R's tables: 7); None = dbio's rounding.
    #[serde(skip)]
    pub digits: Option<u8>,
}

/// What a cell shows, before scaling.
struct Stat {
    n: usize,
    value: f64,
    trimmed: bool,
    cv: Option<f64>,
    ci95: Option<(f64, f64, CiMethod)>,
}

impl Stat {
    /// A cell's summary of `values`, with the interval the shared rule picks.
    fn of(values: &[f64], c: CellSummary) -> Stat {
        Stat {
            n: c.n,
            value: c.value,
            trimmed: c.trimmed,
            cv: c.cv,
            ci95: crate::analysis::ci95(values, &c),
        }
    }
}

/// `--relative-to` names a variable none of the selected runs has.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--relative-to {name}: no such variable among the selected runs ({among})")]
pub struct NoBaseline {
    pub name: String,
    /// The variables there are, comma-separated.
    pub among: String,
}

/// Builds the table; `relative_to` names the baseline variable.
pub fn build(
    metric: &str,
    points: &[Point],
    relative_to: Option<&str>,
) -> Result<Table, NoBaseline> {
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    build_with(metric, points, relative_to, &|ix: &[usize]| {
        let v: Vec<f64> = ix.iter().map(|&i| values[i]).collect();
        summarize(&v).map(|c| Stat::of(&v, c))
    })
}

/// SLOB.R's READWRITE table: `reads[i]` and `writes[i]` are the same run;
/// each cell is the trimmed mean of the reads plus the trimmed mean of the
/// writes ([`readwrite_cell`]; plain means of both, marked, where either has
/// none). n, CV and the interval describe the runs' reads + writes.
pub fn build_readwrite(
    metric: &str,
    reads: &[Point],
    writes: &[f64],
    relative_to: Option<&str>,
) -> Result<Table, NoBaseline> {
    let r: Vec<f64> = reads.iter().map(|p| p.value).collect();
    build_with(metric, reads, relative_to, &|ix: &[usize]| {
        let rs: Vec<f64> = ix.iter().map(|&i| r[i]).collect();
        let ws: Vec<f64> = ix.iter().map(|&i| writes[i]).collect();
        let rw = readwrite_cell(&rs, &ws)?;
        let sums: Vec<f64> = ix.iter().map(|&i| r[i] + writes[i]).collect();
        let s = summarize(&sums)?;
        Some(Stat {
            n: ix.len(),
            value: rw.value,
            trimmed: rw.trimmed,
            cv: s.cv,
            ci95: crate::analysis::ci95(&sums, &s),
        })
    })
}

/// The table over `points`' variables and session counts, each cell
/// `stat` of the indices (into `points`) of its runs.
fn build_with(
    metric: &str,
    points: &[Point],
    relative_to: Option<&str>,
    stat: &dyn Fn(&[usize]) -> Option<Stat>,
) -> Result<Table, NoBaseline> {
    let sessions: Vec<u32> = points
        .iter()
        .map(|p| p.sessions)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut by_var: BTreeMap<&str, BTreeMap<u32, Vec<usize>>> = BTreeMap::new();
    for (i, p) in points.iter().enumerate() {
        by_var
            .entry(&p.variable)
            .or_default()
            .entry(p.sessions)
            .or_default()
            .push(i);
    }
    let summarize_row = |cols: &BTreeMap<u32, Vec<usize>>| -> Vec<Option<Stat>> {
        let mut v: Vec<Option<Stat>> = sessions
            .iter()
            .map(|s| cols.get(s).and_then(|x| stat(x)))
            .collect();
        let all: Vec<usize> = cols.values().flatten().copied().collect();
        v.push(stat(&all));
        v
    };
    let base: Option<Vec<Option<Stat>>> = match relative_to {
        Some(b) => Some(summarize_row(by_var.get(b).ok_or_else(|| NoBaseline {
            name: b.to_string(),
            among: by_var.keys().copied().collect::<Vec<_>>().join(", "),
        })?)),
        None => None,
    };
    let rows = by_var
        .iter()
        .map(|(var, cols)| {
            let cells = summarize_row(cols)
                .into_iter()
                .enumerate()
                .map(|(i, c)| {
                    let c = c?;
                    let scale = match &base {
                        Some(b) => match b[i].as_ref().map(|x| x.value) {
                            Some(v) if v != 0.0 => 1.0 / v,
                            _ => return None,
                        },
                        None => 1.0,
                    };
                    Some(Cell {
                        n: c.n,
                        value: c.value * scale,
                        trimmed: c.trimmed,
                        cv: c.cv,
                        ci95: c.ci95.map(|(a, b, method)| Interval {
                            low: a * scale,
                            high: b * scale,
                            method,
                        }),
                    })
                })
                .collect();
            Row {
                variable: var.to_string(),
                cells,
            }
        })
        .collect();
    Ok(Table {
        metric: metric.to_string(),
        relative_to: relative_to.map(str::to_string),
        sessions,
        rows,
        digits: None,
    })
}

fn header(t: &Table) -> Vec<String> {
    let mut h = vec!["variable".to_string()];
    h.extend(t.sessions.iter().map(|s| s.to_string()));
    h.push("Overall".into());
    h
}

fn show(c: &Option<Cell>, decimals: Option<usize>) -> String {
    match c {
        None => "-".into(),
        Some(c) => format!(
            "{}{}",
            match decimals {
                Some(d) => format!("{:.d$}", c.value),
                None => grid::num(c.value),
            },
            if c.trimmed { "" } else { "*" }
        ),
    }
}

/// The decimals of every cell of a relative table: one precision for the
/// whole table, enough for three significant digits of its smallest
/// non-zero ratio (at least 2, at most 6), so that 1.000 and 0.452 read
/// alike and no ratio loses its digits.
pub fn relative_decimals(values: impl IntoIterator<Item = f64>) -> usize {
    let smallest = values
        .into_iter()
        .map(f64::abs)
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !smallest.is_finite() {
        return 2;
    }
    (2 - smallest.log10().floor() as i64).clamp(2, 6) as usize
}

/// The cells as printed: dbio's rounding (one precision for a relative
/// table), or R's with `t.digits`. `-` for no runs; `*` marks a plain mean.
fn grid(t: &Table) -> Vec<Vec<String>> {
    let decimals = t.relative_to.as_ref().map(|_| {
        relative_decimals(
            t.rows
                .iter()
                .flat_map(|r| &r.cells)
                .flatten()
                .map(|c| c.value),
        )
    });
    let mut g: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.cells.iter().map(|c| show(c, decimals)).collect())
        .collect();
    if let Some(d) = t.digits {
        #[allow(clippy::needless_range_loop)] // col indexes every row's cells
        for col in 0..t.sessions.len() + 1 {
            let cells: Vec<&Cell> = t
                .rows
                .iter()
                .filter_map(|r| r.cells[col].as_ref())
                .collect();
            // The column's decimals come from the values SLOB.R prints (the
            // trimmed means); plain means, marked, follow them.
            let trimmed: Vec<f64> = cells
                .iter()
                .filter(|c| c.trimmed)
                .map(|c| c.value)
                .collect();
            let all: Vec<f64> = cells.iter().map(|c| c.value).collect();
            let layout = rformat::layout(if trimmed.is_empty() { &all } else { &trimmed }, d);
            for (r, printed) in t.rows.iter().zip(g.iter_mut()) {
                if let Some(c) = &r.cells[col] {
                    printed[col] = format!(
                        "{}{}",
                        layout.format(c.value),
                        if c.trimmed { "" } else { "*" }
                    );
                }
            }
        }
    }
    g
}

/// The header and one line per variable, as printed.
fn lines(t: &Table) -> Vec<Vec<String>> {
    let mut rows = vec![header(t)];
    for (r, cells) in t.rows.iter().zip(grid(t)) {
        let mut line = vec![r.variable.clone()];
        line.extend(cells);
        rows.push(line);
    }
    rows
}

/// A terminal table.
pub fn text(t: &Table) -> String {
    let scaled = t
        .relative_to
        .as_deref()
        .map(|b| format!(", relative to {b} = 1"))
        .unwrap_or_default();
    let any_plain = t
        .rows
        .iter()
        .flat_map(|r| &r.cells)
        .flatten()
        .any(|c| !c.trimmed);
    let note = if any_plain {
        format!("{PLAIN_MEAN}\n")
    } else {
        String::new()
    };
    format!(
        "{} by variable and sessions (SLOB.R trimmed mean{scaled})\n{}{note}",
        t.metric,
        grid::text(&lines(t), "l")
    )
}

/// The footnote of the `*` cells.
pub const PLAIN_MEAN: &str =
    "* plain mean: fewer than three distinct values, so SLOB.R's trimmed mean gives none";

/// A Markdown table.
pub fn markdown(t: &Table) -> String {
    grid::markdown(&lines(t))
}

/// CSV: one line per variable, `*` kept as a marker of plain means, no
/// runs = an empty field.
pub fn csv(t: &Table) -> String {
    let mut rows = lines(t);
    for (r, line) in t.rows.iter().zip(rows.iter_mut().skip(1)) {
        for (c, printed) in r.cells.iter().zip(line.iter_mut().skip(1)) {
            if c.is_none() {
                printed.clear();
            }
        }
    }
    grid::csv(&rows)
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
