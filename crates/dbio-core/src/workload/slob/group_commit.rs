//! InnoDB's group commit (`--flavor innodb`), as MariaDB 10.11's
//! `log_write_up_to` does it (`innodb_flush_log_at_trx_commit=1`): there is
//! no log writer thread. A committing session whose redo is not yet durable
//! becomes the group's leader when no log write is in progress: it writes
//! everything generated so far and fsyncs it itself, while the sessions
//! that commit meanwhile wait; when the leader is done, those its write
//! covered return, and one of the others leads the next group. A session
//! that commits alone is its own group: one log write and one fsync, by
//! itself.
//!
//! The model's log writer thread stands for InnoDB's other callers of
//! `log_write_up_to`: a page cleaner writing the log ahead of its pages, the
//! log buffer half full, the run's end — and the page cleaner's checkpoint
//! after a flush round that moved the pool's oldest modification
//! (`log_checkpoint`): the log made durable through its FILE_CHECKPOINT
//! record, then the checkpoint block written to the log's header and
//! fsynced ([`GroupCommit::checkpoint`]). They take the
//! same leader's lock as the sessions.
//!
//! The lock is what InnoDB's `group_commit_lock` is; a session never
//! sleeps on it: a follower sleeps on the log's write signal and tries
//! again when it moves.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};

use super::flavor::PartialBlock;
use super::futex::NAP;
use super::lgwr::{self, Pen, await_checkpoint, span};
use crate::engine::Engine;
use crate::engine::buf::BufPool;
use crate::measure::clock::now_ns;

/// Redo of a checkpoint's FILE_CHECKPOINT record (MariaDB 10.11: type and
/// length, the checkpoint LSN, a terminating byte; with the FILE_MODIFY
/// record of the one tablespace SLOB's table lives in).
pub(crate) const CHECKPOINT_RECORD_BYTES: u64 = 32;

/// Where the log's next write goes: only the group's leader touches it.
pub(crate) struct Tail {
    /// The redo file being written, and the position in it.
    file: usize,
    pos: u64,
    /// The log sequence (1 for the first file, one more at every switch).
    seq: u64,
    /// Redo position at which each file's current contents end (0 = unused).
    file_end: Vec<u64>,
    /// Redo written so far (all of it durable once its leader returns).
    written: u64,
    /// The log buffer: what each write writes (stamped block by block).
    buf: BufPool,
}

/// The redo logs as InnoDB's committing threads write them.
pub(crate) struct GroupCommit {
    pub files: Vec<PathBuf>,
    pub file_size: u64,
    pub redo_block: u64,
    pub io_mode: crate::config::IoMode,
    /// False when the logs are opened O_DSYNC (each write durable by itself).
    pub fsync: bool,
    /// The run's seed and the redo layout's target id, for the stamps.
    pub stamp: (u32, u32),
    tail: Mutex<Tail>,
}

/// The leader's engine: it has the redo files from `first` on (a session's
/// engine has the datafiles first), and where its writes are counted.
pub(crate) struct Leader<'s, 'a, 'p, E: Engine> {
    pub engine: &'s mut E,
    pub first: u32,
    pub pen: Pen<'p, 'a>,
}

/// A thread's books: its tallies, statistics and series.
pub(crate) type Books<'s, 'a> = (
    &'s mut super::instance::Tally,
    &'s mut crate::measure::stats::SessionStats,
    &'s mut crate::samplers::series::SeriesWriter<'a>,
);

impl<'s, 'a, E: Engine> Leader<'s, 'a, 's, E> {
    /// Thread `id` (outliers from `outlier_ns` on) as a group's leader,
    /// with its engine (the redo files from `first` on) and its books.
    pub(crate) fn of(
        (engine, first): (&'s mut E, u32),
        (id, inst, outlier_ns): (u32, &'s super::instance::Instance<'a>, u64),
        (tally, stats, series): Books<'s, 'a>,
    ) -> Self {
        Leader {
            engine,
            first,
            pen: Pen {
                id,
                inst,
                tally,
                stats,
                series,
                outlier_ns,
            },
        }
    }
}

impl GroupCommit {
    /// The logs in `files`, `file_size` bytes each in blocks of
    /// `redo_block`, written from a log buffer of `log_buffer` bytes.
    pub fn new(
        files: Vec<PathBuf>,
        (file_size, redo_block, log_buffer): (u64, u64, u64),
        io_mode: crate::config::IoMode,
        fsync: bool,
        stamp: (u32, u32),
    ) -> GroupCommit {
        let n = files.len();
        GroupCommit {
            files,
            file_size,
            redo_block,
            io_mode,
            fsync,
            stamp,
            tail: Mutex::new(Tail {
                file: 0,
                pos: 0,
                seq: 1,
                file_end: vec![0; n],
                written: 0,
                // A write starts up to a block before its redo.
                buf: BufPool::new((log_buffer + redo_block) as usize, 1),
            }),
        }
    }

    /// Returns when the redo below `end` is durable: at once when it is,
    /// after leading a group when no write is in progress, or after
    /// waiting for the write in progress (and leading the next group if
    /// that one did not cover it). Some(true) when the caller led a group
    /// that wrote; None when the run stopped or failed.
    pub(crate) fn up_to<E: Engine>(&self, l: &mut Leader<'_, '_, '_, E>, end: u64) -> Option<bool> {
        let inst = l.pen.inst;
        let log = &inst.log;
        let mut led = false;
        loop {
            let seen = log.written.seq();
            if log.flushed.load(Acquire) >= end {
                return Some(led);
            }
            if inst.stopping() {
                return None;
            }
            match self.tail.try_lock() {
                Ok(mut tail) => {
                    let wrote = self.lead(l, &mut tail);
                    drop(tail);
                    log.written.notify();
                    led |= wrote?;
                }
                Err(std::sync::TryLockError::WouldBlock) => log.written.wait_past(seen, NAP),
                Err(std::sync::TryLockError::Poisoned(_)) => {
                    inst.run
                        .fail("a thread writing the redo log panicked".into());
                    return None;
                }
            }
        }
    }

    /// As the group's leader: writes everything generated so far (a write
    /// per log buffer or log file's end) and fsyncs it, then publishes it
    /// as durable. Whether it wrote; None when a write failed or the run
    /// stopped at a log switch.
    fn lead<E: Engine>(&self, l: &mut Leader<'_, '_, '_, E>, tail: &mut Tail) -> Option<bool> {
        let inst = l.pen.inst;
        let log = &inst.log;
        let upto = log.alloc.load(Acquire);
        if upto <= tail.written {
            // Written by a leader before: durable already.
            log.flushed.fetch_max(tail.written, AcqRel);
            return Some(false);
        }
        while tail.written < upto {
            let data = (upto - tail.written)
                .min(log.buffer_size)
                .min(self.file_size - tail.pos);
            let w = span(PartialBlock::Rewrite, self.redo_block, tail.pos, data);
            let (t, file) = (now_ns(), tail.file);
            if !self.write(l, tail, w.offset, w.len) {
                return None;
            }
            tail.pos = w.pos_after;
            tail.written += data;
            // The group's fsync after its last write; a full file's at once.
            let full = tail.pos == self.file_size;
            let synced = (full || tail.written >= upto) && self.fsync;
            if synced && !self.sync(l, file) {
                return None;
            }
            let end = now_ns();
            l.pen
                .wrote((t, end), l.first + file as u32, w.offset, w.len);
            l.pen.tally.count(inst.in_window(end), |c| {
                c.redo_writes += 1;
                c.redo_syncs += u64::from(synced);
                c.redo_written_bytes += w.len;
                c.redo_wastage_bytes += w.len - data;
            });
            if full && !self.switch(l, tail) {
                return None;
            }
        }
        log.flushed.store(tail.written, Release);
        Some(true)
    }

    /// A full (and durable) log file: a checkpoint begins at its end, and
    /// the next file is written once its old contents are checkpointed
    /// (sessions wanting to commit wait meanwhile).
    fn switch<E: Engine>(&self, l: &mut Leader<'_, '_, '_, E>, tail: &mut Tail) -> bool {
        let inst = l.pen.inst;
        tail.file_end[tail.file] = tail.written;
        inst.begin_checkpoint(tail.written, false);
        let next = (tail.file + 1) % self.files.len();
        if !await_checkpoint(inst, tail.file_end[next]) {
            return false;
        }
        tail.file = next;
        tail.pos = 0;
        tail.seq += 1;
        l.pen
            .tally
            .count(inst.in_window(now_ns()), |c| c.log_switches += 1);
        true
    }

    /// InnoDB's checkpoint at `at` (the pool's oldest modification) after
    /// a page cleaner's flush round: its FILE_CHECKPOINT record made durable
    /// (a group of its own, or joined), then the checkpoint block written
    /// over the first block of the log file being written (the model's log
    /// header) and fsynced, and the checkpoint entered in the cycle book
    /// (begun and completed at once: every change below `at` is written).
    /// False when the run stopped or failed.
    pub(crate) fn checkpoint<E: Engine>(&self, l: &mut Leader<'_, '_, '_, E>, at: u64) -> bool {
        let inst = l.pen.inst;
        let end =
            inst.log.alloc.fetch_add(CHECKPOINT_RECORD_BYTES, AcqRel) + CHECKPOINT_RECORD_BYTES;
        let w = inst.in_window(now_ns());
        l.pen
            .tally
            .count(w, |c| c.redo_bytes += CHECKPOINT_RECORD_BYTES);
        if self.up_to(l, end).is_none() {
            return false;
        }
        let Ok(mut tail) = self.tail.lock() else {
            inst.run
                .fail("a thread writing the redo log panicked".into());
            return false;
        };
        let t = now_ns();
        let (file, len) = (tail.file, self.redo_block);
        if !self.write(l, &mut tail, 0, len) || !self.sync(l, file) {
            return false;
        }
        let end = now_ns();
        l.pen.wrote((t, end), l.first + file as u32, 0, len);
        l.pen.tally.count(inst.in_window(end), |c| {
            c.redo_writes += 1;
            c.redo_written_bytes += len;
            c.redo_syncs += u64::from(self.fsync);
            c.log_checkpoints += 1;
        });
        drop(tail);
        inst.ckpt
            .book
            .made(at, end, super::live::commits(&inst.live));
        inst.ckpt.advanced.notify();
        true
    }

    /// Stamps and writes `len` bytes at `pos` of the file being written.
    fn write<E: Engine>(
        &self,
        l: &mut Leader<'_, '_, '_, E>,
        tail: &mut Tail,
        pos: u64,
        len: u64,
    ) -> bool {
        let (seed, target) = self.stamp;
        let data = tail.buf.slot_mut(0, len as usize);
        lgwr::stamp(
            data,
            self.redo_block,
            tail.file,
            pos,
            (tail.seq, target, seed),
        );
        let buf = tail.buf.ptr(0);
        let file = l.first + tail.file as u32;
        let res = lgwr::write(l.engine, self.io_mode, file, pos, (buf, len));
        self.ok(l, res, tail.file)
    }

    /// The fsync of log file `file` after a group's writes (none when the
    /// logs are opened O_DSYNC).
    fn sync<E: Engine>(&self, l: &mut Leader<'_, '_, '_, E>, file: usize) -> bool {
        if !self.fsync {
            return true;
        }
        let res = lgwr::sync(l.engine, l.first + file as u32);
        self.ok(l, res, file)
    }

    fn ok<E: Engine>(
        &self,
        l: &Leader<'_, '_, '_, E>,
        res: Result<(), String>,
        file: usize,
    ) -> bool {
        res.map_err(|why| lgwr::fail(l.pen.inst, &self.files[file], &why))
            .is_ok()
    }
}
