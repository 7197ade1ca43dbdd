//! The SLOB model's settings (`--workload slob`, and the shape the pg and
//! mysql workloads share with it): plain values, resolved and validated by
//! the `dbio` crate's `cli/slob.rs`. What they mean for the model's threads
//! (redo sizes, the tablespace's extents) is `workload::slob`'s.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::choice::{Choice, Named};
use crate::config::db::CycleWindow;
use crate::config::{EngineKind, HotspotConfig};

/// How much redo an update generates per changed block (SLOB's REDO_STRESS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoStress {
    /// 2 of the 19 columns change: 256 bytes of redo per block.
    Lite,
    /// All 19 columns change: 2432 bytes per block (9.5x LITE).
    Heavy,
}

impl Choice for RedoStress {
    const ALL: &'static [(Self, Named)] = &[
        (
            RedoStress::Lite,
            Named::help(
                "lite",
                "2 of the 19 columns change: 256 bytes of redo per block",
            ),
        ),
        (
            RedoStress::Heavy,
            Named::help(
                "heavy",
                "All 19 columns change: 2432 bytes per block (9.5x LITE)",
            ),
        ),
    ];
}

/// How the log writer makes a write durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoSync {
    /// Redo logs opened O_DSYNC: the write returns when durable.
    Dsync,
    /// A plain write followed by fdatasync().
    Fdatasync,
}

impl Choice for RedoSync {
    const ALL: &'static [(Self, Named)] = &[
        (
            RedoSync::Dsync,
            Named::help(
                "dsync",
                "Redo logs opened O_DSYNC: the write returns when durable",
            ),
        ),
        (
            RedoSync::Fdatasync,
            Named::help("fdatasync", "A plain write followed by fdatasync()"),
        ),
    ];
}

/// SLOB's think time: every `every`th operation sleeps `min_s..=max_s`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Think {
    pub every: u32,
    pub min_s: f64,
    pub max_s: f64,
}

/// The engine whose logging the model imitates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Oracle: redo change vectors only (SLOB's REDO_STRESS sizes).
    #[default]
    Oracle,
    /// PostgreSQL: WAL records, plus a full-page image of each block the
    /// first time it changes after a checkpoint begins.
    Postgres,
    /// InnoDB: redo records per changed row, 16 KiB pages written through
    /// a doublewrite area.
    Innodb,
}

impl Choice for Flavor {
    const ALL: &'static [(Self, Named)] = &[
        (
            Flavor::Oracle,
            Named::help(
                "oracle",
                "Oracle: redo change vectors only (SLOB's REDO_STRESS sizes)",
            ),
        ),
        (
            Flavor::Postgres,
            Named::help(
                "postgres",
                "PostgreSQL: WAL records, plus a full-page image of each block the first time it changes after a checkpoint begins",
            ),
        ),
        (
            Flavor::Innodb,
            Named::help(
                "innodb",
                "InnoDB: redo records per changed row, 16 KiB pages written through a doublewrite area (MariaDB 10.11)",
            ),
        ),
    ];
}

impl Flavor {
    pub fn is_oracle(&self) -> bool {
        *self == Flavor::Oracle
    }
}

/// The resolved settings of the model (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlobConfig {
    pub schemas: u32,
    pub threads_per_schema: u32,
    /// Rows (= blocks) per schema.
    pub scale_blocks: u64,
    #[serde(rename = "block_size_bytes")]
    pub block_size: u32,
    pub datafiles: u32,
    pub work_unit: u32,
    pub update_pct: u8,
    pub scan_pct: u8,
    /// Blocks per multi-block scan read.
    pub scan_blocks: u32,
    pub redo_stress: RedoStress,
    /// Whose redo: Oracle's (the default, left out of the JSON), PostgreSQL's or InnoDB's.
    #[serde(default, skip_serializing_if = "Flavor::is_oracle")]
    pub flavor: Flavor,
    pub hotspot: Option<HotspotConfig>,
    /// Every Nth operation of a session goes to schema 0 (SLOB's HOT_SCHEMA_FREQUENCY).
    pub hot_schema_every: Option<u32>,
    pub think: Option<Think>,
    /// Operations per session (SLOB's WORK_LOOP); None = run for --time.
    pub work_loop: Option<u64>,
    pub cache_bytes: u64,
    pub db_writers: u32,
    /// Most buffers a DB writer writes in one batch.
    pub dbwr_batch: u32,
    /// Most buffers per second the DB writers write outside checkpoints
    /// (`--dbwr-rate`; PostgreSQL's background writer: `bgwriter_lru_maxpages`
    /// per `bgwriter_delay`); None = as fast as they can.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "dbwr_rate_buffers_per_s"
    )]
    pub dbwr_rate: Option<u32>,
    /// `--memory`: the bound of the model's memory, page cache included (a
    /// memory cgroup); the datafiles are then read and written buffered.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "memory_bytes"
    )]
    pub memory: Option<u64>,
    /// The DB writer threads' nice value, where the process may set it
    /// (`dbwr::raise_priority`); 0 (unchanged) in runs stored before it was.
    #[serde(default)]
    pub dbwr_nice: i32,
    /// How the DB writers write (the sessions and the log writer use the
    /// run's `--engine`).
    pub dbwr_engine: EngineKind,
    /// Directory of the redo log files.
    pub redo_dir: PathBuf,
    pub redo_files: u32,
    #[serde(rename = "redo_file_size_bytes")]
    pub redo_file_size: u64,
    /// Redo block size: every log write is padded to it.
    #[serde(rename = "redo_block_bytes")]
    pub redo_block: u32,
    pub redo_sync: RedoSync,
    #[serde(rename = "log_buffer_bytes")]
    pub log_buffer: u64,
    /// `--window`: where the window sits in the model's own checkpoint
    /// cycle (`any`, the default, is left out of the JSON).
    #[serde(default, skip_serializing_if = "CycleWindow::is_any")]
    pub window: CycleWindow,
}

impl SlobConfig {
    pub fn sessions(&self) -> u32 {
        self.schemas * self.threads_per_schema
    }

    pub fn cache_buffers(&self) -> u32 {
        (self.cache_bytes / u64::from(self.block_size)) as u32
    }

    /// Blocks one session may hold pinned at once.
    pub(crate) fn pins_per_session(&self) -> u32 {
        if self.scan_pct > 0 {
            self.scan_blocks.max(1)
        } else {
            1
        }
    }

    /// The smallest cache that lets every session make progress: each may
    /// pin `pins_per_session` buffers, and as many again may be dirty or
    /// in flight while they do.
    pub fn min_cache_buffers(&self) -> u32 {
        2 * self.sessions() * self.pins_per_session()
    }
}
