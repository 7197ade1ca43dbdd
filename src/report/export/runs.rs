//! `dbio runs export`'s product: the runs table, one table of typed cells
//! that `csv.rs` (RFC 4180, formulas neutralised), `json.rs` (an array of
//! objects, keys in column order) and `markdown.rs` write, so the three
//! always agree.
//!
//! Wide (the default): one row per run, the run's columns, then one column
//! per stored metric the `--metrics` patterns select. Long (`--long`): one
//! row per run and metric, `run,metric,value`, for pandas or a pivot table.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use super::{Csv, Exporter, Json, Markdown};
use crate::choice::{Choice, Named};
use crate::store::{RunRow, fmt_utc};

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Json,
    Markdown,
}

impl Choice for Format {
    const ALL: &'static [(Self, Named)] = &[
        (Format::Csv, Named::plain("csv")),
        (Format::Json, Named::plain("json")),
        (Format::Markdown, Named::plain("markdown")),
    ];
}

/// One exported value.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Num(f64),
    Bool(bool),
    Text(String),
    List(Vec<String>),
}

type Column = (&'static str, fn(&RunRow) -> Cell);

fn text(v: &Option<String>) -> Cell {
    v.clone().map_or(Cell::Null, Cell::Text)
}
fn int(v: Option<i64>) -> Cell {
    v.map_or(Cell::Null, Cell::Int)
}
fn num(v: Option<f64>) -> Cell {
    v.map_or(Cell::Null, Cell::Num)
}

/// The exported columns, in order (docs/store.md lists them).
const COLUMNS: &[Column] = &[
    ("id", |r| Cell::Int(r.id)),
    ("started", |r| Cell::Text(fmt_utc(r.started_unix_ms))),
    ("status", |r| Cell::Text(r.status.clone())),
    ("workload", |r| text(&r.workload)),
    ("pattern", |r| text(&r.pattern)),
    ("sessions", |r| int(r.sessions)),
    ("bs", |r| int(r.block_size)),
    ("engine", |r| text(&r.engine)),
    ("io_mode", |r| text(&r.io_mode)),
    ("target", |r| text(&r.target)),
    ("plan", |r| text(&r.plan)),
    ("variable", |r| text(&r.variable)),
    ("tags", |r| Cell::List(r.tags.clone())),
    ("total_iops", |r| num(r.metrics.total_iops)),
    ("total_mib_per_s", |r| num(r.metrics.total_mib_per_s)),
    ("total_p99_us", |r| num(r.metrics.total_p99_us)),
    ("read_iops", |r| num(r.metrics.read_iops)),
    ("read_p99_us", |r| num(r.metrics.read_p99_us)),
    ("write_iops", |r| num(r.metrics.write_iops)),
    ("write_p99_us", |r| num(r.metrics.write_p99_us)),
    ("sync_p99_us", |r| num(r.metrics.sync_p99_us)),
    ("cpu_us_per_io", |r| num(r.metrics.cpu_us_per_io)),
    ("warmup", |r| Cell::Bool(r.warmup)),
    ("cell_key", |r| text(&r.cell_key)),
    ("note", |r| text(&r.note)),
    ("source", |r| Cell::Text(r.source.clone())),
    ("source_file", |r| text(&r.source_file)),
    ("model", |r| text(&r.model)),
    ("db_physical_reads_per_s", |r| {
        num(r.metrics.db_physical_reads_per_s)
    }),
    ("db_physical_writes_per_s", |r| {
        num(r.metrics.db_physical_writes_per_s)
    }),
];

/// Names of the exported columns, in order.
pub fn column_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(name, _)| *name).collect()
}

/// Which stored metrics go into an export, and how.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Globs over metric names (`*` any text, `?` one character); empty:
    /// none in wide form, all in long form.
    pub patterns: Vec<String>,
    /// One row per run and metric instead of one per run.
    pub long: bool,
}

impl Selection {
    fn wants(&self, name: &str) -> bool {
        (self.patterns.is_empty() && self.long) || self.patterns.iter().any(|p| glob(p, name))
    }
}

/// True when `name` matches `pattern` whole (`*`: any text, dots included;
/// `?`: one character).
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut i, mut j) = (0, 0);
    // The last `*` seen and where in `name` it was tried from.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    star = Some((si, sj + 1));
                    i = si + 1;
                    j = sj + 1;
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The patterns of `sel` that select none of `metrics` (every run's names).
pub fn unmatched<'a>(
    sel: &'a Selection,
    metrics: &BTreeMap<i64, Vec<(String, f64)>>,
) -> Vec<&'a str> {
    sel.patterns
        .iter()
        .filter(|p| !metrics.values().flatten().any(|(name, _)| glob(p, name)))
        .map(String::as_str)
        .collect()
}

/// The runs table: column names and rows of cells.
pub struct Table {
    pub names: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// `rows` with the metrics `sel` selects out of `metrics` (run id → its
/// stored metrics).
pub fn table(
    rows: &[RunRow],
    sel: &Selection,
    metrics: &BTreeMap<i64, Vec<(String, f64)>>,
) -> Table {
    let chosen = |id: i64| {
        metrics
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|(name, _)| sel.wants(name))
    };
    if sel.long {
        let mut out = Vec::new();
        for r in rows {
            for (name, v) in chosen(r.id) {
                out.push(vec![
                    Cell::Int(r.id),
                    Cell::Text(name.clone()),
                    Cell::Num(*v),
                ]);
            }
        }
        return Table {
            names: ["run", "metric", "value"].map(String::from).to_vec(),
            rows: out,
        };
    }
    let extra: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| chosen(r.id).map(|(n, _)| n.as_str()))
        .collect();
    let mut names: Vec<String> = column_names().iter().map(|n| n.to_string()).collect();
    names.extend(extra.iter().map(|n| n.to_string()));
    let out = rows
        .iter()
        .map(|r| {
            let mine: BTreeMap<&str, f64> = chosen(r.id).map(|(n, v)| (n.as_str(), *v)).collect();
            COLUMNS
                .iter()
                .map(|(_, get)| get(r))
                .chain(extra.iter().map(|n| num(mine.get(n).copied())))
                .collect()
        })
        .collect();
    Table { names, rows: out }
}

/// Writes `rows` in `format`, with the metrics `sel` selects out of
/// `metrics` (run id → its stored metrics).
pub fn write(
    format: Format,
    rows: &[RunRow],
    sel: &Selection,
    metrics: &BTreeMap<i64, Vec<(String, f64)>>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let t = table(rows, sel, metrics);
    match format {
        Format::Csv => Csv.write(&t, out),
        Format::Json => Json.write(&t, out),
        Format::Markdown => Markdown.write(&t, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("db.*", "db.physical_reads_s"));
        assert!(glob("event.*.avg_ms", "event.log_file_sync.avg_ms"));
        assert!(glob("*", "x"));
        assert!(glob("read.latency.p9?_us", "read.latency.p99_us"));
        assert!(!glob("db.*", "xdb.y"));
        assert!(!glob("read.iops", "read.iops2"));
        assert!(!glob("read.latency.p9?_us", "read.latency.p99_9_us"));
        assert!(glob("*a*b*c", "xxaxxbxxc"));
        assert!(!glob("*a*b*c", "xxaxxcxxb"));
    }
}
