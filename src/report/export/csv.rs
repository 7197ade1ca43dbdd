//! CSV (RFC 4180; a cell a spreadsheet would run as a formula is
//! neutralised by `grid::csv`): the runs table.

use std::io::Write;

use super::Exporter;
use super::runs::{Cell, Table};
use crate::grid;

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
