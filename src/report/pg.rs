//! The PostgreSQL run's report data (`pg` in the `--json` document): the
//! server and its settings, how the data was loaded, client-side latency
//! per operation, the server's counters over the window (pg_stat_database,
//! pg_stat_bgwriter, pg_stat_wal), the load profile per second and per
//! transaction, top wait events from the sampled sessions, and physical
//! reads three ways (PostgreSQL's, the device's, and what the page cache
//! absorbed between them). Rendered by `pg_text`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Latency, OpSummary, summarize};
use crate::measure::stats::OpStats;
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::pg::data::LoadReport;
use crate::workload::pg::run::PgPart;
use crate::workload::pg::stats::Delta;

#[derive(Clone, Debug, Serialize)]
pub struct PgSummary {
    /// "PostgreSQL 15.x (...)".
    pub version: String,
    pub bin_dir: String,
    pub data_dir: String,
    pub wal_dir: String,
    /// The cluster was made by an earlier run and reused.
    pub cluster_reused: bool,
    /// Settings not at their default, as the server reports them (name,
    /// value with unit).
    pub settings: Vec<(String, String)>,
    /// `--pg-memory`: the memory cgroup the server ran in and its limit.
    pub memory_limit_bytes: Option<u64>,
    pub cgroup: Option<String>,
    pub load: LoadReport,
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
    /// The COMMIT after each update: PostgreSQL's counterpart of `log file sync`.
    pub commit: Option<OpSummary>,
    /// A scan of `--scan-size` contiguous pages.
    pub scan: Option<OpSummary>,
    /// The server's counters over the window; absent when they could not be read.
    pub server: Option<Delta>,
    pub load_profile: Vec<ProfileLine>,
    /// Wait events of active sessions sampled at `sample_hz`.
    pub sample_hz: u64,
    pub samples: u64,
    pub waits: Vec<WaitLine>,
    pub physical_reads: PhysicalReads,
    /// Why the server's counters are missing, if they are.
    pub sampler_error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProfileLine {
    pub name: &'static str,
    pub per_second: f64,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WaitLine {
    /// `Type:Event`, or `CPU` for an active session not waiting.
    pub event: String,
    pub samples: u64,
    /// Share of active-session samples.
    pub pct: f64,
    /// Average active sessions in this event.
    pub aas: f64,
}

/// Physical reads three ways.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhysicalReads {
    /// Blocks PostgreSQL read (its buffer misses: from the OS, page cache or device).
    pub pg_blocks: f64,
    pub pg_bytes: f64,
    pub pg_per_s: f64,
    /// The device under the data directory, from dbio's telemetry (null on
    /// tmpfs or when no device could be resolved).
    pub device: Option<String>,
    pub device_requests: Option<f64>,
    pub device_bytes: Option<f64>,
    pub device_per_s: Option<f64>,
    /// PostgreSQL's read bytes the device did not see: the page cache's share.
    pub absorbed_bytes: Option<f64>,
    pub absorbed_pct: Option<f64>,
}

fn op(s: &OpStats, secs: f64) -> Option<OpSummary> {
    (s.count > 0).then(|| summarize(s, super::super::workload::pg::PAGE, secs))
}

/// Things besides the threads' parts that the summary shows.
pub struct ServerFacts {
    pub version: String,
    pub bin_dir: String,
    pub data_dir: String,
    pub wal_dir: String,
    pub cluster_reused: bool,
    pub settings: Vec<(String, String)>,
    pub memory_limit_bytes: Option<u64>,
    pub cgroup: Option<String>,
    pub load: LoadReport,
}

impl PgSummary {
    pub fn new(
        facts: ServerFacts,
        parts: &[PgPart],
        measured_s: f64,
        client_cpu_s: f64,
        window: Option<&TelemetrySummary>,
    ) -> PgSummary {
        let (mut select, mut update, mut commit, mut scan) = (
            OpStats::default(),
            OpStats::default(),
            OpStats::default(),
            OpStats::default(),
        );
        let mut rows = 0;
        let mut waits: BTreeMap<&str, u64> = BTreeMap::new();
        let (mut samples, mut edges, mut sampler_error) = (0, None, None);
        for p in parts {
            select.merge(&p.select);
            update.merge(&p.update);
            commit.merge(&p.commit);
            scan.merge(&p.scan);
            rows += p.rows;
            for (k, v) in &p.waits {
                *waits.entry(k).or_default() += v;
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
        let server = edges.as_ref().map(|(a, b, _)| Delta::between(a, b));
        let total_waits: u64 = waits.values().sum();
        let mut waits: Vec<WaitLine> = waits
            .into_iter()
            .map(|(k, n)| WaitLine {
                event: k.to_string(),
                samples: n,
                pct: 100.0 * n as f64 / total_waits.max(1) as f64,
                aas: n as f64 / samples.max(1) as f64,
            })
            .collect();
        waits.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
        let executes = (select.count + update.count + scan.count) as f64;
        let mut load_profile = Vec::new();
        if let Some(d) = &server {
            let tx = d.xact_commit.max(1.0);
            let line = |name, v: f64| ProfileLine {
                name,
                per_second: v / secs,
                per_transaction: Some(v / tx),
            };
            load_profile = vec![
                line("Transactions", d.xact_commit),
                line("Executes", executes),
                line("Logical reads", d.blks_hit + d.blks_read),
                line("Physical reads", d.blks_read),
                line(
                    "Physical writes",
                    d.buffers_checkpoint + d.buffers_clean + d.buffers_backend,
                ),
                line("Rows updated", d.tup_updated),
                line("WAL records", d.wal_records),
                line("WAL full-page images", d.wal_fpi),
                line("WAL bytes", d.wal_bytes),
                line("WAL writes", d.wal_write),
                line("WAL syncs", d.wal_sync),
            ];
        }
        let pg_blocks = server.as_ref().map_or(0.0, |d| d.blks_read);
        let pg_bytes = pg_blocks * f64::from(crate::workload::pg::PAGE);
        let dev = window.and_then(|w| w.devices.first()).and_then(|d| {
            let r = d.rates.as_ref()?;
            let s = window.map_or(0.0, |w| w.seconds);
            Some((d.name.clone(), r.r_s * s, r.rkb_s * 1024.0 * s, r.r_s))
        });
        let physical_reads = PhysicalReads {
            pg_blocks,
            pg_bytes,
            pg_per_s: pg_blocks / secs,
            device: dev.as_ref().map(|d| d.0.clone()),
            device_requests: dev.as_ref().map(|d| d.1),
            device_bytes: dev.as_ref().map(|d| d.2),
            device_per_s: dev.as_ref().map(|d| d.3),
            absorbed_bytes: dev.as_ref().map(|d| (pg_bytes - d.2).max(0.0)),
            absorbed_pct: dev
                .as_ref()
                .filter(|_| pg_bytes > 0.0)
                .map(|d| 100.0 * (pg_bytes - d.2).max(0.0) / pg_bytes),
        };
        PgSummary {
            version: facts.version,
            bin_dir: facts.bin_dir,
            data_dir: facts.data_dir,
            wal_dir: facts.wal_dir,
            cluster_reused: facts.cluster_reused,
            settings: facts.settings,
            memory_limit_bytes: facts.memory_limit_bytes,
            cgroup: facts.cgroup,
            load: facts.load,
            selects: select.count,
            updates: update.count,
            scans: scan.count,
            rows,
            client_cpu_us_per_execute: if executes > 0.0 {
                client_cpu_s * 1e6 / executes
            } else {
                0.0
            },
            select: op(&select, secs),
            update: op(&update, secs),
            commit: op(&commit, secs),
            scan: op(&scan, secs),
            server,
            load_profile,
            sample_hz: crate::workload::pg::run::ASH_HZ,
            samples,
            waits,
            physical_reads,
            sampler_error,
        }
    }

    /// Executes/s, transactions/s, physical reads/s, WAL MiB/s and commit
    /// latency: a pg run in one line (plans).
    pub fn line(&self, secs: f64) -> String {
        let secs = secs.max(1e-9);
        let d = self.server.clone().unwrap_or_default();
        format!(
            "{:>8.0} executes/s {:>7.0} tx/s {:>8.0} reads/s {:>6.1} WAL MiB/s  commit {:>7.3} ms",
            (self.selects + self.updates + self.scans) as f64 / secs,
            d.xact_commit / secs,
            d.blks_read / secs,
            d.wal_bytes / secs / 1048576.0,
            self.commit
                .as_ref()
                .map_or(0.0, |c| c.latency.mean_us / 1e3)
        )
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
}

/// A pg run's report in one line (plans).
pub fn one_line(r: &super::Report) -> String {
    r.pg.as_ref()
        .map(|p| p.line(r.measured_s))
        .unwrap_or_default()
}
