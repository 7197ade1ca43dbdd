//! The commands behind the CLI: what `dbio run`, `dbio plan`, `dbio import` and `dbio runs`
//! do once their arguments are parsed, and how their outcomes map to exit
//! codes (0 ok, 1 run failed, 2 usage or configuration error, 130
//! interrupted).

pub mod clean;
pub mod compare;
pub mod import;
pub mod lab;
mod lab_run;
pub mod manual;
pub mod output;
pub mod plan;
pub mod report;
pub mod report_html;
pub mod run;
mod run_db;
mod run_mysql;
pub mod run_pg;
pub mod runs;
pub mod verify;

pub use crate::interrupt::{interrupt_cause, interrupt_flag};

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_INTERRUPTED: u8 = 130;

/// Why a command did not succeed, with the exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Bad arguments or configuration: nothing was run.
    #[error("{0}")]
    Usage(String),
    /// The run (or the store) failed.
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C.
    #[error("{0}")]
    Interrupted(String),
    /// The reader closed stdout (`| head`): a normal end, nothing to say.
    #[error("the output was closed")]
    Closed,
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Usage(_) => EXIT_USAGE,
            CommandError::Failed(_) => EXIT_FAILED,
            CommandError::Interrupted(_) => EXIT_INTERRUPTED,
            CommandError::Closed => 0,
        }
    }
}
