//! Text for a terminal: a stored run's report as it was printed, every
//! control character escaped (a run saved by an earlier build, a name
//! imported from fio's JSON).

use std::io::Write;

use super::Exporter;
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
