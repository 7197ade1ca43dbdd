//! The PostgreSQL run's report data (`pg` in the `--json` document): the
//! server and its settings, how the data was loaded, client-side latency
//! per operation, the server's counters over the window (pg_stat_database,
//! pg_stat_bgwriter, pg_stat_wal), the load profile per second and per
//! transaction, top wait events from the sampled sessions (and the
//! server's background processes'), pg_stat_io by backend type (16+), and
//! physical reads three ways (PostgreSQL's, the device's, and what the page
//! cache absorbed between them; pg_stat_io's too on 16+), and where the
//! window sat in the checkpoint cycle. Rendered by `pg_text`.

use serde::{Deserialize, Serialize};

use super::cycle::CheckpointCycle;
use super::db::{DbOps, DeviceReads, ProfileLine, Setup, profile};
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::db::cycle::CycleWindow;
use crate::workload::pg::run::PgPart;
use crate::workload::pg::stats::Delta;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PgSummary {
    /// "PostgreSQL 15.x (...)".
    pub version: String,
    pub bin_dir: String,
    pub data_dir: String,
    pub wal_dir: String,
    /// The cluster was made by an earlier run and reused.
    pub cluster_reused: bool,
    /// Settings not at their default, `--pg-memory`, the load (flattened).
    #[serde(flatten)]
    pub setup: Setup,
    /// Operations, latency and sampled waits (flattened: `selects`,
    /// `commit`, `waits`, ... at this level).
    #[serde(flatten)]
    pub ops: DbOps,
    /// The server's counters over the window; absent when they could not be read.
    pub server: Option<Delta>,
    /// Where the window sat in the checkpoint cycle (absent in runs stored
    /// before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_cycle: Option<CheckpointCycle>,
    pub load_profile: Vec<ProfileLine>,
    pub physical_reads: PhysicalReads,
}

/// Physical reads three ways.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhysicalReads {
    /// Blocks PostgreSQL read (its buffer misses: from the OS, page cache or device).
    pub pg_blocks: f64,
    pub pg_bytes: f64,
    pub pg_per_s: f64,
    /// The device under the data directory, from dbio's telemetry.
    #[serde(flatten)]
    pub device: DeviceReads,
    /// PostgreSQL's read bytes the device did not see: the page cache's share.
    pub absorbed_bytes: Option<f64>,
    pub absorbed_pct: Option<f64>,
    /// Reads of data files by every backend type in pg_stat_io (16+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg_stat_io_reads: Option<f64>,
}

/// Things besides the threads' parts that the summary shows.
pub struct ServerFacts {
    pub version: String,
    pub bin_dir: String,
    pub data_dir: String,
    pub wal_dir: String,
    pub cluster_reused: bool,
    pub setup: Setup,
    /// `--window`.
    pub window: CycleWindow,
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
        let checkpoint_cycle = edges.as_ref().zip(server.as_ref()).map(|((a, b, _), d)| {
            CheckpointCycle::between(
                facts.window,
                a.2.as_ref(),
                b.2.as_ref(),
                Some(d.checkpoints_timed + d.checkpoints_req),
            )
            .with_first_changes(d.wal_fpi, d.tup_updated)
        });
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
        let device = DeviceReads::of(window);
        let physical_reads = PhysicalReads {
            pg_blocks,
            pg_bytes,
            pg_per_s: pg_blocks / secs,
            absorbed_bytes: device.device_bytes.map(|b| (pg_bytes - b).max(0.0)),
            absorbed_pct: device
                .device_bytes
                .filter(|_| pg_bytes > 0.0)
                .map(|b| 100.0 * (pg_bytes - b).max(0.0) / pg_bytes),
            device,
            pg_stat_io_reads: server.as_ref().and_then(Delta::io_reads),
        };
        PgSummary {
            version: facts.version,
            bin_dir: facts.bin_dir,
            data_dir: facts.data_dir,
            wal_dir: facts.wal_dir,
            cluster_reused: facts.cluster_reused,
            setup: facts.setup,
            ops,
            server,
            checkpoint_cycle,
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
