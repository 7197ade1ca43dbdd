//! InnoDB's undo logs (`--flavor innodb`). An update writes its undo
//! records into an undo log page of a rollback segment, and its commit puts
//! that undo log on the segment's history list (a change of the segment's
//! header page); the purge later reads the undo log and takes it off the
//! history list (the header page again). Transactions take the rollback
//! segments round robin: MariaDB 10.11 has 128, all in the system
//! tablespace (`innodb_undo_tablespaces=0`), the file that also holds the
//! doublewrite buffer.
//!
//! The model keeps these pages in its doublewrite file, after the page
//! cleaners' areas: a header page and an undo log page per segment. They go
//! through the buffer cache like any page — read in again when the cache
//! lost them, written by the page cleaners (through the doublewrite, then in
//! place), and a batch that wrote one fsyncs that file once more, as
//! InnoDB fsyncs `ibdata1` after a batch that wrote a system page.

/// Rollback segments (MariaDB 10.11: `TRX_SYS_N_RSEGS`).
pub(crate) const ROLLBACK_SEGMENTS: u64 = 128;
/// Pages per rollback segment in the model: its header and one undo log
/// page (an update of a work unit logs under one page of undo records).
const PAGES_PER_SEGMENT: u64 = 2;
/// Pages of the undo area.
pub const UNDO_PAGES: u64 = ROLLBACK_SEGMENTS * PAGES_PER_SEGMENT;

/// Where the undo pages are: block numbers from `first` on (after the
/// tablespace's), in file `file` from byte `base` on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct UndoArea {
    pub first: u64,
    pub file: u32,
    pub base: u64,
}

impl UndoArea {
    /// The header page of rollback segment `rseg`.
    #[inline]
    pub(crate) fn header(&self, rseg: u64) -> u64 {
        self.first + rseg * PAGES_PER_SEGMENT
    }

    /// The undo log page of rollback segment `rseg`.
    #[inline]
    pub(crate) fn log_page(&self, rseg: u64) -> u64 {
        self.header(rseg) + 1
    }

    /// Where `block` is, if it is one of the undo pages.
    #[inline]
    pub(crate) fn locate(&self, block: u64, block_size: u32) -> Option<(u32, u64)> {
        let i = block.checked_sub(self.first)?;
        Some((self.file, self.base + i * u64::from(block_size)))
    }
}

/// The rollback segment of transaction `n` (counting from 0) of session
/// `session` of `sessions`: round robin over every session's transactions,
/// as InnoDB hands the segments out, with no shared counter.
#[inline]
pub(crate) fn rseg_of(session: u32, sessions: u32, n: u64) -> u64 {
    (u64::from(session) + n.wrapping_mul(u64::from(sessions))) % ROLLBACK_SEGMENTS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_pages_follow_the_tablespace_in_their_own_file() {
        let u = UndoArea {
            first: 1000,
            file: 3,
            base: 1 << 20,
        };
        assert_eq!(u.locate(999, 16384), None);
        assert_eq!(u.locate(u.header(0), 16384), Some((3, 1 << 20)));
        assert_eq!(
            u.locate(u.log_page(5), 16384),
            Some((3, (1 << 20) + 11 * 16384))
        );
        let last = u.log_page(ROLLBACK_SEGMENTS - 1);
        assert_eq!(last, 1000 + UNDO_PAGES - 1);
    }

    #[test]
    fn transactions_take_every_segment_in_turn() {
        let mut seen = [0u32; ROLLBACK_SEGMENTS as usize];
        for n in 0..16 {
            for s in 0..8 {
                seen[rseg_of(s, 8, n) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
        // 64 sessions: two transactions a segment per round.
        let mut seen = [0u32; ROLLBACK_SEGMENTS as usize];
        for n in 0..4 {
            for s in 0..64 {
                seen[rseg_of(s, 64, n) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 2), "{seen:?}");
    }
}
