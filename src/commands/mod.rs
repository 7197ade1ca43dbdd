//! The commands behind the CLI: what `dbio run`, `dbio plan`, `dbio import` and `dbio runs`
//! do once their arguments are parsed, and how their outcomes map to exit
//! codes (0 ok, 1 run failed, 2 usage or configuration error, 130
//! interrupted).

pub mod compare;
pub mod import;
pub mod plan;
pub mod report;
pub mod report_html;
pub mod run;
pub mod run_pg;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

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
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Usage(_) => EXIT_USAGE,
            CommandError::Failed(_) => EXIT_FAILED,
            CommandError::Interrupted(_) => EXIT_INTERRUPTED,
        }
    }
}

/// A flag raised by the first Ctrl-C (or SIGTERM); a second one exits at once.
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(EXIT_INTERRUPTED),
            Arc::clone(&flag),
        );
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
    }
    flag
}
