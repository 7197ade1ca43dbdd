//! The MariaDB run's report data (`mysql` in the `--json` document): the
//! server and its settings as applied, how the data was loaded, the
//! operations and sampled session states (`db::DbOps`), the `SHOW GLOBAL
//! STATUS` deltas over the window by their own names, the load profile in
//! InnoDB's words, and InnoDB's reads beside the device's (under O_DIRECT
//! they are the same reads: whether they agree within 10%), and where the
//! window sat in InnoDB's checkpoint cycle. Rendered by `mysql_text`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::cycle::CheckpointCycle;
use super::db::{DbOps, DeviceReads, ProfileLine, Setup, profile};
use crate::samplers::telemetry::TelemetrySummary;
use crate::workload::db::cycle::CycleWindow;
use crate::workload::mysql::run::{ASH_HZ, MysqlPart};
use crate::workload::mysql::stats::{WaitDelta, delta, wait_deltas};

/// How far InnoDB's and the device's reads may differ and still agree.
pub const AGREE_PCT: f64 = 10.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MysqlSummary {
    /// "10.11.19-MariaDB-0+deb12u1".
    pub version: String,
    pub data_dir: String,
    pub redo_dir: String,
    /// The instance was installed by an earlier run and reused.
    pub instance_reused: bool,
    /// The server's variables dbio set as the server applied them,
    /// `--mysql-memory`, the load (flattened).
    #[serde(flatten)]
    pub setup: Setup,
    /// Operations, latency and sampled session states (flattened).
    #[serde(flatten)]
    pub ops: DbOps,
    /// SHOW GLOBAL STATUS over the window, by name; absent when unreadable.
    pub server: Option<BTreeMap<String, f64>>,
    /// Where the window sat in InnoDB's checkpoint cycle (absent in runs
    /// stored before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_cycle: Option<CheckpointCycle>,
    pub load_profile: Vec<ProfileLine>,
    /// performance_schema's wait events over the window (file I/O,
    /// mutexes, rw-locks), longest total time first; empty when it is off.
    pub ps_waits: Vec<WaitDelta>,
    pub physical_reads: InnodbReads,
}

/// InnoDB's reads and the device's.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct InnodbReads {
    /// Innodb_data_reads: read requests InnoDB issued.
    pub innodb_requests: f64,
    pub innodb_bytes: f64,
    pub innodb_per_s: f64,
    /// Innodb_buffer_pool_reads: buffer pool misses read from a file.
    pub buffer_pool_reads: f64,
    /// The device under the data directory (null on tmpfs).
    #[serde(flatten)]
    pub device: DeviceReads,
    /// (device - InnoDB) / InnoDB read requests, percent.
    pub difference_pct: Option<f64>,
    /// Whether they agree within [`AGREE_PCT`]; only said under O_DIRECT,
    /// where InnoDB's reads are the device's.
    pub agree: Option<bool>,
}

/// Things besides the threads' parts that the summary shows.
pub struct ServerFacts {
    pub version: String,
    pub data_dir: String,
    pub redo_dir: String,
    pub instance_reused: bool,
    pub setup: Setup,
    pub page_size: u32,
    /// innodb_flush_method is O_DIRECT.
    pub direct: bool,
    /// `--window`.
    pub window: CycleWindow,
}

impl MysqlSummary {
    pub fn new(
        facts: ServerFacts,
        parts: &[MysqlPart],
        measured_s: f64,
        client_cpu_s: f64,
        window: Option<&TelemetrySummary>,
    ) -> MysqlSummary {
        let (ops, edges) = DbOps::new(parts, facts.page_size, measured_s, client_cpu_s, ASH_HZ);
        let server = edges.as_ref().map(|(a, b, _)| delta(a, b));
        // InnoDB counts no checkpoints and logs no page images.
        let checkpoint_cycle = edges.as_ref().map(|(a, b, _)| {
            CheckpointCycle::between(facts.window, a.position.as_ref(), b.position.as_ref(), None)
        });
        let ps_waits = edges
            .as_ref()
            .map(|(a, b, _)| wait_deltas(a, b))
            .unwrap_or_default();
        let c = |k: &str| {
            server
                .as_ref()
                .and_then(|d| d.get(k))
                .copied()
                .unwrap_or(0.0)
        };
        let has = |k: &str| server.as_ref().is_some_and(|d| d.contains_key(k));
        let mut lines: Vec<(&'static str, f64)> = [
            ("Transactions (Com_commit)", "Com_commit"),
            (
                "Logical reads (buffer pool read requests)",
                "Innodb_buffer_pool_read_requests",
            ),
            ("Buffer pool reads (misses)", "Innodb_buffer_pool_reads"),
            ("Pages read", "Innodb_pages_read"),
            ("Data reads (requests)", "Innodb_data_reads"),
            ("Pages written", "Innodb_pages_written"),
            ("Doublewrite pages", "Innodb_dblwr_pages_written"),
            ("Data writes (requests)", "Innodb_data_writes"),
            ("Data fsyncs", "Innodb_data_fsyncs"),
            ("Redo bytes (os_log_written)", "Innodb_os_log_written"),
            ("Redo fsyncs", "Innodb_os_log_fsyncs"),
            ("Log waits", "Innodb_log_waits"),
            ("Buffer pool wait free", "Innodb_buffer_pool_wait_free"),
            ("Rows updated (Handler_update)", "Handler_update"),
        ]
        .into_iter()
        .filter(|(_, k)| has(k))
        .map(|(name, k)| (name, c(k)))
        .collect();
        lines.insert(1.min(lines.len()), ("Executes", ops.executes() as f64));
        let load_profile = match &server {
            None => Vec::new(),
            Some(_) => profile(measured_s, c("Com_commit"), &lines),
        };
        let secs = measured_s.max(1e-9);
        let innodb = c("Innodb_data_reads");
        let device = DeviceReads::of(window);
        let difference_pct = device
            .device_requests
            .filter(|_| innodb > 0.0)
            .map(|d| 100.0 * (d - innodb) / innodb);
        let physical_reads = InnodbReads {
            innodb_requests: innodb,
            innodb_bytes: c("Innodb_data_read"),
            innodb_per_s: innodb / secs,
            buffer_pool_reads: c("Innodb_buffer_pool_reads"),
            device,
            difference_pct,
            agree: difference_pct
                .filter(|_| facts.direct)
                .map(|p| p.abs() <= AGREE_PCT),
        };
        MysqlSummary {
            version: facts.version,
            data_dir: facts.data_dir,
            redo_dir: facts.redo_dir,
            instance_reused: facts.instance_reused,
            setup: facts.setup,
            ops,
            server,
            checkpoint_cycle,
            load_profile,
            ps_waits,
            physical_reads,
        }
    }

    /// A counter's change over the window (0 when unknown).
    pub fn counter(&self, name: &str) -> f64 {
        self.server
            .as_ref()
            .and_then(|d| d.get(name))
            .copied()
            .unwrap_or(0.0)
    }

    /// Executes/s, transactions/s, reads/s, redo MiB/s and commit latency:
    /// a mysql run in one line (plans).
    pub fn line(&self, secs: f64) -> String {
        let secs = secs.max(1e-9);
        format!(
            "{:>8.0} executes/s {:>7.0} tx/s {:>8.0} reads/s {:>6.1} redo MiB/s  commit {:>7.3} ms",
            self.ops.executes() as f64 / secs,
            self.counter("Com_commit") / secs,
            self.counter("Innodb_data_reads") / secs,
            self.counter("Innodb_os_log_written") / secs / 1048576.0,
            self.ops.commit_ms()
        )
    }
}

/// A mysql run's report in one line (plans).
pub fn one_line(r: &super::Report) -> String {
    r.mysql
        .as_ref()
        .map(|p| p.line(r.measured_s))
        .unwrap_or_default()
}
