//! The log writer: writes the redo sessions generated, sequentially, to the
//! redo log files, one write for everything pending (group commit: one write
//! makes every commit in it durable), ended as the flavor ends a partly
//! filled redo block ([`PartialBlock`]): Oracle pads it (the padding is
//! "redo wastage") and starts the next write at the next block; PostgreSQL
//! (8 KiB WAL pages) and InnoDB (512-byte log blocks) write the block as
//! far as it goes and write it again, fuller, with the next write. While
//! no commit waits, a rewriting log writer writes only whole blocks (the
//! WAL writer's background writes of the records selects log): a partly
//! filled block waits for the next commit. A full log file switches to the next one and
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
use super::flavor::PartialBlock;
use super::futex;
use super::instance::{Instance, Tally};
use crate::engine::buf::BufPool;
use crate::engine::{Engine, Io, OpKind, explain_result, perform};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::samplers::series::SeriesWriter;
use crate::storage::block::{self, Header};
use crate::storage::manifest::Manifest;

pub(crate) struct LogWriter<'a, E: Engine> {
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
    /// How a write that ends inside a redo block ends it.
    pub partial: PartialBlock,
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
            let upto = self.write_upto(flushed);
            if upto == flushed {
                if inst.sessions_done.load(Acquire) || inst.stopping() {
                    break;
                }
                let seen = log.post.seq();
                log.posted.store(false, Release);
                if self.write_upto(flushed) == flushed {
                    log.post.wait_past(seen, Duration::from_millis(100));
                }
                continue;
            }
            let pending = upto - flushed;
            let room = self.file_size - pos;
            let data = pending.min(log.buffer_size).min(room);
            let w = span(self.partial, self.redo_block, pos, data);
            self.stamp(file, w.offset, w.len, (seq, target));
            if !self.write(file, w.offset, w.len) {
                return;
            }
            let now = now_ns();
            let len = w.len;
            pos = w.pos_after;
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
                inst.begin_checkpoint(flushed, false);
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

    /// How far the next write goes: everything generated, except that a
    /// rewriting log writer with no commit waiting (and the run going on)
    /// writes whole redo blocks only. `flushed` when there is nothing to write.
    fn write_upto(&self, flushed: u64) -> u64 {
        let inst = self.inst;
        let alloc = inst.log.alloc.load(Acquire);
        let urgent = inst.log.wanted.load(Acquire) > flushed
            || inst.sessions_done.load(Acquire)
            || inst.stopping();
        upto(self.partial, self.redo_block, alloc, flushed, urgent)
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

/// How far a write goes with `alloc` generated and `flushed` durable:
/// everything when padding or `urgent` (a commit waits, or the run ends),
/// else the whole blocks only (nothing when there are none).
fn upto(partial: PartialBlock, block: u64, alloc: u64, flushed: u64, urgent: bool) -> u64 {
    if urgent || partial == PartialBlock::Pad {
        alloc
    } else {
        (alloc / block * block).max(flushed)
    }
}

/// One log write: where it starts in the file, how many bytes it writes,
/// and the file position of the redo after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    offset: u64,
    len: u64,
    pos_after: u64,
}

/// The write of `data` bytes of redo that go at file position `pos`, in
/// blocks of `block` bytes. Padding leaves `pos` block-aligned; rewriting
/// starts at the block `pos` is in (written before, partly filled).
fn span(partial: PartialBlock, block: u64, pos: u64, data: u64) -> Span {
    match partial {
        PartialBlock::Pad => {
            let len = data.div_ceil(block) * block;
            Span {
                offset: pos,
                len,
                pos_after: pos + len,
            }
        }
        PartialBlock::Rewrite => {
            let offset = pos / block * block;
            let end = (pos + data).div_ceil(block) * block;
            Span {
                offset,
                len: end - offset,
                pos_after: pos + data,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_wastes_the_rest_of_the_block_and_moves_past_it() {
        let a = span(PartialBlock::Pad, 512, 0, 100);
        assert_eq!((a.offset, a.len, a.pos_after), (0, 512, 512));
        let b = span(PartialBlock::Pad, 512, a.pos_after, 600);
        assert_eq!((b.offset, b.len, b.pos_after), (512, 1024, 1536));
    }

    #[test]
    fn rewriting_writes_a_partly_filled_page_again_with_the_next_group() {
        // Three commit groups of 3000 B into 8 KiB WAL pages.
        let p = PartialBlock::Rewrite;
        let a = span(p, 8192, 0, 3000);
        assert_eq!((a.offset, a.len, a.pos_after), (0, 8192, 3000));
        let b = span(p, 8192, a.pos_after, 3000);
        assert_eq!((b.offset, b.len, b.pos_after), (0, 8192, 6000));
        // The third crosses into the second page: both pages, one write.
        let c = span(p, 8192, b.pos_after, 3000);
        assert_eq!((c.offset, c.len, c.pos_after), (0, 16384, 9000));
        let d = span(p, 8192, c.pos_after, 100);
        assert_eq!((d.offset, d.len, d.pos_after), (8192, 8192, 9100));
    }

    #[test]
    fn with_no_commit_waiting_only_whole_pages_are_written() {
        let p = PartialBlock::Rewrite;
        // A select's 64 B record alone: nothing until a commit asks.
        assert_eq!(upto(p, 8192, 100 + 64, 100, false), 100);
        assert_eq!(upto(p, 8192, 100 + 64, 100, true), 164);
        // Records past a page boundary: the full page goes in the background.
        assert_eq!(upto(p, 8192, 8300, 100, false), 8192);
        assert_eq!(upto(p, 8192, 8300, 100, true), 8300);
        // Oracle's log writer writes whatever is there.
        assert_eq!(upto(PartialBlock::Pad, 512, 164, 100, false), 164);
    }

    #[test]
    fn rewriting_from_a_block_boundary_writes_whole_blocks() {
        let s = span(PartialBlock::Rewrite, 512, 1024, 1024);
        assert_eq!((s.offset, s.len, s.pos_after), (1024, 1024, 2048));
        // Every write covers its redo and stays within whole blocks.
        for pos in [0u64, 1, 511, 512, 4000] {
            for data in [1u64, 511, 512, 513, 9000] {
                let s = span(PartialBlock::Rewrite, 512, pos, data);
                assert!(s.offset <= pos && s.offset + s.len >= pos + data);
                assert_eq!(s.offset % 512, 0);
                assert_eq!(s.len % 512, 0);
                assert!(s.len < data + 1024);
            }
        }
    }
}
