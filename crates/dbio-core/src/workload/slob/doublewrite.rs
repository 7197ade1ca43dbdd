//! InnoDB's doublewrite buffer (`--flavor innodb`): a page cleaner (the
//! flavor's DB writer) writes each flush batch first as one sequential write
//! into its own area of the doublewrite file, fsyncs that file, and only
//! then writes each page in place and fsyncs the data files it wrote, so a
//! page torn by a crash has a whole copy to be restored from. Every page
//! reaches the device twice. The doublewrite file is laid out by dbio beside
//! the redo logs (`storage::DBLWR_SUBDIR`), one area of a batch per writer,
//! then the undo pages (`undo`).

use std::path::PathBuf;

use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};

use super::futex::NAP;
use super::instance::Instance;
use crate::engine::buf::BufPool;
use crate::engine::{Io, OpKind};

/// One page cleaner's area of the doublewrite file and its copy of a batch.
pub(crate) struct Doublewrite {
    /// The doublewrite file's number among the DB writer's files.
    pub file: u32,
    /// The doublewrite file, for messages.
    pub path: PathBuf,
    /// Where this writer's area starts in the file.
    pub offset: u64,
    block_size: usize,
    /// The batch, copied page after page (InnoDB copies the pages into its
    /// doublewrite buffer too).
    buf: BufPool,
    /// The data files of the last batch, ascending (reused).
    files: Vec<u32>,
    /// No batch of the page cleaner's flush round written yet: the next
    /// one begins the round ([`Doublewrite::begins_round`]).
    fresh: bool,
}

impl Doublewrite {
    /// Writer `writer`'s area in `path`, file number `file`, for batches of
    /// up to `batch` pages of `block_size` bytes.
    pub fn new(file: u32, path: PathBuf, writer: u32, batch: u32, block_size: u32) -> Self {
        Doublewrite {
            file,
            path,
            offset: area_bytes(writer, batch, block_size),
            block_size: block_size as usize,
            buf: BufPool::new(batch as usize * block_size as usize, 1),
            files: Vec::with_capacity(4),
            fresh: true,
        }
    }

    /// True for the first batch of a flush round (then false until the
    /// round is over, [`round_done`]): MariaDB's `buf_flush_LRU` begins
    /// each round with `log_buffer_flush_to_disk`, everything generated so
    /// far written and made durable before any page is looked at.
    pub(crate) fn begins_round(&mut self) -> bool {
        std::mem::take(&mut self.fresh)
    }

    /// Copies the pages `pages` write, in order, into the area's buffer
    /// and returns the one sequential write of them into the area.
    pub fn copy(&mut self, pages: &[Io]) -> Io {
        let bs = self.block_size;
        let len = pages.len() * bs;
        let area = self.buf.slot_mut(0, len);
        for (io, dst) in pages.iter().zip(area.chunks_exact_mut(bs)) {
            // SAFETY: each page's buffer holds `len` = bs bytes, held WRITING
            // by this writer until its batch is written.
            let src = unsafe { std::slice::from_raw_parts(io.buf, bs) };
            dst.copy_from_slice(src);
        }
        Io {
            kind: OpKind::Write,
            file: self.file,
            offset: self.offset,
            len: len as u32,
            buf: self.buf.ptr(0),
            slot: 0,
        }
    }

    /// The distinct data files `pages` write, ascending: each is fsynced
    /// once after the batch.
    pub(crate) fn files_of(&mut self, pages: &[Io]) -> &[u32] {
        self.files.clear();
        for io in pages {
            if let Err(at) = self.files.binary_search(&io.file) {
                self.files.insert(at, io.file);
            }
        }
        &self.files
    }
}

/// The log a flush batch needs durable before its pages are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// The first batch of a flush round: everything generated so far
    /// (`buf_flush_LRU`'s `log_buffer_flush_to_disk`).
    Round,
    /// A later batch: the log only when one of its pages was made dirty at
    /// this redo position or later, beyond what is durable (the
    /// write-ahead rule: `log_write_up_to` of the page's LSN).
    Pages(u64),
}

impl Ahead {
    /// True when, with `flushed` durable and `alloc` generated, the page
    /// cleaner must have the log written first.
    pub(crate) fn needs_write(self, flushed: u64, alloc: u64) -> bool {
        match self {
            Ahead::Round => alloc > flushed,
            Ahead::Pages(newest) => newest >= flushed && alloc > flushed,
        }
    }
}

/// InnoDB's write-ahead rule for a flush batch: no page reaches the disk
/// before the redo of its changes (`buf_flush_page` calls
/// `log_write_up_to` for a page newer than the durable log), and each flush
/// round begins with the log made durable ([`Ahead`]). When the batch
/// needs it, the page cleaner asks the log writer for a write of everything
/// generated so far (the sessions' row changes are logged as they are
/// made, so there is usually some) and waits until that is durable. Not
/// while the log writer waits for a checkpoint (the page cleaners are what
/// it waits for). False when the run stops.
pub(crate) fn log_ahead_of(inst: &Instance, ahead: Ahead) -> bool {
    let log = &inst.log;
    // Flushed first: alloc read after it is never below it.
    let flushed = log.flushed.load(Acquire);
    let target = log.alloc.load(Acquire);
    if !ahead.needs_write(flushed, target) {
        return true;
    }
    log.wanted.fetch_max(target, AcqRel);
    log.post();
    loop {
        let seen = log.written.seq();
        if log.flushed.load(Acquire) >= target || log.switch_blocked.load(Acquire) != 0 {
            return true;
        }
        if inst.stopping() {
            return false;
        }
        log.written.wait_past(seen, NAP);
    }
}

/// `innodb_lru_scan_depth`: the pages at the LRU's cold end a page
/// cleaner's flush round looks at (MariaDB 10.11's default; a round ends
/// when the free list holds that many, its dirty ones flushed).
pub(crate) const LRU_SCAN_DEPTH: u64 = 1536;

/// A page cleaner's flush round: it ends once the cold sweeps have looked
/// at its share of [`LRU_SCAN_DEPTH`] buffers, or when the page cleaner
/// finds nothing more to write, and each round ends in a checkpoint
/// ([`round_done`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Round {
    /// Buffers the round's cold sweeps looked at.
    pub scanned: u64,
    /// Whether it wrote a batch.
    wrote: bool,
}

impl Round {
    /// A batch was written (by one of `writers` page cleaners): true when
    /// that ends the round (a new one begins).
    pub(crate) fn wrote(&mut self, writers: u32) -> bool {
        self.wrote = true;
        let share = LRU_SCAN_DEPTH.div_ceil(u64::from(writers.max(1)));
        let over = self.scanned >= share;
        if over {
            *self = Round::default();
        }
        over
    }

    /// The page cleaner goes idle: true when that ends a round that wrote.
    pub(crate) fn idle(&mut self) -> bool {
        std::mem::take(self).wrote
    }
}

/// A page cleaner's flush round is over (it wrote batches and finds
/// nothing more to write now): InnoDB's page cleaner then makes a
/// checkpoint (`log_checkpoint` after each `buf_flush_LRU` round), which
/// the log writer, standing for it, writes (`group_commit`).
pub(crate) fn round_done(inst: &Instance, dw: Option<&mut Doublewrite>) {
    if let Some(d) = dw {
        d.fresh = true;
    }
    inst.log.checkpoint_wanted.store(true, Release);
    inst.log.post();
}

/// The fsync of file `file` (a flush request: no data).
pub(crate) fn sync_of(file: u32) -> Io {
    Io {
        kind: OpKind::Flush,
        file,
        offset: 0,
        len: 0,
        buf: std::ptr::null_mut(),
        slot: 0,
    }
}

impl super::SlobConfig {
    /// Bytes of the doublewrite file a run lays out beside the redo logs
    /// under `--flavor innodb` (else none): a batch per page cleaner, then
    /// the undo pages (`undo`), as `ibdata1` holds both.
    pub fn doublewrite_bytes(&self) -> u64 {
        match self.flavor {
            super::Flavor::Innodb => {
                self.undo_base() + super::undo::UNDO_PAGES * u64::from(self.block_size)
            }
            super::Flavor::Oracle | super::Flavor::Postgres => 0,
        }
    }

    /// Where the undo pages start in the doublewrite file: after every
    /// page cleaner's area.
    pub(crate) fn undo_base(&self) -> u64 {
        area_bytes(self.db_writers, self.dbwr_batch, self.block_size)
    }

    /// The undo pages of a run whose doublewrite file is file number
    /// `file` (`--flavor innodb`), numbered after the tablespace's blocks.
    pub(crate) fn undo_area(&self, file: u32) -> Option<super::undo::UndoArea> {
        (self.flavor == super::Flavor::Innodb).then(|| super::undo::UndoArea {
            first: self.tablespace_blocks(),
            file,
            base: self.undo_base(),
        })
    }
}

/// Bytes of the doublewrite file before writer `writers`' area (with
/// `writers` = the number of writers: the file's size).
pub(crate) fn area_bytes(writers: u32, batch: u32, block_size: u32) -> u64 {
    u64::from(writers) * u64::from(batch) * u64::from(block_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(file: u32, offset: u64, buf: &mut [u8]) -> Io {
        Io {
            kind: OpKind::Write,
            file,
            offset,
            len: buf.len() as u32,
            buf: buf.as_mut_ptr(),
            slot: 0,
        }
    }

    #[test]
    fn a_batch_becomes_one_sequential_write_of_its_pages_in_order() {
        let mut pages: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i + 1; 512]).collect();
        let ios: Vec<Io> = pages
            .iter_mut()
            .enumerate()
            .map(|(i, p)| page(0, 4096 * (7 - i as u64), p))
            .collect();
        let mut d = Doublewrite::new(2, PathBuf::from("dw"), 1, 4, 512);
        let w = d.copy(&ios);
        assert_eq!((w.kind, w.file), (OpKind::Write, 2));
        assert_eq!(w.offset, 4 * 512, "writer 1's area follows writer 0's");
        assert_eq!(w.len, 3 * 512);
        // SAFETY: the write's buffer is the doublewrite's, 3 pages long.
        let copied = unsafe { std::slice::from_raw_parts(w.buf, 3 * 512) };
        for (i, chunk) in copied.chunks(512).enumerate() {
            assert!(chunk.iter().all(|&b| b == i as u8 + 1), "page {i}");
        }
    }

    #[test]
    fn each_data_file_of_a_batch_is_synced_once() {
        let mut b = vec![0u8; 512];
        let ios: Vec<Io> = [3, 0, 3, 1, 0]
            .iter()
            .map(|&f| page(f, 0, &mut b))
            .collect();
        let mut d = Doublewrite::new(4, PathBuf::from("dw"), 0, 8, 512);
        assert_eq!(d.files_of(&ios), &[0, 1, 3]);
        assert_eq!(d.files_of(&ios[..1]), &[3]);
        let s = sync_of(3);
        assert_eq!((s.kind, s.file, s.len), (OpKind::Flush, 3, 0));
    }

    #[test]
    fn a_round_ends_after_the_scan_depth_or_when_the_cleaner_idles() {
        let mut r = Round::default();
        assert!(!r.idle(), "nothing written: no checkpoint");
        r.scanned = LRU_SCAN_DEPTH - 1;
        assert!(!r.wrote(1));
        r.scanned += 1;
        assert!(r.wrote(1), "the scan depth looked at");
        assert_eq!(r, Round::default());
        assert!(!r.idle());
        r.scanned = 10;
        assert!(!r.wrote(1));
        assert!(r.idle(), "idle after writing: the round ends");
        assert!(!r.idle());
        // Two page cleaners: each looks at half the depth.
        r.scanned = LRU_SCAN_DEPTH / 2;
        assert!(r.wrote(2));
    }

    #[test]
    fn a_round_begins_with_the_log_durable_and_later_batches_follow_their_pages() {
        // Redo generated beyond what is durable: a round's first batch
        // writes it whatever its pages are; a later one only for a page
        // changed there.
        let (flushed, alloc) = (1000, 1200);
        assert!(Ahead::Round.needs_write(flushed, alloc));
        assert!(!Ahead::Pages(999).needs_write(flushed, alloc));
        assert!(Ahead::Pages(1000).needs_write(flushed, alloc));
        assert!(Ahead::Pages(1100).needs_write(flushed, alloc));
        // Everything durable: nothing to write, for either.
        assert!(!Ahead::Round.needs_write(alloc, alloc));
        assert!(!Ahead::Pages(alloc).needs_write(alloc + 1, alloc));

        let mut d = Doublewrite::new(0, PathBuf::from("dw"), 0, 4, 4096);
        assert!(d.begins_round(), "a page cleaner's first batch");
        assert!(!d.begins_round(), "the round's next batch");
        d.fresh = true; // round_done
        assert!(d.begins_round());
    }

    #[test]
    fn the_file_holds_every_writers_area() {
        assert_eq!(area_bytes(2, 64, 16384), 2 << 20);
        assert_eq!(area_bytes(0, 64, 16384), 0);
    }
}
