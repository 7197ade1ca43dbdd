//! The control thread's loop, the same for every workload: the window's
//! edges (CPU time, telemetry counters), one series point per second with the
//! live status line, telemetry every interval, Ctrl-C, and under
//! `--steady-state` the end of the window once its rounds are steady.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};

use crate::measure::clock::now_ns;
use crate::measure::cpu::CpuTime;
use crate::samplers::series::{self, SecondPoint, SessionSeries};
use crate::samplers::status::StatusLine;
use crate::samplers::telemetry::{self, Snapshot, Telemetry, TelemetryPoint, TelemetrySummary};
use crate::workload::Shared;
use crate::workload::live::LiveDb;

use super::Observer;
use super::rounds::{Rounds, SteadyState};

/// What the control thread saw.
pub(crate) struct Control {
    pub interrupted: bool,
    pub cpu: CpuTime,
    pub series: Vec<SecondPoint>,
    pub telemetry: Vec<TelemetryPoint>,
    pub window: Option<TelemetrySummary>,
    pub steady: Option<SteadyState>,
}

/// Everything the control thread watches.
pub struct Watch<'a> {
    pub shared: &'a Shared,
    pub slots: &'a [Box<SessionSeries>],
    /// Sessions that have finished; the loop ends when all `sessions` have.
    pub finished: &'a AtomicUsize,
    pub sessions: usize,
    pub ramp_s: f64,
    pub time_s: Option<f64>,
    pub interrupt: &'a AtomicBool,
    pub status: Option<StatusLine>,
    pub telemetry: Option<Telemetry>,
    /// Telemetry sampling interval, ns.
    pub interval_ns: u64,
    /// Told of each second and telemetry point as they are made.
    pub observer: Option<&'a dyn Observer>,
    /// The steady-state rounds, when the run looks for steady state.
    pub rounds: Option<Rounds>,
    /// What a database workload has counted so far (asked each second
    /// when there is an observer).
    pub live: &'a dyn Fn() -> Option<LiveDb>,
}

/// One edge of the measurement window: CPU time and telemetry counters.
struct Edge {
    cpu: CpuTime,
    tele: Option<Snapshot>,
}

impl Watch<'_> {
    fn edge(&mut self) -> Edge {
        Edge {
            cpu: CpuTime::now(),
            tele: self.telemetry.as_mut().map(Telemetry::mark),
        }
    }

    /// Second `sec`'s point, shown to the observer if there is one and
    /// counted in the steady-state rounds if the run has them (only a
    /// second wholly inside the window: not the tail after its end).
    fn second(&mut self, sec: u32) -> SecondPoint {
        let ramp = f64::from(sec) < self.ramp_s;
        if self.observer.is_none() && self.rounds.is_none() {
            return series::collect(self.slots, sec, ramp);
        }
        let (p, hists) = series::collect_with_hists(self.slots, sec, ramp);
        if let Some(o) = self.observer {
            o.second(&p, &hists, &series::collect_due(self.slots, sec));
            if let Some(db) = (self.live)() {
                o.db(&db);
            }
        }
        let start = self.shared.start_ns.load(SeqCst);
        let inside = start + u64::from(sec + 1) * 1_000_000_000 <= self.shared.end_ns.load(SeqCst);
        if let Some(r) = self.rounds.as_mut().filter(|_| inside)
            && r.second(&p, &hists)
        {
            // Steady: the window ends now, as at a deadline.
            self.shared.end_window(now_ns());
        }
        p
    }
}

/// The control thread's loop: the window's edges (CPU, telemetry), one series
/// point per second (with the status line), telemetry every interval, and
/// Ctrl-C handling.
pub(crate) fn control(mut w: Watch) -> Control {
    const SEC: u64 = 1_000_000_000;
    const GRACE: u64 = 50_000_000; // let completions of a second land before reading it
    let shared = w.shared;
    let start = shared.start_ns.load(SeqCst);
    let ramp_end = start + shared.ramp_ns;
    let deadline = w
        .time_s
        .map(|t| start.saturating_add(((w.ramp_s + t) * 1e9) as u64));
    let mut first: Option<Edge> = None;
    let mut last: Option<Edge> = None;
    let mut next_sec: u32 = 0;
    let mut next_tele = start + w.interval_ns;
    let mut series = Vec::new();
    let mut telemetry = Vec::new();
    let mut interrupted = false;
    loop {
        let done = w.finished.load(SeqCst) == w.sessions;
        let now = now_ns();
        if first.is_none() && now >= ramp_end {
            first = Some(w.edge());
        }
        let steady = w.rounds.as_ref().is_some_and(Rounds::reached);
        if last.is_none() && (deadline.is_some_and(|d| now >= d) || steady) {
            last = Some(w.edge());
        }
        if !interrupted && w.interrupt.load(SeqCst) {
            interrupted = true;
            shared.interrupt(now);
            if last.is_none() {
                last = Some(w.edge());
            }
        }
        if now >= next_tele
            && let Some(t) = w.telemetry.as_mut()
        {
            let point = t.sample((now - start) as f64 / 1e9);
            if let Some(o) = w.observer {
                o.telemetry(&point);
            }
            telemetry.push(point);
            next_tele += w.interval_ns;
        }
        while start + u64::from(next_sec + 1) * SEC + GRACE <= now {
            let p = w.second(next_sec);
            if let Some(st) = w.status.as_mut() {
                st.update(&p, f64::from(next_sec + 1));
            }
            series.push(p);
            next_sec += 1;
        }
        if done {
            break;
        }
        let mut wake = start + u64::from(next_sec + 1) * SEC + GRACE;
        if first.is_none() {
            wake = wake.min(ramp_end);
        }
        if let Some(d) = deadline.filter(|_| last.is_none()) {
            wake = wake.min(d);
        }
        if w.telemetry.is_some() {
            wake = wake.min(next_tele);
        }
        wake = wake.min(now + 100_000_000);
        std::thread::sleep(std::time::Duration::from_nanos(wake.saturating_sub(now)));
    }
    let last = last.unwrap_or_else(|| w.edge());
    let first = first.unwrap_or_else(|| w.edge());
    // The tail: seconds not yet collected that belong to the run. A thread
    // that failed before the start ended the window before it began.
    let end = shared.end_ns.load(SeqCst).min(now_ns()).max(start);
    let last_sec = ((end - start).saturating_sub(1) / SEC) as u32;
    while next_sec <= last_sec {
        series.push(w.second(next_sec));
        next_sec += 1;
    }
    if let Some(st) = w.status.as_mut() {
        st.finish();
    }
    if let Some(o) = w.observer {
        // What the sessions counted to their end (the tail may have had no second left).
        if let Some(db) = (w.live)() {
            o.db(&db);
        }
        o.ended(interrupted);
    }
    let window = match (&first.tele, &last.tele) {
        (Some(a), Some(b)) => Some(telemetry::summary(a, b)),
        _ => None,
    };
    Control {
        interrupted,
        cpu: last.cpu.since(first.cpu),
        series,
        telemetry,
        window,
        steady: w.rounds.take().map(Rounds::finish),
    }
}
