//! Importers: runs measured by other tools, read into the results store so
//! they join the same tables and models as dbio's own (docs/import.md).
//!
//! * [`awr_info`]: SLOB's `misc/awr_info.sh` table (parser), [`naming`]: the
//!   variable and session count in an AWR report's file name (`awr_check`:
//!   checked against the row), [`awr_runs`]: rows to stored runs with the
//!   `db.*` and `event.*` metrics.
//! * [`fio`]: fio 3.x `--output-format=json` / `json+` (parser),
//!   [`fio_runs`]: groups of jobs to stored runs with dbio's raw metric
//!   names (`fio_agg`: a group's directions merged, latencies in dbio's
//!   meaning), [`fio_hist`]: fio's latency bins, their percentiles exactly as
//!   fio computes them, and dbio's HDR histograms; `fio_text`: what
//!   `dbio runs show` prints for them.
//!
//! Parsers are pure (text in, runs or an [`ImportError`] out) and never
//! panic on any input (fuzzed in tests/import_fuzz.rs).

mod awr_check;
pub mod awr_info;
pub mod awr_runs;
pub mod fio;
mod fio_agg;
pub mod fio_hist;
pub mod fio_runs;
mod fio_text;
pub mod naming;

use crate::choice::{Choice, Named};

/// What is wrong with an imported file, and where: one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ImportError {
    /// 1-based line in the file.
    pub line: Option<usize>,
    /// The column (awr_info) or JSON path (fio).
    pub field: Option<String>,
    pub message: String,
}

impl ImportError {
    pub fn at(line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError {
            line: Some(line),
            field: Some(field.into()),
            message: message.into(),
        }
    }

    pub fn line(line: usize, message: impl Into<String>) -> Self {
        ImportError {
            line: Some(line),
            field: None,
            message: message.into(),
        }
    }

    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError {
            line: None,
            field: Some(field.into()),
            message: message.into(),
        }
    }

    pub fn whole(message: impl Into<String>) -> Self {
        ImportError {
            line: None,
            field: None,
            message: message.into(),
        }
    }
}

impl ImportError {
    /// Every bad row of a file at once, sorted by line, numbered on one line
    /// (`[1] line 2, …; [2] line 5, …`), so one attempt shows all there is
    /// to fix: the one error itself when there is one.
    pub fn many(mut errors: Vec<ImportError>) -> Option<ImportError> {
        errors.sort_by_key(|e| e.line);
        errors.dedup();
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            n => Some(ImportError::whole(format!(
                "{n} problems, nothing imported: {}",
                errors
                    .iter()
                    .enumerate()
                    .map(|(i, e)| format!("[{}] {}", i + 1, e.render()))
                    .collect::<Vec<_>>()
                    .join("; ")
            ))),
        }
    }

    fn render(&self) -> String {
        match (&self.line, &self.field) {
            (Some(l), Some(c)) => format!("line {l}, {c}: {}", self.message),
            (Some(l), None) => format!("line {l}: {}", self.message),
            (None, Some(c)) => format!("{c}: {}", self.message),
            (None, None) => self.message.clone(),
        }
    }
}

/// The SLOB.R model a user assigns at import (`--model`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelArg {
    Reads,
    Redo,
    Writes,
    /// SLOB.R's READWRITE meta-model is computed over WRITES runs: stored as
    /// `writes`.
    Readwrite,
}

impl Choice for ModelArg {
    const ALL: &'static [(Self, Named)] = &[
        (ModelArg::Reads, Named::plain("reads")),
        (ModelArg::Redo, Named::plain("redo")),
        (ModelArg::Writes, Named::plain("writes")),
        (
            ModelArg::Readwrite,
            Named::help(
                "readwrite",
                "SLOB.R's READWRITE meta-model is computed over WRITES runs: stored as `writes`",
            ),
        ),
    ];
}

impl ModelArg {
    /// The value of the store's `model` column.
    pub fn stored(self) -> &'static str {
        match self {
            ModelArg::Reads => "reads",
            ModelArg::Redo => "redo",
            ModelArg::Writes | ModelArg::Readwrite => "writes",
        }
    }
}
