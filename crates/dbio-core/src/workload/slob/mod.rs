//! The SLOB-method database I/O model (`--workload slob`): the I/O a database
//! engine does, with no database. Sessions run SLOB's operations (select or
//! update a work unit of logically adjacent, physically scattered rows, one
//! row per block; commit and wait for the log writer) through a small shared
//! buffer cache; DB writers write dirty buffers back in batches; a log writer
//! writes redo sequentially to redo log files with group commit, switching
//! files and waiting for checkpoints as a database does. Everything is timed
//! as the wait events DBAs read in AWR.
//!
//! * `keys` — which operation, which rows, and where they live.
//! * `cache` — the buffer cache (clock replacement, partitioned lookup).
//! * `instance` — what the threads share (cache, log, checkpoint, signals)
//!   and the counters each thread keeps.
//! * `session`, `dbwr`, `lgwr` — the three kinds of threads.
//! * `run` — starts them, runs the control loop, merges the results.
//! * `flavor` — whose redo the model writes (Oracle's, or PostgreSQL's with
//!   full-page images after each checkpoint).
//! * `pace` — how fast the DB writers write: a checkpoint spread over the
//!   redo between two checkpoints, a cap on the writes outside them.
//! * `evict` — a session writing a dirty buffer itself when it finds no
//!   clean one (`--flavor postgres`: PostgreSQL's backend writes).
//! * `memory` — `--memory`: the model's process in a memory cgroup, so the
//!   page cache under its buffered datafiles is bounded.
//! * The command-line options and their validation into a [`SlobConfig`]
//!   are the `dbio` crate's (`cli/slob.rs`).

pub mod cache;
pub mod events;
pub mod flavor;
pub mod futex;
pub mod instance;
pub mod keys;
pub mod live;
pub mod locks;
pub mod run;

pub(crate) mod dbwr;
mod evict;
mod lgwr;
pub mod memory;
pub mod pace;
mod session;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::choice::{Choice, Named};
use crate::config::HotspotConfig;
use flavor::{Flavor, PG_CHANGE_BYTES, PG_COMMIT_BYTES, PG_PAGE_IMAGE_BYTES};

/// Bytes of redo per changed column (SLOB's table has 19 columns of 128 B).
pub const COLUMN_BYTES: u32 = 128;
/// Bytes of redo a commit adds.
pub const COMMIT_RECORD_BYTES: u32 = 64;

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

impl RedoStress {
    pub fn bytes_per_block(self) -> u32 {
        match self {
            RedoStress::Lite => 2 * COLUMN_BYTES,
            RedoStress::Heavy => 19 * COLUMN_BYTES,
        }
    }
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
    /// Whose redo: Oracle's (the default, left out of the JSON) or PostgreSQL's.
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
    pub dbwr_engine: crate::config::EngineKind,
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
}

impl SlobConfig {
    pub fn sessions(&self) -> u32 {
        self.schemas * self.threads_per_schema
    }

    pub fn cache_buffers(&self) -> u32 {
        (self.cache_bytes / u64::from(self.block_size)) as u32
    }

    /// Blocks one session may hold pinned at once.
    pub fn pins_per_session(&self) -> u32 {
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

    /// Blocks in the tablespace: every schema, rounded up to whole extents
    /// on every datafile.
    pub fn tablespace_blocks(&self) -> u64 {
        let unit = keys::EXTENT_BLOCKS * u64::from(self.datafiles);
        (self.scale_blocks * u64::from(self.schemas)).div_ceil(unit) * unit
    }

    /// The largest redo of one operation (an update of a whole work unit,
    /// every block's first change since the checkpoint).
    pub fn max_redo_per_op(&self) -> u64 {
        let n = u64::from(self.work_unit);
        self.update_redo(n, n)
    }

    /// The redo of an update that changed `changes` blocks, `images` of them
    /// for the first time since the checkpoint began (PostgreSQL logs their
    /// full-page images; Oracle logs none).
    pub fn update_redo(&self, changes: u64, images: u64) -> u64 {
        match self.flavor {
            Flavor::Oracle => {
                changes * u64::from(self.redo_stress.bytes_per_block())
                    + u64::from(COMMIT_RECORD_BYTES)
            }
            Flavor::Postgres => {
                changes * u64::from(PG_CHANGE_BYTES)
                    + images * self.page_image_bytes()
                    + u64::from(PG_COMMIT_BYTES)
            }
        }
    }

    /// True when sessions write dirty buffers themselves when they find no
    /// clean one (PostgreSQL's backends); Oracle's sessions wait for DBWR.
    pub fn backends_write(&self) -> bool {
        self.flavor == Flavor::Postgres
    }

    /// Bytes of one full-page image: SLOB's page less its hole, at most a block.
    pub fn page_image_bytes(&self) -> u64 {
        u64::from(PG_PAGE_IMAGE_BYTES.min(self.block_size))
    }
}
