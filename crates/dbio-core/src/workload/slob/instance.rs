//! What the model's threads share — the buffer cache, the redo log's
//! positions, the checkpoint, and the signals they wake each other with —
//! and the counters each thread keeps for the report (AWR's statistics).

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};

use serde::{Deserialize, Serialize};

use super::cache::Cache;
use super::events::EventStats;
use super::futex::Signal;
use crate::workload::Shared;

/// The redo log's positions, in bytes of redo generated since the start.
#[derive(Default)]
pub struct Log {
    /// Redo generated (reserved by committing sessions).
    pub alloc: AtomicU64,
    /// Redo durable on disk.
    pub flushed: AtomicU64,
    /// The highest position a committing session waits to be durable (a
    /// rewriting log writer writes partly filled blocks only below it).
    pub wanted: AtomicU64,
    /// Moves after every log write.
    pub written: Signal,
    /// Sessions wake the log writer through this.
    pub post: Signal,
    /// True while the log writer is awake or already asked to look.
    pub posted: AtomicBool,
    /// `--flavor innodb`: the page cleaners' flush round, and the
    /// checkpoint its end asks for (`group_commit::GroupCommit::checkpoint`).
    pub(crate) cleaner: super::doublewrite::Cleaner,
    /// Non-zero while the log writer waits to reuse a log file whose
    /// checkpoint is not complete (a futex word sessions sleep on).
    pub switch_blocked: AtomicU32,
    pub buffer_size: u64,
}

impl Log {
    /// Wakes the log writer unless it is awake already.
    #[inline]
    pub(crate) fn post(&self) {
        if !self.posted.swap(true, AcqRel) {
            self.post.notify();
        }
    }
}

/// Checkpoint progress: every change below `done` is written to the datafiles.
pub(crate) struct Checkpoint {
    /// The position the log writer needs checkpointed (set at log switches).
    pub target: AtomicU64,
    pub done: AtomicU64,
    /// Each DB writer's low-water mark over the buffers it owns.
    pub marks: Box<[AtomicU64]>,
    /// Moves when `done` advances.
    pub advanced: Signal,
    /// Each checkpoint as it begins and completes (`cycle`).
    pub book: super::cycle::Book,
    /// The redo point of the last checkpoint dbio asked for (`--window`):
    /// an immediate one, as PostgreSQL's `CHECKPOINT` (0: none).
    pub immediate: AtomicU64,
}

impl Checkpoint {
    pub fn new(writers: u32) -> Self {
        Checkpoint {
            target: AtomicU64::new(0),
            done: AtomicU64::new(0),
            marks: (0..writers).map(|_| AtomicU64::new(0)).collect(),
            advanced: Signal::default(),
            book: Default::default(),
            immediate: AtomicU64::new(0),
        }
    }

    /// True when dbio asked for an immediate checkpoint at or beyond
    /// `target`: a pass towards it is not spread.
    pub(crate) fn hurried(&self, target: u64) -> bool {
        let at = self.immediate.load(Acquire);
        at != 0 && at >= target
    }

    /// Publishes DB writer `id`'s mark and advances `done` to the lowest.
    pub(crate) fn publish(&self, id: usize, mark: u64) {
        self.marks[id].fetch_max(mark, AcqRel);
        let low = self
            .marks
            .iter()
            .map(|m| m.load(Acquire))
            .min()
            .unwrap_or(0);
        if self.done.fetch_max(low, AcqRel) < low {
            self.book.advanced(low);
            self.advanced.notify();
        }
    }
}

/// Everything the model's threads share.
pub(crate) struct Instance<'a> {
    pub run: &'a Shared,
    pub cache: Cache,
    /// Rows locked by uncommitted updates.
    pub locks: super::locks::RowLocks,
    pub log: Log,
    pub ckpt: Checkpoint,
    /// Sessions (free buffers wanted) and the log writer (checkpoint) wake DB writers.
    pub dbwr_post: Signal,
    /// Set while a session waits for a free buffer.
    pub free_wanted: AtomicBool,
    /// Moves after each DB writer batch.
    pub dbwr_done: Signal,
    /// Raised when every session has finished: background threads drain and exit.
    pub sessions_done: AtomicBool,
    /// Blocks whose full-page image is logged since the checkpoint began
    /// (`--flavor postgres`; None for Oracle's redo).
    pub full_pages: Option<super::flavor::FullPages>,
    /// Each thread's live tallies, by thread number (sessions, DB writers,
    /// the log writer).
    pub live: Box<[super::live::LiveSlot]>,
}

impl Instance<'_> {
    /// True inside the measurement window (ramp over, not past the end).
    #[inline]
    pub(crate) fn in_window(&self, t: u64) -> bool {
        let start = self.run.start_ns.load(Relaxed);
        t >= start + self.run.ramp_ns && t <= self.run.end_ns.load(Relaxed)
    }

    /// The part of `[from, to]` inside the measurement window, ns.
    #[inline]
    pub(crate) fn window_part(&self, from: u64, to: u64) -> u64 {
        let start = self.run.start_ns.load(Relaxed) + self.run.ramp_ns;
        let end = self.run.end_ns.load(Relaxed);
        to.min(end).saturating_sub(from.max(start))
    }

    /// A checkpoint begins at redo position `at` (`asked`: by dbio, as the
    /// window opens, and immediate — not spread —, as PostgreSQL's
    /// `CHECKPOINT`; otherwise at a log switch): the DB writers write every
    /// change below it, full-page images restart (`--flavor postgres`).
    pub(crate) fn begin_checkpoint(&self, at: u64, asked: bool) {
        if asked {
            self.ckpt.immediate.fetch_max(at.max(1), AcqRel);
        }
        self.ckpt.target.fetch_max(at, AcqRel);
        if let Some(f) = &self.full_pages {
            f.checkpoint_begins();
        }
        let commits = super::live::commits(&self.live);
        let now = crate::measure::clock::now_ns();
        self.ckpt
            .book
            .began(at, now, commits, &self.ckpt.done, asked);
        self.dbwr_post.notify();
    }

    #[inline]
    pub fn stopping(&self) -> bool {
        self.run.stop.load(Relaxed)
    }

    /// Wakes every waiting session (the run is stopping), so that it sees
    /// the stop flag now, not at the end of its nap.
    pub(crate) fn wake_waiters(&self) {
        self.locks.wake_waiters();
        self.cache.wake_waiters();
        self.log.written.notify();
        super::futex::wake_all(&self.log.switch_blocked);
        self.ckpt.advanced.notify();
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// AWR-style statistics one thread counts (sessions, DB writers and the log
/// writer each fill their own part).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    /// SLOB operations completed (AWR "executes").
    pub executes: u64,
    pub selects: u64,
    pub updates: u64,
    pub scans: u64,
    /// Commits (AWR "user commits": transactions).
    pub transactions: u64,
    /// Blocks looked up in the cache (session logical reads).
    pub logical_reads: u64,
    /// Of those, found in the cache (or read in by another session).
    pub cache_hits: u64,
    /// Blocks read from the datafiles (AWR "physical reads").
    pub physical_reads: u64,
    /// Read requests issued (AWR "physical read IO requests").
    pub read_requests: u64,
    pub read_bytes: u64,
    /// Blocks changed by updates (AWR "db block changes").
    pub block_changes: u64,
    /// Changes that turned a clean buffer dirty.
    pub blocks_dirtied: u64,
    /// Blocks written: by DB writers, and by sessions that free a buffer
    /// themselves (AWR "physical writes").
    pub physical_writes: u64,
    /// Write requests issued (DB writers, sessions; doublewrite writes included).
    pub write_requests: u64,
    pub write_bytes: u64,
    /// Redo generated by commits (AWR "redo size").
    pub redo_bytes: u64,
    /// Redo written by the log writer, padding included.
    pub redo_written_bytes: u64,
    /// Padding to the redo block size (AWR "redo wastage").
    pub redo_wastage_bytes: u64,
    pub redo_writes: u64,
    /// Log writes made durable (each one, opened O_DSYNC or fdatasynced;
    /// `--flavor postgres`: the fdatasyncs, PostgreSQL's `wal_sync`).
    /// Absent from runs stored before it was counted (each write was then).
    #[serde(default)]
    pub redo_syncs: u64,
    pub log_switches: u64,
    /// Commits whose session wrote and fsynced the log itself, leading
    /// its commit group (`--flavor innodb`: InnoDB's group commit; the
    /// other commits were made durable by another's write).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub commits_led: u64,
    /// Checkpoint blocks written to the log's header, each fsynced
    /// (`--flavor innodb`: after a page cleaner's flush round that moved
    /// the pool's oldest modification).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub log_checkpoints: u64,
    /// The page cleaners' flush rounds ended (`--flavor innodb`; MariaDB's
    /// `buffer_LRU_batch_num_scan`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_rounds: u64,
    /// Block changes that logged the block's full-page image (`--flavor
    /// postgres`: the first change of a block after a checkpoint begins).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub full_page_images: u64,
    /// Of `blocks_dirtied`, by a select that hinted and pruned a block an
    /// update changed (`--flavor postgres`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hint_dirtied: u64,
    /// Of `write_requests` and `write_bytes`, the batches' writes to the
    /// doublewrite area (`--flavor innodb`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub doublewrite_writes: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub doublewrite_bytes: u64,
    /// Fsyncs of the doublewrite file and the data files after flush
    /// batches (`--flavor innodb`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub datafile_syncs: u64,
    /// Of `block_changes`, of undo pages: an update's undo log page and
    /// its rollback segment's header, the purge's header change
    /// (`--flavor innodb`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub undo_changes: u64,
    /// Of `physical_writes`, of undo pages (`--flavor innodb`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub undo_writes: u64,
    /// Of `physical_writes`, by DB writers for a checkpoint (PostgreSQL's
    /// `buffers_checkpoint`; the rest of the DB writers' are its
    /// `buffers_clean`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checkpoint_writes: u64,
    /// Of `physical_writes`, by sessions freeing a buffer (`--flavor
    /// postgres`: `buffers_backend`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub backend_writes: u64,
    /// Of `backend_writes`, of dirty buffers the clock sweep chose as a
    /// miss's victim (`--flavor postgres`: PostgreSQL's clock takes a dirty
    /// buffer as it takes a clean one; the rest are writes of a miss that
    /// found nothing it could take).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub victim_writes: u64,
    /// Ranges of written pages the DB writers asked the kernel to write
    /// back at once (`--flavor postgres` through the page cache:
    /// `checkpoint_flush_after`, `bgwriter_flush_after`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub writeback_hints: u64,
    /// Blocks a session advised the kernel of before reading them
    /// (`--flavor postgres` through the page cache: PostgreSQL's
    /// `posix_fadvise(WILLNEED)` of the page its scan reads next).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prefetches: u64,
    /// Session time spent in operations (busy or waiting), ns: DB time.
    pub db_time_ns: u64,
    /// CPU the sessions used in operations, ns (their threads' CPU clocks): DB CPU.
    pub db_cpu_ns: u64,
    /// Session time spent thinking (idle, not DB time), ns.
    pub think_ns: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        let Counters {
            executes,
            selects,
            updates,
            scans,
            transactions,
            logical_reads,
            cache_hits,
            physical_reads,
            read_requests,
            read_bytes,
            block_changes,
            blocks_dirtied,
            physical_writes,
            write_requests,
            write_bytes,
            redo_bytes,
            redo_written_bytes,
            redo_wastage_bytes,
            redo_writes,
            redo_syncs,
            log_switches,
            commits_led,
            log_checkpoints,
            flush_rounds,
            full_page_images,
            hint_dirtied,
            doublewrite_writes,
            doublewrite_bytes,
            datafile_syncs,
            undo_changes,
            undo_writes,
            checkpoint_writes,
            backend_writes,
            victim_writes,
            writeback_hints,
            prefetches,
            db_time_ns,
            db_cpu_ns,
            think_ns,
        } = o;
        self.executes += executes;
        self.selects += selects;
        self.updates += updates;
        self.scans += scans;
        self.transactions += transactions;
        self.logical_reads += logical_reads;
        self.cache_hits += cache_hits;
        self.physical_reads += physical_reads;
        self.read_requests += read_requests;
        self.read_bytes += read_bytes;
        self.block_changes += block_changes;
        self.blocks_dirtied += blocks_dirtied;
        self.physical_writes += physical_writes;
        self.write_requests += write_requests;
        self.write_bytes += write_bytes;
        self.redo_bytes += redo_bytes;
        self.redo_written_bytes += redo_written_bytes;
        self.redo_wastage_bytes += redo_wastage_bytes;
        self.redo_writes += redo_writes;
        self.redo_syncs += redo_syncs;
        self.log_switches += log_switches;
        self.commits_led += commits_led;
        self.log_checkpoints += log_checkpoints;
        self.flush_rounds += flush_rounds;
        self.full_page_images += full_page_images;
        self.hint_dirtied += hint_dirtied;
        self.doublewrite_writes += doublewrite_writes;
        self.doublewrite_bytes += doublewrite_bytes;
        self.datafile_syncs += datafile_syncs;
        self.undo_changes += undo_changes;
        self.undo_writes += undo_writes;
        self.checkpoint_writes += checkpoint_writes;
        self.backend_writes += backend_writes;
        self.victim_writes += victim_writes;
        self.writeback_hints += writeback_hints;
        self.prefetches += prefetches;
        self.db_time_ns += db_time_ns;
        self.db_cpu_ns += db_cpu_ns;
        self.think_ns += think_ns;
    }
}

/// What one thread measured: counters in the window and over the whole run
/// (the run totals are what the invariants hold exactly on), and its waits.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub window: Counters,
    pub total: Counters,
    pub events: EventStats,
}

impl Tally {
    /// Applies `f` to the run totals, and to the window's when `in_window`.
    #[inline]
    pub fn count(&mut self, in_window: bool, f: impl Fn(&mut Counters)) {
        f(&mut self.total);
        if in_window {
            f(&mut self.window);
        }
    }

    pub fn merge(&mut self, o: &Tally) {
        self.window.add(&o.window);
        self.total.add(&o.total);
        self.events.merge(&o.events);
    }
}
