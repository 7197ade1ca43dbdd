//! A SLOB session: a thread that runs operations (select, update + commit,
//! scan) on its schema through the shared buffer cache, reads missing blocks
//! itself ("db file sequential read" / "db file scattered read"), locks the
//! rows it updates ("enq: TX - row lock contention" when another session's
//! transaction holds one), and waits for the log writer at commit ("log file
//! sync"). Every wait is recorded in exactly one event; everything else in an
//! operation is DB CPU. Under `--rate` each operation starts at its due time
//! (`measure::pace`), or at once when the session is behind, and is timed
//! from both.

use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::time::Duration;

use super::SlobConfig;
use super::cache::{FreeWait, Lookup};
use super::events::Event;
use super::flavor::{INNODB_CHANGE_BYTES, PG_PRUNE_BYTES};
use super::futex::{self, NAP};
use super::instance::{Instance, Tally};
use super::keys::{KeyPicker, OpMix, OpType, Tablespace};
use super::undo::rseg_of;
use crate::engine::buf::BufPool;
use crate::engine::{Engine, Io, OpKind, explain_result, perform};
use crate::measure::clock::now_ns;
use crate::measure::cpu::thread_cpu_ns;
use crate::measure::pace::{Pacer, Slot};
use crate::measure::schedule::Schedule;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::SeriesWriter;

/// Longest single sleep of a thinking session before it looks at the stop flag.
const THINK_NAP: Duration = Duration::from_millis(20);
/// Longest free buffer wait before the miss is tried again (a DB writer
/// batch that cleans buffers in the miss's working set ends it sooner).
const FREE_WAIT: Duration = Duration::from_millis(50);

/// One session's fixed inputs and its own state.
pub struct Session<'a, E: Engine> {
    pub id: u32,
    pub inst: &'a Instance<'a>,
    pub cfg: &'a SlobConfig,
    pub io_mode: crate::config::IoMode,
    pub ts: Tablespace,
    pub files: &'a [std::path::PathBuf],
    pub engine: E,
    pub picker: KeyPicker,
    pub mix: OpMix,
    pub rng: Rng,
    pub scan_buf: BufPool,
    /// Buffers of the scan run being gathered (capacity `scan_blocks`).
    pub scan_run: Vec<u32>,
    /// The rows an update locks, ascending (capacity `work_unit`).
    pub rows: Vec<u64>,
    /// The last time this session read the clock: at the start of an
    /// operation and after each physical read or wait. Cache hits and block
    /// changes are placed in the window by it, so they cost no clock read.
    pub clock: u64,
    pub outlier_ns: u64,
    /// When operations fall due (`--rate`), or None: each starts when the
    /// one before ended (or its think time did).
    pub schedule: Option<Schedule<'a>>,
    pub tally: Tally,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
    /// How this session writes a dirty buffer itself when it finds no clean
    /// one (`--flavor postgres`); None: it waits for a DB writer.
    pub backend: Option<super::evict::BackendWriter>,
    /// `--flavor innodb`: the log, which this session writes and fsyncs
    /// itself when it leads its commit's group, and the number of the first
    /// redo file among its engine's files. None: the log writer writes it.
    pub group: Option<(&'a super::group_commit::GroupCommit, u32)>,
    /// `--flavor postgres` through the page cache: a miss's block advised
    /// before it is read (`prefetch.rs`); None: read without advice.
    pub prefetch: Option<super::prefetch::Prefetch<'a>>,
}

impl<E: Engine> Session<'_, E> {
    /// Runs operations until the work loop is done, the window ends or the run stops.
    pub fn run(&mut self) {
        let quota = self.cfg.work_loop.unwrap_or(u64::MAX);
        let t0 = self.inst.run.start_ns.load(Acquire);
        let mut blocks = vec![0u64; self.cfg.work_unit as usize];
        let mut done = 0u64;
        // Each operation starts when the one before ended (or its think time
        // did), and its CPU is the thread's CPU clock since then: two clock
        // reads per operation, not four.
        let mut start = now_ns();
        let mut cpu0 = thread_cpu_ns();
        let mut pace = self
            .schedule
            .take()
            .map(|s| Pacer::new(s, t0, t0 + self.inst.run.ramp_ns));
        while done < quota {
            let mut slot = None;
            if let Some(p) = &mut pace {
                let Some(s) = self.due(p) else {
                    break;
                };
                // The wait for the due time is idle, not DB CPU.
                (start, cpu0, slot) = (s.start, thread_cpu_ns(), Some(s));
            }
            self.clock = start;
            if self.inst.stopping() || start >= self.inst.run.end_ns.load(Acquire) {
                break;
            }
            let op = self.mix.next_op();
            let ok = match op {
                OpType::Select => {
                    let n = self.picker.work_unit(&mut self.rng, &mut blocks);
                    self.select(&blocks[..n])
                }
                OpType::Update => {
                    let n = self.picker.work_unit(&mut self.rng, &mut blocks);
                    self.update(&blocks[..n], t0)
                }
                OpType::Scan => {
                    let first = self.picker.scan(&mut self.rng);
                    self.scan(first)
                }
            };
            if !ok {
                break;
            }
            let end = now_ns();
            let cpu_end = thread_cpu_ns();
            let cpu = cpu_end.saturating_sub(cpu0);
            cpu0 = cpu_end;
            done += 1;
            let busy = self.inst.window_part(start, end);
            self.tally.count(self.inst.in_window(end), |c| {
                c.executes += 1;
                c.db_cpu_ns += cpu;
                match op {
                    OpType::Select => c.selects += 1,
                    OpType::Update => c.updates += 1,
                    OpType::Scan => c.scans += 1,
                }
            });
            self.tally.window.db_time_ns += busy;
            self.tally.total.db_time_ns += end - start;
            if let Some(s) = slot {
                self.paced(op, s, t0, end);
            }
            start = self.think(done).unwrap_or(end);
        }
        if let (Some(p), Some(open)) = (&mut pace, self.stats.open.as_deref_mut()) {
            p.finish(self.inst.run.end_ns.load(Acquire), open);
        }
        // A physical read's latency is exactly its read event's wait (same
        // clock reads, same window): the read histogram is the two read
        // events' together, built once here (one histogram fewer per
        // session, one record fewer per read).
        let read = &mut self.stats.ops[Kind::Read as usize].hist;
        for e in [Event::DbFileSequentialRead, Event::DbFileScatteredRead] {
            read.add(&self.tally.events.get(e).hist)
                .expect("an auto-resizing histogram takes any other");
        }
    }

    /// A paced operation `op` that fell due and started as `s` said and
    /// ended at `end`: in the series (reads for selects and scans, writes
    /// for updates) and, inside the window, in the open-loop statistics.
    fn paced(&mut self, op: OpType, s: Slot, t0: u64, end: u64) {
        let kind = match op {
            OpType::Select | OpType::Scan => Kind::Read,
            OpType::Update => Kind::Write,
        };
        let late = s.start.saturating_sub(s.due);
        self.series.record_due(kind, end - t0, end - s.due, late);
        if let Some(open) = self.stats.open.as_deref_mut()
            && self.inst.in_window(end)
        {
            open.record_op(s.due, s.start, end);
        }
    }

    /// Waits for the next operation's due time (`--rate`); None when
    /// nothing more falls due in the run or it stops.
    fn due(&mut self, p: &mut Pacer) -> Option<Slot> {
        let run = &self.inst.run;
        let open = self.stats.open.get_or_insert_default();
        p.next(run.end_ns.load(Acquire), || run.stop.load(Acquire), open)
    }

    fn select(&mut self, blocks: &[u64]) -> bool {
        for &b in blocks {
            let Some(buf) = self.get(b) else {
                return false;
            };
            if let Some(image) = self.inst.full_pages.as_ref().and_then(|f| f.hint(b)) {
                self.hinted(buf, image);
            }
            self.inst.cache.unpin(buf);
        }
        true
    }

    /// `--flavor postgres`: this select hinted and pruned pinned `buf`,
    /// which an earlier update changed: the page is dirty again, and a
    /// prune record (with the page's image when `image`) goes into the log,
    /// not waited for (a select does not commit).
    fn hinted(&mut self, buf: u32, image: bool) {
        let inst = self.inst;
        let dirtied = inst.cache.mark_dirty(buf, inst.log.alloc.load(Acquire));
        let redo = u64::from(PG_PRUNE_BYTES) + u64::from(image) * self.cfg.page_image_bytes();
        inst.log.alloc.fetch_add(redo, AcqRel);
        inst.log.post();
        self.tally.count(inst.in_window(self.clock), |c| {
            c.blocks_dirtied += u64::from(dirtied);
            c.hint_dirtied += u64::from(dirtied);
            c.full_page_images += u64::from(image);
            c.redo_bytes += redo;
        });
    }

    /// Changes the rows in ascending order, locking each just before its
    /// change (a session waiting for a row holds no pin, only the rows it
    /// changed already, all lower: no deadlock), commits, and releases them
    /// when the commit is durable.
    fn update(&mut self, blocks: &[u64], t0: u64) -> bool {
        if self.cfg.threads_per_schema == 1 {
            // The schema is this session's alone: no one else can hold its
            // rows, and taking locks nobody can meet would only cost CPU.
            return match self.change(blocks, false) {
                Ok(images) => self.commit_update(blocks.len(), images, t0),
                Err(_) => false,
            };
        }
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        rows.extend_from_slice(blocks);
        rows.sort_unstable();
        let (ok, taken) = match self.change(&rows, true) {
            Ok(images) => (self.commit_update(rows.len(), images, t0), rows.len()),
            Err(taken) => (false, taken),
        };
        // Release what was taken.
        rows.truncate(taken);
        rows.dedup();
        self.inst.locks.unlock_all(self.id, &rows);
        self.rows = rows;
        ok
    }

    /// Changes each block of `blocks` (ascending when `lock`: each row is
    /// locked first, a repeat only once). The block is pinned only while it
    /// is read in and changed. On failure (the run stopped or a read
    /// failed), the number of leading blocks whose rows are locked; on
    /// success, how many changes logged a full-page image (`--flavor postgres`).
    fn change(&mut self, blocks: &[u64], lock: bool) -> Result<u64, usize> {
        let inst = self.inst;
        let mut images = 0;
        for (i, &b) in blocks.iter().enumerate() {
            if lock && (i == 0 || blocks[i - 1] != b) {
                match inst.locks.lock(self.id, b, &inst.run.stop) {
                    None => return Err(i),
                    Some(Some(since)) => self.wait(Event::EnqTxRowLockContention, since, now_ns()),
                    Some(None) => {}
                }
            }
            if self.group.is_some() && !self.log_space(u64::from(INNODB_CHANGE_BYTES)) {
                return Err(i + 1);
            }
            let Some(buf) = self.get(b) else {
                return Err(i + 1);
            };
            let dirtied = inst.cache.mark_dirty(buf, self.log_change());
            let image = inst.full_pages.as_ref().is_some_and(|f| f.first_change(b));
            inst.cache.unpin(buf);
            images += u64::from(image);
            let w = inst.in_window(self.clock);
            self.tally.count(w, |c| {
                c.block_changes += 1;
                c.blocks_dirtied += u64::from(dirtied);
                c.full_page_images += u64::from(image);
            });
        }
        Ok(images)
    }

    /// Commits an update of `blocks` blocks, `images` of them logged whole
    /// (`--flavor innodb`: with its undo pages and the purge of the
    /// transaction before it).
    fn commit_update(&mut self, blocks: usize, images: u64, t0: u64) -> bool {
        if let Some(u) = self.ts.undo
            && !self.undo(u)
        {
            return false;
        }
        let redo = self.cfg.update_redo(blocks as u64, images);
        // InnoDB's row changes are in the log already (`log_change`).
        let logged = match self.group {
            Some(_) => blocks as u64 * u64::from(INNODB_CHANGE_BYTES),
            None => 0,
        };
        self.commit(redo, logged, t0)
    }

    /// The redo position of a change this session makes to a block now.
    /// `--flavor innodb`: each row's change is logged as it is made (its
    /// mini-transaction's commit), so redo not yet durable is there between
    /// commits, as in InnoDB, for a page cleaner's or a checkpoint's log
    /// write to take along; the other flavors log an update's changes at
    /// its commit.
    fn log_change(&self) -> u64 {
        let log = &self.inst.log;
        match self.group {
            Some(_) => log.alloc.fetch_add(u64::from(INNODB_CHANGE_BYTES), AcqRel),
            None => log.alloc.load(Acquire),
        }
    }

    /// `--flavor innodb`: this transaction's undo records go into its
    /// rollback segment's undo log page and its commit puts them on the
    /// segment's history list (the header page); then the purge of this
    /// session's transaction before it reads that undo log and takes it off
    /// its segment's history list. The redo of these changes is in the
    /// flavor's per-row and per-commit sizes (measured with them). False
    /// when the run stopped or a read failed.
    fn undo(&mut self, u: super::undo::UndoArea) -> bool {
        let n = self.tally.total.transactions;
        let sessions = self.cfg.sessions();
        let rseg = rseg_of(self.id, sessions, n);
        if !self.change_page(u.log_page(rseg)) || !self.change_page(u.header(rseg)) {
            return false;
        }
        let Some(before) = n.checked_sub(1) else {
            return true;
        };
        let purged = rseg_of(self.id, sessions, before);
        let Some(buf) = self.get(u.log_page(purged)) else {
            return false;
        };
        self.inst.cache.unpin(buf);
        self.change_page(u.header(purged))
    }

    /// Reads `block` in if the cache lost it and changes it (no row lock:
    /// an undo page is latched, not locked).
    fn change_page(&mut self, block: u64) -> bool {
        let inst = self.inst;
        let Some(buf) = self.get(block) else {
            return false;
        };
        let dirtied = inst.cache.mark_dirty(buf, inst.log.alloc.load(Acquire));
        inst.cache.unpin(buf);
        self.tally.count(inst.in_window(self.clock), |c| {
            c.block_changes += 1;
            c.blocks_dirtied += u64::from(dirtied);
            c.undo_changes += 1;
        });
        true
    }

    /// Puts the operation's redo into the log (all of `redo` but the
    /// `logged` bytes its changes put there already) and waits until it is
    /// durable.
    fn commit(&mut self, redo: u64, logged: u64, t0: u64) -> bool {
        let inst = self.inst;
        let log = &inst.log;
        if inst.log.switch_blocked.load(Acquire) != 0 {
            let t = now_ns();
            loop {
                let v = log.switch_blocked.load(Acquire);
                if v == 0 {
                    break;
                }
                if inst.stopping() {
                    return false;
                }
                futex::wait(&log.switch_blocked, v, NAP);
            }
            self.wait(Event::LogFileSwitchCheckpointIncomplete, t, now_ns());
        }
        let rest = redo - logged;
        if !self.log_space(rest) {
            return false;
        }
        let t = now_ns();
        let end = log.alloc.fetch_add(rest, AcqRel) + rest;
        if !self.durable(end) {
            return false;
        }
        let now = now_ns();
        self.wait(Event::LogFileSync, t, now);
        // A commit in the series: its wait, and the redo it made durable
        // (so the per-second series has the redo size of the load profile).
        self.series.record(Kind::Sync, now - t0, now - t, redo);
        inst.live[self.id as usize].commit();
        let w = inst.in_window(now);
        self.tally.count(w, |c| {
            c.transactions += 1;
            c.redo_bytes += redo;
        });
        true
    }

    /// Waits until the log buffer has room for `redo` more bytes (a
    /// `log buffer space` wait when it had none). False when the run stopped.
    fn log_space(&mut self, redo: u64) -> bool {
        let inst = self.inst;
        let log = &inst.log;
        let used = |log: &super::instance::Log| {
            // Flushed first: alloc read after it is never below it (the
            // other order let the log writer flush past a stale alloc).
            let flushed = log.flushed.load(Acquire);
            log.alloc.load(Acquire).saturating_sub(flushed) + redo > log.buffer_size
        };
        if !used(log) {
            return true;
        }
        let t = now_ns();
        loop {
            let seen = log.written.seq();
            if !used(log) {
                break;
            }
            if inst.stopping() {
                return false;
            }
            log.post();
            log.written.wait_past(seen, NAP);
        }
        self.wait(Event::LogBufferSpace, t, now_ns());
        true
    }

    /// Waits until the redo below `end` is durable: the log writer's next
    /// group makes it so, or (`--flavor innodb`) the group this session
    /// leads or joins (`group_commit`). False when the run stopped.
    fn durable(&mut self, end: u64) -> bool {
        let log = &self.inst.log;
        if let Some((group, first)) = self.group {
            let mut l = super::group_commit::Leader::of(
                (&mut self.engine, first),
                (self.id, self.inst, self.outlier_ns),
                (&mut self.tally, &mut self.stats, &mut self.series),
            );
            let Some(led) = group.up_to(&mut l, end) else {
                return false;
            };
            let w = self.inst.in_window(now_ns());
            self.tally.count(w, |c| c.commits_led += u64::from(led));
            return true;
        }
        log.wanted.fetch_max(end, AcqRel);
        log.post();
        loop {
            let seen = log.written.seq();
            if log.flushed.load(Acquire) >= end {
                return true;
            }
            if self.inst.stopping() {
                return false;
            }
            log.written.wait_past(seen, NAP);
        }
    }

    /// A multi-block read of `scan_blocks` physically contiguous blocks:
    /// cached blocks are logical reads, each run of missing ones one request.
    fn scan(&mut self, first: u64) -> bool {
        let mut run = std::mem::take(&mut self.scan_run);
        let ok = self.scan_into(first, &mut run);
        run.clear();
        self.scan_run = run;
        ok
    }

    fn scan_into(&mut self, first: u64, run: &mut Vec<u32>) -> bool {
        let n = u64::from(self.cfg.scan_blocks);
        let mut run_start = 0u64;
        let mut b = first;
        while b < first + n {
            match self.inst.cache.lookup(b, &self.inst.run.stop) {
                Lookup::Hit { buf, waited_ns } => {
                    self.inst.cache.unpin(buf);
                    self.hit(waited_ns);
                    b += 1;
                }
                Lookup::Claimed { buf } => {
                    // The block continues the run on disk (same file, next offset).
                    let contiguous = !run.is_empty() && {
                        let (file, at) = self.ts.locate(b);
                        let (first_file, first_at) = self.ts.locate(run_start);
                        file == first_file
                            && at == first_at + run.len() as u64 * u64::from(self.cfg.block_size)
                    };
                    if !contiguous && !run.is_empty() && !self.read_run(run_start, run) {
                        self.inst.cache.read_failed(buf);
                        self.inst.cache.unpin(buf);
                        return false;
                    }
                    if run.is_empty() {
                        run_start = b;
                    }
                    run.push(buf);
                    b += 1;
                }
                Lookup::DirtyVictim { buf, block: old } => {
                    if !run.is_empty() && !self.read_run(run_start, run) {
                        self.inst.cache.victim_write_failed(buf);
                        return false;
                    }
                    match self.write_victim(buf, old, b) {
                        None => return false,
                        Some(None) => {}
                        Some(Some(buf)) => {
                            run_start = b;
                            run.push(buf);
                            b += 1;
                        }
                    }
                }
                Lookup::NoFreeBuffer(w) => {
                    if !run.is_empty() && !self.read_run(run_start, run) {
                        return false;
                    }
                    if !self.no_free_buffer(w) {
                        return false;
                    }
                }
                Lookup::Stopped => {
                    for &buf in run.iter() {
                        self.inst.cache.read_failed(buf);
                        self.inst.cache.unpin(buf);
                    }
                    return false;
                }
            }
        }
        run.is_empty() || self.read_run(run_start, run)
    }

    /// Reads a run of claimed buffers with one request, then releases them.
    fn read_run(&mut self, first: u64, run: &mut Vec<u32>) -> bool {
        let bs = self.cfg.block_size as usize;
        let (file, offset) = self.ts.locate(first);
        let len = run.len() * bs;
        let buf = self.scan_buf.slot_mut(0, len).as_mut_ptr();
        let ok = self
            .physical_read(Event::DbFileScatteredRead, file, offset, buf, len as u32)
            .is_some();
        let cache = &self.inst.cache;
        for (i, &b) in run.iter().enumerate() {
            if ok {
                // SAFETY: this session holds READING on b; the scan buffer is its own.
                unsafe { std::ptr::copy_nonoverlapping(buf.add(i * bs), cache.ptr(b), bs) };
                cache.read_done(b);
            } else {
                cache.read_failed(b);
            }
            cache.unpin(b);
        }
        if ok {
            let k = run.len() as u64;
            let w = self.inst.in_window(now_ns());
            self.tally.count(w, |c| {
                c.logical_reads += k;
                c.physical_reads += k;
            });
        }
        run.clear();
        ok
    }

    /// The block pinned in a buffer: from the cache, or read in.
    fn get(&mut self, block: u64) -> Option<u32> {
        loop {
            match self.inst.cache.lookup(block, &self.inst.run.stop) {
                Lookup::Hit { buf, waited_ns } => {
                    self.hit(waited_ns);
                    return Some(buf);
                }
                Lookup::Claimed { buf } => return self.read_in(buf, block),
                Lookup::DirtyVictim { buf, block: old } => {
                    if let Some(buf) = self.write_victim(buf, old, block)? {
                        return self.read_in(buf, block);
                    }
                }
                Lookup::NoFreeBuffer(w) => {
                    if !self.no_free_buffer(w) {
                        return None;
                    }
                }
                Lookup::Stopped => return None,
            }
        }
    }

    /// Reads `block` into `buf`, claimed for it; the buffer pinned, or
    /// None when the read failed.
    fn read_in(&mut self, buf: u32, block: u64) -> Option<u32> {
        let (file, offset) = self.ts.locate(block);
        let ptr = self.inst.cache.ptr(buf);
        let bs = self.cfg.block_size;
        self.prefetched(file, offset, bs);
        if let Some(end) = self.physical_read(Event::DbFileSequentialRead, file, offset, ptr, bs) {
            self.inst.cache.read_done(buf);
            let w = self.inst.in_window(end);
            self.tally.count(w, |c| {
                c.logical_reads += 1;
                c.physical_reads += 1;
            });
            return Some(buf);
        }
        self.inst.cache.read_failed(buf);
        self.inst.cache.unpin(buf);
        None
    }

    /// `--flavor postgres` through the page cache: advises the block about
    /// to be read, as PostgreSQL's bitmap heap scan does, timed as "data
    /// file prefetch" and counted in `prefetches`.
    fn prefetched(&mut self, file: u32, offset: u64, len: u32) {
        let Some(p) = self.prefetch else {
            return;
        };
        let t = now_ns();
        if p.advise(file, offset, len) {
            let end = now_ns();
            self.wait(Event::DataFilePrefetch, t, end);
            self.tally
                .count(self.inst.in_window(end), |c| c.prefetches += 1);
        }
    }

    fn hit(&mut self, waited_ns: u64) {
        if waited_ns > 0 {
            let now = now_ns();
            self.clock = now;
            self.wait(Event::ReadByOtherSession, now - waited_ns, now);
        }
        self.tally.count(self.inst.in_window(self.clock), |c| {
            c.logical_reads += 1;
            c.cache_hits += 1;
        });
    }

    /// The buffers a miss looked at were dirty, pinned or busy: ask the DB
    /// writers and wait until one cleans buffers where the miss looked.
    pub(super) fn free_buffer_wait(&mut self, w: FreeWait) -> bool {
        let inst = self.inst;
        let t = now_ns();
        // The first to ask wakes the writers; the others find them asked.
        if !inst.free_wanted.load(Acquire) && !inst.free_wanted.swap(true, AcqRel) {
            inst.dbwr_post.notify();
        }
        inst.cache.wait_free(w, FREE_WAIT);
        self.wait(Event::FreeBufferWaits, t, now_ns());
        !inst.stopping()
    }

    /// One read request into `buf`, timed as `event`; returns when it
    /// completed, or None (and the run failed) when it did not read `len` bytes.
    fn physical_read(
        &mut self,
        event: Event,
        file: u32,
        offset: u64,
        buf: *mut u8,
        len: u32,
    ) -> Option<u64> {
        let io = Io {
            kind: OpKind::Read,
            file,
            offset,
            len,
            buf,
            slot: 0,
        };
        let t = now_ns();
        // SAFETY: buf is a cache buffer this session holds READING on, or its scan buffer.
        let res = unsafe { perform(&mut self.engine, &io) };
        let end = now_ns();
        self.clock = end;
        let lat = end - t;
        match res {
            Ok(c) if c.res == len as i32 => {}
            Ok(c) => {
                let why = explain_result(c.res, u64::from(len), self.io_mode);
                self.inst.run.fail(format!(
                    "reading {} at byte {offset} failed: {why}",
                    self.files[file as usize].display()
                ));
                return None;
            }
            Err(e) => {
                self.inst
                    .run
                    .fail(format!("session {}: read failed: {e}", self.id));
                return None;
            }
        }
        self.wait(event, t, end);
        let t0 = self.inst.run.start_ns.load(Acquire);
        self.series
            .record(Kind::Read, end - t0, lat, u64::from(len));
        let w = self.inst.in_window(end);
        if w {
            // Its histogram is the read events' (end of `run`).
            self.stats.op(Kind::Read).record_counts(lat, u64::from(len));
            if lat >= self.outlier_ns {
                self.stats.outlier(Outlier {
                    t_s: (end - t0) as f64 / 1e9,
                    op: Kind::Read,
                    session: self.id,
                    file,
                    offset_bytes: offset,
                    len_bytes: len,
                    latency_ms: lat as f64 / 1e6,
                });
            }
        }
        self.tally.count(w, |c| {
            c.read_requests += 1;
            c.read_bytes += u64::from(len);
        });
        Some(end)
    }

    /// Records a wait that ran from `from` to `to`.
    #[inline]
    pub(super) fn wait(&mut self, e: Event, from: u64, to: u64) {
        self.clock = to;
        self.inst.live[self.id as usize].wait(e, to - from);
        if self.inst.in_window(to) {
            self.tally.events.record(e, to - from);
        }
    }

    /// SLOB's think time: every Nth operation sleeps (idle, not DB time).
    /// Returns when the think time ended, if this operation thought.
    fn think(&mut self, done: u64) -> Option<u64> {
        let t = self.cfg.think?;
        if !done.is_multiple_of(u64::from(t.every)) {
            return None;
        }
        let secs = t.min_s + (t.max_s - t.min_s) * self.rng.next_f64();
        let start = now_ns();
        let until = start + (secs * 1e9) as u64;
        loop {
            let now = now_ns();
            if now >= until || self.inst.stopping() || now >= self.inst.run.end_ns.load(Acquire) {
                break;
            }
            std::thread::sleep(Duration::from_nanos(
                (until - now).min(THINK_NAP.as_nanos() as u64),
            ));
        }
        let end = now_ns();
        self.tally.total.think_ns += end - start;
        self.tally.window.think_ns += self.inst.window_part(start, end);
        Some(end)
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
