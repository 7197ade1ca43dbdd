//! HTML: self-contained pages (`report/html/`): a stored run's
//! (`run_page`), a comparison's (`compare_page`).

use std::io::Write;

use super::Exporter;
use crate::report::compare::Comparison;
use crate::store::StoredRun;

/// A self-contained HTML page, stamped with when it was made.
pub struct Html {
    /// When the page was made, as its footer says it (UTC).
    pub generated: String,
}

impl Exporter<StoredRun> for Html {
    type Error = std::io::Error;
    fn write(&self, run: &StoredRun, out: &mut dyn Write) -> std::io::Result<()> {
        out.write_all(crate::report::html::run_page(run, &self.generated).as_bytes())
    }
}

impl Exporter<Comparison> for Html {
    type Error = std::io::Error;
    fn write(&self, c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
        let (cells, notes) = c.cells_and_notes();
        let page = crate::report::html::compare::compare_page(cells, &notes, &self.generated);
        out.write_all(page.as_bytes())
    }
}
