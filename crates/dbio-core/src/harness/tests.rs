//! The harness driven in-process with the null engine: the split of an
//! `--ops` quota, `--rate` pacing, the window's edges, the series, outliers,
//! Ctrl-C, background threads and a thread that cannot start.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

use super::{Options, Outcome, Status, run};
use crate::config::{EngineKind, IoMode, Pattern, RawConfig, RunConfig, RunLength, WorkloadConfig};
use crate::engine::AnyEngine;
use crate::engine::null::Null;
use crate::measure::stats::{Kind, SessionStats};
use crate::samplers::series::SessionSeries;
use crate::storage::{Target, TargetKind};
use crate::workload::dist::Distribution;
use crate::workload::raw::{Prepared, Raw};
use crate::workload::{SetupError, Shared, ThreadEnd, Threads, Workload};

const BS: u32 = 4096;

/// A one-file directory target of 256 blocks in a fresh temporary directory.
pub(super) fn target() -> (tempfile::TempDir, Target) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(256 * u64::from(BS))
        .unwrap();
    let t = Target {
        kind: TargetKind::Directory,
        path: dir.path().to_path_buf(),
        files: vec![file],
        block_size: BS,
        blocks_per_file: 256,
        id: 0,
        logical_sector: None,
        layout: None,
        region: None,
        locks: Default::default(),
    };
    (dir, t)
}

pub(super) fn config(target: &Target, sessions: u32, length: RunLength) -> RunConfig {
    RunConfig {
        target: target.path.clone(),
        files: 1,
        size_bytes: Some(target.size_bytes()),
        block_size: BS,
        sessions,
        iodepth: 4,
        engine: EngineKind::Null,
        io_mode: IoMode::Buffered,
        length,
        hotspot: None,
        rate_iops: None,
        arrival: None,
        seed: 7,
        load_parallel: 1,
        outlier_ms: 500.0,
        interval_s: 1.0,
        destroy_device: None,
        allow_root_fs: false,
        content: Default::default(),
        steady: None,
        workload: WorkloadConfig::Raw(RawConfig {
            pattern: Pattern::Randrw,
            read_pct: 50,
            distribution: Distribution::Uniform,
            uring: None,
            verify: Default::default(),
        }),
    }
}

/// The raw settings of a [`config`].
pub(super) fn raw(cfg: &RunConfig) -> &RawConfig {
    cfg.workload.raw().expect("config() is a raw run")
}

fn time(time_s: f64, ramp_s: f64) -> RunLength {
    RunLength::Time { time_s, ramp_s }
}

fn ramp_of(cfg: &RunConfig) -> f64 {
    match cfg.length {
        RunLength::Time { ramp_s, .. } => ramp_s,
        RunLength::Ops { .. } => 0.0,
    }
}

fn go<W: Workload>(w: &W, shared: &Shared, cfg: &RunConfig, stop: &AtomicBool) -> Outcome<W::Part> {
    let time_s = match cfg.length {
        RunLength::Time { time_s, .. } => Some(time_s),
        RunLength::Ops { .. } => None,
    };
    run(
        w,
        shared,
        Options {
            time_s,
            interval_s: cfg.interval_s,
            interrupt: stop,
            status: None,
            observer: None,
            steady: None,
            window: None,
        },
    )
}

/// Runs raw over the null engine.
fn raw_run(cfg: &RunConfig, target: &Target) -> super::RunResult {
    let shared = Shared::new(ramp_of(cfg));
    let work = Raw::new(cfg, raw(cfg), target, &shared).unwrap();
    go(&work, &shared, cfg, &AtomicBool::new(false)).result
}

fn total(s: &SessionStats) -> u64 {
    s.ops[Kind::Read as usize].count + s.ops[Kind::Write as usize].count
}

#[test]
fn an_ops_quota_is_split_exactly_over_the_sessions() {
    let (_d, t) = target();
    for (ops, sessions) in [(10, 3), (1, 4), (1000, 7)] {
        let r = raw_run(&config(&t, sessions, RunLength::Ops { ops }), &t);
        assert_eq!(r.status, Status::Completed);
        assert_eq!(r.issued, ops, "{ops} ops over {sessions} sessions");
        assert_eq!(total(&r.stats), ops, "every request is measured");
        assert!(r.measured_s > 0.0);
    }
}

#[test]
fn the_start_skew_of_the_sessions_is_measured() {
    let (_d, t) = target();
    let r = raw_run(&config(&t, 8, RunLength::Ops { ops: 800 }), &t);
    assert!(
        r.start_skew_us > 0.0 && r.start_skew_us < 1e6,
        "8 sessions released within {} us",
        r.start_skew_us
    );
}

#[test]
fn rate_paces_the_sessions() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, time(0.5, 0.0));
    cfg.rate_iops = Some(2000);
    let r = raw_run(&cfg, &t);
    let done = total(&r.stats) as f64;
    assert!(
        (900.0..=1100.0).contains(&done),
        "2000 IOPS for 0.5 s gave {done} requests"
    );
}

#[test]
fn the_ramp_is_not_measured_and_the_series_covers_every_second() {
    let (_d, t) = target();
    let mut cfg = config(&t, 1, time(1.2, 1.0));
    cfg.rate_iops = Some(1000);
    let r = raw_run(&cfg, &t);
    assert_eq!(r.status, Status::Completed);
    assert!(
        (r.measured_s - 1.2).abs() < 0.01,
        "window {} s",
        r.measured_s
    );
    let measured = total(&r.stats) as f64;
    assert!(
        (1100.0..=1300.0).contains(&measured),
        "1000 IOPS over a 1.2 s window measured {measured} (the ramp's must not count)"
    );
    // Seconds 0..2 cover [0, 2.2 s): the first second is the ramp.
    assert_eq!(r.series.len(), 3, "{:?}", r.series);
    assert!(r.series[0].ramp && !r.series[1].ramp);
    let in_series: u64 = r.series.iter().map(|p| p.read.ops + p.write.ops).sum();
    assert!(
        in_series as f64 >= measured + 900.0,
        "the series counts the ramp too: {in_series} vs {measured} measured"
    );
    assert!(
        !r.telemetry.is_empty() || r.window.is_some(),
        "host telemetry is sampled"
    );
}

/// Raw, but every request takes `latency_ns` on the null engine (only
/// session `only`'s, when given).
struct Slow<'a> {
    raw: Raw<'a>,
    latency_ns: u64,
    only: Option<u32>,
}

impl Workload for Slow<'_> {
    type Thread = Option<Prepared>;
    type Part = ();
    fn threads(&self) -> Threads {
        self.raw.threads()
    }
    fn storage(&self) -> Vec<PathBuf> {
        self.raw.storage()
    }
    fn prepare(&self, t: u32) -> Result<Option<Prepared>, SetupError> {
        let mut p = self.raw.prepare(t)?;
        if let Some(p) = &mut p
            && self.only.is_none_or(|o| o == t)
        {
            p.engine = AnyEngine::Null(Null::new(1).with_latency(self.latency_ns));
        }
        Ok(p)
    }
    fn run(&self, t: u32, p: Option<Prepared>, series: &SessionSeries) -> ThreadEnd<()> {
        self.raw.run(t, p, series)
    }
}

#[test]
fn slow_requests_are_listed_as_outliers_in_time_order() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, RunLength::Ops { ops: 20 });
    cfg.outlier_ms = 1.0;
    let shared = Shared::new(0.0);
    let work = Slow {
        raw: Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap(),
        latency_ns: 2_000_000,
        only: None,
    };
    let r = go(&work, &shared, &cfg, &AtomicBool::new(false)).result;
    assert_eq!(total(&r.stats), 20);
    assert_eq!(
        r.stats.outliers.len(),
        20,
        "every 2 ms request is over 1 ms"
    );
    assert!(r.stats.outliers.windows(2).all(|w| w[0].t_s <= w[1].t_s));
    assert!(r.stats.outliers.iter().all(|o| o.latency_ms >= 2.0));
    let min = r.stats.ops[Kind::Read as usize]
        .min_ns
        .min(r.stats.ops[Kind::Write as usize].min_ns);
    assert!(
        min >= 2_000_000,
        "latency is measured around the engine: {min} ns"
    );
}

#[test]
fn ctrl_c_ends_the_window_where_it_came() {
    let (_d, t) = target();
    let cfg = config(&t, 2, time(30.0, 0.0));
    let stop = AtomicBool::new(false);
    let shared = Shared::new(0.0);
    let work = Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap();
    let began = Instant::now();
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, SeqCst);
        });
        go(&work, &shared, &cfg, &stop).result
    });
    assert!(began.elapsed() < Duration::from_secs(5), "the run stopped");
    assert_eq!(r.status, Status::Interrupted);
    assert!(
        (0.2..1.5).contains(&r.measured_s),
        "window {} s",
        r.measured_s
    );
    assert!(total(&r.stats) > 0);
}

/// Two sessions doing a fixed count of nothing, and a background thread
/// that runs until it is told the sessions have ended.
#[derive(Default)]
struct WithBackground {
    ended: AtomicBool,
    background_rounds: AtomicU64,
    fail_thread: Option<u32>,
}

impl Workload for WithBackground {
    type Thread = ();
    type Part = u32;
    fn threads(&self) -> Threads {
        Threads {
            sessions: 2,
            background: vec!["dbio-test-bg".into()],
        }
    }
    fn storage(&self) -> Vec<PathBuf> {
        vec![std::env::temp_dir()]
    }
    fn prepare(&self, t: u32) -> Result<(), SetupError> {
        match self.fail_thread {
            Some(f) if f == t => Err(SetupError::Invalid(format!("thread {t}: cannot set up"))),
            _ => Ok(()),
        }
    }
    fn run(&self, t: u32, _: (), _: &SessionSeries) -> ThreadEnd<u32> {
        if t < 2 {
            std::thread::sleep(Duration::from_millis(50));
            return ThreadEnd {
                issued: 5,
                last_ns: 1_000 * u64::from(t + 1),
                part: t + 100,
                ..Default::default()
            };
        }
        assert_eq!(std::thread::current().name(), Some("dbio-test-bg"));
        while !self.ended.load(SeqCst) {
            self.background_rounds.fetch_add(1, SeqCst);
            std::thread::sleep(Duration::from_millis(1));
        }
        ThreadEnd {
            issued: 1000, // not a session's: not counted
            part: 7,
            ..Default::default()
        }
    }
    fn sessions_ended(&self) {
        self.ended.store(true, SeqCst);
    }
}

#[test]
fn background_threads_run_until_the_sessions_end_and_their_parts_come_last() {
    let w = WithBackground::default();
    let shared = Shared::new(0.0);
    let (_d, t) = target();
    let cfg = config(&t, 2, RunLength::Ops { ops: 10 });
    let out = go(&w, &shared, &cfg, &AtomicBool::new(false));
    assert_eq!(out.parts, vec![100, 101, 7]);
    assert_eq!(out.result.issued, 10, "sessions' requests only");
    assert_eq!(out.result.status, Status::Completed);
    assert!(w.background_rounds.load(SeqCst) > 0);
}

#[test]
fn a_thread_that_cannot_start_fails_the_run_without_a_hang() {
    let w = WithBackground {
        fail_thread: Some(2),
        ..Default::default()
    };
    let shared = Shared::new(0.0);
    let (_d, t) = target();
    let cfg = config(&t, 2, RunLength::Ops { ops: 10 });
    let out = go(&w, &shared, &cfg, &AtomicBool::new(false));
    assert_eq!(out.result.status, Status::Failed);
    assert_eq!(out.result.error.as_deref(), Some("thread 2: cannot set up"));
    assert_eq!(out.parts[2], 0, "the thread that failed did not run");
}

/// Two sessions, one of which panics (a bug in a workload).
struct Panics;

impl Workload for Panics {
    type Thread = ();
    type Part = u32;
    fn threads(&self) -> Threads {
        Threads {
            sessions: 2,
            background: Vec::new(),
        }
    }
    fn storage(&self) -> Vec<PathBuf> {
        vec![std::env::temp_dir()]
    }
    fn prepare(&self, _: u32) -> Result<(), SetupError> {
        Ok(())
    }
    fn run(&self, t: u32, _: (), _: &SessionSeries) -> ThreadEnd<u32> {
        assert!(t == 0, "a workload's bug in session {t}");
        ThreadEnd {
            issued: 3,
            part: 1,
            ..Default::default()
        }
    }
}

#[test]
fn a_session_that_panics_fails_the_run_without_a_hang() {
    let shared = Shared::new(0.0);
    let (_d, t) = target();
    let cfg = config(&t, 2, RunLength::Ops { ops: 10 });
    let began = Instant::now();
    let out = go(&Panics, &shared, &cfg, &AtomicBool::new(false));
    assert!(began.elapsed() < Duration::from_secs(5), "it did not hang");
    assert_eq!(out.result.status, Status::Failed);
    let error = out.result.error.unwrap();
    assert!(
        error.contains("dbio-session-1") && error.contains("internal error"),
        "{error}"
    );
    assert_eq!(out.parts, vec![1, 0], "the panicked session adds nothing");
    assert_eq!(out.result.issued, 3);
}

/// What an observer was told, in order.
#[derive(Default)]
/// (calls, reads and writes seen, of those with a due time).
struct Recorder(std::sync::Mutex<Vec<String>>, AtomicU64, AtomicU64);

impl super::Observer for Recorder {
    fn started(&self, start_unix_ns: u64) {
        assert!(start_unix_ns > 0);
        self.0.lock().unwrap().push("started".into());
    }
    fn second(
        &self,
        p: &crate::samplers::series::SecondPoint,
        hists: &crate::samplers::series::SecondHists,
        due: &crate::samplers::series::DueHists,
    ) {
        for k in [Kind::Read, Kind::Write, Kind::Sync] {
            let counted: u64 = hists[k as usize].iter().sum();
            assert_eq!(counted, p.kind(k).ops, "second {}: {k:?}", p.t_s);
        }
        for k in 0..2 {
            let (d, l): (u64, u64) = (due.due[k].iter().sum(), due.late[k].iter().sum());
            assert_eq!((d, l), (due.ops[k], due.ops[k]), "second {}", p.t_s);
            assert!(due.due_sum_ns[k] >= due.late_sum_ns[k]);
        }
        self.1.fetch_add(p.read.ops + p.write.ops, SeqCst);
        self.2.fetch_add(due.ops[0] + due.ops[1], SeqCst);
        self.0.lock().unwrap().push(format!("second {}", p.t_s));
    }
    fn telemetry(&self, _: &crate::samplers::telemetry::TelemetryPoint) {
        self.0.lock().unwrap().push("telemetry".into());
    }
    fn ended(&self, interrupted: bool) {
        self.0.lock().unwrap().push(format!("ended {interrupted}"));
    }
}

#[test]
fn an_observer_sees_every_second_once_in_order_and_every_request() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, time(2.5, 0.0));
    cfg.rate_iops = Some(2000);
    let shared = Shared::new(0.0);
    let work = Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap();
    let rec = Recorder::default();
    let stop = AtomicBool::new(false);
    let opts = Options {
        time_s: Some(2.5),
        interval_s: 0.5,
        interrupt: &stop,
        status: None,
        observer: Some(&rec),
        steady: None,
        window: None,
    };
    let r = run(&work, &shared, opts).result;
    assert_eq!(r.status, Status::Completed);
    let calls = rec.0.into_inner().unwrap();
    assert_eq!(calls.first().map(String::as_str), Some("started"));
    assert_eq!(calls.last().map(String::as_str), Some("ended false"));
    let seconds: Vec<&String> = calls.iter().filter(|c| c.starts_with("second")).collect();
    let want: Vec<String> = (0..r.series.len()).map(|s| format!("second {s}")).collect();
    assert_eq!(seconds, want.iter().collect::<Vec<_>>());
    let tele = calls.iter().filter(|c| *c == "telemetry").count();
    assert_eq!(tele, r.telemetry.len());
    assert!(tele >= 3, "{tele} telemetry points in 2.5 s at 0.5 s");
    // The series, as stored, is what the observer saw; it also holds the
    // requests that completed just after the window's end (not measured).
    let in_series: u64 = r.series.iter().map(|p| p.read.ops + p.write.ops).sum();
    assert_eq!(rec.1.load(SeqCst), in_series);
    // The run is paced: every read and write also came with its due time.
    assert_eq!(rec.2.load(SeqCst), in_series);
    let measured = total(&r.stats);
    assert!(
        in_series >= measured && in_series <= measured + 2 * 4,
        "{in_series} {measured}"
    );
}

#[test]
fn a_closed_loop_keeps_no_due_times() {
    let (_d, t) = target();
    let r = raw_run(&config(&t, 2, RunLength::Ops { ops: 100 }), &t);
    assert!(r.stats.open.is_none());
}

#[test]
fn an_open_loop_below_capacity_issues_on_time_at_the_asked_rate() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, time(1.0, 0.0));
    cfg.rate_iops = Some(4000);
    cfg.arrival = Some(crate::config::Arrival::Poisson);
    let r = raw_run(&cfg, &t);
    let done = total(&r.stats) as f64;
    assert!(
        (3600.0..=4400.0).contains(&done),
        "4000/s for 1 s gave {done}"
    );
    let o = r.stats.open.as_deref().expect("due times kept");
    assert_eq!(
        o.lateness.count,
        total(&r.stats),
        "every request's lateness"
    );
    let due = o.due[Kind::Read as usize].count + o.due[Kind::Write as usize].count;
    assert_eq!(due, total(&r.stats));
    // The null engine completes at once: from the due time, a request waits
    // only for its issue.
    let read = &o.due[Kind::Read as usize];
    assert!(read.min_ns >= r.stats.ops[Kind::Read as usize].min_ns);
}

#[test]
fn an_open_loop_above_capacity_counts_the_backlog_from_the_due_time() {
    let (_d, t) = target();
    let mut cfg = config(&t, 1, time(0.5, 0.0));
    cfg.iodepth = 1;
    // Far beyond what one session issues: the schedule runs ahead.
    cfg.rate_iops = Some(50_000_000);
    cfg.arrival = Some(crate::config::Arrival::Uniform);
    let r = raw_run(&cfg, &t);
    let o = r.stats.open.as_deref().expect("due times kept");
    let service = r.stats.ops[Kind::Read as usize].quantile_ns(0.99);
    let due = o.due[Kind::Read as usize].quantile_ns(0.99);
    // The backlog grows through the run: the latest requests wait for
    // most of it.
    assert!(due > 100_000_000, "due p99 {due} ns");
    assert!(
        due > 1000 * service,
        "due p99 {due} vs service p99 {service}"
    );
    assert!(
        o.late as f64 > 0.9 * o.lateness.count as f64,
        "{} late",
        o.late
    );
}

/// Under `--rate` the sessions share one schedule: while one session is
/// busy with a 20 ms request, the other issues the requests falling due
/// meanwhile, and the rate is kept. (With a schedule per session, the slow
/// one's share — half the rate — waited behind it: about 550/s achieved.)
/// Lateness is not asserted: on a loaded machine it is the scheduler's.
#[test]
fn a_request_due_while_one_session_is_busy_is_issued_by_another() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, time(1.0, 0.0));
    cfg.iodepth = 1;
    cfg.rate_iops = Some(1000);
    cfg.arrival = Some(crate::config::Arrival::Uniform);
    let shared = Shared::new(0.0);
    let work = Slow {
        raw: Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap(),
        latency_ns: 20_000_000,
        only: Some(0),
    };
    let r = go(&work, &shared, &cfg, &AtomicBool::new(false)).result;
    let o = r.stats.open.as_deref().expect("due times kept");
    let done = total(&r.stats) as f64;
    assert!(done >= 900.0, "1000/s for 1 s gave {done}");
    assert!(
        (950..=1050).contains(&o.fell_due),
        "{} fell due",
        o.fell_due
    );
}

/// A paced run on the null engine holds its rate: with `--steady-state`
/// it ends after one window of rounds, long before its cap, and the
/// steady window's rate is the one asked.
#[test]
fn a_steady_rate_ends_the_run_after_one_window() {
    let (_d, t) = target();
    let mut cfg = config(&t, 2, time(30.0, 0.0));
    cfg.rate_iops = Some(2000);
    let shared = Shared::new(0.0);
    let work = Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap();
    let stop = AtomicBool::new(false);
    let rules = crate::steady::Rules {
        round_s: 1,
        window: 3,
        ..Default::default()
    };
    let opts = Options {
        time_s: Some(30.0),
        interval_s: 1.0,
        interrupt: &stop,
        status: None,
        observer: None,
        steady: Some(rules),
        window: None,
    };
    let began = Instant::now();
    let r = run(&work, &shared, opts).result;
    assert_eq!(r.status, Status::Completed);
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "{:?}",
        began.elapsed()
    );
    let s = r.steady.expect("a steady-state run reports its rounds");
    assert!(s.reached, "{s:?}");
    assert_eq!(s.rounds.len(), 3, "{s:?}");
    assert_eq!(s.reached_after_s, Some(3));
    assert!((r.measured_s - 3.0).abs() < 0.5, "{}", r.measured_s);
    let w = s.window.expect("the steady window");
    assert!((w.total.iops - 2000.0).abs() < 2000.0 * 0.02, "{w:?}");
}

/// A window that counts its calls and can refuse to open.
struct Counting {
    opened: AtomicU64,
    closed: AtomicU64,
    refuse: bool,
}

impl super::Window for Counting {
    fn open(&self) -> Result<(), String> {
        self.opened.fetch_add(1, SeqCst);
        match self.refuse {
            true => Err("--capture on /dev/x: no tracing here".into()),
            false => Ok(()),
        }
    }
    fn close(&self) {
        assert_eq!(self.opened.load(SeqCst), 1, "closed after it opened");
        self.closed.fetch_add(1, SeqCst);
    }
}

#[test]
fn a_window_opens_once_before_the_start_and_its_refusal_fails_the_run_unstarted() {
    let (_d, t) = target();
    for refuse in [false, true] {
        let cfg = config(&t, 2, RunLength::Ops { ops: 200 });
        let shared = Shared::new(0.0);
        let work = Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap();
        let w = Counting {
            opened: AtomicU64::new(0),
            closed: AtomicU64::new(0),
            refuse,
        };
        let stop = AtomicBool::new(false);
        let opts = Options {
            time_s: None,
            interval_s: 1.0,
            interrupt: &stop,
            status: None,
            observer: None,
            steady: None,
            window: Some(&w),
        };
        let r = run(&work, &shared, opts).result;
        assert_eq!((w.opened.into_inner(), w.closed.into_inner()), (1, 1));
        match refuse {
            false => assert_eq!((r.status, r.issued), (Status::Completed, 200)),
            true => {
                assert_eq!((r.status, r.issued), (Status::Failed, 0));
                assert_eq!(
                    r.error.as_deref(),
                    Some("--capture on /dev/x: no tracing here")
                );
            }
        }
    }
}
