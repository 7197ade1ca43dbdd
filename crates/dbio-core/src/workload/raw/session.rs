//! One session: a thread that keeps its engine's queue full with requests
//! from its workload, timestamps each, and records completions into its own
//! statistics and per-second series. Nothing here allocates or locks once the
//! loop runs; the only shared state read per request is the stop flag and the
//! end of the measurement window (relaxed atomics).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::requests::Requests;
use crate::config::IoMode;
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, Completion, Engine, Io, OpKind, explain_errno};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, Outlier, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::SeriesWriter;
use crate::storage::Target;
use crate::storage::block::Header;
use crate::storage::content::Content;
use crate::storage::genmap::GenMap;
use crate::storage::inflight;
use crate::verify::classify::Expect;
use crate::verify::interrupted::Interruption;
use crate::verify::online::{self, Bad, Look, VerifyOpts};
use crate::workload::Shared;

/// One raw session: its fixed inputs and everything it owns.
pub struct Session<'a> {
    pub id: u32,
    pub target: &'a Target,
    pub io_mode: IoMode,
    /// Requests this session may issue (u64::MAX when time-bound).
    pub quota: u64,
    /// Nanoseconds between requests for --rate (0 = as fast as possible).
    pub interval_ns: u64,
    pub outlier_ns: u64,
    pub shared: &'a Shared,
    /// The generations of the target's blocks (directory targets that are
    /// written); without it a write's generation is the wall clock in ns.
    pub map: Option<&'a GenMap>,
    /// This session's slots of the run's record of writes in flight (one
    /// per buffer slot; with the map): a write is marked before it is
    /// issued and cleared when it completes, so that `dbio verify` knows
    /// which blocks a kill may have torn.
    pub in_flight: Option<&'a [AtomicU64]>,
    /// (target id, run seed) for the stamps.
    pub stamp: (u32, u32),
    /// What written blocks hold.
    pub content: &'a Content,
    /// What to check (`--verify`, `--verify-after-write`), and the map
    /// reads are judged against (the run's own, or the floors a read-only
    /// run found); without one, every class but lost is still found.
    pub verify: VerifyOpts,
    pub check_map: Option<&'a GenMap>,
    /// The writes interrupted runs may have left torn or stale: not bad.
    pub interrupted: &'a Interruption,
    pub engine: AnyEngine,
    pub requests: Requests,
    pub bufs: BufPool,
    pub rng: Rng,
    pub stats: SessionStats,
    pub series: SeriesWriter<'a>,
}

/// In-flight bookkeeping per buffer slot.
#[derive(Clone, Copy)]
struct InFlight {
    start: u64,
    offset: u64,
    file: u32,
    kind: OpKind,
    /// Global block number.
    block: u64,
    /// A read to check: its block as the map had it at issue.
    look: Look,
    /// A read-back of this slot's acknowledged write (`--verify-after-write`).
    readback: bool,
}

/// What the session hands back besides its statistics.
pub struct SessionEnd {
    /// Completion time of its last request, ns since the run started.
    pub last_ns: u64,
    pub issued: u64,
}

impl Session<'_> {
    /// Runs the session loop until its quota, the deadline, or a stop.
    pub fn run(&mut self) -> SessionEnd {
        let (id, target, io_mode) = (self.id, self.target, self.io_mode);
        let (map, (target_id, seed), content) = (self.map, self.stamp, self.content);
        let in_flight = self.in_flight;
        let (verify, check_map, interrupted) = (self.verify, self.check_map, self.interrupted);
        let (quota, interval_ns, outlier_ns) = (self.quota, self.interval_ns, self.outlier_ns);
        let Session {
            shared,
            engine,
            requests: work,
            bufs,
            rng,
            stats,
            series,
            ..
        } = self;
        let shared: &Shared = shared;
        let depth = engine.depth() as usize;
        let bs = target.block_size;
        let t0 = shared.start_ns.load(Relaxed);
        let ramp_end = t0 + shared.ramp_ns;
        let gen_base = shared.wall_minus_mono_ns;
        let mut free: Vec<u32> = (0..depth as u32).rev().collect();
        for slot in 0..depth {
            rng.fill(bufs.slot_mut(slot, bs as usize)); // incompressible from the start
        }
        let mut meta = vec![
            InFlight {
                start: 0,
                offset: 0,
                file: 0,
                kind: OpKind::Read,
                block: 0,
                look: Look::Skip,
                readback: false,
            };
            depth
        ];
        // Slots whose acknowledged write waits to be read back.
        let mut backlog: Vec<u32> = Vec::with_capacity(depth);
        let mut inflight = 0usize;
        let mut issued = 0u64;
        let mut last_ns = 0u64;
        let mut next_due = t0;
        loop {
            // Fill the queue.
            while inflight < depth {
                if shared.stop.load(Relaxed) {
                    free.append(&mut backlog);
                    break;
                }
                if let Some(slot) = backlog.pop() {
                    let m = &mut meta[slot as usize];
                    m.kind = OpKind::Read;
                    m.readback = true;
                    m.look = online::before_read(check_map, m.block);
                    m.start = now_ns();
                    let io = Io {
                        kind: OpKind::Read,
                        file: m.file,
                        offset: m.offset,
                        len: bs,
                        buf: bufs.slot_mut(slot as usize, bs as usize).as_mut_ptr(),
                        slot,
                    };
                    // SAFETY: the slot's buffer stays untouched until reaped below.
                    if let Err(e) = unsafe { engine.queue(&io) } {
                        shared.fail(format!("session {id}: cannot queue I/O: {e}"));
                        free.push(slot);
                        break;
                    }
                    inflight += 1;
                    continue;
                }
                if issued >= quota {
                    break;
                }
                let mut now = now_ns();
                if now >= shared.end_ns.load(Relaxed) {
                    break;
                }
                if interval_ns > 0 {
                    if now < next_due {
                        if inflight > 0 {
                            break; // reap while waiting for the next slot
                        }
                        std::thread::sleep(std::time::Duration::from_nanos(next_due - now));
                        now = now_ns();
                    }
                    next_due += interval_ns;
                }
                let (kind, gblock) = work.next_io(rng);
                let (file, offset) = target.locate(gblock);
                let slot = free.pop().expect("a free slot while inflight < depth");
                let buf = bufs.slot_mut(slot as usize, bs as usize);
                if kind == OpKind::Write {
                    let generation = match map {
                        Some(m) => {
                            let g = m.begin(gblock).generation;
                            if let Some(f) = in_flight {
                                inflight::mark(&f[slot as usize], gblock, g);
                            }
                            u64::from(g)
                        }
                        None => gen_base + now,
                    };
                    let h = Header {
                        block: offset / u64::from(bs),
                        generation,
                        file,
                        size: bs,
                        target: target_id,
                        seed,
                    };
                    content.write(buf, h, rng);
                    now = now_ns();
                }
                let look = if verify.reads && kind == OpKind::Read {
                    online::before_read(check_map, gblock)
                } else {
                    Look::Skip
                };
                meta[slot as usize] = InFlight {
                    start: now,
                    offset,
                    file,
                    kind,
                    block: gblock,
                    look,
                    readback: false,
                };
                let io = Io {
                    kind,
                    file,
                    offset,
                    len: bs,
                    buf: buf.as_mut_ptr(),
                    slot,
                };
                // SAFETY: the slot's buffer stays untouched until reaped below.
                if let Err(e) = unsafe { engine.queue(&io) } {
                    if let (Some(m), OpKind::Write) = (map, kind) {
                        m.abandoned(gblock);
                        if let Some(f) = in_flight {
                            inflight::clear(&f[slot as usize]);
                        }
                    }
                    shared.fail(format!("session {}: cannot queue I/O: {e}", id));
                    free.push(slot);
                    break;
                }
                inflight += 1;
                issued += 1;
            }
            if inflight == 0 {
                break;
            }
            let mut reap_error = None;
            let mut bad: Option<(Bad, bool)> = None;
            let reaped = engine.reap(1, |c: Completion| {
                let end = now_ns();
                let m = meta[c.slot as usize];
                let whole = c.res == bs as i32;
                if verify.after_write && m.kind == OpKind::Write && whole {
                    backlog.push(c.slot);
                } else {
                    free.push(c.slot);
                }
                if whole && (m.readback || m.look != Look::Skip) {
                    let e = Expect {
                        target: target_id,
                        file: m.file,
                        offset: m.offset,
                        size: bs,
                        floor: None,
                    };
                    let data = bufs.slot(c.slot as usize, bs as usize);
                    if let Err(b) =
                        online::judge(data, (check_map, interrupted), m.block, m.look, e)
                    {
                        bad.get_or_insert((b, m.readback));
                    }
                }
                if m.readback {
                    if !whole {
                        reap_error.get_or_insert((c, m));
                    }
                    return; // checking, not the workload's I/O
                }
                last_ns = end - t0;
                if let (Some(f), OpKind::Write) = (in_flight, m.kind) {
                    inflight::clear(&f[c.slot as usize]);
                }
                if let (Some(map), OpKind::Write) = (map, m.kind) {
                    if c.res == bs as i32 {
                        map.acknowledged(m.block);
                    } else {
                        map.abandoned(m.block);
                    }
                }
                if c.res != bs as i32 {
                    reap_error.get_or_insert((c, m));
                    return;
                }
                let lat = end - m.start;
                let k = if m.kind == OpKind::Read {
                    Kind::Read
                } else {
                    Kind::Write
                };
                series.record(k, end - t0, lat, u64::from(bs));
                if c.sync_ns > 0 {
                    series.record(Kind::Sync, end - t0, c.sync_ns, 0);
                }
                if end < ramp_end || end > shared.end_ns.load(Relaxed) {
                    return; // outside the measurement window
                }
                stats.op(k).record(lat, u64::from(bs));
                if c.sync_ns > 0 {
                    stats.op(Kind::Sync).record(c.sync_ns, 0);
                }
                if lat >= outlier_ns {
                    stats.outlier(Outlier {
                        t_s: (end - t0) as f64 / 1e9,
                        op: k,
                        session: id,
                        file: m.file,
                        offset_bytes: m.offset,
                        len_bytes: bs,
                        latency_ms: lat as f64 / 1e6,
                    });
                }
            });
            match reaped {
                Ok(n) => inflight -= n as usize,
                Err(e) => {
                    shared.fail(format!("session {}: waiting for I/O failed: {e}", id));
                    break;
                }
            }
            if let Some((b, after_write)) = bad {
                let file = &target.files[b.expect.file as usize];
                shared.fail(b.message(file, after_write));
            }
            if let Some((c, m)) = reap_error {
                let what = if m.kind == OpKind::Read {
                    "reading"
                } else {
                    "writing"
                };
                let why = if c.res < 0 {
                    explain_errno(-c.res, io_mode)
                } else {
                    format!(
                        "short transfer of {} of {bs} bytes (is the file shorter than the layout?)",
                        c.res
                    )
                };
                shared.fail(format!(
                    "{what} {} at byte {} failed: {why}",
                    target.files[m.file as usize].display(),
                    m.offset
                ));
            }
        }
        SessionEnd { last_ns, issued }
    }
}
