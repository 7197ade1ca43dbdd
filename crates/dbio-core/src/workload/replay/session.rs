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

/// A request in flight.
#[derive(Clone, Copy)]
struct Flight {
    item: Item,
    issued_ns: u64,
}

/// A session's running counts.
#[derive(Default)]
struct Counts {
    in_flight: usize,
    issued: u64,
    /// Its last completion, ns after the start.
    last_ns: u64,
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
    /// Each lane's (captured thread's) last issue, for the inter-arrival.
    last_issue: Vec<Option<u64>>,
    /// Since when the ring has been full (every slot in flight).
    full_since: Option<u64>,
    /// When the ring last got room after being full: a request due
    /// before then waited for room.
    room_at: u64,
    /// Requests queued since the engine's last call (a ring deeper than
    /// 32 submits them in one): submitted before the session spins.
    unsubmitted: bool,
}

/// What a session with requests in flight waits for.
#[derive(Clone, Copy)]
enum Wait {
    /// The next request's due time (ns): asleep in the engine until a
    /// completion or `SPIN_NS` before it.
    Due(u64),
    /// A completion: every slot is in flight, or no request is at hand.
    Completion,
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
        (inbox, spare): (Receiver<Batch>, Sender<Batch>),
        speed: Speed,
        seed: u64,
        lanes: usize,
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
                        lane: 0,
                    },
                    issued_ns: 0,
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            stats: SessionStats::new(),
            part: Part::default(),
            last_issue: vec![None; lanes.max(1)],
            full_since: None,
            room_at: 0,
            unsubmitted: false,
        }
    }

    pub(crate) fn into_parts(self) -> (SessionStats, Part) {
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
        let mut n = Counts::default();
        loop {
            let wait_for = self.issue_due(shared, t0, &mut n);
            if n.in_flight == 0 {
                if shared.stop.load(Relaxed) || self.drained && self.next >= self.batch.len() {
                    break;
                }
                continue;
            }
            // Waiting for a due time: reap what completes meanwhile.
            let wait = match wait_for {
                Some(due) => Wait::Due(due),
                None => Wait::Completion,
            };
            if let Err(why) = self.reap_some(wait, t0, series, &mut n, (files, io_mode)) {
                shared.fail(why);
                break;
            }
        }
        // A stopped session still reaps what it issued.
        while n.in_flight > 0 {
            match self.engine.reap(1, |_| {}) {
                Ok(k) => n.in_flight -= k as usize,
                Err(_) => break,
            }
        }
        SessionEnd {
            last_ns: n.last_ns,
            issued: n.issued,
        }
    }

    /// Issues what is due while there is room; the due time of the next
    /// request when it is not due yet and others are in flight.
    fn issue_due(&mut self, shared: &Shared, t0: u64, n: &mut Counts) -> Option<u64> {
        let depth = self.engine.depth() as usize;
        self.note_room(n.in_flight < depth);
        while n.in_flight < depth && !shared.stop.load(Relaxed) {
            let it = match self.next_item(shared, n.in_flight) {
                Next::Item(it) => it,
                Next::NotYet | Next::Done => return None,
            };
            let due = match self.speed {
                Speed::Max if n.in_flight >= usize::from(it.depth).min(depth) => return None,
                Speed::Max => 0,
                Speed::Factor(_) => t0 + it.due_ns,
            };
            let left = due.saturating_sub(now_ns());
            if left > 0 {
                if n.in_flight > 0 && (left > SPIN_NS || self.unsubmitted) {
                    return Some(due);
                }
                wait_until(due, shared);
                if shared.stop.load(Relaxed) {
                    return None;
                }
            }
            if let Err(e) = self.issue(it, due, t0) {
                shared.fail(format!("replay session {}: cannot queue I/O: {e}", self.id));
                return None;
            }
            n.in_flight += 1;
            n.issued += 1;
        }
        self.note_room(n.in_flight < depth);
        None
    }

    /// Follows the ring's fullness: when it gets room after being full.
    #[inline]
    fn note_room(&mut self, room: bool) {
        match (room, self.full_since) {
            (true, Some(_)) => {
                self.full_since = None;
                self.room_at = now_ns();
            }
            (false, None) => self.full_since = Some(now_ns()),
            _ => {}
        }
    }

    /// Reaps completions and records them, waiting as `wait` says; the
    /// run's error line when a request failed.
    fn reap_some(
        &mut self,
        wait: Wait,
        t0: u64,
        series: &mut SeriesWriter,
        n: &mut Counts,
        (files, io_mode): (&[PathBuf], IoMode),
    ) -> Result<(), String> {
        let mut failed = None;
        self.unsubmitted = false;
        let Session {
            engine,
            flights,
            free,
            stats,
            part,
            ..
        } = self;
        let last_ns = &mut n.last_ns;
        let mut seen = |c: Completion| {
            let end = now_ns();
            let f = flights[c.slot as usize];
            free.push(c.slot);
            *last_ns = end - t0;
            if c.res != f.item.len as i32 {
                failed.get_or_insert((c, f));
                return;
            }
            done(stats, part, series, f, end, t0);
        };
        let reaped = match wait {
            Wait::Completion => engine.reap(1, &mut seen),
            // Asleep in the ring until a completion or the spin's start.
            Wait::Due(due) => match due.saturating_sub(now_ns()) {
                left if left > SPIN_NS => engine.reap_within(left - SPIN_NS, &mut seen),
                _ => engine.reap(0, &mut seen),
            },
        };
        if let (Ok(0), Wait::Due(due)) = (&reaped, wait) {
            // An engine that does not wait (a ring with a polling thread):
            // a short sleep, not a busy loop to the due time.
            let left = due.saturating_sub(now_ns());
            if left > SPIN_NS {
                std::thread::sleep(Duration::from_nanos((left - SPIN_NS).min(50_000)));
            }
        }
        let k = reaped
            .map_err(|e| format!("replay session {}: waiting for I/O failed: {e}", self.id))?;
        n.in_flight -= k as usize;
        let Some((c, f)) = failed else {
            return Ok(());
        };
        let file = files.get(f.item.file as usize).cloned().unwrap_or_default();
        Err(format!(
            "replaying a {} of {} bytes at byte {} of {} failed: {}",
            crate::trace::Op::ALL[usize::from(f.item.op)].name(),
            f.item.len,
            f.item.offset,
            file.display(),
            explain_result(c.res, u64::from(f.item.len), io_mode)
        ))
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
        self.unsubmitted = true;
        let last = &mut self.last_issue[usize::from(it.lane)];
        let gap = last.map(|l| now - l);
        *last = Some(now);
        self.part
            .replayed
            .issued(usize::from(it.op), it.len, now - t0, gap);
        if due > 0 {
            self.part
                .issue_error(now.saturating_sub(due), self.room_at > due);
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
