//! The PostgreSQL run's report data (`pg` in the `--json` document): the
//! server and its settings, how the data was loaded, client-side latency
//! per operation, the server's counters over the window (pg_stat_database,
//! pg_stat_bgwriter, pg_stat_wal), the load profile per second and per
//! transaction, top wait events from the sampled sessions, and physical
//! reads three ways (PostgreSQL's, the device's, and what the page cache
//! absorbed between them). Rendered by `pg_text`.

use serde::Serialize;

use super::db::{DbOps, ProfileLine, device_reads, profile};
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
    /// Operations, latency and sampled waits (flattened: `selects`,
    /// `commit`, `waits`, ... at this level).
    #[serde(flatten)]
    pub ops: DbOps,
    /// The server's counters over the window; absent when they could not be read.
    pub server: Option<Delta>,
    pub load_profile: Vec<ProfileLine>,
    pub physical_reads: PhysicalReads,
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
        let (ops, edges) = DbOps::new(
            parts,
            crate::workload::pg::PAGE,
            measured_s,
            client_cpu_s,
            crate::workload::pg::run::ASH_HZ,
        );
        let secs = measured_s.max(1e-9);
        let server = edges.as_ref().map(|(a, b, _)| Delta::between(a, b));
        let mut load_profile = Vec::new();
        if let Some(d) = &server {
            load_profile = profile(
                secs,
                d.xact_commit,
                &[
                    ("Transactions", d.xact_commit),
                    ("Executes", ops.executes() as f64),
                    ("Logical reads", d.blks_hit + d.blks_read),
                    ("Physical reads", d.blks_read),
                    (
                        "Physical writes",
                        d.buffers_checkpoint + d.buffers_clean + d.buffers_backend,
                    ),
                    ("Rows updated", d.tup_updated),
                    ("WAL records", d.wal_records),
                    ("WAL full-page images", d.wal_fpi),
                    ("WAL bytes", d.wal_bytes),
                    ("WAL writes", d.wal_write),
                    ("WAL syncs", d.wal_sync),
                ],
            );
        }
        let pg_blocks = server.as_ref().map_or(0.0, |d| d.blks_read);
        let pg_bytes = pg_blocks * f64::from(crate::workload::pg::PAGE);
        let dev = device_reads(window);
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
            ops,
            server,
            load_profile,
            physical_reads,
        }
    }

    /// Executes/s, transactions/s, physical reads/s, WAL MiB/s and commit
    /// latency: a pg run in one line (plans).
    pub fn line(&self, secs: f64) -> String {
        let secs = secs.max(1e-9);
        let d = self.server.clone().unwrap_or_default();
        format!(
            "{:>8.0} executes/s {:>7.0} tx/s {:>8.0} reads/s {:>6.1} WAL MiB/s  commit {:>7.3} ms",
            self.ops.executes() as f64 / secs,
            d.xact_commit / secs,
            d.blks_read / secs,
            d.wal_bytes / secs / 1048576.0,
            self.ops.commit_ms()
        )
    }
}

/// A pg run's report in one line (plans).
pub fn one_line(r: &super::Report) -> String {
    r.pg.as_ref()
        .map(|p| p.line(r.measured_s))
        .unwrap_or_default()
}
