//! One replay session: takes its requests from the feed in batches, waits
//! for each one's due time (sleeping while it is far, spinning the last
//! microseconds), issues it with its engine and times it from issue and
//! from its due time. With io_uring it keeps reaping while it waits, so a
//! completion is timed when it comes, and at `--speed max` it keeps as many
//! requests in flight as the captured thread had. Nothing is allocated or
//! locked per request: batches are handed over and back whole.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use super::Speed;
use super::faith::Part;
use super::feed::{Batch, Item};
use crate::config::IoMode;
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, Completion, Engine, Io, OpKind, explain_result};
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, SessionStats};
use crate::rng::Rng;
use crate::samplers::series::SeriesWriter;
use crate::workload::Shared;

/// Closer than this to a due time, a session spins instead of sleeping.
const SPIN_NS: u64 = 20_000;

/// The nice value of a replay's threads where the process may raise it
/// (root): on a busy host a woken session otherwise waits tens of ms for
/// a CPU (measured on 2 busy cores, null engine: issue error p99 45 ms at
/// nice 0).
pub const REPLAY_NICE: i32 = -10;

/// Asks the kernel to wake this thread's sleeps on time (a timer slack of
/// 1 ns instead of 50 µs) and to run it before ordinary threads where it
/// may: a replay sleeps until due times.
pub fn fine_timers() {
    // SAFETY: sets only the calling thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    crate::workload::slob::dbwr::raise_priority(REPLAY_NICE);
}

/// A request in flight.
#[derive(Clone, Copy)]
struct Flight {
    item: Item,
    issued_ns: u64,
}

/// What a session hands back besides its counts.
pub struct SessionEnd {
    pub last_ns: u64,
    pub issued: u64,
}

pub struct Session {
    id: u32,
    engine: AnyEngine,
    bufs: BufPool,
    inbox: Receiver<Batch>,
    spare: Sender<Batch>,
    speed: Speed,
    batch: Batch,
    next: usize,
    /// The feed closed this session's channel and every batch is taken.
    drained: bool,
    flights: Vec<Flight>,
    free: Vec<u32>,
    stats: SessionStats,
    part: Part,
    last_issue: Option<u64>,
}

/// Where the next request comes from.
enum Next {
    Item(Item),
    /// None waiting now (requests are in flight: reap them meanwhile).
    NotYet,
    Done,
}

impl Session {
    pub fn new(
        id: u32,
        engine: AnyEngine,
        (mut bufs, buf_len): (BufPool, usize),
        inbox: Receiver<Batch>,
        spare: Sender<Batch>,
        speed: Speed,
        seed: u64,
    ) -> Session {
        let depth = engine.depth() as usize;
        let mut rng = Rng::for_stream(seed, u64::from(id));
        for s in 0..depth {
            rng.fill(bufs.slot_mut(s, buf_len)); // written data does not compress
        }
        Session {
            id,
            engine,
            bufs,
            inbox,
            spare,
            speed,
            batch: Vec::new(),
            next: 0,
            drained: false,
            flights: vec![
                Flight {
                    item: Item {
                        due_ns: 0,
                        offset: 0,
                        file: 0,
                        len: 0,
                        kind: OpKind::Read,
                        op: 0,
                        depth: 1,
                    },
                    issued_ns: 0,
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            stats: SessionStats::new(),
            part: Part::default(),
            last_issue: None,
        }
    }

    pub fn into_parts(self) -> (SessionStats, Part) {
        (self.stats, self.part)
    }

    /// The next request: from the batch in hand, else the next batch
    /// (waited for only when nothing is in flight).
    fn next_item(&mut self, shared: &Shared, in_flight: usize) -> Next {
        loop {
            if let Some(it) = self.batch.get(self.next) {
                return Next::Item(*it);
            }
            if self.drained {
                return Next::Done;
            }
            let got = if in_flight > 0 {
                match self.inbox.try_recv() {
                    Ok(b) => Ok(b),
                    Err(TryRecvError::Empty) => return Next::NotYet,
                    Err(TryRecvError::Disconnected) => Err(()),
                }
            } else {
                match self.inbox.recv_timeout(Duration::from_millis(20)) {
                    Ok(b) => Ok(b),
                    Err(RecvTimeoutError::Timeout) if shared.stop.load(Relaxed) => Err(()),
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => Err(()),
                }
            };
            match got {
                Ok(b) => {
                    let mut old = std::mem::replace(&mut self.batch, b);
                    self.next = 0;
                    if old.capacity() > 0 {
                        old.clear();
                        let _ = self.spare.send(old);
                    }
                }
                Err(()) => {
                    self.drained = true;
                    return Next::Done;
                }
            }
        }
    }

    /// Issues every request of its batches at its due time until the
    /// trace ends or the run stops.
    pub fn run(
        &mut self,
        shared: &Shared,
        files: &[PathBuf],
        io_mode: IoMode,
        series: &mut SeriesWriter,
    ) -> SessionEnd {
        let t0 = shared.start_ns.load(Relaxed);
        let depth = self.engine.depth() as usize;
        let (mut in_flight, mut issued, mut last_ns) = (0usize, 0u64, 0u64);
        loop {
            // Issue what is due while there is room.
            let mut wait_for = None;
            while in_flight < depth && !shared.stop.load(Relaxed) {
                let it = match self.next_item(shared, in_flight) {
                    Next::Item(it) => it,
                    Next::NotYet | Next::Done => break,
                };
                let due = match self.speed {
                    Speed::Max => {
                        if in_flight >= usize::from(it.depth).min(depth) {
                            break;
                        }
                        0
                    }
                    Speed::Factor(_) => t0 + it.due_ns,
                };
                if due > 0 && now_ns() < due {
                    if in_flight > 0 {
                        wait_for = Some(due);
                        break;
                    }
                    wait_until(due, shared);
                    if shared.stop.load(Relaxed) {
                        break;
                    }
                }
                if let Err(e) = self.issue(it, due, t0) {
                    shared.fail(format!("replay session {}: cannot queue I/O: {e}", self.id));
                    break;
                }
                in_flight += 1;
                issued += 1;
            }
            if in_flight == 0 {
                if shared.stop.load(Relaxed) || self.drained && self.next >= self.batch.len() {
                    break;
                }
                continue;
            }
            let min = match wait_for {
                Some(due) => {
                    // Reap what has completed; sleep or spin a little if nothing.
                    if due.saturating_sub(now_ns()) > SPIN_NS {
                        std::thread::sleep(Duration::from_nanos(
                            (due - now_ns().min(due))
                                .saturating_sub(SPIN_NS)
                                .min(50_000),
                        ));
                    }
                    0
                }
                None => 1,
            };
            let mut failed = None;
            let reaped = {
                let Session {
                    flights,
                    free,
                    stats,
                    part,
                    ..
                } = self;
                self.engine.reap(min, |c: Completion| {
                    let end = now_ns();
                    let f = flights[c.slot as usize];
                    free.push(c.slot);
                    last_ns = end - t0;
                    if c.res != f.item.len as i32 {
                        failed.get_or_insert((c, f));
                        return;
                    }
                    done(stats, part, series, f, end, t0);
                })
            };
            match reaped {
                Ok(n) => in_flight -= n as usize,
                Err(e) => {
                    shared.fail(format!(
                        "replay session {}: waiting for I/O failed: {e}",
                        self.id
                    ));
                    break;
                }
            }
            if let Some((c, f)) = failed {
                let file = files.get(f.item.file as usize).cloned().unwrap_or_default();
                shared.fail(format!(
                    "replaying a {} of {} bytes at byte {} of {} failed: {}",
                    crate::trace::Op::ALL[usize::from(f.item.op)].name(),
                    f.item.len,
                    f.item.offset,
                    file.display(),
                    explain_result(c.res, u64::from(f.item.len), io_mode)
                ));
                break;
            }
        }
        // A stopped session still reaps what it issued.
        while in_flight > 0 {
            match self.engine.reap(1, |_| {}) {
                Ok(n) => in_flight -= n as usize,
                Err(_) => break,
            }
        }
        SessionEnd { last_ns, issued }
    }

    /// Queues `it` (due at `due`, 0 at `--speed max`).
    fn issue(&mut self, it: Item, due: u64, t0: u64) -> std::io::Result<()> {
        let slot = self
            .free
            .pop()
            .expect("a free slot while in flight < depth");
        let buf = self.bufs.ptr(slot as usize);
        let now = now_ns();
        let io = Io {
            kind: it.kind,
            file: it.file,
            offset: it.offset,
            len: it.len,
            buf,
            slot,
        };
        self.flights[slot as usize] = Flight {
            item: it,
            issued_ns: now,
        };
        // SAFETY: the slot's buffer is untouched until its completion is reaped.
        if let Err(e) = unsafe { self.engine.queue(&io) } {
            self.free.push(slot);
            return Err(e);
        }
        self.next += 1;
        let gap = self.last_issue.map(|l| now - l);
        self.last_issue = Some(now);
        self.part
            .replayed
            .issued(usize::from(it.op), it.len, now - t0, gap);
        if due > 0 {
            self.part.issue_error(now.saturating_sub(due));
        }
        Ok(())
    }
}

/// Records a completed request.
#[inline]
fn done(
    stats: &mut SessionStats,
    part: &mut Part,
    series: &mut SeriesWriter,
    f: Flight,
    end: u64,
    t0: u64,
) {
    let lat = end - f.issued_ns;
    let op = usize::from(f.item.op);
    let kind = match f.item.kind {
        OpKind::Read => Kind::Read,
        OpKind::Write | OpKind::WriteDsync => Kind::Write,
        OpKind::Flush => Kind::Sync,
    };
    let bytes = u64::from(f.item.len);
    series.record(kind, end - t0, lat, bytes);
    stats.op(kind).record(lat, bytes);
    part.replayed.completed(op, lat);
    if f.item.due_ns > 0 {
        part.due_latency(op, end.saturating_sub(t0 + f.item.due_ns));
    }
}

/// Sleeps until `SPIN_NS` before `due`, then spins to it.
fn wait_until(due: u64, shared: &Shared) {
    loop {
        let now = now_ns();
        if now >= due || shared.stop.load(Relaxed) {
            return;
        }
        let left = due - now;
        if left > SPIN_NS {
            std::thread::sleep(Duration::from_nanos((left - SPIN_NS).min(20_000_000)));
        } else {
            std::hint::spin_loop();
        }
    }
}
