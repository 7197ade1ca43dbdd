//! `dbio lab vs-engine`'s options: the model against its engines, one
//! command (docs/lab.md#the-model-against-the-engines).

use std::path::PathBuf;

use crate::workload::slob::flavor::Flavor;

/// How the sessions share tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// One table every session shares (--schemas 1 --threads-per-schema N).
    Shared,
    /// A table per session (--schemas N --threads-per-schema 1).
    PerSession,
}

/// What the table is printed as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    Text,
    Markdown,
    Json,
}

/// `dbio lab vs-engine [OPTIONS]`
#[derive(clap::Args, Debug)]
pub struct VsEngineArgs {
    /// The plan's name: the runs are stored under it, and the same name again resumes.
    #[arg(long, default_value = "vs-engine")]
    pub name: String,
    /// A directory for the runs (one per arm under it) instead of a filesystem per arm built by the lab.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["fs", "image_dir", "image_size", "mount_dir"])]
    pub target: Option<PathBuf>,
    /// The filesystem the lab makes for each arm, over a direct-io loop device.
    #[arg(long, default_value = "xfs", value_parser = ["xfs", "ext4", "btrfs"])]
    pub fs: String,
    /// Where the lab's images go.
    #[arg(long, default_value = crate::plan::lab::DEFAULT_IMAGE_DIR)]
    pub image_dir: PathBuf,
    /// The size of each arm's image (sparse).
    #[arg(long, default_value = "4G")]
    pub image_size: String,
    /// Where the arms are mounted (the servers' users must reach it) [default: IMAGE_DIR/dbio-lab-NAME].
    #[arg(long, value_name = "DIR")]
    pub mount_dir: Option<PathBuf>,
    /// Model flavors, each held against its engine (postgres: --workload pg, innodb: --workload mysql) [default: every flavor with an engine].
    #[arg(long, value_delimiter = ',', value_parser = crate::options::choice::choice::<Flavor>())]
    pub flavor: Vec<Flavor>,
    /// Session counts (the cells' rows).
    #[arg(long, value_delimiter = ',', default_values_t = [1, 8, 16, 32, 64], value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub sessions: Vec<u32>,
    /// Update percentages.
    #[arg(long, value_delimiter = ',', default_values_t = [0, 25, 50], value_parser = clap::value_parser!(u8).range(0..=100))]
    pub update_pct: Vec<u8>,
    /// Counted runs per arm and cell (at least 3: the intervals need them).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Warm-up runs per arm (run and stored, not counted).
    #[arg(long, default_value_t = 0)]
    pub warmup: u32,
    /// One table all sessions share, or a table per session.
    #[arg(long, value_enum, default_value = "shared")]
    pub layout: LayoutArg,
    /// Seconds measured per run (dbio run --time).
    #[arg(long, default_value = "60")]
    pub time: String,
    /// Seconds before measuring (dbio run --ramp).
    #[arg(long, default_value = "10")]
    pub ramp: String,
    /// Blocks per schema (dbio run --scale).
    #[arg(long, default_value = "65536")]
    pub scale: String,
    /// The buffer cache: the model's, PostgreSQL's shared_buffers, InnoDB's buffer pool (dbio run --cache).
    #[arg(long, default_value = "64M")]
    pub cache: String,
    /// The memory bound: --pg-memory / --mysql-memory, and the model's --memory where dbio run has it; `none` for no bound.
    #[arg(long, default_value = "512M")]
    pub memory: String,
    /// Where each run's window sits in the checkpoint cycle, given to both arms of a pair: any, after-checkpoint, or cycles:N (from a checkpoint until N more complete, --time the longest) [default: cycles:3 for postgres/pg; innodb/mysql always any: InnoDB's checkpoint moves after every flush batch].
    #[arg(long, value_name = "WHERE", value_parser = crate::workload::db::cycle::CycleWindow::parse)]
    pub window: Option<crate::workload::db::cycle::CycleWindow>,
    /// WAL per checkpoint cycle on both sides of the postgres pair when the window is placed (not any): PostgreSQL checkpoints every SIZE of WAL (max_wal_size set to match) and the model's redo files are SIZE each; a multiple of 16M (a WAL segment).
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = crate::units::parse_size)]
    pub cycle_wal: u64,
    /// Another dbio run option for every arm, KEY=VALUE as in a plan's [workload] (e.g. --set work_unit=64); repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// A dbio run option for one arm only, ARM:KEY=VALUE (arms: model-FLAVOR, pg, mysql; e.g. --arm-set pg:pg_set=autovacuum=on); repeatable.
    #[arg(long, value_name = "ARM:KEY=VALUE")]
    pub arm_set: Vec<String>,
    /// The table's format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: TableFormat,
    /// Also write the findings, a Markdown file per flavor (DIR/vs-engine-FLAVOR.md): command line, dates, host and load, settings and departures, the tables, the cells within 0.9-1.1.
    #[arg(long, value_name = "DIR")]
    pub findings: Option<PathBuf>,
    /// Show the plan's runs and what the lab would build; run nothing.
    #[arg(long, conflicts_with = "report_only")]
    pub dry_run: bool,
    /// Print the plan as TOML (for dbio lab run / dbio plan run) and stop.
    #[arg(long, conflicts_with_all = ["dry_run", "report_only"])]
    pub print_plan: bool,
    /// Make no run: the table from the runs already stored under --name.
    #[arg(long)]
    pub report_only: bool,
    /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}
