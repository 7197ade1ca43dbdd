//! Markdown tables: the runs table; `dbio report`'s table and statistics.

use std::io::Write;

use super::Exporter;
use super::runs::{Cell, Table};
use crate::grid;
use crate::report::plan::PlanReport;
use crate::report::plan::stats_text::Style;
use crate::terminal;

/// A Markdown table.
pub struct Markdown;

/// Markdown with a spaced rule (`| --- |`) and `yes`/blank booleans, as
/// spreadsheet-minded readers paste it; cells escaped as `grid` does.
impl Exporter<Table> for Markdown {
    type Error = std::io::Error;
    fn write(&self, t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
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
}

impl Exporter<PlanReport<'_>> for Markdown {
    type Error = std::io::Error;
    fn write(&self, r: &PlanReport<'_>, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(terminal::text(&r.styled(Style::Markdown)).as_bytes())
    }
}
