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
//! before anything is made), [`cleanup`] (undoing what a lab made), `run`
//! (the arm loop), `arm` (building one arm), [`discard`] (seed 004) and [`discard_table`] (its table), `sys` (running the tools).

mod arm;
pub mod backing;
pub mod cleanup;
pub mod discard;
pub mod discard_table;
pub mod fs;
pub mod prereq;
mod run;
pub mod state;
mod sys;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::commands::CommandError;
use crate::plan::PlanError;
use crate::store::Store;

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

impl From<LabError> for CommandError {
    fn from(e: LabError) -> CommandError {
        match e {
            LabError::Prereq(_) | LabError::Refused(_) => CommandError::Usage(e.to_string()),
            LabError::Plan(PlanError::Invalid { .. } | PlanError::Read { .. }) => {
                CommandError::Usage(e.to_string())
            }
            LabError::Interrupted(m) => CommandError::Interrupted(m),
            e => CommandError::Failed(e.to_string()),
        }
    }
}

/// `dbio lab ...`
#[derive(clap::Subcommand, Debug)]
pub enum LabCommand {
    /// Build each [lab] arm of a plan (mkfs, mount), run its runs there, tear it down; rerun to continue.
    Run {
        /// The plan file (TOML with a [lab] section, see docs/lab.md).
        plan: PathBuf,
        /// Show what would be built and run; build and run nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove what a crashed or killed lab left (mounts, loop devices, images it listed) and nothing else.
    Cleanup {
        /// Say what would be removed; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Show labs that are running or left something behind.
    Status,
    /// Time mkfs, rm and fstrim with and without discard (TRIM) on a loop or named device.
    Discard(discard::DiscardArgs),
}

/// Runs `dbio lab ...`; `open_store` opens the results store (lab run only).
pub fn execute(
    cmd: LabCommand,
    open_store: impl FnOnce() -> Result<Store, CommandError>,
    interrupt: &AtomicBool,
) -> Result<(), CommandError> {
    let is_root = rustix::process::geteuid().is_root();
    match cmd {
        LabCommand::Run { plan, dry_run } => {
            run::run(&plan, dry_run, is_root, open_store, interrupt)
        }
        LabCommand::Cleanup { dry_run } => {
            if !dry_run {
                prereq::check_root(is_root, "cleanup")?;
            }
            let dir = state::lab_dir();
            let mut err = io::stderr();
            let c = cleanup::cleanup(&dir, None, dry_run, &mut err)?;
            for l in &c.left {
                eprintln!("lab cleanup: {l}");
            }
            if !dry_run {
                eprintln!(
                    "lab cleanup: {} thing(s) undone from {} state file(s) in {}",
                    c.undone,
                    c.files,
                    dir.display()
                );
            }
            if c.left.is_empty() {
                Ok(())
            } else {
                Err(CommandError::Failed(format!(
                    "{} state file(s) left in {} (see above)",
                    c.left.len(),
                    dir.display()
                )))
            }
        }
        LabCommand::Status => crate::commands::output::print(&status(&state::lab_dir())),
        LabCommand::Discard(args) => discard::execute(&args, is_root, interrupt),
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
