//! The live view's state: the current (or last) run's counters, histograms
//! and telemetry totals, a short history for the live page, and the plan's
//! progress. Updated from the control thread once a second and once a
//! telemetry interval; read by the server and the textfile writer.

use std::collections::VecDeque;

use serde::Serialize;

use crate::config::RunConfig;
use crate::measure::stats::Kind;
use crate::samplers::diskstats::DeviceRates;
use crate::samplers::host::HostRates;
use crate::samplers::series::{self, BUCKETS, DUE_KINDS, DueHists, SecondHists, SecondPoint};
use crate::samplers::telemetry::TelemetryPoint;
use crate::workload::live::{LiveDb, Process};

/// Seconds (and telemetry points) the live page can show.
const HISTORY: usize = 900;

/// The operation kinds, in `Kind as usize` order, as the `op` label says them.
pub const OPS: [(Kind, &str); 3] = [
    (Kind::Read, "read"),
    (Kind::Write, "write"),
    (Kind::Sync, "sync"),
];

/// Labels every run metric carries: (name, value). Values are user text
/// (a target path, a plan's name): [`super::expo`] escapes them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Labels(pub Vec<(&'static str, String)>);

impl Labels {
    /// The run's labels; `run` is set when it starts (its UTC start time).
    pub fn new(cfg: &RunConfig, plan: Option<&str>, variable: Option<&str>) -> Labels {
        Labels(vec![
            ("run", String::new()),
            ("plan", plan.unwrap_or_default().to_string()),
            ("variable", variable.unwrap_or_default().to_string()),
            ("workload", cfg.workload.name().to_string()),
            ("sessions", cfg.sessions.to_string()),
            ("target", cfg.target.to_string_lossy().into_owned()),
        ])
    }

    pub fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, v)| v)
    }
}

/// Where the run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Laid out and ready; the sessions not yet released.
    Starting,
    Running,
    Completed,
    Interrupted,
}

/// One device's totals, built from its per-interval rates (rate × interval
/// is the counters' difference, as iostat computed the rate from them).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DeviceTotals {
    pub name: String,
    pub reads: f64,
    pub writes: f64,
    pub read_bytes: f64,
    pub written_bytes: f64,
    pub read_time_s: f64,
    pub write_time_s: f64,
    pub io_time_s: f64,
    pub weighted_io_time_s: f64,
    /// The last interval's %util as a ratio.
    pub util: f64,
}

impl DeviceTotals {
    fn add(&mut self, r: &DeviceRates, secs: f64) {
        let (reads, writes) = (r.r_per_s * secs, r.w_per_s * secs);
        self.reads += reads;
        self.writes += writes;
        self.read_bytes += r.rkib_per_s * 1024.0 * secs;
        self.written_bytes += r.wkib_per_s * 1024.0 * secs;
        self.read_time_s += r.r_await_ms / 1e3 * reads;
        self.write_time_s += r.w_await_ms / 1e3 * writes;
        self.io_time_s += r.util_pct / 100.0 * secs;
        self.weighted_io_time_s += r.aqu_sz * secs;
        self.util = r.util_pct / 100.0;
    }
}

/// One second for the live page.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PagePoint {
    pub t_s: u32,
    pub ramp: bool,
    /// Per op (read, write, sync): requests/s, MiB/s, p50, p99, p99.9 in µs.
    pub ops: [f64; 3],
    pub mib_s: [f64; 3],
    pub p50_us: [f64; 3],
    pub p99_us: [f64; 3],
    pub p999_us: [f64; 3],
    /// A paced run's p99 latency from the due time per op (read, write),
    /// µs; None in a closed loop.
    pub due_p99_us: Option<[f64; DUE_KINDS]>,
}

/// One telemetry interval for the live page.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageTele {
    pub t_s: f64,
    pub cpu_user: f64,
    pub cpu_system: f64,
    pub cpu_iowait: f64,
    /// (device, utilisation ratio).
    pub util: Vec<(String, f64)>,
}

/// A database run's waits over one stretch for the live page: average
/// active sessions in each wait (seconds waited per second).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageWaits {
    pub t_s: f64,
    pub active: Vec<(String, f64)>,
}

/// A database run's commits and writer I/O over one stretch for the live
/// page, per second (None where the database does not count it).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageDb {
    pub t_s: f64,
    pub commits: Option<f64>,
    pub db_writes: Option<f64>,
    pub log_writes: Option<f64>,
    pub db_mib: Option<f64>,
    pub log_mib: Option<f64>,
}

/// The current or last run.
#[derive(Clone, Debug)]
pub struct RunState {
    pub labels: Labels,
    pub phase: Phase,
    pub planned_s: Option<f64>,
    pub ramp_s: f64,
    pub start_unix_ns: u64,
    /// Seconds of the run collected so far.
    pub elapsed_s: f64,
    /// When the last collected second ended (UNIX ms): the time of the
    /// per-second samples (the run's start before the first second).
    pub second_ms: u64,
    /// When the last telemetry interval ended (UNIX ms).
    pub tele_ms: u64,
    pub ops: [u64; 3],
    pub bytes: [u64; 3],
    pub lat_sum_s: [f64; 3],
    /// Cumulative latency histograms over every second collected.
    pub hists: Box<SecondHists>,
    /// A paced run's (`--rate`) cumulative due-time latency and lateness
    /// over every second collected; None in a closed loop (no due times).
    pub due: Option<Box<DueHists>>,
    pub devices: Vec<DeviceTotals>,
    pub host: Option<HostRates>,
    pub context_switches: f64,
    pub stored_id: Option<i64>,
    pub seconds: VecDeque<PagePoint>,
    pub tele: VecDeque<PageTele>,
    /// What a database run counted so far, and the elapsed seconds it was last new at.
    pub db: Option<(LiveDb, f64)>,
    pub page_waits: VecDeque<PageWaits>,
    pub page_db: VecDeque<PageDb>,
}

/// A plan's progress.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanState {
    pub plan: String,
    pub done: usize,
    pub total: usize,
    pub eta_s: f64,
}

/// Everything the live view knows.
#[derive(Debug, Default)]
pub struct State {
    pub run: Option<RunState>,
    pub plan: Option<PlanState>,
    /// Raised on every change.
    pub generation: u64,
}

impl State {
    /// A new run begins; `paced` when it has due times (`--rate`).
    pub fn begin(&mut self, labels: Labels, planned_s: Option<f64>, ramp_s: f64, paced: bool) {
        self.generation += 1;
        self.run = Some(RunState {
            labels,
            phase: Phase::Starting,
            planned_s,
            ramp_s,
            start_unix_ns: 0,
            elapsed_s: 0.0,
            second_ms: 0,
            tele_ms: 0,
            ops: [0; 3],
            bytes: [0; 3],
            lat_sum_s: [0.0; 3],
            hists: Box::new([[0; BUCKETS]; 3]),
            due: paced.then(Box::default),
            devices: Vec::new(),
            host: None,
            context_switches: 0.0,
            stored_id: None,
            seconds: VecDeque::new(),
            tele: VecDeque::new(),
            db: None,
            page_waits: VecDeque::new(),
            page_db: VecDeque::new(),
        });
    }

    fn with_run(&mut self, f: impl FnOnce(&mut RunState)) {
        self.generation += 1;
        if let Some(r) = self.run.as_mut() {
            f(r);
        }
    }

    pub fn started(&mut self, start_unix_ns: u64) {
        self.with_run(|r| {
            r.start_unix_ns = start_unix_ns;
            r.second_ms = start_unix_ns / 1_000_000;
            r.phase = Phase::Running;
            let ms = (start_unix_ns / 1_000_000) as i64;
            if let Some(run) = r.labels.0.iter_mut().find(|(n, _)| *n == "run") {
                run.1 = crate::store::fmt_utc(ms);
            }
        });
    }

    pub fn second(&mut self, p: &SecondPoint, hists: &SecondHists, due: &DueHists) {
        self.with_run(|r| r.second(p, hists, due));
    }

    pub fn telemetry(&mut self, p: &TelemetryPoint) {
        self.with_run(|r| r.telemetry(p));
    }

    pub fn db(&mut self, d: &LiveDb) {
        self.with_run(|r| r.db(d));
    }

    pub fn ended(&mut self, interrupted: bool) {
        self.with_run(|r| {
            r.phase = match interrupted {
                true => Phase::Interrupted,
                false => Phase::Completed,
            }
        });
    }

    pub fn saved(&mut self, run_id: i64) {
        self.with_run(|r| r.stored_id = Some(run_id));
    }

    pub fn plan_progress(&mut self, plan: &str, done: usize, total: usize, eta_s: f64) {
        self.generation += 1;
        self.plan = Some(PlanState {
            plan: plan.to_string(),
            done,
            total,
            eta_s,
        });
    }

    /// What the live page reads (`/api/live`).
    pub fn json(&self) -> serde_json::Value {
        let run = self.run.as_ref().map(|r| {
            serde_json::json!({
                "labels": r.labels.0.iter().map(|(n, v)| (n.to_string(), v.clone().into())).collect::<serde_json::Map<_, _>>(),
                "phase": r.phase,
                "planned_s": r.planned_s,
                "ramp_s": r.ramp_s,
                "elapsed_s": r.elapsed_s,
                "stored_id": r.stored_id,
                "requests": r.ops,
                "seconds": r.seconds,
                "telemetry": r.tele,
                "waits": r.page_waits,
                "db": r.page_db,
            })
        });
        serde_json::json!({ "run": run, "plan": self.plan })
    }
}

impl RunState {
    fn second(&mut self, p: &SecondPoint, hists: &SecondHists, due: &DueHists) {
        let mut page = PagePoint {
            t_s: p.t_s,
            ramp: p.ramp,
            ops: [0.0; 3],
            mib_s: [0.0; 3],
            p50_us: [0.0; 3],
            p99_us: [0.0; 3],
            p999_us: [0.0; 3],
            due_p99_us: self.due.as_mut().map(|acc| add_due(acc, due)),
        };
        for (k, _) in OPS {
            let (i, kp) = (k as usize, p.kind(k));
            self.ops[i] += kp.ops;
            self.bytes[i] += kp.bytes;
            self.lat_sum_s[i] += kp.lat_mean_us * kp.ops as f64 / 1e6;
            for (acc, n) in self.hists[i].iter_mut().zip(&hists[i]) {
                *acc += n;
            }
            page.ops[i] = kp.ops as f64;
            page.mib_s[i] = kp.bytes as f64 / f64::from(1 << 20);
            page.p50_us[i] = series::quantile(&hists[i], 0.5) as f64 / 1e3;
            page.p99_us[i] = series::quantile(&hists[i], 0.99) as f64 / 1e3;
            page.p999_us[i] = series::quantile(&hists[i], 0.999) as f64 / 1e3;
        }
        self.elapsed_s = f64::from(p.t_s + 1);
        self.second_ms = self.start_unix_ns / 1_000_000 + u64::from(p.t_s + 1) * 1000;
        push_capped(&mut self.seconds, page);
    }

    fn telemetry(&mut self, p: &TelemetryPoint) {
        for d in &p.devices {
            let Some(rates) = &d.rates else { continue };
            let at = match self.devices.iter().position(|t| t.name == d.name) {
                Some(at) => at,
                None => {
                    self.devices.push(DeviceTotals {
                        name: d.name.clone(),
                        ..Default::default()
                    });
                    self.devices.len() - 1
                }
            };
            self.devices[at].add(rates, p.interval_s);
        }
        self.context_switches += p.host.ctxt_per_s * p.interval_s;
        self.tele_ms = (self.start_unix_ns as f64 / 1e6 + p.t_s * 1e3) as u64;
        self.host = Some(p.host.clone());
        let util = self
            .devices
            .iter()
            .map(|d| (d.name.clone(), d.util))
            .collect();
        push_capped(
            &mut self.tele,
            PageTele {
                t_s: p.t_s,
                cpu_user: (p.host.user_pct + p.host.nice_pct) / 100.0,
                cpu_system: (p.host.system_pct + p.host.irq_pct + p.host.softirq_pct) / 100.0,
                cpu_iowait: p.host.iowait_pct / 100.0,
                util,
            },
        );
    }
}

impl RunState {
    /// What a database run counted so far: the change since the last time,
    /// per second, for the page (sessions' waits as average active sessions).
    fn db(&mut self, d: &LiveDb) {
        if self.db.as_ref().is_some_and(|(p, _)| p.seq == d.seq) {
            return; // nothing new
        }
        let prev = self.db.as_ref();
        let span = (self.elapsed_s - prev.map_or(0.0, |(_, at)| *at)).max(1.0);
        let before = |event: &str| {
            prev.and_then(|(p, _)| {
                p.waits
                    .iter()
                    .find(|w| w.process == Process::Session && w.event == event)
            })
            .map_or(0.0, |w| w.seconds)
        };
        let mut active: Vec<(String, f64)> = d
            .waits
            .iter()
            .filter(|w| w.process == Process::Session)
            .map(|w| {
                (
                    w.event.clone(),
                    (w.seconds - before(&w.event)).max(0.0) / span,
                )
            })
            .filter(|(_, a)| *a > 0.0)
            .collect();
        active.sort_by(|a, b| b.1.total_cmp(&a.1));
        let t_s = self.elapsed_s;
        push_capped(&mut self.page_waits, PageWaits { t_s, active });
        let was = prev.map(|(p, _)| p.activity).unwrap_or_default();
        let now = d.activity;
        let rate =
            |a: Option<f64>, b: Option<f64>| a.map(|a| (a - b.unwrap_or(0.0)).max(0.0) / span);
        let mib = |v: Option<f64>| v.map(|v| v / f64::from(1 << 20));
        push_capped(
            &mut self.page_db,
            PageDb {
                t_s,
                commits: rate(now.commits, was.commits),
                db_writes: rate(now.db_writer.writes, was.db_writer.writes),
                log_writes: rate(now.log_writer.writes, was.log_writer.writes),
                db_mib: mib(rate(now.db_writer.bytes, was.db_writer.bytes)),
                log_mib: mib(rate(now.log_writer.bytes, was.log_writer.bytes)),
            },
        );
        self.db = Some((d.clone(), t_s));
    }
}

/// Adds one second's paced part to the run's; that second's due-time p99
/// per op (read, write), µs.
fn add_due(acc: &mut DueHists, d: &DueHists) -> [f64; DUE_KINDS] {
    for k in 0..DUE_KINDS {
        acc.ops[k] += d.ops[k];
        acc.due_sum_ns[k] += d.due_sum_ns[k];
        acc.late_sum_ns[k] += d.late_sum_ns[k];
        for (a, n) in acc.due[k].iter_mut().zip(&d.due[k]) {
            *a += n;
        }
        for (a, n) in acc.late[k].iter_mut().zip(&d.late[k]) {
            *a += n;
        }
    }
    std::array::from_fn(|k| series::quantile(&d.due[k], 0.99) as f64 / 1e3)
}

fn push_capped<T>(q: &mut VecDeque<T>, v: T) {
    if q.len() == HISTORY {
        q.pop_front();
    }
    q.push_back(v);
}
