//! The one run harness every workload goes through: it resolves the storage
//! under the workload's paths and starts device and host telemetry, starts
//! every thread of the workload (each builds its own state first) and
//! releases them together through one start gate, runs the control loop
//! (series, status line, telemetry, window edges, Ctrl-C), joins the
//! sessions, tells the workload to stop its background threads, joins those,
//! and merges what every thread measured into one [`RunResult`].

pub(crate) mod control;
mod gate;
mod observe;
pub mod rounds;
#[cfg(test)]
mod sync_tests;
#[cfg(test)]
mod tests;
mod window;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use crate::measure::clock::now_ns;
use crate::measure::cpu::CpuTime;
use crate::measure::stats::SessionStats;
use crate::samplers::series::{SecondPoint, SessionSeries};
use crate::samplers::status::StatusLine;
use crate::samplers::telemetry::{Telemetry, TelemetryPoint, TelemetrySummary};
use crate::storage::chain::{self, Chain};
use crate::workload::{Shared, ThreadEnd, Workload};
use control::{Watch, control};
use gate::Gate;

pub use crate::workload::Status;
pub use observe::Observer;
pub use window::Window;

/// Everything a run measured.
pub struct RunResult {
    pub status: Status,
    pub error: Option<String>,
    pub stats: SessionStats,
    /// Length of the measurement window, seconds.
    pub measured_s: f64,
    pub ramp_s: f64,
    pub cpu: CpuTime,
    pub series: Vec<SecondPoint>,
    pub start_unix_ns: u64,
    pub issued: u64,
    /// The filesystem and devices under the target, when they could be resolved.
    pub chain: Option<Chain>,
    /// Device and host telemetry, one point per interval.
    pub telemetry: Vec<TelemetryPoint>,
    /// Device and host averages over the measurement window.
    pub window: Option<TelemetrySummary>,
    /// Microseconds between the first and the last session leaving the
    /// start barrier: how far from "all at once" the start was.
    pub start_skew_us: f64,
    /// The process's peak resident memory when the threads were joined
    /// (getrusage's ru_maxrss): the cache, every thread's memory, the rest.
    pub peak_rss_bytes: u64,
    /// A `--steady-state` run's rounds, verdict and steady window.
    pub steady: Option<rounds::SteadyState>,
}

/// Stack of each thread of a run: the workloads keep their state on the
/// heap, so thousands of sessions need not reserve 2 MiB each.
const THREAD_STACK: usize = 512 << 10;

/// How the harness runs a workload.
pub struct Options<'a> {
    /// Measured seconds after the ramp, or `None` for a run of fixed work.
    pub time_s: Option<f64>,
    /// Telemetry sampling interval, seconds.
    pub interval_s: f64,
    /// Raised by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    pub status: Option<StatusLine>,
    /// Watches the run from the control thread (a live metrics endpoint).
    pub observer: Option<&'a dyn Observer>,
    /// End the window once the last rounds are steady (`--steady-state`;
    /// `time_s` is then the cap).
    pub steady: Option<crate::steady::Rules>,
    /// Opened when every thread is ready, closed when every thread ended
    /// (`--capture`).
    pub window: Option<&'a dyn Window>,
}

/// A run's result and what each thread counted besides it (in thread
/// order: sessions, then background threads).
pub struct Outcome<P> {
    pub result: RunResult,
    pub parts: Vec<P>,
}

/// Other processes running the same run at the same time (MPI ranks): the
/// start is agreed with them once every local thread is ready.
pub trait StartSync {
    /// Called once every thread of this process is ready, right before the
    /// clock starts; `local_error` is this process's first error. Returns
    /// when every process may start together, or the error (naming the
    /// process that failed) that ends the run everywhere before its start.
    fn start(&self, local_error: Option<String>) -> Result<(), NotStarted>;
}

/// Why the processes of a run did not start together: one line naming the
/// process that failed and why (it becomes the run's error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotStarted(pub String);

/// Runs `work` to the end. `shared` is the state its threads read (the
/// workload holds a reference to it too); its ramp is the run's.
pub fn run<W: Workload>(work: &W, shared: &Shared, opts: Options) -> Outcome<W::Part> {
    run_synced(work, shared, opts, None)
}

/// [`run`], with the start agreed with other processes through `sync`.
pub fn run_synced<W: Workload>(
    work: &W,
    shared: &Shared,
    opts: Options,
    sync: Option<&dyn StartSync>,
) -> Outcome<W::Part> {
    let threads = work.threads();
    let total = threads.total();
    let sessions = threads.sessions as usize;
    let ramp_s = shared.ramp_ns as f64 / 1e9;
    let slots: Vec<Box<SessionSeries>> = (0..total).map(|_| SessionSeries::new()).collect();
    let (chain, devices) = watched_storage(&work.storage());
    let telemetry = Telemetry::start(devices);

    let gate = Gate::default();
    let finished = AtomicUsize::new(0);
    let (control, ends, start_unix_ns) = std::thread::scope(|s| {
        let crew = Crew {
            work,
            shared,
            gate: &gate,
            finished: &finished,
            slots: &slots,
        };
        let handles = crew.spawn(s, &threads);
        let start_unix_ns = crew.release(handles.len(), total, &opts, sync);
        // The control loop ends when every session that started has ended.
        let started_sessions = handles.len().min(sessions);
        let control = control(Watch {
            shared,
            slots: &slots,
            finished: &finished,
            sessions: started_sessions,
            ramp_s,
            time_s: opts.time_s,
            interrupt: opts.interrupt,
            status: opts.status,
            telemetry: Some(telemetry),
            interval_ns: (opts.interval_s * 1e9) as u64,
            observer: opts.observer,
            rounds: opts.steady.map(rounds::Rounds::new),
            live: &|| work.live().or_else(|| shared.live()),
        });
        let ends = crew.join(handles, sessions, total);
        if let Some(w) = opts.window {
            w.close();
        }
        (control, ends, start_unix_ns)
    });

    let merged = Merged::of(ends, sessions);
    let (status, error, measured_s) = shared.outcome(control.interrupted, merged.last_ns);
    Outcome {
        result: RunResult {
            status,
            error,
            stats: merged.stats,
            measured_s,
            ramp_s,
            cpu: control.cpu,
            series: control.series,
            start_unix_ns,
            issued: merged.issued,
            chain,
            telemetry: control.telemetry,
            window: control.window,
            start_skew_us: merged.start_skew_us,
            peak_rss_bytes: crate::measure::cpu::peak_rss_bytes(),
            steady: control.steady,
        },
        parts: merged.parts,
    }
}

/// Where the I/O really goes, and the devices to watch on the way: the
/// first path's storage chain (the run's) and the devices under every
/// path, each once. Host telemetry is recorded whatever the target (tmpfs
/// has no device).
fn watched_storage(paths: &[std::path::PathBuf]) -> (Option<Chain>, Vec<String>) {
    let chain = paths.first().and_then(|p| chain::resolve(p).ok());
    let mut devices = chain.as_ref().map(|c| c.devices()).unwrap_or_default();
    for p in paths.iter().skip(1) {
        for d in chain::resolve(p).map(|c| c.devices()).unwrap_or_default() {
            if !devices.contains(&d) {
                devices.push(d);
            }
        }
    }
    (chain, devices)
}

/// A thread's join handle: when it was released and how it ended.
type Handle<'scope, P> = std::thread::ScopedJoinHandle<'scope, (u64, ThreadEnd<P>)>;

/// What every thread of a run shares with the harness.
struct Crew<'env, W> {
    work: &'env W,
    shared: &'env Shared,
    gate: &'env Gate,
    finished: &'env AtomicUsize,
    slots: &'env [Box<SessionSeries>],
}

impl<'env, W: Workload> Crew<'env, W> {
    /// Starts every thread (sessions, then background threads), each
    /// building its state and then waiting at the gate; stops at the first
    /// thread that cannot be started, failing the run.
    fn spawn<'scope>(
        &self,
        s: &'scope std::thread::Scope<'scope, 'env>,
        threads: &crate::workload::Threads,
    ) -> Vec<Handle<'scope, W::Part>> {
        let total = threads.total();
        let sessions = threads.sessions as usize;
        let mut handles = Vec::with_capacity(total as usize);
        for t in 0..total {
            let (work, shared) = (self.work, self.shared);
            let (gate, finished, slot) = (self.gate, self.finished, &*self.slots[t as usize]);
            let spawned = std::thread::Builder::new()
                .name(threads.name(t))
                .stack_size(THREAD_STACK)
                .spawn_scoped(s, move || {
                    // Counts the session as finished however it ends: a
                    // thread that panics must not leave the control loop
                    // waiting for it, and it stops the run.
                    let _done = Done {
                        finished: ((t as usize) < sessions).then_some(finished),
                        shared,
                    };
                    let state = work.prepare(t).map_err(|e| shared.fail(e.to_string())).ok();
                    let go = gate.ready_then_wait(total);
                    let released = now_ns();
                    let end = match state.filter(|_| go) {
                        Some(st) => work.run(t, st, slot),
                        None => ThreadEnd::default(),
                    };
                    (released, end)
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    self.shared.fail(format!(
                        "cannot start thread {} of {total}: {e}; lower --sessions or raise the limit on threads (ulimit -u, kernel.threads-max, the cgroup's pids.max)",
                        t + 1
                    ));
                    break;
                }
            }
        }
        handles
    }

    /// Every thread has built its state: starts the clock and releases them
    /// together (or, if not every thread could start, the capture window
    /// could not open or another process failed, releases them to end).
    /// Returns the start, Unix ns.
    fn release(
        &self,
        started: usize,
        total: u32,
        opts: &Options,
        sync: Option<&dyn StartSync>,
    ) -> u64 {
        let shared = self.shared;
        self.gate.wait_ready(started as u32);
        let mut go = started == total as usize;
        if let Some(Err(e)) = opts.window.filter(|_| go).map(|w| w.open()) {
            shared.fail(e);
            go = false;
        }
        if let Some(Err(NotStarted(e))) = sync.map(|s| s.start(shared.error())) {
            shared.fail(e);
            go = false;
        }
        let start_unix_ns = shared.begin(opts.time_s);
        if let Some(o) = opts.observer {
            shared.watched.store(true, SeqCst);
            o.started(start_unix_ns);
        }
        self.gate.open(go);
        start_unix_ns
    }

    /// Joins the sessions, tells the workload they are done, joins the
    /// background threads; one end per thread, a default for those never
    /// started.
    fn join(
        &self,
        handles: Vec<Handle<'_, W::Part>>,
        sessions: usize,
        total: u32,
    ) -> Vec<(u64, ThreadEnd<W::Part>)> {
        let mut handles = handles.into_iter();
        // A thread that panicked (a dbio bug) has failed the run: it adds nothing.
        let join = |h: Handle<'_, W::Part>| h.join().unwrap_or_default();
        let mut ends: Vec<_> = handles.by_ref().take(sessions).map(join).collect();
        // The sessions are done: the background threads drain and stop.
        self.work.sessions_ended();
        ends.extend(handles.map(join));
        ends.resize_with(total as usize, Default::default);
        ends
    }
}

/// What the threads measured, merged: every thread's statistics and parts,
/// the sessions' last completion, issued requests and start skew.
struct Merged<P> {
    stats: SessionStats,
    last_ns: u64,
    issued: u64,
    start_skew_us: f64,
    parts: Vec<P>,
}

impl<P> Merged<P> {
    fn of(ends: Vec<(u64, ThreadEnd<P>)>, sessions: usize) -> Self {
        let mut stats = SessionStats::new();
        let (mut last_ns, mut issued) = (0, 0);
        let (mut first_out, mut last_out) = (u64::MAX, 0);
        let mut parts = Vec::with_capacity(ends.len());
        for (t, (released, end)) in ends.into_iter().enumerate() {
            stats.merge(&end.stats);
            if t < sessions {
                last_ns = last_ns.max(end.last_ns);
                issued += end.issued;
                if released > 0 {
                    first_out = first_out.min(released);
                    last_out = last_out.max(released);
                }
            }
            parts.push(end.part);
        }
        stats.outliers.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        Merged {
            stats,
            last_ns,
            issued,
            start_skew_us: last_out.saturating_sub(first_out) as f64 / 1e3,
            parts,
        }
    }
}

/// Marks a thread of the run as ended when it goes out of scope, also by a
/// panic: a session counts as finished, and a panic fails the run.
struct Done<'a> {
    finished: Option<&'a AtomicUsize>,
    shared: &'a Shared,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let name = std::thread::current()
                .name()
                .unwrap_or("a thread")
                .to_string();
            self.shared.fail(format!(
                "{name} stopped on an internal error (a dbio bug, please report it); the results so far are kept"
            ));
        }
        if let Some(f) = self.finished {
            f.fetch_add(1, SeqCst);
        }
    }
}
