//! The log writer: writes the redo sessions generated, sequentially, to the
//! redo log files, one write for everything pending (group commit: one write
//! makes every commit in it durable), padded to the redo block size (the
//! padding is "redo wastage"). A full log file switches to the next one and
//! asks for a checkpoint; reusing a file whose checkpoint is not complete
//! waits, and so do sessions that want to commit meanwhile.
//!
//! Every redo block written carries dbio's per-sector stamps
//! (`target::block`): the redo file's number among the redo files, the
//! offset, the log sequence (1 for the first file this run writes, one
//! more at every switch) as the generation, the redo layout's target id and
//! the run's seed, so `dbio verify --target REDO_DIR/dbio-redo` checks them.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::time::Duration;

use super::events::Event;
use super::futex;
use super::instance::{Instance, Tally};
use crate::engine::buf::BufPool;
use crate::engine::{Engine, Io, OpKind, explain_result, perform};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::samplers::series::SeriesWriter;
use crate::storage::block::{self, Header};
use crate::storage::manifest::Manifest;

pub struct LogWriter<'a, E: Engine> {
    /// Thread number used in outliers.
    pub id: u32,
    pub inst: &'a Instance<'a>,
    pub engine: E,
    pub io_mode: crate::config::IoMode,
    pub files: &'a [std::path::PathBuf],
    /// File number of the first redo file in outliers (after the datafiles).
    pub file_base: u32,
    pub file_size: u64,
    pub redo_block: u64,
    /// The log buffer's memory: what each write writes.
    pub buf: BufPool,
    /// The run's seed, for the stamps.
    pub seed: u32,
    pub outlier_ns: u64,
    pub tally: Tally,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
}

impl<E: Engine> LogWriter<'_, E> {
    pub fn run(&mut self) {
        let inst = self.inst;
        let log = &inst.log;
        let nfiles = self.files.len();
        // Redo position at which each file's current contents end (0 = unused).
        let mut file_end = vec![0u64; nfiles];
        let (mut file, mut pos) = (0usize, 0u64);
        let mut flushed = log.flushed.load(Acquire);
        // The redo layout's target id (its manifest), and the log sequence.
        let target = self.files[0]
            .parent()
            .and_then(|d| Manifest::load(d).ok().flatten())
            .map_or(0, |m| m.target_id);
        let mut seq = 1u64;
        loop {
            let alloc = log.alloc.load(Acquire);
            if alloc == flushed {
                if inst.sessions_done.load(Acquire) || inst.stopping() {
                    break;
                }
                let seen = log.post.seq();
                log.posted.store(false, Release);
                if log.alloc.load(Acquire) == flushed {
                    log.post.wait_past(seen, Duration::from_millis(100));
                }
                continue;
            }
            let pending = alloc - flushed;
            let room = self.file_size - pos;
            let data = pending.min(log.buffer_size).min(room);
            let len = data.div_ceil(self.redo_block) * self.redo_block;
            self.stamp(file, pos, len, (seq, target));
            if !self.write(file, pos, len) {
                return;
            }
            let now = now_ns();
            pos += len;
            flushed += data;
            log.flushed.store(flushed, Release);
            log.written.notify();
            let w = inst.in_window(now);
            self.tally.count(w, |c| {
                c.redo_writes += 1;
                c.redo_written_bytes += len;
                c.redo_wastage_bytes += len - data;
            });
            if pos == self.file_size {
                file_end[file] = flushed;
                inst.ckpt.target.fetch_max(flushed, AcqRel);
                if let Some(f) = &inst.full_pages {
                    f.checkpoint_begins();
                }
                inst.dbwr_post.notify();
                let next = (file + 1) % nfiles;
                if !self.await_checkpoint(file_end[next]) {
                    return;
                }
                file = next;
                pos = 0;
                seq += 1;
                self.tally
                    .count(inst.in_window(now_ns()), |c| c.log_switches += 1);
            }
        }
    }

    /// Waits until everything below `lsn` is checkpointed (the next log file
    /// may be overwritten); sessions wanting to commit wait meanwhile.
    fn await_checkpoint(&mut self, lsn: u64) -> bool {
        let inst = self.inst;
        if inst.ckpt.done.load(Acquire) >= lsn {
            return true;
        }
        let blocked = &inst.log.switch_blocked;
        blocked.store(1, Release);
        let ok = loop {
            let seen = inst.ckpt.advanced.seq();
            if inst.ckpt.done.load(Acquire) >= lsn {
                break true;
            }
            if inst.stopping() {
                break false;
            }
            inst.ckpt.target.fetch_max(lsn, AcqRel);
            inst.dbwr_post.notify();
            inst.ckpt
                .advanced
                .wait_past(seen, Duration::from_millis(20));
        };
        blocked.store(0, Release);
        futex::wake_all(blocked);
        ok
    }

    /// Stamps the `len` bytes about to be written at `pos` of redo file
    /// `file`, redo block by redo block: (log sequence, target id).
    fn stamp(&mut self, file: usize, pos: u64, len: u64, (seq, target): (u64, u32)) {
        let rb = self.redo_block as usize;
        let data = self.buf.slot_mut(0, len as usize);
        for (i, b) in data.chunks_exact_mut(rb).enumerate() {
            let h = Header {
                block: pos / self.redo_block + i as u64,
                generation: seq,
                file: file as u32,
                size: rb as u32,
                target,
                seed: self.seed,
            };
            block::seal(b, h);
        }
    }

    /// One log write of `len` bytes at `pos` of redo file `file`, durable
    /// when it returns ("log file parallel write").
    fn write(&mut self, file: usize, pos: u64, len: u64) -> bool {
        let io = Io {
            kind: OpKind::Write,
            file: file as u32,
            offset: pos,
            len: len as u32,
            buf: self.buf.ptr(0),
            slot: 0,
        };
        let t = now_ns();
        // SAFETY: the log buffer is this thread's and outlives the call.
        let res = unsafe { perform(&mut self.engine, &io) };
        let end = now_ns();
        match res {
            Ok(c) if c.res == len as i32 => {}
            Ok(c) => {
                let why = explain_result(c.res, len, self.io_mode);
                self.inst.run.fail(format!(
                    "writing redo to {} at byte {pos} failed: {why}",
                    self.files[file].display()
                ));
                return false;
            }
            Err(e) => {
                self.inst.run.fail(format!("log writer: write failed: {e}"));
                return false;
            }
        }
        let lat = end - t;
        let t0 = self.inst.run.start_ns.load(Acquire);
        self.series.record(Kind::Write, end - t0, lat, len);
        let live = &self.inst.live[self.id as usize];
        live.wait(Event::LogFileParallelWrite, lat);
        live.wrote(1, len);
        if self.inst.in_window(end) {
            self.tally.events.record(Event::LogFileParallelWrite, lat);
            self.stats.op(Kind::Write).record(lat, len);
            if lat >= self.outlier_ns {
                self.stats.outlier(Outlier {
                    t_s: (end - t0) as f64 / 1e9,
                    op: Kind::Write,
                    session: self.id,
                    file: self.file_base + file as u32,
                    offset_bytes: pos,
                    len_bytes: len as u32,
                    latency_ms: lat as f64 / 1e6,
                });
            }
        }
        true
    }
}
