//! CSV (RFC 4180; a cell a spreadsheet would run as a formula is
//! neutralised by `grid::csv`): the runs table; `dbio report`'s table or
//! statistics.

use std::io::Write;

use super::Exporter;
use super::runs::{Cell, Table};
use crate::grid;
use crate::report::plan::PlanReport;
use crate::report::plan::{stats_text, table};

/// Comma-separated values.
pub struct Csv;

impl Exporter<Table> for Csv {
    type Error = std::io::Error;
    fn write(&self, t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
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
}

/// CSV is one table: the statistics (one line per cell) or the scaling
/// replace the SLOB.R table, whose values they carry.
impl Exporter<PlanReport<'_>> for Csv {
    type Error = std::io::Error;
    fn write(&self, r: &PlanReport<'_>, out: &mut dyn Write) -> std::io::Result<()> {
        let text = match (r.stats, r.scaling) {
            (Some(s), _) => stats_text::summary_csv(s),
            (None, Some(s)) => stats_text::scaling_csv(s),
            (None, None) => table::csv(r.table),
        };
        out.write_all(text.as_bytes())
    }
}
