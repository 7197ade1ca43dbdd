//! `dbio lab …`: the subcommands of the filesystem lab (docs/lab.md) and
//! how their outcomes map to exit codes. `lab_run.rs` is `dbio lab run`'s
//! arm loop; the lab's parts (state file, devices, filesystems, cleanup,
//! discard) are in `crate::lab`.

use crate::cli::lab::{DiscardArgs, LabCommand};
use std::io;
use std::sync::atomic::AtomicBool;

use super::CommandError;
use crate::lab::{LabError, cleanup, discard, prereq, state, status};
use crate::plan::{FsKind, PlanError};
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

impl DiscardArgs {
    fn settings(self) -> discard::Discard {
        discard::Discard {
            fs: FsKind::parse(&self.fs).expect("clap checked the value"),
            device: self.device,
            destroy_device: self.destroy_device,
            image_size: self.image_size,
            image_dir: self.image_dir,
            direct_io: self.direct_io == "on",
            files: self.files,
            file_size: self.file_size,
            json: self.json,
        }
    }
}

/// Runs `dbio lab ...`; `open_store` opens the results store (lab run only).
pub fn execute(
    cmd: LabCommand,
    open_store: impl Fn() -> anyhow::Result<Store>,
    interrupt: &AtomicBool,
) -> anyhow::Result<()> {
    let is_root = rustix::process::geteuid().is_root();
    match cmd {
        LabCommand::Run {
            plan,
            dry_run,
            metrics,
            ..
        } => super::lab_run::run(
            &plan,
            (dry_run, &metrics.wanted()),
            is_root,
            open_store,
            interrupt,
        ),
        LabCommand::Cleanup { dry_run } => {
            if !dry_run {
                prereq::check_root(is_root, "cleanup").map_err(CommandError::from)?;
            }
            let dir = state::lab_dir();
            let mut err = io::stderr();
            let c = cleanup::cleanup(&dir, None, dry_run, &mut err).map_err(CommandError::from)?;
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
                ))
                .into())
            }
        }
        LabCommand::Status => super::output::print(&status(&state::lab_dir())),
        LabCommand::VsEngine(args) => {
            super::vs_engine::execute(&args, is_root, open_store, interrupt)
        }
        LabCommand::Discard(args) => {
            let table = discard::execute(&args.settings(), is_root, interrupt)
                .map_err(CommandError::from)?;
            super::output::print(&table)
        }
    }
}
