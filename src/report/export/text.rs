//! Text for a terminal, every control character escaped (a run saved by
//! an earlier build, a name imported from fio's JSON, a label): a stored
//! run's report as it was printed; a comparison (`dbio compare`); `dbio
//! report`'s table and statistics.

use std::io::Write;

use super::Exporter;
use crate::report::compare::{Comparison, render, render_cells};
use crate::report::plan::PlanReport;
use crate::report::plan::stats_text::Style;
use crate::store::StoredRun;
use crate::terminal;

/// Text for a terminal.
pub struct Text;

impl Exporter<StoredRun> for Text {
    type Error = std::io::Error;
    fn write(&self, run: &StoredRun, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(terminal::text(&run.report_text).as_bytes())
    }
}

impl Exporter<Comparison> for Text {
    type Error = std::io::Error;
    fn write(&self, c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
        let text = match c {
            Comparison::One(cell) => render(&cell.first, &cell.second),
            Comparison::PerSessions { cells, .. } => render_cells(cells, &c.cells_and_notes().1),
        };
        out.write_all(terminal::text(&text).as_bytes())
    }
}

impl Exporter<PlanReport<'_>> for Text {
    type Error = std::io::Error;
    fn write(&self, r: &PlanReport<'_>, out: &mut dyn Write) -> std::io::Result<()> {
        // Variable names and labels from plans and imports, escaped.
        out.write_all(terminal::text(&r.styled(Style::Text)).as_bytes())
    }
}
