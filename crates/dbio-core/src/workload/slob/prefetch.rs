//! `--flavor postgres` through the page cache: a session advises the kernel
//! of the block it misses (`posix_fadvise(WILLNEED)`, exactly that block)
//! before it reads it, as PostgreSQL 15's backends do. SLOB's select and
//! update run as bitmap heap scans there, and with `effective_io_concurrency`
//! 1 (its default) a scan's prefetch reaches no further than the page it
//! reads next: traced at 64 sessions, 96% of its backends' reads of the
//! table followed a `posix_fadvise(WILLNEED)` of that same page, and 94% of
//! its device reads were issued inside the advice, not the read. The page
//! comes into the page cache in the advice (`IO:DataFilePrefetch`, "data
//! file prefetch" here), and the read then copies it or waits for it
//! (`IO:DataFileRead`, "db file sequential read"). A block already in the
//! page cache costs the advice a look-up and nothing else. With O_DIRECT
//! there is no page cache to bring the block into, and Oracle's and
//! InnoDB's flavors read without advice.

use std::os::fd::{BorrowedFd, RawFd};

use rustix::fs::{Advice, fadvise};

/// The datafiles a session advises before reading them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Prefetch<'a> {
    /// The datafiles' descriptors, by file number (the sessions' first files).
    fds: &'a [RawFd],
}

impl<'a> Prefetch<'a> {
    /// The advice for `data_fds` when the flavor is PostgreSQL's and the
    /// datafiles are read through the page cache; None otherwise.
    pub(crate) fn of(
        postgres: bool,
        through_page_cache: bool,
        data_fds: &'a [RawFd],
    ) -> Option<Self> {
        (postgres && through_page_cache).then_some(Prefetch { fds: data_fds })
    }

    /// Advises the kernel that `len` bytes of datafile `file` at `offset`
    /// are read next. Advice only: whether the kernel took it (it may not,
    /// under its memory bound) shows in the read that follows, so a failure
    /// is not an error. False when `file` is not a datafile (nothing advised).
    pub(crate) fn advise(&self, file: u32, offset: u64, len: u32) -> bool {
        let Some(&fd) = self.fds.get(file as usize) else {
            return false;
        };
        // SAFETY: the workload keeps its datafiles open while its sessions run.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = fadvise(
            fd,
            offset,
            std::num::NonZeroU64::new(u64::from(len)),
            Advice::WillNeed,
        );
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    #[test]
    fn only_postgres_through_the_page_cache_advises() {
        let fds = [3];
        assert!(Prefetch::of(true, true, &fds).is_some());
        assert!(Prefetch::of(true, false, &fds).is_none());
        assert!(Prefetch::of(false, true, &fds).is_none());
    }

    /// Which of `file`'s first `pages` 4 KiB pages are in the page cache.
    fn resident(file: &std::fs::File, pages: usize) -> Vec<bool> {
        let len = pages * 4096;
        // SAFETY: a private read-only mapping of an open file, unmapped below.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let mut v = vec![0u8; pages];
            assert_eq!(libc::mincore(p, len, v.as_mut_ptr()), 0);
            libc::munmap(p, len);
            v.iter().map(|b| b & 1 == 1).collect()
        }
    }

    #[test]
    fn the_advice_brings_exactly_that_block_into_the_page_cache() {
        let mut f = tempfile::tempfile_in("/var/tmp").unwrap();
        f.write_all(&[7u8; 16 * 4096]).unwrap();
        f.sync_all().unwrap();
        fadvise(&f, 0, None, Advice::DontNeed).unwrap();
        let dropped = resident(&f, 16);
        assert!(
            dropped.iter().all(|&r| !r),
            "/var/tmp kept the file's pages after DONTNEED: {dropped:?}"
        );
        let fds = [f.as_raw_fd()];
        let p = Prefetch::of(true, true, &fds).unwrap();
        // An 8 KiB block at 16 KiB: pages 4 and 5.
        assert!(p.advise(0, 16384, 8192));
        let t = Instant::now();
        while !resident(&f, 16)[5] {
            assert!(t.elapsed() < Duration::from_secs(5), "never read in");
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = resident(&f, 16);
        let cached: Vec<usize> = (0..16).filter(|&i| r[i]).collect();
        assert_eq!(cached, [4, 5], "the block and nothing around it");
        assert!(!p.advise(1, 0, 8192), "file 1 is not a datafile");
    }
}
