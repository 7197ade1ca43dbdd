//! InnoDB's doublewrite buffer (`--flavor innodb`): a page cleaner (the
//! flavor's DB writer) writes each flush batch first as one sequential write
//! into its own area of the doublewrite file, fsyncs that file, and only
//! then writes each page in place and fsyncs the data files it wrote, so a
//! page torn by a crash has a whole copy to be restored from. Every page
//! reaches the device twice. The doublewrite file is laid out by dbio beside
//! the redo logs (`storage::DBLWR_SUBDIR`), one area of a batch per writer,
//! then the undo pages (`undo`).

use std::path::PathBuf;
use std::sync::Mutex;

use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::{AcqRel, Acquire};

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
        }
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

/// `innodb_lru_scan_depth` (MariaDB 10.11's default): a page cleaner's
/// LRU flush round goes on until the free list holds this many pages,
/// and the page cleaner is woken for the next when it holds fewer than
/// half (`buf_pool_t::need_LRU_eviction`): while it keeps up, a round per
/// half this many pages the sessions read in.
pub(crate) const LRU_SCAN_DEPTH: u64 = 1536;

/// `innodb_io_capacity_max` (MariaDB 10.11's default): the most pages a
/// page cleaner's LRU flush round writes (`buf_flush_LRU(n)`).
pub(crate) const IO_CAPACITY_MAX: u64 = 2000;

/// What the sessions have done so far that a flush round answers: blocks
/// read into the pool (each took a free buffer) and waits for a free
/// buffer (each found none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Demand {
    pub misses: u64,
    pub waits: u64,
}

impl Demand {
    /// The sessions' demand so far, from their live tallies.
    pub(crate) fn of(inst: &Instance) -> Demand {
        use super::events::Event;
        let live = &inst.live;
        Demand {
            misses: super::live::waits(live, Event::DbFileSequentialRead)
                + super::live::waits(live, Event::DbFileScatteredRead),
            waits: super::live::waits(live, Event::FreeBufferWaits),
        }
    }
}

/// The page cleaners' flush round, as MariaDB 10.11's one page cleaner
/// makes it (`buf_flush_page_cleaner` → `buf_flush_LRU`): it walks the
/// LRU list from its cold end, writing the dirty pages and freeing the
/// clean ones, until the free list holds [`LRU_SCAN_DEPTH`] pages, the
/// list's end is reached, or it has written [`IO_CAPACITY_MAX`] pages;
/// then it checkpoints ([`round_done`]) and sleeps until the free list
/// runs below half the depth. The model has no free list (a miss takes a
/// clean buffer at its set's clock hand), so it counts the same cycle in
/// what the sessions did: the round is over once the sessions have read
/// half the depth's blocks in since it began, none of them having waited
/// for a free buffer meanwhile (the page cleaners kept up: the free list
/// refilled); else once the cold sweeps, whichever page cleaner made
/// them, have looked at every buffer of the pool (the list's end), or the
/// write cap. The model's page cleaners share one round (InnoDB has one
/// page cleaner thread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Round {
    /// Buffers the round's cold sweeps looked at.
    scanned: u64,
    /// Pages the round wrote.
    written: u64,
    /// The sessions' demand when its first batch began (None: not begun).
    from: Option<Demand>,
}

impl Round {
    /// A batch is about to be written, the sessions' demand `now`: true
    /// when it is the round's first.
    pub(crate) fn begin(&mut self, now: Demand) -> bool {
        let first = self.from.is_none();
        self.from.get_or_insert(now);
        first
    }

    /// A batch of `pages` was written after its cold sweep looked at
    /// `scanned` buffers of a pool of `buffers`, the sessions' demand
    /// `now`: true when that ends the round (a new one begins).
    pub(crate) fn wrote(&mut self, scanned: u64, pages: u64, buffers: u64, now: Demand) -> bool {
        self.from.get_or_insert(now);
        self.scanned += scanned;
        self.written += pages;
        let over = self.refilled(now) || self.scanned >= buffers || self.written >= IO_CAPACITY_MAX;
        if over {
            *self = Round::default();
        }
        over
    }

    /// A page cleaner finds nothing to write, the sessions' demand `now`:
    /// true when that ends the round (it wrote and the free list refilled).
    pub(crate) fn idle(&mut self, now: Demand) -> bool {
        let over = self.refilled(now);
        if over {
            *self = Round::default();
        }
        over
    }

    /// The round wrote, and since it began the sessions read half the
    /// scan depth's blocks in without waiting for a free buffer.
    fn refilled(&self, now: Demand) -> bool {
        self.from.is_some_and(|f| {
            self.written > 0
                && now.misses.saturating_sub(f.misses) >= LRU_SCAN_DEPTH / 2
                && now.waits == f.waits
        })
    }
}

/// The page cleaners' round and InnoDB's checkpoints after it: what the
/// page cleaners asked for and what the log writer (standing for the page
/// cleaner's `log_checkpoint`) has made. A lock taken once per batch and
/// per idle page cleaner, never on a session's path.
#[derive(Debug, Default)]
pub(crate) struct Cleaner {
    round: Mutex<Round>,
    /// The highest checkpoint LSN asked for (the pool's oldest
    /// modification when a round ended).
    asked: AtomicU64,
    /// The last checkpoint's LSN.
    made: AtomicU64,
}

impl Cleaner {
    fn round(&self) -> std::sync::MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A page cleaner's batch is about to be written: true when it begins
    /// the round (the log is made durable first, [`Ahead::Round`]).
    pub(crate) fn begins(&self, now: Demand) -> bool {
        self.round().begin(now)
    }

    /// See [`Round::wrote`].
    pub(crate) fn wrote(&self, scanned: u64, pages: u64, buffers: u64, now: Demand) -> bool {
        self.round().wrote(scanned, pages, buffers, now)
    }

    /// See [`Round::idle`].
    pub(crate) fn idle(&self, now: Demand) -> bool {
        self.round().idle(now)
    }

    /// Asks for a checkpoint at `oldest` (the pool's oldest modification,
    /// or the log's end with nothing dirty) when it is beyond every
    /// checkpoint asked for so far: `log_checkpoint_low` does nothing when
    /// the oldest modification has not moved. True when asked.
    pub(crate) fn ask(&self, oldest: u64) -> bool {
        self.asked.fetch_max(oldest, AcqRel) < oldest
    }

    /// The log writer takes the checkpoint asked for and not yet made: its LSN.
    pub(crate) fn take(&self) -> Option<u64> {
        let at = self.asked.load(Acquire);
        (self.made.fetch_max(at, AcqRel) < at).then_some(at)
    }
}

/// The pool's oldest modification: the lowest redo position at which a
/// dirty buffer was first changed, or `end` (the log's end) when none is
/// dirty (`buf_pool.get_oldest_modification(end)`). One look at every
/// buffer, by a page cleaner at a round's end.
pub(crate) fn oldest_modification(cache: &super::cache::Cache, end: u64) -> u64 {
    (0..cache.buffers())
        .filter_map(|b| cache.dirty_lsn(b))
        .min()
        .unwrap_or(end)
}

/// A page cleaner's flush round is over: InnoDB's page cleaner then calls
/// `log_checkpoint`, which makes a checkpoint at the pool's oldest
/// modification when that has moved since the last one (else nothing).
/// The log writer, standing for it, writes it (`group_commit`).
pub(crate) fn round_done(inst: &Instance) {
    let end = inst.log.alloc.load(Acquire);
    if inst.log.cleaner.ask(oldest_modification(&inst.cache, end)) {
        inst.log.post();
    }
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

    fn demand(misses: u64, waits: u64) -> Demand {
        Demand { misses, waits }
    }

    #[test]
    fn a_round_ends_when_the_free_list_refilled_at_the_pools_end_or_the_write_cap() {
        let half = LRU_SCAN_DEPTH / 2;
        let mut r = Round::default();
        assert!(
            !r.idle(demand(1 << 20, 0)),
            "nothing written: no round to end"
        );
        assert!(r.begin(demand(1000, 5)), "the first batch begins the round");
        assert!(!r.begin(demand(1100, 5)), "a later batch does not");
        // Kept up: half the scan depth's blocks read in since the round
        // began, no session waiting for a free buffer meanwhile.
        assert!(!r.wrote(300, 100, 4096, demand(1000 + half - 1, 5)));
        assert!(r.wrote(300, 100, 4096, demand(1000 + half, 5)), "refilled");
        assert_eq!(r, Round::default());
        // Behind: a session waited, so the free list never filled; the
        // round goes on until the sweeps, whichever page cleaner made
        // them, have looked at every buffer of the pool.
        assert!(r.begin(demand(5000, 5)));
        assert!(!r.wrote(2000, 100, 4096, demand(5000 + 4 * half, 6)));
        assert!(
            !r.idle(demand(5000 + 5 * half, 6)),
            "idle, the free list not refilled"
        );
        assert!(
            r.wrote(2096, 100, 4096, demand(5000 + 6 * half, 9)),
            "the list's end"
        );
        assert_eq!(r, Round::default());
        // Idle after writing, with the free list refilled: the round ends.
        assert!(
            !r.wrote(10, 10, 4096, demand(9000, 9)),
            "a round begun by its batch"
        );
        assert!(!r.idle(demand(9000 + half - 1, 9)));
        assert!(r.idle(demand(9000 + half, 9)));
        // The write cap: innodb_io_capacity_max pages.
        assert!(!r.wrote(10, IO_CAPACITY_MAX - 1, 1 << 20, demand(0, 9)));
        assert!(r.wrote(10, 1, 1 << 20, demand(0, 9)));
        assert!(
            !r.idle(demand(1 << 20, 9)),
            "ended already: idling ends nothing"
        );
    }

    #[test]
    fn a_checkpoint_is_asked_for_only_when_the_oldest_modification_moved() {
        let c = Cleaner::default();
        assert_eq!(c.take(), None, "nothing asked");
        assert!(c.ask(1000));
        assert!(!c.ask(1000), "not moved: log_checkpoint_low does nothing");
        assert!(!c.ask(900), "below: nothing");
        assert_eq!(c.take(), Some(1000));
        assert_eq!(c.take(), None, "made already");
        assert!(c.ask(1500));
        assert!(c.ask(1700), "asked again before the log writer looked");
        assert_eq!(c.take(), Some(1700), "one checkpoint at the newest");
        assert!(c.begins(demand(0, 0)));
        assert!(!c.begins(demand(1, 0)));
        assert!(
            !c.idle(demand(1 << 20, 0)),
            "nothing written in this round yet"
        );
        assert!(!c.wrote(1, 1, 2, demand(2, 0)));
        assert!(c.idle(demand(LRU_SCAN_DEPTH, 0)));
    }

    #[test]
    fn the_oldest_modification_is_the_lowest_first_change_of_a_dirty_buffer() {
        let cache = super::super::cache::Cache::new(8, 512);
        assert_eq!(
            oldest_modification(&cache, 77),
            77,
            "nothing dirty: the log's end"
        );
        let stop = std::sync::atomic::AtomicBool::new(false);
        let mut bufs = Vec::new();
        for block in 0..3u64 {
            let super::super::cache::Lookup::Claimed { buf } = cache.lookup(block, &stop) else {
                panic!("block {block} is not cached yet")
            };
            cache.read_done(buf);
            bufs.push(buf);
        }
        cache.mark_dirty(bufs[0], 300);
        cache.mark_dirty(bufs[1], 200);
        cache.mark_dirty(bufs[1], 250);
        assert_eq!(oldest_modification(&cache, 999), 200, "its first change");
        assert_eq!(cache.begin_write(bufs[1]), Some(1));
        cache.end_write(bufs[1]);
        assert_eq!(oldest_modification(&cache, 999), 300, "written: clean");
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
    }

    #[test]
    fn the_file_holds_every_writers_area() {
        assert_eq!(area_bytes(2, 64, 16384), 2 << 20);
        assert_eq!(area_bytes(0, 64, 16384), 0);
    }
}
