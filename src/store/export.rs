//! `dbio runs export`: one row per run as CSV (RFC 4180), JSON (an array of
//! objects, keys in column order) or a Markdown table. All three come from
//! one column list, so they always agree.

use std::io::Write;

use crate::grid;

use super::runs::RunRow;
use super::time::fmt_utc;

/// Export formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Csv,
    Json,
    Markdown,
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
];

/// Names of the exported columns, in order.
pub fn column_names() -> Vec<&'static str> {
    COLUMNS.iter().map(|(name, _)| *name).collect()
}

/// Writes `rows` in `format`.
pub fn write(format: Format, rows: &[RunRow], out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        Format::Csv => csv(rows, out),
        Format::Json => json(rows, out),
        Format::Markdown => markdown(rows, out),
    }
}

fn csv(rows: &[RunRow], out: &mut dyn Write) -> std::io::Result<()> {
    let mut table = vec![column_names().iter().map(|n| n.to_string()).collect()];
    table.extend(rows.iter().map(|r| {
        COLUMNS
            .iter()
            .map(|(_, get)| match get(r) {
                Cell::Null => String::new(),
                Cell::Int(v) => v.to_string(),
                Cell::Num(v) => v.to_string(),
                Cell::Bool(v) => v.to_string(),
                Cell::Text(s) => s,
                Cell::List(v) => v.join(" "),
            })
            .collect()
    }));
    out.write_all(grid::csv(&table).as_bytes())
}

fn json(rows: &[RunRow], out: &mut dyn Write) -> std::io::Result<()> {
    let json = |c: Cell| match c {
        Cell::Null => serde_json::Value::Null,
        Cell::Int(v) => v.into(),
        Cell::Num(v) => v.into(),
        Cell::Bool(v) => v.into(),
        Cell::Text(s) => s.into(),
        Cell::List(v) => v.into(),
    };
    writeln!(out, "[")?;
    for (i, r) in rows.iter().enumerate() {
        let fields: Vec<String> = COLUMNS
            .iter()
            .map(|(name, get)| format!("{}: {}", serde_json::Value::from(*name), json(get(r))))
            .collect();
        let comma = if i + 1 < rows.len() { "," } else { "" };
        writeln!(out, "  {{{}}}{comma}", fields.join(", "))?;
    }
    writeln!(out, "]")
}

/// Markdown with a spaced rule (`| --- |`) and `yes`/blank booleans, as
/// spreadsheet-minded readers paste it; cells escaped as `grid` does.
fn markdown(rows: &[RunRow], out: &mut dyn Write) -> std::io::Result<()> {
    let names = column_names();
    writeln!(out, "| {} |", names.join(" | "))?;
    let rule: Vec<&str> = names.iter().map(|_| "---").collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for r in rows {
        let cells: Vec<String> = COLUMNS
            .iter()
            .map(|(_, get)| match get(r) {
                Cell::Null => String::new(),
                Cell::Int(v) => v.to_string(),
                Cell::Num(v) => grid::readable(v),
                Cell::Bool(v) => if v { "yes" } else { "" }.to_string(),
                Cell::Text(s) => grid::markdown_cell(&s),
                Cell::List(v) => v.join(" "),
            })
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}
