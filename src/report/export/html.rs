//! HTML: a stored run's self-contained page (`report/html/`'s `run_page`).

use std::io::Write;

use super::Exporter;
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
