//! `dbio lab`'s subcommands and their arguments.

use std::path::PathBuf;

use crate::plan::lab::DEFAULT_IMAGE_DIR;

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
        metrics: crate::options::metrics::MetricsArgs,
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
    /// The model against its engines: a model and an engine arm per flavor, same storage and shape, the table of ratios with intervals.
    VsEngine(Box<super::vs_engine::VsEngineArgs>),
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
    #[arg(long, default_value = DEFAULT_IMAGE_DIR)]
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
