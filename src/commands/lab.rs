//! `dbio lab …`: the subcommands of the filesystem lab (docs/lab.md) and
//! how their outcomes map to exit codes. `lab_run.rs` is `dbio lab run`'s
//! arm loop; the lab's parts (state file, devices, filesystems, cleanup,
//! discard) are in `crate::lab`.

use std::io;
use std::path::PathBuf;
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
        #[command(flatten)]
        metrics: crate::cli::metrics::MetricsArgs,
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
    Discard(DiscardArgs),
}

/// `dbio lab discard`'s options.
#[derive(clap::Args, Debug)]
pub struct DiscardArgs {
    /// The filesystem to test.
    #[arg(long, default_value = "ext4", value_parser = ["ext4", "xfs", "btrfs"])]
    pub fs: String,
    /// A block device to use instead of a loop device (its contents are destroyed: repeat it in --destroy-device).
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<PathBuf>,
    /// Allow destroying --device: repeat its path exactly.
    #[arg(long, value_name = "DEVICE")]
    pub destroy_device: Option<PathBuf>,
    /// Size of the image under the loop device.
    #[arg(long, default_value = "2G", value_parser = crate::units::parse_size)]
    pub image_size: u64,
    /// Directory for the image (its filesystem receives the hole punching).
    #[arg(long, default_value = crate::plan::lab::DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
    /// Loop device direct I/O on the image.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub direct_io: String,
    /// Files written before each rm.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub files: u32,
    /// Size of each file.
    #[arg(long, default_value = "64M", value_parser = crate::units::parse_size)]
    pub file_size: u64,
    /// Print the table as JSON on stdout.
    #[arg(long)]
    pub json: bool,
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
    open_store: impl FnOnce() -> anyhow::Result<Store>,
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
        LabCommand::Discard(args) => {
            let table = discard::execute(&args.settings(), is_root, interrupt)
                .map_err(CommandError::from)?;
            super::output::print(&table)
        }
    }
}
