//! PostgreSQL's writeback hints, for `--flavor postgres` writing through the
//! page cache: its checkpointer and background writer do not leave the pages
//! they write dirty in the kernel until its own writeback comes. Every
//! `checkpoint_flush_after` (256 kB) or `bgwriter_flush_after` (512 kB) of
//! pages written, they sort what they wrote, join neighbouring blocks, and ask
//! the kernel to start writing each range back now
//! (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, PostgreSQL's `WritebackContext`).
//! So a page written and soon changed again reaches the device twice, where
//! a page cache left alone would have written it once.

use std::os::fd::RawFd;

/// PostgreSQL 15's `checkpoint_flush_after` default, bytes.
pub(crate) const CHECKPOINT_FLUSH_AFTER: u64 = 256 << 10;
/// PostgreSQL 15's `bgwriter_flush_after` default, bytes.
pub(crate) const BGWRITER_FLUSH_AFTER: u64 = 512 << 10;

/// One writer's pending writeback requests (one context per writer and
/// kind of write, as each PostgreSQL process has its own).
pub(crate) struct Writeback {
    /// (file, block) written since the last hint; capacity `limit`.
    pending: Vec<(u32, u64)>,
    limit: usize,
    block: u64,
    /// Ranges the kernel was asked to write back.
    pub(crate) ranges: u64,
}

impl Writeback {
    /// A context hinting every `after` bytes of `block`-byte pages.
    pub(crate) fn new(after: u64, block: u32) -> Writeback {
        let limit = (after / u64::from(block)).max(1) as usize;
        Writeback {
            pending: Vec::with_capacity(limit),
            limit,
            block: u64::from(block),
            ranges: 0,
        }
    }

    /// Notes the page written at `offset` of `file`; when `limit` pages are
    /// pending, hints them all. The error names the file's index.
    pub(crate) fn add(
        &mut self,
        fds: &[RawFd],
        file: u32,
        offset: u64,
    ) -> Result<(), (u32, std::io::Error)> {
        self.pending.push((file, offset / self.block));
        if self.pending.len() >= self.limit {
            return self.issue(fds);
        }
        Ok(())
    }

    /// Hints every pending page now: sorted, neighbours joined into one
    /// range, one `sync_file_range` per range.
    pub(crate) fn issue(&mut self, fds: &[RawFd]) -> Result<(), (u32, std::io::Error)> {
        self.pending.sort_unstable();
        let mut k = 0;
        while k < self.pending.len() {
            let (file, first) = self.pending[k];
            let mut last = first;
            k += 1;
            while k < self.pending.len()
                && self.pending[k].0 == file
                && self.pending[k].1 <= last + 1
            {
                last = self.pending[k].1;
                k += 1;
            }
            let (off, len) = (first * self.block, (last - first + 1) * self.block);
            // SAFETY: a plain system call on a descriptor the workload keeps
            // open for the run; it reads no memory of ours.
            let r = unsafe {
                libc::sync_file_range(
                    fds[file as usize],
                    off as libc::off64_t,
                    len as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
            if r != 0 {
                self.pending.clear();
                return Err((file, std::io::Error::last_os_error()));
            }
            self.ranges += 1;
        }
        self.pending.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// The hints come every `limit` pages, sorted, neighbours joined, and
    /// the kernel accepts every range (whether it then wrote them is for
    /// the device's counters: `tests/it/slob_pgmodel.rs`).
    #[test]
    fn pages_are_hinted_every_limit_sorted_and_joined() {
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("d")).unwrap();
        f.set_len(1 << 20).unwrap();
        let fds = [f.as_raw_fd()];
        let mut wb = Writeback::new(4 * 8192, 8192);
        // Blocks 7, 3, 4: nothing yet (3 of 4 pending).
        for b in [7u64, 3, 4] {
            wb.add(&fds, 0, b * 8192).unwrap();
        }
        assert_eq!(wb.ranges, 0);
        // The fourth, block 5: 3-5 joined, 7 alone.
        wb.add(&fds, 0, 5 * 8192).unwrap();
        assert_eq!(wb.ranges, 2);
        assert!(wb.pending.is_empty());
        // A repeated block joins its own range; the end of a pass issues
        // what is pending.
        wb.add(&fds, 0, 9 * 8192).unwrap();
        wb.add(&fds, 0, 9 * 8192).unwrap();
        wb.issue(&fds).unwrap();
        assert_eq!(wb.ranges, 3);
    }

    #[test]
    fn a_bad_descriptor_is_named_by_its_file() {
        let mut wb = Writeback::new(8192, 8192);
        let (file, e) = wb.add(&[-1, -1], 1, 0).unwrap_err();
        assert_eq!(file, 1);
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
    }
}
