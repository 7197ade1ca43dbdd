//! The background thread of a database run: it reads the server's
//! cumulative counters when the ramp ends (once the server has counted
//! what the sessions did before: [`Monitor::window_opens`]) and again once the sessions have
//! disconnected (and the server has counted them), and samples the active
//! sessions' waits `hz` times a second in between — an active-session
//! history. What it reads is the server's business: a [`Monitor`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::{Duration, Instant};

use super::DbPart;
use crate::measure::clock::now_ns;
use crate::workload::Shared;
use crate::workload::live::{Activity, LiveDb, LiveWait, Process};

/// How a sampler reads one server. Errors are whole messages.
pub trait Monitor {
    /// The server's counters at one instant.
    type Snapshot: Default;
    fn snapshot(&mut self) -> Result<Self::Snapshot, super::Refused>;
    /// Adds one sample of the active sessions' waits (`CPU` when not
    /// waiting) to `waits`, and of the server's own busy processes' where
    /// it shows them.
    fn sample(&mut self, waits: &mut Waits) -> Result<(), super::Refused>;
    /// The sessions have disconnected: wait (briefly) until the server has
    /// counted everything they did.
    fn settle(&mut self) {}
    /// The ramp is over: wait (briefly) until the server has counted what
    /// the sessions did before it, unless `give_up` says to stop waiting.
    fn window_opens(&mut self, _give_up: &dyn Fn() -> bool) {}
    /// The wait class of a sampled event (empty where the server has none).
    fn class_of(&self, _event: &str) -> String {
        String::new()
    }
    /// Commits and writer I/O between two snapshots (a live view's).
    fn activity(&self, _first: &Self::Snapshot, _now: &Self::Snapshot) -> Activity {
        Activity::default()
    }
    /// Waits the server counts and times itself between two snapshots
    /// (a live view's; none where the server only shows its activity).
    fn counted_waits(&self, _first: &Self::Snapshot, _now: &Self::Snapshot) -> Vec<LiveWait> {
        Vec::new()
    }
}

/// Sampled waits by name: dbio's sessions', and the server's background
/// processes' (`PROCESS EVENT`, AWR's background wait events).
#[derive(Clone, Debug, Default)]
pub struct Waits {
    pub sessions: BTreeMap<String, u64>,
    pub background: BTreeMap<String, u64>,
}

/// How often the sampler publishes what it saw for a live view (when watched).
const PUBLISH: Duration = Duration::from_secs(1);

/// Runs the sampler until `sessions_done`. `before` is a snapshot taken
/// before the start, used as the window's first edge when there is no ramp
/// (a server whose counters move at once, such as MariaDB's, would
/// otherwise miss what the sessions did before the sampler's first read).
pub fn run<M: Monitor>(
    m: &mut M,
    shared: &Shared,
    sessions_done: &AtomicBool,
    hz: u64,
    before: Option<M::Snapshot>,
) -> DbPart<M::Snapshot> {
    let mut part = DbPart::<M::Snapshot>::default();
    let start = shared.start_ns.load(SeqCst);
    let ramp_end = start + shared.ramp_ns;
    let done = || sessions_done.load(SeqCst);
    while now_ns() < ramp_end && !done() && !shared.stop.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
    }
    if shared.ramp_ns > 0 {
        m.window_opens(&|| done() || shared.stop.load(Relaxed));
    }
    let first = match before
        .filter(|_| shared.ramp_ns == 0)
        .map_or_else(|| m.snapshot(), Ok)
    {
        Ok(s) => s,
        Err(e) => {
            part.error = Some(e.0);
            return part;
        }
    };
    let t_first = Instant::now();
    let tick = Duration::from_nanos(1_000_000_000 / hz.max(1));
    let mut next = Instant::now();
    let mut published = Instant::now();
    let mut seq = 0;
    while !done() {
        if now_ns() < shared.end_ns.load(Relaxed) {
            if let Err(e) = m.sample(&mut part.waits) {
                part.error = Some(e.0);
                return part;
            }
            part.samples += 1;
        }
        if published.elapsed() >= PUBLISH && shared.watched.load(Relaxed) {
            published = Instant::now();
            seq += 1;
            shared.publish_live(live(m, &part, hz, seq, &first));
        }
        next += tick;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    m.settle();
    match m.snapshot() {
        Ok(last) => part.edges = Some((first, last, t_first.elapsed().as_secs_f64())),
        Err(e) => part.error = Some(e.0),
    }
    part
}

/// What the sampler has seen so far, for a live view: each sample of a
/// process in a wait is about `1 / hz` seconds of it (an active-session
/// history's estimate); commits and writer I/O since the window's first
/// edge, read now when the run is watched.
fn live<M: Monitor>(
    m: &mut M,
    part: &DbPart<M::Snapshot>,
    hz: u64,
    seq: u64,
    first: &M::Snapshot,
) -> LiveDb {
    let hz = hz.max(1) as f64;
    let sides = [
        (Process::Session, &part.waits.sessions),
        (Process::Background, &part.waits.background),
    ];
    let mut waits: Vec<LiveWait> = sides
        .into_iter()
        .flat_map(|(process, map)| map.iter().map(move |(e, n)| (process, e, n)))
        .map(|(process, event, n)| LiveWait {
            process,
            event: event.clone(),
            class: m.class_of(event),
            seconds: *n as f64 / hz,
            count: None,
        })
        .collect();
    // A failed read shows nothing new; the run's own edges decide.
    let mut activity = Activity::default();
    if let Ok(now) = m.snapshot() {
        activity = m.activity(first, &now);
        waits.extend(m.counted_waits(first, &now));
    }
    LiveDb {
        seq,
        waits,
        activity,
    }
}
