//! Runs a workload: opens the target's files, starts every session thread
//! behind a barrier, samples the per-second series and the live status line
//! while they run, stops them at the deadline, on Ctrl-C or on the first
//! error, and merges what they measured.

pub mod session;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Barrier, Mutex};

use serde::Serialize;

use crate::config::{RunConfig, RunLength};
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, SyncAfterWrite};
use crate::measure::clock::{now_ns, unix_ns};
use crate::measure::cpu::CpuTime;
use crate::measure::stats::SessionStats;
use crate::samplers::series::{self, SecondPoint, SeriesWriter, SessionSeries};
use crate::samplers::status::StatusLine;
use crate::samplers::telemetry::{self, Snapshot, Telemetry, TelemetryPoint, TelemetrySummary};
use crate::target::chain::{self, Chain};
use crate::target::{Target, TargetError};
use crate::workload::dist::{BlockPicker, Hotspot};
use crate::workload::raw::Raw;
use crate::workload::rng::Rng;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Completed,
    Interrupted,
    Failed,
}

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
}

/// State every session reads; written only by the control thread (and by a
/// session that fails).
pub struct Shared {
    pub stop: AtomicBool,
    /// Monotonic ns when sessions started (set between the two barriers).
    pub start_ns: AtomicU64,
    /// End of the measurement window; lowered on stop.
    pub end_ns: AtomicU64,
    pub ramp_ns: u64,
    /// Offset that turns a monotonic timestamp into wall-clock ns (write generations).
    pub wall_minus_mono_ns: u64,
    error: Mutex<Option<String>>,
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
        }
    }

    /// Starts the clock (between the two barriers): the start, and for a
    /// timed run the end of the window after the ramp. Returns the start as
    /// wall-clock ns.
    pub fn begin(&self, time_s: Option<f64>) -> u64 {
        let start = now_ns();
        self.start_ns.store(start, SeqCst);
        if let Some(t) = time_s {
            let ramp_s = self.ramp_ns as f64 / 1e9;
            self.end_ns
                .store(start + ((ramp_s + t) * 1e9) as u64, SeqCst);
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

    /// Records the first error and stops every session.
    #[cold]
    pub fn fail(&self, msg: String) {
        let mut e = self.error.lock().unwrap_or_else(|p| p.into_inner());
        e.get_or_insert(msg);
        self.end_ns.fetch_min(now_ns(), SeqCst);
        self.stop.store(true, SeqCst);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{0}")]
    Setup(String),
}

/// Runs `cfg` on a prepared target. `interrupt` is raised by Ctrl-C.
pub fn run(
    cfg: &RunConfig,
    target: &Target,
    interrupt: &AtomicBool,
    status: Option<StatusLine>,
) -> Result<RunResult, RunError> {
    let files = target.open(cfg.io_mode, cfg.pattern.writes())?;
    let fds = files.raw();
    let hotspot = resolve_hotspot(cfg, target)?;
    let picker = BlockPicker::new(cfg.distribution, target.total_blocks(), hotspot)
        .map_err(|e| RunError::Setup(format!("--dist {}: {e}", cfg.distribution)))?;
    let (ramp_s, time_s, quota_total) = match cfg.length {
        RunLength::Time { time_s, ramp_s } => (ramp_s, Some(time_s), None),
        RunLength::Ops { ops } => (0.0, None, Some(ops)),
    };
    let n = cfg.sessions;
    let shared = Shared::new(ramp_s);
    let series_slots: Vec<Box<SessionSeries>> = (0..n).map(|_| SessionSeries::new()).collect();
    // Where the I/O really goes, and the devices to watch on the way.
    let chain = chain::resolve(&target.path).ok();
    let telemetry = chain.as_ref().map(|c| Telemetry::start(c.devices()));
    let ready = Barrier::new(n as usize + 1);
    let go = Barrier::new(n as usize + 1);
    let finished = AtomicUsize::new(0);
    let sync = SyncAfterWrite::for_mode(cfg.io_mode);
    let interval_ns = cfg
        .rate_iops
        .map(|r| 1_000_000_000 * u64::from(n) / r)
        .unwrap_or(0);

    let outcome = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|id| {
                let (shared, ready, go, finished, fds) = (&shared, &ready, &go, &finished, &fds);
                let series_slot: &SessionSeries = &series_slots[id as usize];
                let picker = picker.clone();
                let quota = match quota_total {
                    Some(t) => t / u64::from(n) + u64::from(u64::from(id) < t % u64::from(n)),
                    None => u64::MAX,
                };
                std::thread::Builder::new()
                    .name(format!("dbio-session-{id}"))
                    .spawn_scoped(s, move || {
                        let plan = session::SessionPlan {
                            id,
                            target,
                            io_mode: cfg.io_mode,
                            quota,
                            interval_ns,
                            outlier_ns: (cfg.outlier_ms * 1e6) as u64,
                        };
                        let mut rng = Rng::for_stream(cfg.seed, u64::from(id));
                        let mut work = Raw::new(
                            cfg.pattern,
                            cfg.read_pct,
                            picker,
                            id,
                            n,
                            target.total_blocks(),
                        );
                        let mut stats = SessionStats::new();
                        let mut writer = SeriesWriter::new(series_slot);
                        let mut bufs = BufPool::new(cfg.block_size as usize, cfg.iodepth as usize);
                        let engine =
                            AnyEngine::new(cfg.engine, fds, Some(&bufs), cfg.iodepth, sync);
                        if let Err(e) = &engine {
                            shared.fail(format!(
                                "session {id}: cannot set up {}: {e}",
                                cfg.engine.name()
                            ));
                        }
                        ready.wait();
                        go.wait();
                        let end = match engine {
                            Ok(AnyEngine::Psync(mut e)) => session::run(
                                &plan,
                                shared,
                                &mut e,
                                &mut work,
                                &mut bufs,
                                &mut rng,
                                &mut stats,
                                &mut writer,
                            ),
                            Ok(AnyEngine::Uring(mut e)) => session::run(
                                &plan,
                                shared,
                                &mut *e,
                                &mut work,
                                &mut bufs,
                                &mut rng,
                                &mut stats,
                                &mut writer,
                            ),
                            Err(_) => session::SessionEnd {
                                last_ns: 0,
                                issued: 0,
                            },
                        };
                        finished.fetch_add(1, SeqCst);
                        (stats, end)
                    })
                    .expect("spawn session thread")
            })
            .collect();

        ready.wait();
        let start_unix_ns = shared.begin(time_s);
        go.wait();
        let control = control(Watch {
            shared: &shared,
            slots: &series_slots,
            finished: &finished,
            sessions: n as usize,
            ramp_s,
            time_s,
            interrupt,
            status,
            telemetry,
            interval_ns: (cfg.interval_s * 1e9) as u64,
        });
        let mut stats = SessionStats::new();
        let mut last_ns = 0;
        let mut issued = 0;
        for h in handles {
            let (st, end) = h.join().expect("session thread panicked");
            stats.merge(&st);
            last_ns = last_ns.max(end.last_ns);
            issued += end.issued;
        }
        (control, stats, last_ns, issued, start_unix_ns)
    });
    let (control, stats, last_ns, issued, start_unix_ns) = outcome;
    let ended = Ended {
        stats,
        last_ns,
        issued,
        start_unix_ns,
    };
    Ok(control.into_result(&shared, ended, ramp_s, chain))
}

fn resolve_hotspot(cfg: &RunConfig, target: &Target) -> Result<Option<Hotspot>, RunError> {
    let Some(h) = cfg.hotspot else {
        return Ok(None);
    };
    let bs = u64::from(cfg.block_size);
    if h.offset_bytes + h.size_bytes > target.size_bytes() {
        return Err(RunError::Setup(format!(
            "--hotspot-offset-mb {} + --hotspot-mb {} reaches past the end of the data ({} MiB); make the hot spot smaller or --size larger",
            h.offset_bytes >> 20,
            h.size_bytes >> 20,
            target.size_bytes() >> 20
        )));
    }
    Ok(Some(Hotspot {
        offset_blocks: h.offset_bytes / bs,
        size_blocks: (h.size_bytes / bs).max(1),
        every: h.every,
    }))
}

/// What the control thread saw.
pub(crate) struct Control {
    pub interrupted: bool,
    pub cpu: CpuTime,
    pub series: Vec<SecondPoint>,
    pub telemetry: Vec<TelemetryPoint>,
    pub window: Option<TelemetrySummary>,
}

/// What the session threads leave when a run ends.
pub(crate) struct Ended {
    /// Their statistics, merged.
    pub stats: SessionStats,
    /// The last completion, ns after the start.
    pub last_ns: u64,
    /// Requests issued.
    pub issued: u64,
    pub start_unix_ns: u64,
}

impl Control {
    /// The run's result: its outcome, what the control thread measured and
    /// what the sessions left (outliers in time order).
    pub fn into_result(
        self,
        shared: &Shared,
        ended: Ended,
        ramp_s: f64,
        chain: Option<Chain>,
    ) -> RunResult {
        let mut stats = ended.stats;
        stats.outliers.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        let (status, error, measured_s) = shared.outcome(self.interrupted, ended.last_ns);
        RunResult {
            status,
            error,
            stats,
            measured_s,
            ramp_s,
            cpu: self.cpu,
            series: self.series,
            start_unix_ns: ended.start_unix_ns,
            issued: ended.issued,
            chain,
            telemetry: self.telemetry,
            window: self.window,
        }
    }
}

/// Everything the control thread watches.
pub(crate) struct Watch<'a> {
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
    let deadline = w.time_s.map(|t| start + ((w.ramp_s + t) * 1e9) as u64);
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
        if let Some(d) = deadline
            && last.is_none()
            && now >= d
        {
            last = Some(w.edge());
        }
        if !interrupted && w.interrupt.load(SeqCst) {
            interrupted = true;
            shared.end_ns.fetch_min(now, SeqCst);
            shared.stop.store(true, SeqCst);
            if last.is_none() {
                last = Some(w.edge());
            }
        }
        if now >= next_tele
            && let Some(t) = w.telemetry.as_mut()
        {
            telemetry.push(t.sample((now - start) as f64 / 1e9));
            next_tele += w.interval_ns;
        }
        while start + u64::from(next_sec + 1) * SEC + GRACE <= now {
            let p = series::collect(w.slots, next_sec, f64::from(next_sec) < w.ramp_s);
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
    // The tail: seconds not yet collected that belong to the run.
    let end = shared.end_ns.load(SeqCst).min(now_ns());
    let last_sec = ((end - start).saturating_sub(1) / SEC) as u32;
    while next_sec <= last_sec {
        series.push(series::collect(
            w.slots,
            next_sec,
            f64::from(next_sec) < w.ramp_s,
        ));
        next_sec += 1;
    }
    if let Some(st) = w.status.as_mut() {
        st.finish();
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
    }
}
