//! JSON: the runs table as an array with one object per line, keys in
//! column order, so a row greps as a line; a stored run as its document,
//! indented; a comparison as `dbio.compare.v2` (docs/json.md); `dbio
//! report`'s table with its statistics.

use std::io::Write;

use super::Exporter;
use super::runs::{Cell, Table};
use crate::report::compare::Comparison;
use crate::report::compare::json::SCHEMA as COMPARE_SCHEMA;
use crate::report::plan::PlanReport;
use crate::store::StoredRun;

/// JSON.
pub struct Json;

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

impl Exporter<Table> for Json {
    type Error = std::io::Error;
    fn write(&self, t: &Table, out: &mut dyn Write) -> std::io::Result<()> {
        let rows: Vec<JsonRow> = t.rows.iter().map(|r| JsonRow(&t.names, r)).collect();
        let mut ser = serde_json::Serializer::with_formatter(&mut *out, RowPerLine::default());
        // An I/O error comes back as itself (a closed pipe stays a closed pipe).
        serde::Serialize::serialize(&rows, &mut ser).map_err(std::io::Error::from)?;
        writeln!(out)
    }
}

impl Exporter<StoredRun> for Json {
    type Error = std::io::Error;
    fn write(&self, run: &StoredRun, out: &mut dyn Write) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(&run.report).expect("JSON values serialize");
        writeln!(out, "{text}")
    }
}

impl Exporter<Comparison> for Json {
    type Error = std::io::Error;
    fn write(&self, c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
        let doc = match c {
            Comparison::One(cell) => serde_json::json!({
                "schema": COMPARE_SCHEMA,
                "sessions": cell.sessions,
                "first": cell.first,
                "second": cell.second,
                "tests": cell.tests,
            }),
            Comparison::PerSessions {
                cells, left_out, ..
            } => serde_json::json!({
                "schema": COMPARE_SCHEMA,
                "cells": cells,
                "left_out": left_out,
            }),
        };
        let text = serde_json::to_string_pretty(&doc).expect("the comparison serializes");
        writeln!(out, "{text}")
    }
}

impl Exporter<PlanReport<'_>> for Json {
    type Error = std::io::Error;
    fn write(&self, r: &PlanReport<'_>, out: &mut dyn Write) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(r).expect("the report serializes");
        writeln!(out, "{text}")
    }
}
