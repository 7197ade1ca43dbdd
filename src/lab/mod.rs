//! The filesystem lab (docs/lab.md): `dbio lab run PLAN` builds each arm's
//! storage from the plan's `[lab]` section (loop devices over image files or
//! named devices; ext4, XFS, btrfs or the raw device; mkfs and mount
//! options; I/O scheduler), runs the plan's runs on it and tears it down
//! again — on success, on error and on Ctrl-C. `dbio lab discard` times
//! seed 004's TRIM experiments. `dbio lab cleanup` removes what a crashed
//! lab left, from its state file, and nothing else.
//!
//! Files: [`state`] (the state file), [`backing`] (images, loop devices,
//! named devices, schedulers), [`fs`] (mkfs, mount), [`prereq`] (checks
//! before anything is made), [`cleanup`] (undoing what a lab made), `arm`
//! (building one arm; the arm loop of `dbio lab run` is commands/lab_run.rs), [`snapshot`] (an arm's loaded
//! state kept and restored before each run), [`discard`] (seed 004) and [`discard_table`] (its table), `sys` (running the tools).

pub(crate) mod arm;
pub mod backing;
pub mod cleanup;
pub mod discard;
pub mod discard_table;
pub mod fs;
pub mod prereq;
pub mod snapshot;
pub mod state;
pub(crate) mod sys;

use std::io;
use std::path::{Path, PathBuf};

use crate::plan::PlanError;

/// What a lab built under a run (docs/lab.md).
#[derive(Clone, Debug, Default)]
pub struct LabInfo {
    /// One line for the report: filesystem, mkfs and mount options, tool
    /// version, device.
    pub summary: String,
    /// The same in full, for the stored environment.
    pub detail: serde_json::Value,
}

/// Why a lab could not do what was asked. Each displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Something the lab needs is missing (root, a tool, space): nothing was made.
    #[error("{0}")]
    Prereq(String),
    /// A device or file the lab must not touch.
    #[error("{0}")]
    Refused(String),
    /// The plan is not valid.
    #[error("{0}")]
    Plan(PlanError),
    /// A tool failed.
    #[error("{command}: {message}")]
    Command { command: String, message: String },
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// The state file could not be written: nothing more is made.
    #[error("cannot write the lab state file {}: {source}", path.display())]
    State { path: PathBuf, source: io::Error },
    /// The plan stopped (a failed step or run) or did not finish.
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C.
    #[error("{0}")]
    Interrupted(String),
}

impl LabError {
    pub(crate) fn io(what: &'static str, path: &Path, source: io::Error) -> LabError {
        LabError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    }

    /// Maps a failed write of `state`'s file.
    pub(crate) fn state(state: &state::State) -> impl FnOnce(io::Error) -> LabError + use<> {
        let path = state.path().to_path_buf();
        move |source| LabError::State { path, source }
    }
}

/// The labs with a state file: running or left behind, and what they hold.
pub fn status(dir: &Path) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let found = match state::list(dir) {
        Ok(f) => f,
        Err(e) => return format!("cannot list {}: {e}\n", dir.display()),
    };
    if found.is_empty() {
        let _ = writeln!(
            out,
            "no lab is running or left anything behind ({})",
            dir.display()
        );
    }
    for f in found {
        match f.file {
            Err(e) => {
                let _ = writeln!(out, "{}: unreadable ({e})", f.path.display());
            }
            Ok(s) => {
                let how = if s.owner_alive() {
                    "running"
                } else {
                    "not running: `dbio lab cleanup` removes what it left"
                };
                let _ = writeln!(
                    out,
                    "{}: dbio {} (pid {}, started {}) {how}",
                    f.path.display(),
                    s.command,
                    s.pid,
                    s.started
                );
                for i in &s.items {
                    let _ = writeln!(out, "  {}", i.describe());
                }
            }
        }
    }
    out
}
