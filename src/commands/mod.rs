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

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

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

/// The number of the last SIGINT/SIGTERM received (0: none).
fn signal_seen() -> &'static Arc<AtomicUsize> {
    static SEEN: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    SEEN.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// A flag raised by SIGINT (Ctrl-C) or SIGTERM. Every signal only
/// raises the flag and records its number: a run that is stopping keeps
/// stopping, and its results so far are still reported and saved however
/// often the signal comes (the stop itself takes at most about a second).
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    // Not SIGHUP: `nohup dbio run` must go on after a logout.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The number first, so that whoever sees the flag finds it.
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(signal_seen()), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
    }
    flag
}

/// The signal that interrupted this process, as a report says it:
/// `Ctrl-C (SIGINT)` or `SIGTERM`; None when none came.
pub fn interrupt_cause() -> Option<&'static str> {
    match signal_seen().load(Ordering::Relaxed) {
        0 => None,
        s if s == signal_hook::consts::SIGINT as usize => Some("Ctrl-C (SIGINT)"),
        s if s == signal_hook::consts::SIGTERM as usize => Some("SIGTERM"),
        _ => Some("a signal"),
    }
}
