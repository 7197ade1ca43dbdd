//! One session: a thread that keeps its engine's queue full with requests
//! from its workload, timestamps each, and records completions into its own
//! statistics and per-second series. Nothing here allocates or locks once the
//! loop runs; the only shared state read per request is the stop flag and the
//! end of the measurement window (relaxed atomics).
//!
//! Closed loop, a request is issued as soon as a slot is free. Open loop
//! (`--rate`), a session with a free slot claims the run's next due time
//! from its [`Schedule`] (whichever session is free takes it; when it is
//! behind, its share of the due times already past in one claim) and issues
//! the request then, or at once when it is already past (every slot of
//! every session was busy): its latency is counted from the due time as
//! well as from the issue.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::requests::Requests;
use crate::config::IoMode;
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, Completion, Engine, Io, OpKind, explain_errno};
use crate::measure::clock::now_ns;
use crate::measure::schedule::{self, Schedule};
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
    /// When requests fall due (`--rate`), or None for a closed loop.
    pub schedule: Option<Schedule<'a>>,
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
    /// When the request fell due (its issue time in a closed loop).
    due: u64,
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

const IDLE: InFlight = InFlight {
    due: 0,
    start: 0,
    offset: 0,
    file: 0,
    kind: OpKind::Read,
    block: 0,
    look: Look::Skip,
    readback: false,
};

/// What the session loop keeps between its steps (allocated before the start).
struct Loop {
    t0: u64,
    ramp_end: u64,
    depth: usize,
    free: Vec<u32>,
    meta: Vec<InFlight>,
    /// Slots whose acknowledged write waits to be read back.
    backlog: Vec<u32>,
    /// One reap's completions and the time each was seen (`depth` at most).
    done: Vec<(Completion, u64)>,
    inflight: usize,
    issued: u64,
    last_ns: u64,
}

/// How the loop waits after filling the queue.
enum Next {
    /// For a completion.
    Reap,
    /// For a completion, or until the next request falls due at this time.
    ReapUntil(u64),
}

/// What went wrong in one reap, reported after it.
#[derive(Default)]
struct Trouble {
    /// A read that failed its check (and whether it was a read-back).
    bad: Option<(Bad, bool)>,
    /// A request that failed or moved fewer bytes.
    failed: Option<(Completion, InFlight)>,
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
        let mut st = self.begin();
        loop {
            let next = self.fill(&mut st);
            if st.inflight == 0 {
                break;
            }
            if !self.reap(&mut st, next) {
                break;
            }
        }
        self.unissued(&st);
        SessionEnd {
            last_ns: st.last_ns,
            issued: st.issued,
        }
    }

    /// Allocates the loop's state and starts the schedule at the run's start.
    fn begin(&mut self) -> Loop {
        let depth = self.engine.depth() as usize;
        let bs = self.target.block_size as usize;
        for slot in 0..depth {
            // Incompressible from the start.
            self.rng.fill(self.bufs.slot_mut(slot, bs));
        }
        let t0 = self.shared.start_ns.load(Relaxed);
        if let Some(s) = &mut self.schedule {
            s.start(t0);
            schedule::precise_sleeps();
        }
        Loop {
            t0,
            ramp_end: t0 + self.shared.ramp_ns,
            depth,
            free: (0..depth as u32).rev().collect(),
            meta: vec![IDLE; depth],
            backlog: Vec::with_capacity(depth),
            done: Vec::with_capacity(depth),
            inflight: 0,
            issued: 0,
            last_ns: 0,
        }
    }

    /// Counts the requests that fell due in the window but were never
    /// issued (a backlog when the sessions ended).
    fn unissued(&mut self, st: &Loop) {
        let (Some(s), Some(o)) = (&mut self.schedule, self.stats.open.as_deref_mut()) else {
            return;
        };
        let until = self.shared.end_ns.load(Relaxed).min(now_ns());
        o.fell_due += s.leave(st.ramp_end, until);
    }

    /// Issues requests while there is room: read-backs first, then the
    /// workload's, each at its due time in an open loop.
    fn fill(&mut self, st: &mut Loop) -> Next {
        while st.inflight < st.depth {
            if self.shared.stop.load(Relaxed) {
                st.free.append(&mut st.backlog);
                break;
            }
            if let Some(slot) = st.backlog.pop() {
                if !self.issue_readback(st, slot) {
                    break;
                }
                continue;
            }
            if st.issued >= self.quota {
                break;
            }
            let mut now = now_ns();
            let end = self.shared.end_ns.load(Relaxed);
            if now >= end {
                break;
            }
            let mut due = now;
            if let Some(s) = &mut self.schedule {
                due = s.due(now);
                if due >= end {
                    break; // nothing more falls due in the run
                }
                if now < due {
                    if st.inflight > 0 {
                        return Next::ReapUntil(due);
                    }
                    let stop = &self.shared.stop;
                    now = schedule::wait_until(due, || stop.load(Relaxed));
                    if now < due {
                        continue; // stopped
                    }
                }
                s.advance();
                if let Some(o) = self.stats.open.as_deref_mut() {
                    o.fell_due += u64::from(due >= st.ramp_end);
                }
            }
            if !self.issue_next(st, now, due) {
                break;
            }
        }
        Next::Reap
    }

    /// Queues the read-back of `slot`'s acknowledged write.
    fn issue_readback(&mut self, st: &mut Loop, slot: u32) -> bool {
        let bs = self.target.block_size;
        let m = &mut st.meta[slot as usize];
        m.kind = OpKind::Read;
        m.readback = true;
        m.look = online::before_read(self.check_map, m.block);
        m.start = now_ns();
        m.due = m.start;
        let io = Io {
            kind: OpKind::Read,
            file: m.file,
            offset: m.offset,
            len: bs,
            buf: self.bufs.slot_mut(slot as usize, bs as usize).as_mut_ptr(),
            slot,
        };
        // SAFETY: the slot's buffer stays untouched until reaped.
        if let Err(e) = unsafe { self.engine.queue(&io) } {
            self.not_queued(st, slot, &e);
            return false;
        }
        st.inflight += 1;
        true
    }

    /// A request the engine refused: the run fails, the slot is free again.
    #[cold]
    fn not_queued(&self, st: &mut Loop, slot: u32, e: &std::io::Error) {
        let id = self.id;
        self.shared
            .fail(format!("session {id}: cannot queue I/O: {e}"));
        st.free.push(slot);
    }

    /// Queues the workload's next request, due at `due` (issued at `now`).
    fn issue_next(&mut self, st: &mut Loop, mut now: u64, due: u64) -> bool {
        let bs = self.target.block_size;
        let (kind, gblock) = self.requests.next_io(&mut self.rng);
        let (file, offset) = self.target.locate(gblock);
        let slot = st.free.pop().expect("a free slot while inflight < depth");
        let buf = self.bufs.slot_mut(slot as usize, bs as usize);
        if kind == OpKind::Write {
            let generation = match self.map {
                Some(m) => {
                    let g = m.begin(gblock).generation;
                    if let Some(f) = self.in_flight {
                        inflight::mark(&f[slot as usize], gblock, g);
                    }
                    u64::from(g)
                }
                None => self.shared.wall_minus_mono_ns + now,
            };
            let h = Header {
                block: offset / u64::from(bs),
                generation,
                file,
                size: bs,
                target: self.stamp.0,
                seed: self.stamp.1,
            };
            self.content.write(buf, h, &mut self.rng);
            now = now_ns();
        }
        let look = if self.verify.reads && kind == OpKind::Read {
            online::before_read(self.check_map, gblock)
        } else {
            Look::Skip
        };
        st.meta[slot as usize] = InFlight {
            due,
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
        // SAFETY: the slot's buffer stays untouched until reaped.
        if let Err(e) = unsafe { self.engine.queue(&io) } {
            if let (Some(m), OpKind::Write) = (self.map, kind) {
                m.abandoned(gblock);
                if let Some(f) = self.in_flight {
                    inflight::clear(&f[slot as usize]);
                }
            }
            self.not_queued(st, slot, &e);
            return false;
        }
        st.inflight += 1;
        st.issued += 1;
        true
    }

    /// Waits for completions (until `next` says) and records them; false
    /// when waiting failed and the session must end.
    fn reap(&mut self, st: &mut Loop, next: Next) -> bool {
        st.done.clear();
        let done = &mut st.done;
        let seen = |c: Completion| done.push((c, now_ns()));
        let reaped = match next {
            Next::Reap => self.engine.reap(1, seen),
            Next::ReapUntil(due) => self.engine.reap_within(due.saturating_sub(now_ns()), seen),
        };
        match reaped {
            Ok(n) => st.inflight -= n as usize,
            Err(e) => {
                let id = self.id;
                self.shared
                    .fail(format!("session {id}: waiting for I/O failed: {e}"));
                return false;
            }
        }
        let mut trouble = Trouble::default();
        for i in 0..st.done.len() {
            let (c, end) = st.done[i];
            self.complete(st, c, end, &mut trouble);
        }
        self.report(trouble);
        true
    }

    /// One completion: frees or queues its slot for a read-back, checks a
    /// read, and records a workload request's latencies.
    fn complete(&mut self, st: &mut Loop, c: Completion, end: u64, trouble: &mut Trouble) {
        let bs = self.target.block_size;
        let m = st.meta[c.slot as usize];
        let whole = c.res == bs as i32;
        if self.verify.after_write && m.kind == OpKind::Write && whole {
            st.backlog.push(c.slot);
        } else {
            st.free.push(c.slot);
        }
        if whole && (m.readback || m.look != Look::Skip) {
            self.judge(c.slot, m, trouble);
        }
        if m.readback {
            if !whole {
                trouble.failed.get_or_insert((c, m));
            }
            return; // checking, not the workload's I/O
        }
        st.last_ns = end - st.t0;
        if let (Some(f), OpKind::Write) = (self.in_flight, m.kind) {
            inflight::clear(&f[c.slot as usize]);
        }
        if let (Some(map), OpKind::Write) = (self.map, m.kind) {
            if whole {
                map.acknowledged(m.block);
            } else {
                map.abandoned(m.block);
            }
        }
        if !whole {
            trouble.failed.get_or_insert((c, m));
            return;
        }
        self.record(st, m, end, c.sync_ns);
    }

    /// Checks a read's block (or a read-back's) against what it should hold.
    fn judge(&self, slot: u32, m: InFlight, trouble: &mut Trouble) {
        let bs = self.target.block_size;
        let e = Expect {
            target: self.stamp.0,
            file: m.file,
            offset: m.offset,
            size: bs,
            floor: None,
        };
        let data = self.bufs.slot(slot as usize, bs as usize);
        let judged = (self.check_map, self.interrupted);
        if let Err(b) = online::judge(data, judged, m.block, m.look, e) {
            trouble.bad.get_or_insert((b, m.readback));
        }
    }

    /// Records a whole workload request completed at `end` in the series
    /// and, inside the measurement window, in the statistics.
    fn record(&mut self, st: &Loop, m: InFlight, end: u64, sync_ns: u64) {
        let bs = u64::from(self.target.block_size);
        let lat = end - m.start;
        // A raw run issues reads and plain writes only (replay's kinds
        // would count as the writes and syncs they are).
        let k = match m.kind {
            OpKind::Read => Kind::Read,
            OpKind::Write | OpKind::WriteDsync => Kind::Write,
            OpKind::Flush => Kind::Sync,
        };
        self.series.record(k, end - st.t0, lat, bs);
        if self.schedule.is_some() {
            let (due, late) = (end.saturating_sub(m.due), m.start.saturating_sub(m.due));
            self.series.record_due(k, end - st.t0, due, late);
        }
        if sync_ns > 0 {
            self.series.record(Kind::Sync, end - st.t0, sync_ns, 0);
        }
        if end < st.ramp_end || end > self.shared.end_ns.load(Relaxed) {
            return; // outside the measurement window
        }
        self.stats.op(k).record(lat, bs);
        if let Some(o) = self.stats.open.as_deref_mut() {
            o.record(k, m.due, m.start, end, bs);
        }
        if sync_ns > 0 {
            self.stats.op(Kind::Sync).record(sync_ns, 0);
        }
        if lat >= self.outlier_ns {
            self.stats.outlier(Outlier {
                t_s: (end - st.t0) as f64 / 1e9,
                op: k,
                session: self.id,
                file: m.file,
                offset_bytes: m.offset,
                len_bytes: bs as u32,
                latency_ms: lat as f64 / 1e6,
            });
        }
    }

    /// Fails the run for the first bad block or failed request of a reap.
    fn report(&self, trouble: Trouble) {
        let target = self.target;
        if let Some((b, after_write)) = trouble.bad {
            let file = &target.files[b.expect.file as usize];
            self.shared.fail(b.message(file, after_write));
        }
        let Some((c, m)) = trouble.failed else {
            return;
        };
        let what = match m.kind {
            OpKind::Read => "reading",
            OpKind::Write | OpKind::WriteDsync => "writing",
            OpKind::Flush => "syncing",
        };
        let bs = target.block_size;
        let why = if c.res < 0 {
            explain_errno(-c.res, self.io_mode)
        } else {
            format!(
                "short transfer of {} of {bs} bytes (is the file shorter than the layout?)",
                c.res
            )
        };
        self.shared.fail(format!(
            "{what} {} at byte {} failed: {why}",
            target.files[m.file as usize].display(),
            m.offset
        ));
    }
}
