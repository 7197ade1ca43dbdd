//! The feed: one thread reads the trace as a stream, maps each request
//! onto the target, gives it a due time and hands it to its session in
//! batches (a bounded channel per session, so the feed reads at most a few
//! batches ahead and memory does not grow with the trace). Emptied batches
//! come back to be filled again. The feed also counts the captured side of
//! the faithfulness report as it reads.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use super::facts::{InFlight, thread_of};
use super::faith::{Part, op_index};
use super::shared::{self, Place};
use super::{MapMode, ReplayConfig, Sessions, Speed};
use crate::engine::OpKind;
use crate::storage::Target;
use crate::trace::{self, Entry, Op, Request, TraceError};
use crate::workload::Shared;

/// Requests per batch.
const BATCH: usize = 128;
/// The first request is due this long after the start: the feed's head
/// start, so that the sessions' first batches are there when due.
pub(crate) const LEAD_NS: u64 = 20_000_000;

/// One request as a session issues it.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// ns after the run's start (0 at `--speed max`).
    pub due_ns: u64,
    pub offset: u64,
    pub file: u32,
    pub len: u32,
    pub kind: OpKind,
    /// The trace's operation ([`op_index`]).
    pub op: u8,
    /// Requests its captured thread had in flight when it was issued, itself included.
    pub depth: u16,
    /// Its captured thread's place among its session's threads (0 unless
    /// the session issues several: [`Sessions::Shared`]).
    pub lane: u16,
}

pub type Batch = Vec<Item>;

/// Captured offsets → (file, offset) on the target.
#[derive(Clone, Copy, Debug)]
pub struct Mapper {
    mode: Option<MapMode>,
    /// The target's bytes, and each file's.
    size: u64,
    file_bytes: u64,
    extent: u64,
    base: u64,
    align: u64,
}

impl Mapper {
    /// Refuses a trace that does not fit the target with no mapping chosen,
    /// and a request longer than a file of the target.
    pub fn new(rc: &ReplayConfig, target: &Target) -> Result<Mapper, String> {
        let f = &rc.facts;
        let size = target.size_bytes();
        let file_bytes = target.blocks_per_file * u64::from(target.block_size);
        if rc.map.is_none() && f.extent_bytes > size {
            return Err(format!(
                "--trace {}: the trace reaches byte {} and the target {} holds {}; give --map modulo or --map scale (or a larger target)",
                rc.source,
                f.extent_bytes,
                target.path.display(),
                size
            ));
        }
        if u64::from(f.max_len_bytes) > file_bytes {
            return Err(format!(
                "--trace {}: a request of {} bytes is longer than a data file of the target ({file_bytes} bytes); give a larger --size or fewer --files",
                rc.source, f.max_len_bytes
            ));
        }
        Ok(Mapper {
            mode: rc.map,
            size,
            file_bytes,
            extent: f.extent_bytes.max(1),
            base: target.base(),
            align: u64::from(target.logical_sector.unwrap_or(512)).max(512),
        })
    }

    /// The file and offset for `len` bytes at captured `offset`.
    #[inline]
    pub fn map(&self, offset: u64, len: u32) -> (u32, u64) {
        let at = match self.mode {
            None => offset,
            Some(MapMode::Modulo) => offset % self.size,
            Some(MapMode::Scale) => {
                (u128::from(offset) * u128::from(self.size) / u128::from(self.extent)) as u64
            }
        };
        let at = at / self.align * self.align;
        let file = at / self.file_bytes;
        let mut rel = at % self.file_bytes;
        let len = u64::from(len);
        if rel + len > self.file_bytes {
            // Across the end of a file: the last bytes of it.
            rel = (self.file_bytes - len) / self.align * self.align;
        }
        (file as u32, self.base + rel)
    }
}

/// Sessions taking requests in turn: `n` from `first`, `next` the next.
#[derive(Clone, Copy)]
struct Turns {
    first: u32,
    n: u32,
    next: u32,
}

impl Turns {
    #[inline]
    fn take(&mut self) -> u32 {
        let s = self.first + self.next;
        self.next = (self.next + 1) % self.n;
        s
    }
}

/// Which session takes a captured thread's requests.
enum Route {
    PerThread(HashMap<u32, Turns>),
    Pool(Turns),
    /// Each captured thread's session and lane there.
    Shared(HashMap<u32, Place>),
}

impl Route {
    fn new(rc: &ReplayConfig) -> Route {
        let per_thread_in_flight = match rc.sessions {
            Sessions::Pool(n) => {
                return Route::Pool(Turns {
                    first: 0,
                    n,
                    next: 0,
                });
            }
            Sessions::Shared(n) => {
                let threads = &rc.facts.threads;
                let places = shared::places(threads, n);
                return Route::Shared(threads.iter().map(|t| t.tid).zip(places).collect());
            }
            Sessions::PerThread {
                per_thread_in_flight,
            } => per_thread_in_flight,
        };
        let mut first = 0;
        let mut m = HashMap::new();
        for t in &rc.facts.threads {
            let n = match per_thread_in_flight {
                true => t.max_in_flight.max(1),
                false => 1,
            };
            m.insert(t.tid, Turns { first, n, next: 0 });
            first += n;
        }
        Route::PerThread(m)
    }

    /// The session that issues `r`, and `r`'s lane there.
    #[inline]
    fn place(&mut self, r: &Request) -> Place {
        let session = match self {
            Route::PerThread(m) => m.get_mut(&thread_of(r)).map_or(0, Turns::take),
            Route::Pool(t) => t.take(),
            Route::Shared(m) => {
                return m.get(&thread_of(r)).copied().unwrap_or(Place {
                    session: 0,
                    lane: 0,
                });
            }
        };
        Place { session, lane: 0 }
    }
}

/// The feed thread's state.
pub struct Feed {
    entries: trace::Entries,
    mapper: Mapper,
    route: Route,
    speed: Speed,
    first_issue_ns: u64,
    outboxes: Vec<Option<SyncSender<Batch>>>,
    filling: Vec<Batch>,
    spares: Receiver<Batch>,
    inflight: InFlight,
    /// Each session's lanes' last captured issue, for the captured
    /// inter-arrival (per captured thread, as the sessions count it).
    last_issue: Vec<Vec<Option<u64>>>,
    part: Part,
}

impl Feed {
    /// Opens the trace (on the feed's own thread).
    pub fn open(
        rc: &ReplayConfig,
        mapper: Mapper,
        outboxes: Vec<SyncSender<Batch>>,
        spares: Receiver<Batch>,
    ) -> Result<Feed, TraceError> {
        let n = outboxes.len();
        let route = Route::new(rc);
        Ok(Feed {
            entries: trace::open(&rc.trace)?,
            mapper,
            route,
            speed: rc.speed,
            first_issue_ns: rc.facts.summary.first_issue_ns,
            outboxes: outboxes.into_iter().map(Some).collect(),
            filling: (0..n).map(|_| Vec::with_capacity(BATCH)).collect(),
            spares,
            inflight: InFlight::default(),
            last_issue: (0..n as u32)
                .map(|s| vec![None; shared::lanes(rc, s)])
                .collect(),
            part: Part::default(),
        })
    }

    pub(crate) fn into_part(self) -> Part {
        self.part
    }

    /// Reads the whole trace into the sessions' batches, then closes them.
    /// A trace that turns out damaged fails the run.
    pub fn run(&mut self, shared: &Shared) {
        while let Some(e) = self.entries.next() {
            let r = match e {
                Ok(Entry::Request(r)) => r,
                Ok(Entry::Device(_)) => continue,
                Err(e) => return shared.fail(format!("replay: {e}")),
            };
            if !self.add(&r) {
                return; // the sessions have stopped
            }
        }
        for s in 0..self.filling.len() {
            if !self.filling[s].is_empty() && !self.send(s) {
                break;
            }
        }
        self.outboxes.clear();
    }

    /// Counts `r` and queues it for its session; false once the sessions stopped.
    fn add(&mut self, r: &Request) -> bool {
        let op = op_index(r.op);
        let Place { session, lane } = self.route.place(r);
        let s = session as usize;
        let last = &mut self.last_issue[s][usize::from(lane)];
        let gap = last.map(|l| r.issue_ns.saturating_sub(l));
        *last = Some(r.issue_ns);
        let depth = self.inflight.at_issue(r);
        self.part.captured.issued(op, r.len, r.issue_ns, gap);
        if let Some(c) = r.complete_ns {
            self.part
                .captured
                .completed(op, c.saturating_sub(r.issue_ns));
        }
        let kind = match r.op {
            Op::Read => OpKind::Read,
            Op::Write if r.flags.contains(trace::Flags::FUA) => OpKind::WriteDsync,
            Op::Write => OpKind::Write,
            Op::Flush => OpKind::Flush,
            Op::Discard => {
                self.part.skipped += 1;
                return true;
            }
        };
        let (file, offset) = match kind {
            OpKind::Flush => (0, 0),
            _ => self.mapper.map(r.offset, r.len),
        };
        let rel = r.issue_ns.saturating_sub(self.first_issue_ns);
        let due_ns = match self.speed {
            Speed::Factor(x) => LEAD_NS + (rel as f64 / x) as u64,
            Speed::Max => 0,
        };
        self.filling[s].push(Item {
            due_ns,
            offset,
            file,
            len: if kind == OpKind::Flush { 0 } else { r.len },
            kind,
            op: op as u8,
            depth: depth.min(u32::from(u16::MAX)) as u16,
            lane,
        });
        self.filling[s].len() < BATCH || self.send(s)
    }

    /// Hands session `s` its batch; before waiting on a session that is
    /// full, every other session gets what is waiting for it, so that no
    /// session waits for requests held back behind another's.
    fn send(&mut self, s: usize) -> bool {
        let Some(tx) = &self.outboxes[s] else {
            return false;
        };
        let next = self
            .spares
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let batch = std::mem::replace(&mut self.filling[s], next);
        match tx.try_send(batch) {
            Ok(()) => true,
            Err(TrySendError::Disconnected(_)) => false,
            Err(TrySendError::Full(batch)) => {
                self.flush_others(s);
                let tx = self.outboxes[s].as_ref().expect("checked");
                tx.send(batch).is_ok()
            }
        }
    }

    fn flush_others(&mut self, full: usize) {
        for o in 0..self.filling.len() {
            if o == full || self.filling[o].is_empty() {
                continue;
            }
            let Some(tx) = &self.outboxes[o] else {
                continue;
            };
            let next = self
                .spares
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            let batch = std::mem::replace(&mut self.filling[o], next);
            match tx.try_send(batch) {
                Ok(()) => {}
                Err(TrySendError::Full(b)) => self.filling[o] = b,
                Err(TrySendError::Disconnected(_)) => self.outboxes[o] = None,
            }
        }
    }
}
