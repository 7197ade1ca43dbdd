//! Whose redo the model writes (`--flavor`): Oracle's, where an update logs
//! its change vectors and nothing else (SLOB's REDO_STRESS sizes);
//! InnoDB's, small records per changed row in 512-byte log blocks, with the
//! page cleaners writing each batch through a doublewrite area first
//! (`doublewrite`); or PostgreSQL's, where the first change to a page after a checkpoint begins
//! also logs an image of the whole page (`full_page_writes = on`, what
//! protects PostgreSQL from torn pages), so the WAL per transaction is
//! largest right after a checkpoint and falls as the pages it touches have
//! been logged once.
//!
//! The sizes are PostgreSQL 15's for SLOB's table as `--workload pg` builds
//! it (one 500-byte row per 8 KiB page), calibrated from two runs of it
//! (docs/findings-pg.md): a page image leaves out the page's unused middle
//! (the "hole"), so an image of SLOB's nearly empty page is about 1.1 KiB,
//! not 8 KiB; a changed row logs a HOT heap update record and, about every
//! other change, a prune record of the page's dead versions.
//!
//! A select that reads a page an earlier update changed sets the new row
//! version's hint bits and prunes the old one (PostgreSQL does both on
//! read): the page is dirty again, a prune record is logged, and — data
//! checksums being on, as dbio's server has them — the page's image too if
//! none was logged since the checkpoint began.
//!
//! [`FullPages`] remembers, per block, the checkpoint in which its image was
//! last logged and whether it changed since a read last hinted it: two bytes
//! per block, one atomic swap per block change.

use std::sync::atomic::AtomicU16;

use crate::choice::Choice;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

pub use crate::config::slob::Flavor;

/// What each flavor means for the model's threads (its settings are
/// `config::slob`'s).
impl Flavor {
    /// The block size when `--bs` is not given: InnoDB's page for InnoDB,
    /// else None (dbio's default).
    pub fn block_size(self) -> Option<u32> {
        match self {
            Flavor::Innodb => Some(INNODB_PAGE_BYTES),
            Flavor::Oracle | Flavor::Postgres => None,
        }
    }

    /// The redo block when `--redo-block` is not given: PostgreSQL's WAL
    /// page, else 512 bytes (Oracle's redo block, InnoDB's log block).
    pub fn redo_block(self) -> u32 {
        match self {
            Flavor::Postgres => PG_WAL_PAGE_BYTES,
            Flavor::Oracle | Flavor::Innodb => 512,
        }
    }

    /// How a log write that ends inside a redo block ends it.
    pub(crate) fn partial_block(self) -> PartialBlock {
        match self {
            Flavor::Oracle => PartialBlock::Pad,
            Flavor::Postgres | Flavor::Innodb => PartialBlock::Rewrite,
        }
    }

    /// How the log writer makes a write durable when `--redo-sync` is not
    /// given: InnoDB writes and then fsyncs each group
    /// (`innodb_flush_log_at_trx_commit=1`); PostgreSQL writes and
    /// fdatasyncs when a commit waits (`wal_sync_method = fdatasync`, its
    /// default on Linux: `lgwr::Durability`); Oracle opens O_DSYNC.
    pub fn redo_sync(self) -> crate::config::slob::RedoSync {
        match self {
            Flavor::Innodb | Flavor::Postgres => crate::config::slob::RedoSync::Fdatasync,
            Flavor::Oracle => crate::config::slob::RedoSync::Dsync,
        }
    }

    /// How the datafiles are opened under `--memory` when `--io` asked for
    /// `mode`: PostgreSQL (and Oracle, filesystem-cached) read and write
    /// through the page cache the bound holds, so `direct` becomes
    /// `buffered`; InnoDB keeps O_DIRECT (`innodb_flush_method=O_DIRECT`,
    /// MariaDB's default: its pages bypass the page cache, which then holds
    /// only what the rest of the process uses).
    pub fn io_under_memory(self, mode: crate::config::IoMode) -> crate::config::IoMode {
        use crate::config::IoMode;
        match (self, mode) {
            (Flavor::Innodb, m) => m,
            (Flavor::Oracle | Flavor::Postgres, IoMode::Direct) => IoMode::Buffered,
            (Flavor::Oracle | Flavor::Postgres, m) => m,
        }
    }

    /// Pages per DB writer batch when `--dbwr-batch` is not given:
    /// InnoDB's doublewrite buffer, two blocks of 64 pages
    /// (`TRX_SYS_DOUBLEWRITE_BLOCK_SIZE`), written out when full; else 64.
    pub fn dbwr_batch(self) -> u32 {
        match self {
            Flavor::Innodb => 2 * 64,
            Flavor::Oracle | Flavor::Postgres => 64,
        }
    }

    /// DB writers when `--db-writers` is not given, where the engine fixes
    /// them: MariaDB has one page cleaner thread since 10.5.1
    /// (`innodb_page_cleaners` is ignored there and gone in 10.6), its
    /// writes asynchronous. None: the session count and the host decide.
    pub fn db_writers(self) -> Option<u32> {
        match self {
            Flavor::Innodb => Some(1),
            Flavor::Oracle | Flavor::Postgres => None,
        }
    }

    /// The flavor's name, as `--flavor` takes it.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("oracle", |(_, n)| n.name)
    }

    /// The flavor as the run's header line names it.
    pub fn describe(self) -> &'static str {
        match self {
            Flavor::Oracle => "FLAVOR oracle",
            Flavor::Postgres => "FLAVOR postgres (full-page images, 8 KiB WAL pages)",
            Flavor::Innodb => "FLAVOR innodb (doublewrite, 512 B log blocks)",
        }
    }
}

/// How the log writer ends a write that stops inside a redo block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartialBlock {
    /// Padded to the block; the next write starts at the next block (the
    /// padding is Oracle's "redo wastage").
    Pad,
    /// Written up to the block's end, unfilled part included; the next
    /// write writes that block again from its start, with more in it
    /// (PostgreSQL's WAL pages, InnoDB's log blocks).
    Rewrite,
}

/// PostgreSQL's WAL page (XLOG_BLCKSZ).
pub(crate) const PG_WAL_PAGE_BYTES: u32 = 8192;
/// InnoDB's page (`innodb_page_size`, 16 KiB by default).
pub(crate) const INNODB_PAGE_BYTES: u32 = 16384;

/// WAL per changed row: a HOT heap update record (~66 B) and half a prune
/// record (PostgreSQL 15, SLOB's table, measured: 1.45 records per change).
pub(crate) const PG_CHANGE_BYTES: u32 = 96;
/// WAL of a commit record.
pub(crate) const PG_COMMIT_BYTES: u32 = 48;
/// A full-page image of SLOB's page: 8 KiB less its hole (measured: 1.12 KiB).
pub(crate) const PG_PAGE_IMAGE_BYTES: u32 = 1120;
/// WAL of the prune record a read logs for a page an update changed.
pub(crate) const PG_PRUNE_BYTES: u32 = 64;

/// InnoDB redo per changed row: the row's in-place update record and its
/// undo record's (MariaDB 10.11, SLOB's table as `--workload mysql` builds
/// it, `Innodb_os_log_written` over `Handler_update`: two 30 s runs on XFS
/// over a direct-io loop device, 8 sessions, 25% updates, O_DIRECT, at
/// WORK_UNIT 64 (5,464 B per update) and 16 (1,594 B), solved for a
/// per-row and a per-commit part: 80.6 B a row, 304 B a commit).
pub(crate) const INNODB_CHANGE_BYTES: u32 = 81;
/// InnoDB redo of a commit (undo log header and transaction state; measured
/// as [`INNODB_CHANGE_BYTES`]).
pub(crate) const INNODB_COMMIT_BYTES: u32 = 304;

/// The flag of a block changed since a read last hinted it.
const UNHINTED: u16 = 0x8000;
/// The checkpoint bits of a block's word.
const EPOCH: u16 = 0x7fff;

/// Which blocks have had their image logged since the last checkpoint began.
pub(crate) struct FullPages {
    /// Per block: the checkpoint (counting from 1, 15 bits) in which its
    /// image was last logged, 0 = never, and [`UNHINTED`]. A block goes
    /// unlogged after 32767 checkpoints without a change only if the counter
    /// wrapped onto its value exactly.
    logged_in: Box<[AtomicU16]>,
    /// The current checkpoint: moves when one begins.
    current: AtomicU16,
}

impl FullPages {
    /// Tracking for `blocks` blocks, all unlogged: the run starts right
    /// after a checkpoint (as a server started on a cleanly stopped cluster).
    pub fn new(blocks: u64) -> FullPages {
        FullPages {
            logged_in: (0..blocks).map(|_| AtomicU16::new(0)).collect(),
            current: AtomicU16::new(1),
        }
    }

    /// A checkpoint begins: every block's next change logs its image again.
    pub(crate) fn checkpoint_begins(&self) {
        let mut c = self.current.load(Acquire);
        loop {
            // 0 means "never logged": skip it when the counter wraps.
            let next = (c.wrapping_add(1) & EPOCH).max(1);
            match self.current.compare_exchange(c, next, AcqRel, Acquire) {
                Ok(_) => return,
                Err(now) => c = now,
            }
        }
    }

    /// Called for each change of `block`: true when this change must log the
    /// page's image (its first since the current checkpoint began). Exactly
    /// one of any number of concurrent changes of the block gets true.
    /// The block is left unhinted (its next read hints it).
    #[inline]
    pub(crate) fn first_change(&self, block: u64) -> bool {
        let c = self.current.load(Acquire);
        let want = c | UNHINTED;
        let slot = &self.logged_in[block as usize];
        slot.load(Relaxed) != want && slot.swap(want, AcqRel) & EPOCH != c
    }

    /// Called for each read of `block` by a select: None when no update
    /// changed it since it was last hinted; otherwise this read hints and
    /// prunes it (the page is dirty again), and Some(true) when that logs
    /// the page's image (none since the checkpoint began).
    #[inline]
    pub fn hint(&self, block: u64) -> Option<bool> {
        let slot = &self.logged_in[block as usize];
        let old = slot.load(Relaxed);
        if old & UNHINTED == 0 {
            return None;
        }
        let c = self.current.load(Acquire);
        // A change or another read in between: that one hints it.
        slot.compare_exchange(old, c, AcqRel, Relaxed)
            .ok()
            .map(|old| old & EPOCH != c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innodb_keeps_o_direct_under_memory_and_fills_its_doublewrite_buffer() {
        use crate::config::IoMode;
        assert_eq!(
            Flavor::Innodb.io_under_memory(IoMode::Direct),
            IoMode::Direct
        );
        assert_eq!(Flavor::Innodb.io_under_memory(IoMode::Fsync), IoMode::Fsync);
        for f in [Flavor::Oracle, Flavor::Postgres] {
            assert_eq!(f.io_under_memory(IoMode::Direct), IoMode::Buffered);
            assert_eq!(f.io_under_memory(IoMode::Fsync), IoMode::Fsync);
            assert_eq!(f.dbwr_batch(), 64);
        }
        assert_eq!(Flavor::Innodb.dbwr_batch(), 128);
    }

    #[test]
    fn an_image_once_per_block_per_checkpoint() {
        let f = FullPages::new(8);
        assert!(f.first_change(3));
        assert!(!f.first_change(3));
        assert!(f.first_change(4));
        f.checkpoint_begins();
        assert!(f.first_change(3));
        assert!(!f.first_change(3));
        assert!(f.first_change(4));
        assert!(f.first_change(0));
        assert!(!f.first_change(0));
    }

    #[test]
    fn concurrent_changes_log_one_image() {
        let f = FullPages::new(1);
        let got = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        if f.first_change(0) {
                            got.fetch_add(1, Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(got.load(Relaxed), 1);
    }

    #[test]
    fn a_read_hints_a_changed_block_once_and_logs_its_image_if_due() {
        let f = FullPages::new(4);
        assert_eq!(f.hint(1), None, "never changed: nothing to hint");
        assert!(f.first_change(1));
        assert_eq!(f.hint(1), Some(false), "imaged by the change already");
        assert_eq!(f.hint(1), None, "hinted once");
        assert!(!f.first_change(1));
        f.checkpoint_begins();
        assert_eq!(
            f.hint(1),
            Some(true),
            "a new checkpoint: the hint logs the image"
        );
        assert!(!f.first_change(1), "and the next change needs none");
        assert_eq!(f.hint(2), None);
    }

    #[test]
    fn the_counter_never_wraps_onto_never_logged() {
        let f = FullPages::new(2);
        assert!(f.first_change(0));
        for _ in 0..EPOCH {
            f.checkpoint_begins();
        }
        // 32767 checkpoints later the counter is back at 1 (0 skipped):
        // block 0 looks logged (the documented wrap), block 1 never was.
        assert_eq!(f.current.load(Relaxed), 1);
        assert!(f.first_change(1));
        f.checkpoint_begins();
        assert!(f.first_change(0));
    }
}
