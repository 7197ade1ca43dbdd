//! `dbio runs export`: runs as CSV (RFC 4180, formulas neutralised),
//! JSON (an array of objects, keys in column order) or a Markdown table.
//! All three come from one table of typed cells, so they always agree.
//!
//! Wide (the default): one row per run, the run's columns, then one column
//! per stored metric the `--metrics` patterns select. Long (`--long`): one
//! row per run and metric, `run,metric,value`, for pandas or a pivot table.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use crate::grid;

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
enum Cell {
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

/// A table: column names and rows of cells.
struct Table {
    names: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

fn table(rows: &[RunRow], sel: &Selection, metrics: &BTreeMap<i64, Vec<(String, f64)>>) -> Table {
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
        Format::Csv => csv(&t, out),
        Format::Json => json(&t, out),
        Format::Markdown => markdown(&t, out),
    }
}

fn csv(t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
    let mut table = vec![t.names.clone()];
    table.extend(t.rows.iter().map(|r| {
        r.iter()
            .map(|c| match c {
                Cell::Null => String::new(),
                Cell::Int(v) => v.to_string(),
                Cell::Num(v) => v.to_string(),
                Cell::Bool(v) => v.to_string(),
                Cell::Text(s) => s.clone(),
                Cell::List(v) => v.join(" "),
            })
            .collect()
    }));
    out.write_all(grid::csv(&table).as_bytes())
}

impl serde::Serialize for Cell {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Cell::Null => s.serialize_unit(),
            Cell::Int(v) => s.serialize_i64(*v),
            // NaN and infinities are null, as serde_json writes them.
            Cell::Num(v) => s.serialize_f64(*v),
            Cell::Bool(v) => s.serialize_bool(*v),
            Cell::Text(v) => s.serialize_str(v),
            Cell::List(v) => v.serialize(s),
        }
    }
}

/// One exported row: its cells under the table's column names, in order.
struct JsonRow<'a>(&'a [String], &'a [Cell]);

impl serde::Serialize for JsonRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().zip(self.1))
    }
}

/// The export's layout: an array with one object per line (`"name": value`
/// pairs separated by `, `), nested lists compact, so a row greps as a line.
#[derive(Default)]
struct RowPerLine {
    depth: usize,
}

impl serde_json::ser::Formatter for RowPerLine {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth += 1;
        w.write_all(b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.depth -= 1;
        w.write_all(if self.depth == 0 { b"\n]" } else { b"]" })
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        match (self.depth, first) {
            (1, true) => w.write_all(b"\n  "),
            (1, false) => w.write_all(b",\n  "),
            (_, true) => Ok(()),
            (_, false) => w.write_all(b","),
        }
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
}

fn json(t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
    let rows: Vec<JsonRow> = t.rows.iter().map(|r| JsonRow(&t.names, r)).collect();
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, RowPerLine::default());
    // An I/O error comes back as itself (a closed pipe stays a closed pipe).
    serde::Serialize::serialize(&rows, &mut ser).map_err(std::io::Error::from)?;
    writeln!(out)
}

/// Markdown with a spaced rule (`| --- |`) and `yes`/blank booleans, as
/// spreadsheet-minded readers paste it; cells escaped as `grid` does.
fn markdown(t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "| {} |", t.names.join(" | "))?;
    let rule: Vec<&str> = t.names.iter().map(|_| "---").collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for r in &t.rows {
        let cells: Vec<String> = r
            .iter()
            .map(|c| match c {
                Cell::Null => String::new(),
                Cell::Int(v) => v.to_string(),
                Cell::Num(v) => grid::readable(*v),
                Cell::Bool(v) => if *v { "yes" } else { "" }.to_string(),
                Cell::Text(s) => grid::markdown_cell(s),
                Cell::List(v) => v.join(" "),
            })
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
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
