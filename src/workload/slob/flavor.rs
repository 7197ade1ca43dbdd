//! Whose redo the model writes (`--flavor`): Oracle's, where an update logs
//! its change vectors and nothing else (SLOB's REDO_STRESS sizes), or
//! PostgreSQL's, where the first change to a page after a checkpoint begins
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
//! [`FullPages`] remembers, per block, the checkpoint in which its image was
//! last logged: two bytes per block, one atomic swap per block change.

use std::sync::atomic::AtomicU16;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};

use serde::Serialize;

/// The engine whose logging the model imitates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Oracle: redo change vectors only (SLOB's REDO_STRESS sizes).
    #[default]
    Oracle,
    /// PostgreSQL: WAL records, plus a full-page image of each block the
    /// first time it changes after a checkpoint begins.
    Postgres,
}

impl Flavor {
    pub fn is_oracle(&self) -> bool {
        *self == Flavor::Oracle
    }
}

/// WAL per changed row: a HOT heap update record (~66 B) and half a prune
/// record (PostgreSQL 15, SLOB's table, measured: 1.45 records per change).
pub const PG_CHANGE_BYTES: u32 = 96;
/// WAL of a commit record.
pub const PG_COMMIT_BYTES: u32 = 48;
/// A full-page image of SLOB's page: 8 KiB less its hole (measured: 1.12 KiB).
pub const PG_PAGE_IMAGE_BYTES: u32 = 1120;

/// Which blocks have had their image logged since the last checkpoint began.
pub struct FullPages {
    /// The checkpoint (counting from 1) in which each block's image was last
    /// logged; 0 = never. A block is logged again after 65535 checkpoints
    /// without a change only if the counter wrapped onto its value exactly.
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
    pub fn checkpoint_begins(&self) {
        let mut c = self.current.load(Acquire);
        loop {
            // 0 means "never logged": skip it when the counter wraps.
            let next = c.wrapping_add(1).max(1);
            match self.current.compare_exchange(c, next, AcqRel, Acquire) {
                Ok(_) => return,
                Err(now) => c = now,
            }
        }
    }

    /// Called for each change of `block`: true when this change must log the
    /// page's image (its first since the current checkpoint began). Exactly
    /// one of any number of concurrent changes of the block gets true.
    #[inline]
    pub fn first_change(&self, block: u64) -> bool {
        let c = self.current.load(Acquire);
        let slot = &self.logged_in[block as usize];
        slot.load(Relaxed) != c && slot.swap(c, AcqRel) != c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_counter_never_wraps_onto_never_logged() {
        let f = FullPages::new(2);
        assert!(f.first_change(0));
        for _ in 0..u16::MAX {
            f.checkpoint_begins();
        }
        // 65535 checkpoints later the counter is back at 1 (0 skipped):
        // block 0 looks logged (the documented wrap), block 1 never was.
        assert_eq!(f.current.load(Relaxed), 1);
        assert!(f.first_change(1));
        f.checkpoint_begins();
        assert!(f.first_change(0));
    }
}
