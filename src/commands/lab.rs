//! `dbio lab …`: the subcommands of the filesystem lab (docs/lab.md) and
//! how their outcomes map to exit codes. `lab_run.rs` is `dbio lab run`'s
//! arm loop; the lab's parts (state file, devices, filesystems, cleanup,
//! discard) are in `crate::lab`.

use std::io;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use super::CommandError;
use crate::lab::{LabError, cleanup, discard, prereq, state, status};
use crate::plan::PlanError;
use crate::store::Store;

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
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
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
        LabCommand::Run { plan, dry_run, .. } => {
            super::lab_run::run(&plan, dry_run, is_root, open_store, interrupt)
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
        LabCommand::Status => super::output::print(&status(&state::lab_dir())),
        LabCommand::Discard(args) => discard::execute(&args, is_root, interrupt),
    }
}
