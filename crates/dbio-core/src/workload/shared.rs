//! What every thread of a run reads: the stop flag and the measurement
//! window. Written only by the harness's control thread, and by a thread
//! that fails (which stops the run); and an open loop's due times, which
//! its sessions claim.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

use super::live::LiveDb;
use crate::measure::clock::{now_ns, unix_ns};
use crate::measure::schedule::Arrivals;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Completed,
    Interrupted,
    Failed,
}

impl Status {
    /// The name the run document and the store give it.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        }
    }
}

/// State every thread reads; written only by the control thread (and by a
/// thread that fails).
pub struct Shared {
    pub stop: AtomicBool,
    /// Monotonic ns when the threads started (set between the two barriers).
    pub start_ns: AtomicU64,
    /// End of the measurement window; lowered on stop.
    pub end_ns: AtomicU64,
    pub ramp_ns: u64,
    /// Offset that turns a monotonic timestamp into wall-clock ns (write generations).
    pub wall_minus_mono_ns: u64,
    error: Mutex<Option<String>>,
    /// True while an observer watches the run (a live view): a database
    /// run's sampler then reads the server's counters once a second too.
    pub watched: AtomicBool,
    /// What a database run's sampler thread counted so far, published
    /// about once a second for a live view (never by a session).
    live: Mutex<Option<LiveDb>>,
    /// Under `--rate`, the run's due times: each session claims the next
    /// one when it is free (`measure::schedule`).
    pub(crate) arrivals: Arrivals,
}

impl Shared {
    /// Fresh state for a run with `ramp_s` seconds of warm-up.
    pub fn new(ramp_s: f64) -> Self {
        Shared {
            stop: AtomicBool::new(false),
            start_ns: AtomicU64::new(0),
            end_ns: AtomicU64::new(u64::MAX),
            ramp_ns: (ramp_s * 1e9) as u64,
            wall_minus_mono_ns: unix_ns().saturating_sub(now_ns()),
            error: Mutex::new(None),
            watched: AtomicBool::new(false),
            live: Mutex::new(None),
            arrivals: Arrivals::default(),
        }
    }

    /// What the sampler counted so far (a database run's background thread).
    pub(crate) fn publish_live(&self, live: LiveDb) {
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = Some(live);
    }

    /// What was last published, if this run samples a server.
    pub fn live(&self) -> Option<LiveDb> {
        self.live.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Starts the clock (between the two barriers): the start, and for a
    /// timed run the end of the window after the ramp. Returns the start as
    /// wall-clock ns.
    pub fn begin(&self, time_s: Option<f64>) -> u64 {
        let start = now_ns();
        self.start_ns.store(start, SeqCst);
        if let Some(t) = time_s {
            let ramp_s = self.ramp_ns as f64 / 1e9;
            let end = start.saturating_add(((ramp_s + t) * 1e9) as u64);
            // A thread that failed before the start has ended the window already.
            self.end_ns.fetch_min(end, SeqCst);
        }
        unix_ns()
    }

    /// How the run ended, its first error, and the length of the
    /// measurement window: it ends at the deadline, at a stop (Ctrl-C or an
    /// error), or, for a run of a fixed amount of work, with the last
    /// completion (`last_ns` after the start).
    pub fn outcome(&self, interrupted: bool, last_ns: u64) -> (Status, Option<String>, f64) {
        let error = self.error.lock().unwrap_or_else(|p| p.into_inner()).take();
        let start = self.start_ns.load(SeqCst);
        let end = match self.end_ns.load(SeqCst) {
            u64::MAX => start + last_ns,
            e => e,
        };
        let ramp_s = self.ramp_ns as f64 / 1e9;
        let measured_s = ((end.saturating_sub(start)) as f64 / 1e9 - ramp_s).max(0.0);
        let status = if error.is_some() {
            Status::Failed
        } else if interrupted {
            Status::Interrupted
        } else {
            Status::Completed
        };
        (status, error, measured_s)
    }

    /// The first error recorded so far, if any.
    pub fn error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Records the first error and stops every thread.
    #[cold]
    pub fn fail(&self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        e.get_or_insert(msg);
        self.end_ns.fetch_min(now_ns(), SeqCst);
        self.stop.store(true, SeqCst);
    }

    /// Stops every thread at `now` (Ctrl-C): the window ends there.
    pub fn interrupt(&self, now: u64) {
        self.end_window(now);
    }

    /// Ends the window at `now` and stops every thread, the run completed
    /// (its steady state reached, `--steady-state`).
    pub(crate) fn end_window(&self, now: u64) {
        self.end_ns.fetch_min(now, SeqCst);
        self.stop.store(true, SeqCst);
    }
}
