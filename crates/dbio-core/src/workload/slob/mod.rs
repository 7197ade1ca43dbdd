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
//! * `group_commit` — InnoDB's group commit: the committing sessions write
//!   and fsync the log themselves, a leader per group (`--flavor innodb`).
//! * `run` — starts them, runs the control loop, merges the results.
//! * `cycle` — the model's checkpoints as they begin and complete, and the
//!   thread that places the window in that cycle (`--window`).
//! * `flavor` — whose redo the model writes (Oracle's, PostgreSQL's with
//!   full-page images after each checkpoint, or InnoDB's).
//! * `doublewrite` — InnoDB's doublewrite area, which the page cleaners
//!   (`--flavor innodb`'s DB writers) write each batch to first.
//! * `undo` — InnoDB's undo log and rollback segment pages, which an
//!   update and its purge change beside the rows (`--flavor innodb`).
//! * `bufsync` — `--flavor postgres`'s checkpoint: the buffers dirty when
//!   it begins, written in block order (PostgreSQL's `BufferSync`).
//! * `ckpt_end` — `--flavor postgres`: the small files PostgreSQL's
//!   checkpointer writes and fsyncs at each checkpoint's end.
//! * `pace` — how fast the DB writers write: a checkpoint spread over the
//!   redo between two checkpoints, a cap on the writes outside them.
//! * `evict` — a session writing a dirty buffer itself when it finds no
//!   clean one (`--flavor postgres`: PostgreSQL's backend writes).
//! * `prefetch` — `--flavor postgres` through the page cache: a miss's
//!   block advised (`posix_fadvise(WILLNEED)`) before it is read.
//! * `memory` — `--memory`: the model's process in a memory cgroup, so the
//!   page cache under its buffered datafiles is bounded.
//! * The command-line options and their validation into a [`SlobConfig`]
//!   are the `dbio` crate's (`options/slob.rs`).

pub mod cache;
pub mod cycle;
pub mod events;
pub mod flavor;
pub(crate) mod futex;
pub mod instance;
pub mod keys;
pub mod live;
pub mod locks;
pub mod run;

mod bufsync;
mod ckpt_end;
pub(crate) mod dbwr;
mod doublewrite;
mod evict;
mod group_commit;
mod lgwr;
pub mod memory;
pub mod pace;
mod prefetch;
mod session;
mod undo;
mod writeback;

pub use crate::config::slob::{RedoStress, RedoSync, SlobConfig, Think};
use flavor::{
    Flavor, INNODB_CHANGE_BYTES, INNODB_COMMIT_BYTES, PG_CHANGE_BYTES, PG_COMMIT_BYTES,
    PG_PAGE_IMAGE_BYTES,
};
pub use undo::UNDO_PAGES;

/// Bytes of redo per changed column (SLOB's table has 19 columns of 128 B).
pub(crate) const COLUMN_BYTES: u32 = 128;
/// Bytes of redo a commit adds.
pub(crate) const COMMIT_RECORD_BYTES: u32 = 64;

impl RedoStress {
    pub(crate) fn bytes_per_block(self) -> u32 {
        match self {
            RedoStress::Lite => 2 * COLUMN_BYTES,
            RedoStress::Heavy => 19 * COLUMN_BYTES,
        }
    }
}

impl SlobConfig {
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
    /// full-page images; Oracle and InnoDB log none).
    pub(crate) fn update_redo(&self, changes: u64, images: u64) -> u64 {
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
            Flavor::Innodb => {
                changes * u64::from(INNODB_CHANGE_BYTES) + u64::from(INNODB_COMMIT_BYTES)
            }
        }
    }

    /// True when sessions write dirty buffers themselves when they find no
    /// clean one (PostgreSQL's backends); Oracle's sessions wait for DBWR.
    pub(crate) fn backends_write(&self) -> bool {
        self.flavor == Flavor::Postgres
    }

    /// Which buffers a miss may take: PostgreSQL's clock takes dirty ones
    /// too, its backends writing them; Oracle's and InnoDB's clean ones only.
    pub(crate) fn replacement(&self) -> cache::Replacement {
        match self.backends_write() {
            true => cache::Replacement::DirtyToo,
            false => cache::Replacement::CleanOnly,
        }
    }

    /// Bytes of one full-page image: SLOB's page less its hole, at most a block.
    pub(crate) fn page_image_bytes(&self) -> u64 {
        u64::from(PG_PAGE_IMAGE_BYTES.min(self.block_size))
    }
}
