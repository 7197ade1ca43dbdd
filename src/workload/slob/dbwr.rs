//! A DB writer: writes dirty buffers back to the datafiles in batches (one
//! "db file parallel write" wait per batch; with io_uring the whole batch is
//! in flight at once). It writes when asked (a session found no free buffer,
//! the log writer needs a checkpoint) and when more than a quarter of its
//! buffers are dirty, from the cold end of the cache first. After each batch
//! it publishes its checkpoint mark. DB writer `id` of `n` owns the buffers
//! whose number is `id` modulo `n`.

use std::sync::atomic::Ordering::{AcqRel, Acquire};
use std::time::Duration;

use super::events::Event;
use super::instance::{Instance, Tally};
use super::keys::Tablespace;
use crate::engine::{Engine, Io, OpKind, explain_result, perform_all};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::samplers::series::SeriesWriter;
use crate::target::block::{self, Header};
use crate::workload::rng::Rng;

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

impl<E: Engine> DbWriter<'_, E> {
    pub fn run(&mut self) {
        let inst = self.inst;
        let cache = &inst.cache;
        let mine = cache.buffers().div_ceil(self.writers).max(1);
        let mut ios: Vec<Io> = Vec::with_capacity(self.batch);
        let mut bufs: Vec<u32> = Vec::with_capacity(self.batch);
        let mut cursor = self.id;
        loop {
            if inst.stopping() || inst.sessions_done.load(Acquire) {
                break;
            }
            let seen = inst.dbwr_post.seq();
            let target = inst.ckpt.target.load(Acquire);
            let checkpointing = target > inst.ckpt.marks[self.id as usize].load(Acquire);
            let wanted = inst.free_wanted.swap(false, AcqRel);
            let pressure = cache.dirty() * 4 > u64::from(cache.buffers());
            if !checkpointing && !wanted && !pressure {
                self.publish_mark();
                inst.dbwr_post.wait_past(seen, Duration::from_millis(100));
                continue;
            }
            // Gather a batch: for a checkpoint, buffers changed before its
            // target; otherwise dirty buffers from the clock hand on.
            if !checkpointing {
                let h = cache.hand();
                cursor = h - h % self.writers + self.id;
            }
            ios.clear();
            bufs.clear();
            for _ in 0..mine {
                if bufs.len() == self.batch {
                    break;
                }
                let b = cursor % cache.buffers().max(1);
                cursor = cursor.wrapping_add(self.writers);
                if b % self.writers != self.id || !cache.writable(b) {
                    continue;
                }
                if checkpointing && cache.dirty_lsn(b).is_none_or(|l| l >= target) {
                    continue;
                }
                let Some(block) = cache.begin_write(b) else {
                    continue;
                };
                let (file, offset) = self.ts.locate(block);
                let bs = cache.block_size();
                // SAFETY: WRITING is held on b: no one else touches its bytes.
                let bytes = unsafe { std::slice::from_raw_parts_mut(cache.ptr(b), bs as usize) };
                let h = Header {
                    block: offset / u64::from(bs),
                    generation: inst.run.wall_minus_mono_ns + now_ns(),
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
            if !bufs.is_empty() && !self.write_batch(&ios, &bufs) {
                return;
            }
            inst.dbwr_done.notify();
            self.publish_mark();
            if bufs.is_empty() {
                // Nothing writable now (pinned or being read): let it settle.
                inst.dbwr_post
                    .wait_past(inst.dbwr_post.seq(), Duration::from_millis(2));
            }
        }
    }

    /// Publishes the lowest redo position of a change this writer's buffers
    /// still hold (or the current log position if they are all clean).
    fn publish_mark(&self) {
        let inst = self.inst;
        let cache = &inst.cache;
        let mut mark = inst.log.alloc.load(Acquire);
        let mut b = self.id;
        while b < cache.buffers() {
            if let Some(l) = cache.dirty_lsn(b) {
                mark = mark.min(l);
            }
            b += self.writers;
        }
        inst.ckpt.publish(self.id as usize, mark);
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
