//! A DB writer: writes dirty buffers back to the datafiles in batches (one
//! "db file parallel write" wait per batch; with io_uring the whole batch is
//! in flight at once). It writes when asked (a session found no free buffer,
//! the log writer needs a checkpoint) and when more than a quarter of a
//! working set's buffers are dirty. Outside checkpoints it writes the working
//! sets that need it — those where a session found no free buffer since the
//! writer last swept them, and those more than a quarter dirty — each from
//! its clock hand on: the cold end, the buffers the next misses look at, so
//! that they find them clean. For a checkpoint
//! it sweeps all its buffers once, batch by batch, and publishes its mark when
//! the sweep is done: a checkpoint costs one pass over the cache, not one per
//! batch. DB writer `id` of `n` owns the buffers whose number is `id` modulo
//! `n`.

use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::time::Duration;

use super::bufsync::Marked;
use super::ckpt_end::CheckpointEnd;
use super::doublewrite::{Ahead, Demand, Doublewrite, log_ahead_of, round_done, sync_of};
use super::events::Event;
use super::instance::{Instance, Tally};
use super::keys::Tablespace;
use super::writeback::Writeback;
use crate::engine::{Engine, Io, OpKind, explain_result, perform, perform_all};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::SeriesWriter;
use crate::storage::block::Header;
use crate::storage::content::Content;

pub(crate) struct DbWriter<'a, E: Engine> {
    pub id: u32,
    /// Thread number used in outliers.
    pub thread: u32,
    pub writers: u32,
    pub inst: &'a Instance<'a>,
    pub engine: E,
    pub io_mode: crate::config::IoMode,
    pub ts: Tablespace,
    /// (target id, run seed) for the blocks' stamps.
    pub stamp: (u32, u32),
    /// What written blocks hold (`--compress-pct`, `--dedupe-pct`).
    pub content: Content,
    pub files: &'a [std::path::PathBuf],
    /// `--flavor innodb`: this page cleaner's doublewrite area.
    pub doublewrite: Option<Doublewrite>,
    pub batch: usize,
    /// When each request of a batch was queued (capacity `batch`).
    pub queued: Vec<u64>,
    /// Buffers the cold sweeps looked at since the last batch written
    /// (`--flavor innodb`'s flush round counts them).
    pub scanned: u64,
    pub rng: Rng,
    pub outlier_ns: u64,
    pub tally: Tally,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
    /// How fast it writes: checkpoints spread, a cap outside them, the
    /// datafiles fsynced after a checkpoint (`pace`).
    pub pace: super::pace::WriterPace<'a>,
    /// `--flavor postgres` through the page cache: the writeback hints of
    /// its checkpoint writes and of its other writes (`writeback`).
    pub writeback: Option<[Writeback; 2]>,
    /// `--flavor postgres`: a checkpoint writes the buffers marked at its
    /// start, in block order, as PostgreSQL's checkpointer does
    /// (`bufsync`); None: it sweeps the buffers in order.
    pub marked: Option<Marked>,
    /// `--flavor postgres`'s first DB writer: the files PostgreSQL's
    /// checkpointer writes and fsyncs at each checkpoint's end (`ckpt_end`).
    pub ckpt_end: Option<CheckpointEnd>,
}

/// The batch being gathered: its writes, their buffers (held WRITING), and
/// the generation stamped into every block of it (one clock read per batch,
/// not one per block: the batch is written as one "db file parallel write").
struct Batch {
    ios: Vec<Io>,
    bufs: Vec<u32>,
    generation: u64,
}

/// A checkpoint pass: one sweep over all of a writer's buffers (or over
/// those marked at its start: `bufsync`), batch by batch. When it has seen
/// every one, the lowest redo position still dirty among them is known
/// without scanning again (a change made after the pass began is at or above
/// `low` from the start).
struct Pass {
    /// Buffers processed of `total`: the pass's progress.
    seen: u32,
    total: u32,
    low: u64,
    /// Redo position when it began (where a spread pass's schedule starts).
    begun: u64,
    /// The checkpoint target when it began.
    target: u64,
}

impl Pass {
    fn start(inst: &Instance<'_>, total: u32, target: u64) -> Pass {
        let begun = inst.log.alloc.load(Acquire);
        Pass {
            seen: 0,
            total,
            low: begun,
            begun,
            target,
        }
    }
}

/// Sets the calling thread's nice value to `nice` (the DB writer's own
/// thread only), where the process may (root or CAP_SYS_NICE; otherwise it
/// stays as it was). Why: where the sessions keep every core busy (a RAM
/// target, or more sessions than the storage needs), a DB writer at their
/// priority gets one share of the CPU among hundreds, falls behind, and the
/// sessions wait "free buffer waits" on a writer that is runnable, not on
/// storage — the model's limit, not the storage's. Oracle's DBWn sessions
/// are not competing with sessions that never block. True if it was set.
pub(crate) fn raise_priority(nice: i32) -> bool {
    // SAFETY: plain system calls on this thread's own id.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0
    }
}

impl<E: Engine> DbWriter<'_, E> {
    pub fn run(&mut self) {
        let inst = self.inst;
        let cache = &inst.cache;
        let n = cache.buffers();
        // This writer's buffers are id, id + writers, ...: `mine` of them.
        let mine = n.saturating_sub(self.id).div_ceil(self.writers);
        let mut batch = Batch {
            ios: Vec::with_capacity(self.batch),
            bufs: Vec::with_capacity(self.batch),
            generation: 0,
        };
        let mut k = 0u32; // the next of my buffers a checkpoint pass looks at
        let mut pass: Option<Pass> = None;
        // Per working set, the request for free buffers this writer last answered.
        let mut answered = vec![0u32; cache.sets()];
        let mut next_set = 0usize;
        if mine == 0 {
            // No buffers: never holds a checkpoint back.
            inst.ckpt.publish(self.id as usize, u64::MAX);
            return;
        }
        loop {
            if inst.stopping() || inst.sessions_done.load(Acquire) || !self.end_checkpoints() {
                break;
            }
            let seen = inst.dbwr_post.seq();
            let target = inst.ckpt.target.load(Acquire);
            let checkpointing = target > inst.ckpt.marks[self.id as usize].load(Acquire);
            inst.free_wanted.swap(false, AcqRel);
            let needed = (0..cache.sets())
                .any(|s| cache.set_wanted(s) != answered[s] || cache.set_pressure(s));
            let cold_cap = if needed { self.cold_allowed() } else { 0 };
            let paused = checkpointing && self.pass_ahead(pass.as_ref());
            if (!checkpointing || paused) && cold_cap == 0 {
                if !checkpointing {
                    pass = None;
                }
                if self.doublewrite.is_some() && inst.log.cleaner.idle(Demand::of(inst)) {
                    self.round_done();
                }
                inst.dbwr_post
                    .wait_past(seen, self.idle_nap(needed, paused));
                continue;
            }
            // Gather a batch: dirty buffers of the working sets that need
            // it, from their clock hands on; then, for a checkpoint, buffers
            // changed before its target, continuing the pass (a buffer the
            // first part wrote is clean: the pass's mark stays right).
            batch.ios.clear();
            batch.bufs.clear();
            batch.generation = inst.run.wall_minus_mono_ns + now_ns();
            if cold_cap > 0 {
                next_set = self.gather_cold(next_set, &mut answered, &mut batch, cold_cap);
            }
            let cold = batch.bufs.len();
            let finished = if checkpointing && !paused {
                let p = pass.get_or_insert_with(|| self.start_pass(mine, target));
                match self.marked.take() {
                    Some(mut m) => {
                        let f = self.gather_marked(p, &mut m, &mut batch);
                        self.marked = Some(m);
                        f
                    }
                    None => self.gather_pass(p, &mut k, mine, target, &mut batch),
                }
            } else {
                if !checkpointing {
                    pass = None;
                }
                None
            };
            if !batch.bufs.is_empty() {
                self.seal(&batch);
                if !self.write_batch(&batch.ios, &batch.bufs) {
                    return;
                }
                self.count_split(cold, batch.bufs.len() - cold);
                if !self.hint_writeback(&batch.ios, cold, false) {
                    return;
                }
                if self.doublewrite.is_some() && self.round_over(batch.bufs.len(), n) {
                    self.round_done();
                }
            }
            inst.dbwr_done.notify();
            if finished.is_some()
                && !(self.hint_writeback(&[], 0, true) && self.fsync_after_checkpoint())
            {
                return;
            }
            if let Some(low) = finished {
                // Every buffer seen; those written in this pass are clean now.
                inst.ckpt.publish(self.id as usize, low);
                pass = None;
                if !self.end_checkpoints() {
                    return;
                }
            }
            if batch.bufs.is_empty() && finished.is_none_or(|low| low < target) {
                // Nothing writable now (pinned or being read): let it settle.
                inst.dbwr_post
                    .wait_past(inst.dbwr_post.seq(), Duration::from_millis(2));
            }
        }
    }

    /// `--flavor innodb`: a batch of `pages` was written, its cold sweeps
    /// having looked at the buffers counted since the last: true when that
    /// ends the page cleaners' flush round (a pool of `buffers`).
    fn round_over(&mut self, pages: usize, buffers: u32) -> bool {
        let scanned = std::mem::take(&mut self.scanned);
        self.inst.log.cleaner.wrote(
            scanned,
            pages as u64,
            u64::from(buffers),
            Demand::of(self.inst),
        )
    }

    /// `--flavor innodb`: the page cleaners' flush round ended (counted),
    /// and a checkpoint asked for if it moved the oldest modification.
    fn round_done(&mut self) {
        let w = self.inst.in_window(now_ns());
        self.tally.count(w, |c| c.flush_rounds += 1);
        round_done(self.inst);
    }

    /// `--flavor postgres`'s first DB writer: each checkpoint completed
    /// since it last looked ends as PostgreSQL's does (`ckpt_end`). False
    /// (the run failed) when a write or fsync failed.
    fn end_checkpoints(&mut self) -> bool {
        let Some(end) = &mut self.ckpt_end else {
            return true;
        };
        let ends = self.inst.ckpt.book.ends();
        while end.ended < ends {
            if let Err(why) = end.write() {
                self.inst
                    .run
                    .fail(format!("DB writer {}: a checkpoint's end: {why}", self.id));
                return false;
            }
        }
        true
    }

    /// Begins a checkpoint pass towards `target` over this writer's `mine`
    /// buffers (`--flavor postgres`: over those dirty below it now).
    fn start_pass(&mut self, mine: u32, target: u64) -> Pass {
        let inst = self.inst;
        let mut p = Pass::start(inst, mine, target);
        if let Some(m) = &mut self.marked {
            p.low = p
                .low
                .min(m.start(&inst.cache, self.id, self.writers, target));
            p.total = m.progress().1;
        }
        p
    }

    /// `--flavor postgres`: continues pass `p` over the buffers marked at its
    /// start, in block order, until the batch is full. Returns the pass's
    /// mark when every marked buffer is processed.
    fn gather_marked(&mut self, p: &mut Pass, m: &mut Marked, batch: &mut Batch) -> Option<u64> {
        while batch.bufs.len() < self.batch {
            match m.take(&self.inst.cache, &mut p.low) {
                Some((b, block)) => self.queue_write(b, block, batch),
                None => break,
            }
        }
        p.seen = m.progress().0;
        m.done().then_some(p.low)
    }

    /// Continues checkpoint pass `p` from this writer's buffer `k` until the
    /// batch is full: buffers changed before `target` are written, the
    /// others lower the pass's mark. Returns the mark when the pass has seen
    /// every one of the writer's `mine` buffers.
    fn gather_pass(
        &mut self,
        p: &mut Pass,
        k: &mut u32,
        mine: u32,
        target: u64,
        batch: &mut Batch,
    ) -> Option<u64> {
        let cache = &self.inst.cache;
        while batch.bufs.len() < self.batch {
            let b = self.id + *k * self.writers;
            *k = (*k + 1) % mine;
            if let Some(lsn) = cache.dirty_lsn(b) {
                match (lsn < target).then(|| cache.begin_write(b)).flatten() {
                    Some(block) => self.queue_write(b, block, batch),
                    // Changed after the target, or being read: stays dirty.
                    None => p.low = p.low.min(lsn),
                }
            }
            p.seen += 1;
            if p.seen == mine {
                return Some(p.low);
            }
        }
        None
    }

    /// Gathers dirty buffers of the working sets that need writing (a miss
    /// found no free buffer there since this writer last swept the set, or
    /// more than a quarter of it is dirty), each from its clock hand on,
    /// starting at set `from`. A set swept to the end without filling the
    /// batch has its request answered. Returns the set to start at next.
    fn gather_cold(
        &mut self,
        from: usize,
        answered: &mut [u32],
        batch: &mut Batch,
        cap: usize,
    ) -> usize {
        let cache = &self.inst.cache;
        let sets = cache.sets();
        for j in 0..sets {
            let s = (from + j) % sets;
            let wanted = cache.set_wanted(s);
            if wanted == answered[s] && !cache.set_pressure(s) {
                continue;
            }
            let (lo, len, at) = cache.set_span(s);
            let had = batch.bufs.len();
            for p in 0..len {
                let b = lo + (at + p) % len;
                if b % self.writers != self.id {
                    continue;
                }
                self.scanned += 1;
                if let Some(block) = cache.begin_write(b) {
                    self.queue_write(b, block, batch);
                    if batch.bufs.len() >= cap {
                        return s;
                    }
                }
            }
            if wanted != answered[s] && batch.bufs.len() == had {
                // Asked, but nothing here is this writer's to write (the
                // buffers are pinned or busy): the waiters look again.
                cache.wake_all(s);
            }
            answered[s] = wanted;
        }
        from
    }

    /// Buffers this writer may write outside a checkpoint now: a batch, or
    /// what its `--dbwr-rate` budget allows.
    fn cold_allowed(&mut self) -> usize {
        match &mut self.pace.budget {
            Some(b) => b.allowed(now_ns(), self.batch),
            None => self.batch,
        }
    }

    /// True when a spread checkpoint pass is ahead of its schedule (and
    /// neither the log writer waits for it nor has dbio asked for an
    /// immediate checkpoint at or beyond its target, as `CHECKPOINT` makes
    /// PostgreSQL's checkpointer hurry): it writes nothing more for now.
    fn pass_ahead(&self, pass: Option<&Pass>) -> bool {
        let (Some(interval), Some(p)) = (self.pace.spread, pass) else {
            return false;
        };
        let inst = self.inst;
        if inst.log.switch_blocked.load(Acquire) != 0 || inst.ckpt.hurried(p.target) {
            return false;
        }
        let spread = super::pace::Spread::new(p.begun, interval, super::pace::COMPLETION_TARGET);
        spread.ahead(p.seen, p.total, inst.log.alloc.load(Acquire))
    }

    /// How long to sleep with nothing to write now: until the budget allows
    /// a buffer (asked to clean), a little (a paused checkpoint), or until asked.
    fn idle_nap(&self, needed: bool, paused: bool) -> Duration {
        let budget = self.pace.budget.as_ref().filter(|_| needed);
        match (budget, paused) {
            (Some(b), _) => Duration::from_nanos(b.wait_ns(now_ns()).clamp(1_000_000, 100_000_000)),
            (None, true) => Duration::from_millis(10),
            (None, false) => Duration::from_millis(100),
        }
    }

    /// Counts a written batch's split: `cold` buffers cleaned (budgeted),
    /// `ckpt` for the checkpoint.
    fn count_split(&mut self, cold: usize, ckpt: usize) {
        if let Some(b) = &mut self.pace.budget {
            b.spend(cold);
        }
        let w = self.inst.in_window(now_ns());
        self.tally.count(w, |c| c.checkpoint_writes += ckpt as u64);
    }

    /// `--flavor postgres`: notes the batch's pages for writeback (the first
    /// `cold` outside the checkpoint), hinting what is pending of the
    /// checkpoint when its pass is `done`. False (the run failed) when the
    /// kernel refused a hint.
    fn hint_writeback(&mut self, ios: &[Io], cold: usize, done: bool) -> bool {
        let Some(wb) = &mut self.writeback else {
            return true;
        };
        let fds = self.pace.fsync;
        let before = wb[0].ranges + wb[1].ranges;
        let mut res = Ok(());
        for (i, io) in ios.iter().enumerate() {
            let k = usize::from(i < cold);
            res = res.and_then(|()| wb[k].add(fds, io.file, io.offset));
        }
        if done {
            res = res.and_then(|()| wb[0].issue(fds));
        }
        let hinted = wb[0].ranges + wb[1].ranges - before;
        let w = self.inst.in_window(now_ns());
        self.tally.count(w, |c| c.writeback_hints += hinted);
        if let Err((file, e)) = res {
            self.inst.run.fail(format!(
                "DB writer {}: asking the kernel to write back {} failed: {e}",
                self.id,
                self.files[file as usize].display()
            ));
            return false;
        }
        true
    }

    /// After a checkpoint pass wrote through the page cache: every datafile
    /// fsynced, as PostgreSQL's checkpointer does, before the checkpoint
    /// counts as done. False (the run failed) when one fails.
    fn fsync_after_checkpoint(&mut self) -> bool {
        for (i, &fd) in self.pace.fsync.iter().enumerate() {
            // SAFETY: the workload keeps its datafiles open for the run.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            if let Err(e) = rustix::fs::fsync(fd) {
                self.inst.run.fail(format!(
                    "DB writer {}: fsync of {} after a checkpoint failed: {e}",
                    self.id,
                    self.files[i].display()
                ));
                return false;
            }
        }
        true
    }

    /// Queues the write of buffer `b` (held WRITING) for `block`; [`Self::seal`]
    /// stamps it before the batch is written.
    fn queue_write(&mut self, b: u32, block: u64, batch: &mut Batch) {
        let cache = &self.inst.cache;
        let (file, offset) = self.ts.locate(block);
        let bs = cache.block_size();
        batch.ios.push(Io {
            kind: OpKind::Write,
            file,
            offset,
            len: bs,
            buf: cache.ptr(b),
            slot: batch.bufs.len() as u32,
        });
        batch.bufs.push(b);
    }

    /// Stamps and checksums every block of the batch (DB_BLOCK_CHECKSUM: the
    /// writer computes each block's checksums as it writes it). The buffers
    /// were last touched by the sessions that changed them and are cold in
    /// the CPU's caches: the next block's bytes are prefetched while this one
    /// is checksummed, so the checksum does not wait on memory line by line.
    fn seal(&mut self, batch: &Batch) {
        let bs = self.inst.cache.block_size();
        for (i, io) in batch.ios.iter().enumerate() {
            if let Some(next) = batch.ios.get(i + 1) {
                prefetch(next.buf, bs as usize);
            }
            // SAFETY: WRITING is held on the buffer: no one else touches its bytes.
            let bytes = unsafe { std::slice::from_raw_parts_mut(io.buf, bs as usize) };
            let h = Header {
                block: io.offset / u64::from(bs),
                generation: batch.generation,
                file: io.file,
                size: bs,
                target: self.stamp.0,
                seed: self.stamp.1,
            };
            self.content.write(bytes, h, &mut self.rng);
        }
    }

    fn write_batch(&mut self, ios: &[Io], bufs: &[u32]) -> bool {
        let inst = self.inst;
        let t = now_ns();
        // InnoDB: the log first (the write-ahead rule), then the
        // doublewrite, durable before any page of the batch is written in place.
        if self.doublewrite.is_some() {
            let newest = bufs.iter().map(|&b| inst.cache.changed_at(b)).max();
            let ahead = if inst.log.cleaner.begins(Demand::of(inst)) {
                Ahead::Round
            } else {
                Ahead::Pages(newest.unwrap_or(0))
            };
            if !log_ahead_of(inst, ahead) {
                for &b in bufs {
                    inst.cache.end_write(b);
                }
                return false;
            }
        }
        let mut dw = self.doublewrite.take();
        let first = dw.as_mut().map_or(Ok(0), |d| self.doublewrite(d, ios));
        let (res, failed, ok_count) = match first {
            Ok(_) => self.write_pages(ios),
            Err(_) => (Ok(()), None, 0),
        };
        // InnoDB fsyncs the data files a batch wrote before its pages count as clean.
        let synced = match (&res, failed, dw.as_mut()) {
            (Ok(()), None, Some(d)) => self.sync_datafiles(d, ios),
            _ => Ok(0),
        };
        self.doublewrite = dw;
        let end = now_ns();
        for &b in bufs {
            inst.cache.end_write(b);
        }
        inst.cache.cleaned(bufs);
        let (dw_bytes, syncs) = match (first, synced, res) {
            (Err(why), _, _) | (_, Err(why), _) => {
                inst.run.fail(why);
                return false;
            }
            (_, _, Err(e)) => {
                inst.run
                    .fail(format!("DB writer {}: write failed: {e}", self.id));
                return false;
            }
            (Ok(dw_bytes), Ok(syncs), Ok(())) => (dw_bytes, syncs),
        };
        if let Some((r, io)) = failed {
            let why = explain_result(r, u64::from(io.len), self.io_mode);
            inst.run.fail(format!(
                "writing {} at byte {} failed: {why}",
                self.files[io.file as usize].display(),
                io.offset
            ));
            return false;
        }
        let undo = self.ts.undo.map_or(0, |u| {
            ios.iter().filter(|io| io.file == u.file).count() as u64
        });
        self.count_batch(end - t, end, [ok_count, undo], dw_bytes, syncs);
        true
    }

    /// Writes the batch's pages in place, up to the engine's depth in
    /// flight: the engine's result, the first write that fell short, and
    /// how many were written whole.
    fn write_pages(&mut self, ios: &[Io]) -> (std::io::Result<()>, Option<(i32, Io)>, u64) {
        let inst = self.inst;
        let t0 = inst.run.start_ns.load(Acquire);
        let mut failed = None;
        let mut ok_count = 0u64;
        // SAFETY: every buffer is held WRITING until the batch's end_write.
        let res = unsafe {
            perform_all(&mut self.engine, ios, &mut self.queued, |c, queued| {
                let end = now_ns();
                let io = &ios[c.slot as usize];
                if c.res != io.len as i32 {
                    failed.get_or_insert((c.res, *io));
                    return;
                }
                ok_count += 1;
                let lat = end - queued;
                self.series
                    .record(Kind::Write, end - t0, lat, u64::from(io.len));
                if inst.in_window(end) {
                    self.stats.op(Kind::Write).record(lat, u64::from(io.len));
                    if lat >= self.outlier_ns {
                        self.stats.outlier(Outlier {
                            t_s: (end - t0) as f64 / 1e9,
                            op: Kind::Write,
                            session: self.thread,
                            file: io.file,
                            offset_bytes: io.offset,
                            len_bytes: io.len,
                            latency_ms: lat as f64 / 1e6,
                        });
                    }
                }
            })
        };
        (res, failed, ok_count)
    }

    /// Counts a batch that ended at `end` after `waited` ns: `pages` pages
    /// written in place (`undo` of them undo pages), `dw_bytes` of
    /// doublewrite (one write and its fsync, if any) and `syncs` data file
    /// fsyncs.
    fn count_batch(
        &mut self,
        waited: u64,
        end: u64,
        [pages, undo]: [u64; 2],
        dw_bytes: u64,
        syncs: u64,
    ) {
        let inst = self.inst;
        let bs = u64::from(inst.cache.block_size());
        let dw_writes = u64::from(dw_bytes > 0);
        let live = &inst.live[self.thread as usize];
        live.wait(Event::DbFileParallelWrite, waited);
        live.wrote(pages + dw_writes, pages * bs + dw_bytes);
        let w = inst.in_window(end);
        if w {
            self.tally.events.record(Event::DbFileParallelWrite, waited);
        }
        self.tally.count(w, |c| {
            c.physical_writes += pages;
            c.write_requests += pages + dw_writes;
            c.write_bytes += pages * bs + dw_bytes;
            c.doublewrite_writes += dw_writes;
            c.doublewrite_bytes += dw_bytes;
            c.datafile_syncs += syncs + dw_writes;
            c.undo_writes += undo;
        });
    }

    /// Writes the batch's pages into this page cleaner's doublewrite area
    /// in one write and fsyncs the doublewrite file. The bytes written, or
    /// why it failed.
    fn doublewrite(&mut self, d: &mut Doublewrite, ios: &[Io]) -> Result<u64, String> {
        let w = d.copy(ios);
        let t = now_ns();
        self.perform_one(&w).map_err(|why| {
            format!(
                "writing the doublewrite file {} at byte {} failed: {why}",
                d.path.display(),
                w.offset
            )
        })?;
        let end = now_ns();
        let t0 = self.inst.run.start_ns.load(Acquire);
        let len = u64::from(w.len);
        self.series.record(Kind::Write, end - t0, end - t, len);
        if self.inst.in_window(end) {
            self.stats.op(Kind::Write).record(end - t, len);
        }
        self.perform_one(&sync_of(d.file)).map_err(|why| {
            format!(
                "fsync of the doublewrite file {} failed: {why}",
                d.path.display()
            )
        })?;
        Ok(len)
    }

    /// Fsyncs each data file the batch wrote; how many, or why one failed.
    fn sync_datafiles(&mut self, d: &mut Doublewrite, ios: &[Io]) -> Result<u64, String> {
        let files = d.files_of(ios);
        for &f in files {
            self.perform_one(&sync_of(f)).map_err(|why| {
                format!(
                    "fsync of {} failed: {why}",
                    self.files[f as usize].display()
                )
            })?;
        }
        Ok(files.len() as u64)
    }

    /// One request, waited for: Ok when it did all of its bytes.
    fn perform_one(&mut self, io: &Io) -> Result<(), String> {
        // SAFETY: the caller's buffer (the doublewrite area) outlives the call.
        match unsafe { perform(&mut self.engine, io) } {
            Ok(c) if c.res == io.len as i32 => Ok(()),
            Ok(c) => Err(explain_result(c.res, u64::from(io.len), self.io_mode)),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// Asks the CPU to bring `len` bytes at `p` into its caches (a hint: no
/// effect on what the program computes).
#[inline]
fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for off in (0..len).step_by(64) {
        // SAFETY: a prefetch never faults and reads nothing the program sees.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                p.wrapping_add(off) as *const i8,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

#[cfg(test)]
#[path = "dbwr_tests.rs"]
mod tests;
