//! The formats dbio writes what it measured in, behind one seam: a format
//! is a unit struct in a file of its own — `text.rs`, `json.rs`, `csv.rs`,
//! `markdown.rs`, `html.rs`, `fio_json.rs` — implementing [`Exporter`] for
//! each product it can write. Products: the runs table (`runs.rs`, `dbio
//! runs export`), a stored run (`dbio runs show`) and a comparison
//! (`report::compare::Comparison`, `dbio compare`). A new format is a
//! file with its impls and a value of the command's `--format`.

pub mod csv;
pub mod fio_json;
pub mod html;
pub mod json;
pub mod markdown;
pub mod runs;
pub mod text;

use std::io::Write;

pub use csv::Csv;
pub use fio_json::FioJson;
pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;
pub use text::Text;

/// One format's writer of one product (`T`: the runs table, a stored run,
/// a comparison).
pub trait Exporter<T: ?Sized> {
    /// What stops the write: the output's error, or why `T` has no form in
    /// this format (a fio import has no fio-json of dbio's).
    type Error;
    /// Writes `what` onto `out` in this format.
    fn write(&self, what: &T, out: &mut dyn Write) -> Result<(), Self::Error>;
}
