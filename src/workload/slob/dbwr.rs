//! A DB writer: writes dirty buffers back to the datafiles in batches (one
//! "db file parallel write" wait per batch; with io_uring the whole batch is
//! in flight at once). It writes when asked (a session found no free buffer,
//! the log writer needs a checkpoint) and when more than a quarter of its
//! buffers are dirty, from the cold end of the cache first. For a checkpoint
//! it sweeps all its buffers once, batch by batch, and publishes its mark when
//! the sweep is done: a checkpoint costs one pass over the cache, not one per
//! batch. DB writer `id` of `n` owns the buffers whose number is `id` modulo
//! `n`.

use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::time::Duration;

use super::events::Event;
use super::instance::{Instance, Tally};
use super::keys::Tablespace;
use crate::engine::{Engine, Io, OpKind, explain_result, perform_all};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::SeriesWriter;
use crate::target::block::{self, Header};

pub struct DbWriter<'a, E: Engine> {
    pub id: u32,
    /// Thread number used in outliers.
    pub thread: u32,
    pub writers: u32,
    pub inst: &'a Instance<'a>,
    pub engine: E,
    pub io_mode: crate::config::IoMode,
    pub ts: Tablespace,
    pub files: &'a [std::path::PathBuf],
    pub batch: usize,
    /// When each request of a batch was queued (capacity `batch`).
    pub queued: Vec<u64>,
    pub rng: Rng,
    pub outlier_ns: u64,
    pub tally: Tally,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
}

/// A checkpoint pass: one sweep over all of a writer's buffers, batch by
/// batch. When it has seen every buffer, the lowest redo position still dirty
/// among them is known without scanning again (a change made after the pass
/// began is at or above `low` from the start).
struct Pass {
    seen: u32,
    low: u64,
}

impl Pass {
    fn start(inst: &Instance<'_>) -> Pass {
        Pass {
            seen: 0,
            low: inst.log.alloc.load(Acquire),
        }
    }
}

impl<E: Engine> DbWriter<'_, E> {
    pub fn run(&mut self) {
        let inst = self.inst;
        let cache = &inst.cache;
        let n = cache.buffers();
        // This writer's buffers are id, id + writers, ...: `mine` of them.
        let mine = n.saturating_sub(self.id).div_ceil(self.writers);
        let mut ios: Vec<Io> = Vec::with_capacity(self.batch);
        let mut bufs: Vec<u32> = Vec::with_capacity(self.batch);
        let mut k = 0u32; // the next of my buffers to look at
        let mut pass: Option<Pass> = None;
        if mine == 0 {
            // No buffers: never holds a checkpoint back.
            inst.ckpt.publish(self.id as usize, u64::MAX);
            return;
        }
        loop {
            if inst.stopping() || inst.sessions_done.load(Acquire) {
                break;
            }
            let seen = inst.dbwr_post.seq();
            let target = inst.ckpt.target.load(Acquire);
            let checkpointing = target > inst.ckpt.marks[self.id as usize].load(Acquire);
            let wanted = inst.free_wanted.swap(false, AcqRel);
            let pressure = cache.dirty() * 4 > u64::from(n);
            if !checkpointing && !wanted && !pressure {
                pass = None;
                inst.dbwr_post.wait_past(seen, Duration::from_millis(100));
                continue;
            }
            // Gather a batch: for a checkpoint, buffers changed before its
            // target, continuing the pass; otherwise dirty buffers from the
            // clock hand on (the cold end).
            if checkpointing {
                if pass.is_none() {
                    pass = Some(Pass::start(inst));
                }
            } else {
                pass = None;
                k = (cache.hand() / self.writers) % mine;
            }
            ios.clear();
            bufs.clear();
            let mut finished = None;
            for _ in 0..mine {
                if bufs.len() == self.batch {
                    break;
                }
                let b = self.id + k * self.writers;
                k = (k + 1) % mine;
                if let Some(lsn) = cache.dirty_lsn(b) {
                    let after_target = checkpointing && lsn >= target;
                    match (!after_target).then(|| cache.begin_write(b)).flatten() {
                        Some(block) => self.queue_write(b, block, &mut ios, &mut bufs),
                        // Changed after the target, or being read: stays dirty.
                        None => {
                            if let Some(p) = pass.as_mut() {
                                p.low = p.low.min(lsn);
                            }
                        }
                    }
                }
                if let Some(p) = pass.as_mut() {
                    p.seen += 1;
                    if p.seen == mine {
                        finished = Some(p.low);
                        break;
                    }
                }
            }
            if !bufs.is_empty() && !self.write_batch(&ios, &bufs) {
                return;
            }
            inst.dbwr_done.notify();
            if let Some(low) = finished {
                // Every buffer seen; those written in this pass are clean now.
                inst.ckpt.publish(self.id as usize, low);
                pass = None;
            }
            if bufs.is_empty() && finished.is_none_or(|low| low < target) {
                // Nothing writable now (pinned or being read): let it settle.
                inst.dbwr_post
                    .wait_past(inst.dbwr_post.seq(), Duration::from_millis(2));
            }
        }
    }

    /// Seals buffer `b` (held WRITING) for `block` and queues its write.
    fn queue_write(&mut self, b: u32, block: u64, ios: &mut Vec<Io>, bufs: &mut Vec<u32>) {
        let cache = &self.inst.cache;
        let (file, offset) = self.ts.locate(block);
        let bs = cache.block_size();
        // SAFETY: WRITING is held on b: no one else touches its bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(cache.ptr(b), bs as usize) };
        let h = Header {
            block: offset / u64::from(bs),
            generation: self.inst.run.wall_minus_mono_ns + now_ns(),
            file,
            size: bs,
        };
        block::refresh(bytes, h, &mut self.rng);
        ios.push(Io {
            kind: OpKind::Write,
            file,
            offset,
            len: bs,
            buf: cache.ptr(b),
            slot: bufs.len() as u32,
        });
        bufs.push(b);
    }

    fn write_batch(&mut self, ios: &[Io], bufs: &[u32]) -> bool {
        let inst = self.inst;
        let t = now_ns();
        let t0 = inst.run.start_ns.load(Acquire);
        let mut failed = None;
        let mut ok_count = 0u64;
        // SAFETY: every buffer is held WRITING until end_write below.
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
        let end = now_ns();
        for &b in bufs {
            inst.cache.end_write(b);
        }
        if let Err(e) = res {
            inst.run
                .fail(format!("DB writer {}: write failed: {e}", self.id));
            return false;
        }
        if let Some((r, io)) = failed {
            let why = explain_result(r, u64::from(io.len), self.io_mode);
            inst.run.fail(format!(
                "writing {} at byte {} failed: {why}",
                self.files[io.file as usize].display(),
                io.offset
            ));
            return false;
        }
        let bs = u64::from(inst.cache.block_size());
        let w = inst.in_window(end);
        if w {
            self.tally
                .events
                .record(Event::DbFileParallelWrite, end - t);
        }
        self.tally.count(w, |c| {
            c.physical_writes += ok_count;
            c.write_requests += ok_count;
            c.write_bytes += ok_count * bs;
        });
        true
    }
}

#[cfg(test)]
#[path = "dbwr_tests.rs"]
mod tests;
