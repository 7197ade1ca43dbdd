//! What the report of a run on a real database server shows whatever the
//! server (`pg` and `mysql` in the `--json` document): the operations dbio
//! issued with their client-side latency, the sampled waits, the load
//! profile's lines, the settings, memory limit and load (`Setup`), and the
//! device's reads beside the server's own (`DeviceReads`). `pg.rs` and
//! `mysql.rs` add their server's counters and words.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Latency, OpSummary, summarize};
use crate::measure::stats::OpStats;
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::db::DbPart;
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::data::LoadReport;
use crate::workload::db::departures::Departure;

/// The server's settings, its memory limit and the data, as every server's
/// summary shows them (flattened into it after the server's own fields).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Setup {
    /// The settings as the server reports them (name, value).
    pub settings: Vec<(String, String)>,
    /// `--pg-memory`, `--mysql-memory`: the memory cgroup the server ran in
    /// and its limit.
    pub memory_limit_bytes: Option<u64>,
    pub cgroup: Option<String>,
    pub load: LoadReport,
    /// What dbio changed from the stock server's defaults (from the
    /// settings it gave the server; empty in runs stored before the list).
    #[serde(default)]
    pub departures: Vec<Departure>,
}

impl Setup {
    pub fn new(
        settings: Vec<(String, String)>,
        cgroup: Option<&MemCgroup>,
        load: LoadReport,
    ) -> Setup {
        Setup {
            settings,
            memory_limit_bytes: cgroup.map(|c| c.limit_bytes),
            cgroup: cgroup.map(|c| format!("{} ({})", c.path.display(), c.version)),
            load,
            departures: Vec::new(),
        }
    }

    /// With the list of what dbio changed from the server's defaults.
    pub fn with_departures(mut self, departures: Vec<Departure>) -> Setup {
        self.departures = departures;
        self
    }
}

/// The reads of the device under the data over the window (flattened into
/// each server's physical reads; null on tmpfs or when no device was
/// resolved).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceReads {
    pub device: Option<String>,
    pub device_requests: Option<f64>,
    pub device_bytes: Option<f64>,
    pub device_per_s: Option<f64>,
}

impl DeviceReads {
    /// The first device of the chain, from dbio's telemetry.
    pub fn of(window: Option<&TelemetrySummary>) -> DeviceReads {
        let Some((w, d, r)) = window.and_then(|w| {
            let d = w.devices.first()?;
            Some((w, d, d.rates.as_ref()?))
        }) else {
            return DeviceReads::default();
        };
        DeviceReads {
            device: Some(d.name.clone()),
            device_requests: Some(r.r_per_s * w.seconds),
            device_bytes: Some(r.rkib_per_s * 1024.0 * w.seconds),
            device_per_s: Some(r.r_per_s),
        }
    }
}

/// The operations and waits of a database run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DbOps {
    /// What dbio issued in the window.
    pub selects: u64,
    pub updates: u64,
    pub scans: u64,
    /// Rows the operations asked for (the logical reads the workload asked for).
    pub rows: u64,
    /// dbio's own CPU (every thread, user + system) per statement it ran:
    /// the client's cost, which must stay small beside the server's.
    pub client_cpu_us_per_execute: f64,
    pub select: Option<OpSummary>,
    pub update: Option<OpSummary>,
    /// The COMMIT after each update: the server's counterpart of `log file sync`.
    pub commit: Option<OpSummary>,
    /// A scan of `--scan-size` contiguous pages.
    pub scan: Option<OpSummary>,
    /// Waits of active sessions sampled at `sample_hz`.
    pub sample_hz: u64,
    pub samples: u64,
    pub waits: Vec<WaitLine>,
    /// The server's own processes sampled at the same time when busy
    /// (`PROCESS EVENT`; absent where the server does not show them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub background_waits: Vec<WaitLine>,
    /// Why the server's counters are missing, if they are.
    pub sampler_error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProfileLine {
    pub name: String,
    pub per_second: f64,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WaitLine {
    /// The wait's name, or `CPU` for an active session not waiting.
    pub event: String,
    pub samples: u64,
    /// Share of active-session samples.
    pub pct: f64,
    /// Average active sessions in this event.
    pub aas: f64,
}

impl DbOps {
    /// The threads' parts merged; also the server's counters at the
    /// window's edges, if the sampler read them.
    pub fn new<S: Clone>(
        parts: &[DbPart<S>],
        page: u32,
        measured_s: f64,
        client_cpu_s: f64,
        sample_hz: u64,
    ) -> (DbOps, Option<(S, S, f64)>) {
        let (mut select, mut update, mut commit, mut scan) = (
            OpStats::default(),
            OpStats::default(),
            OpStats::default(),
            OpStats::default(),
        );
        let mut rows = 0;
        let mut waits: BTreeMap<&str, u64> = BTreeMap::new();
        let mut background: BTreeMap<&str, u64> = BTreeMap::new();
        let (mut samples, mut edges, mut sampler_error) = (0, None, None);
        for p in parts {
            select.merge(&p.select);
            update.merge(&p.update);
            commit.merge(&p.commit);
            scan.merge(&p.scan);
            rows += p.rows;
            for (k, v) in &p.waits.sessions {
                *waits.entry(k).or_default() += v;
            }
            for (k, v) in &p.waits.background {
                *background.entry(k).or_default() += v;
            }
            samples += p.samples;
            if p.edges.is_some() {
                edges = p.edges.clone();
            }
            if p.error.is_some() {
                sampler_error = p.error.clone();
            }
        }
        let secs = measured_s.max(1e-9);
        let waits = wait_lines(waits, samples);
        let background_waits = wait_lines(background, samples);
        let executes = (select.count + update.count + scan.count) as f64;
        let op = |s: &OpStats| (s.count > 0).then(|| summarize(s, page, secs));
        let ops = DbOps {
            selects: select.count,
            updates: update.count,
            scans: scan.count,
            rows,
            client_cpu_us_per_execute: if executes > 0.0 {
                client_cpu_s * 1e6 / executes
            } else {
                0.0
            },
            select: op(&select),
            update: op(&update),
            commit: op(&commit),
            scan: op(&scan),
            sample_hz,
            samples,
            waits,
            background_waits,
            sampler_error,
        };
        (ops, edges)
    }

    /// Statements dbio ran.
    pub fn executes(&self) -> u64 {
        self.selects + self.updates + self.scans
    }

    /// Latency of a kind, for one-line summaries.
    pub fn latency(&self, kind: &str) -> Option<&Latency> {
        match kind {
            "select" => self.select.as_ref().map(|s| &s.latency),
            "update" => self.update.as_ref().map(|s| &s.latency),
            "commit" => self.commit.as_ref().map(|s| &s.latency),
            "scan" => self.scan.as_ref().map(|s| &s.latency),
            _ => None,
        }
    }

    /// The commit's mean latency in ms (0 without updates).
    pub fn commit_ms(&self) -> f64 {
        self.commit
            .as_ref()
            .map_or(0.0, |c| c.latency.mean_us / 1e3)
    }
}

/// Sampled waits as lines, most sampled first: each one's share of all
/// the samples of its kind, and its average active processes.
fn wait_lines(waits: BTreeMap<&str, u64>, samples: u64) -> Vec<WaitLine> {
    let total: u64 = waits.values().sum();
    let mut lines: Vec<WaitLine> = waits
        .into_iter()
        .map(|(k, n)| WaitLine {
            event: k.to_string(),
            samples: n,
            pct: 100.0 * n as f64 / total.max(1) as f64,
            aas: n as f64 / samples.max(1) as f64,
        })
        .collect();
    lines.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
    lines
}

/// A load profile line per second and per transaction.
pub fn profile(secs: f64, transactions: f64, lines: &[(&'static str, f64)]) -> Vec<ProfileLine> {
    let (secs, tx) = (secs.max(1e-9), transactions.max(1.0));
    lines
        .iter()
        .map(|&(name, v)| ProfileLine {
            name: name.into(),
            per_second: v / secs,
            per_transaction: Some(v / tx),
        })
        .collect()
}
