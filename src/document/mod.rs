//! The run document (`dbio run --json`, schema `dbio.run.v2`, docs/json.md):
//! the typed [`Report`] a run writes and every reader of stored runs reads
//! back — the store's extraction, `runs export`, `report`, `compare`, the
//! HTML pages. Below the store, so the store reads fields, not keys.
//! `awr.rs` (the SLOB model's section), `db.rs` + `pg.rs` + `mysql.rs` (the
//! database servers' sections), `mpi.rs` (the MPI job and its ranks),
//! `steady.rs` (a steady-state run's verdict in words), `upgrade.rs` (a
//! `dbio.run.v1` document read under v2's names), `read.rs`
//! (a stored document back into these types).

pub mod awr;
pub mod cycle;
pub mod db;
pub mod mpi;
pub mod mysql;
pub mod open_loop;
pub mod pg;
pub mod read;
pub mod steady;
pub mod upgrade;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use read::ReadError;

use crate::config::{Paced, RunConfig};
use crate::environment::Environment;
use crate::harness::{RunResult, Status};
use crate::measure::stats::{Kind, OpStats, Outlier};
use crate::samplers::series::SecondPoint;
use crate::samplers::telemetry::{TelemetryPoint, TelemetrySummary};
use crate::storage::chain::Chain;
use crate::storage::layout::LayoutReport;
use crate::storage::{Target, TargetKind};

/// Version of the JSON document; bumped on any incompatible change. v2
/// named rates `_per_s` and sizes with their unit ([`upgrade`] reads v1).
pub const SCHEMA: &str = "dbio.run.v2";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub schema: String,
    pub dbio_version: String,
    pub status: Status,
    pub error: Option<String>,
    /// What interrupted an interrupted run (`Ctrl-C (SIGINT)`, `SIGTERM`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_by: Option<String>,
    pub started_unix_ms: u64,
    pub config: RunConfig,
    pub target: TargetSummary,
    pub ramp_s: f64,
    pub measured_s: f64,
    /// Microseconds between the first and the last session leaving the
    /// start barrier.
    pub start_skew_us: f64,
    /// dbio's peak resident memory, bytes (its buffer cache included).
    pub peak_rss_bytes: u64,
    /// Per operation kind; absent kinds had no operation in the window.
    pub read: Option<OpSummary>,
    pub write: Option<OpSummary>,
    /// The fsync/fdatasync after each write (fsync and fdatasync modes); its
    /// time is also inside the write latency.
    pub sync: Option<OpSummary>,
    /// Reads and writes together.
    pub total: OpSummary,
    pub cpu: CpuSummary,
    pub outliers: OutlierSummary,
    pub series: Vec<SecondPoint>,
    /// The host the run happened on.
    pub environment: Environment,
    /// The filesystem and block devices under the target (null when they
    /// could not be resolved).
    pub storage: Option<Chain>,
    /// Host CPU and device statistics averaged over the measurement window,
    /// with iostat -x / mpstat definitions.
    pub telemetry_window: Option<TelemetrySummary>,
    /// The same, one point per `config.interval_s`.
    pub telemetry: Vec<TelemetryPoint>,
    /// The database model's report (`--workload slob`): AWR-style load
    /// profile, wait events, I/O by function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slob: Option<awr::SlobSummary>,
    /// The PostgreSQL run's report (`--workload pg`): the server, its
    /// counters over the window, load profile, wait events, physical reads
    /// three ways.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg: Option<pg::PgSummary>,
    /// A run of several processes under MPI (`dbio run --mpi`): the job,
    /// the start skew across ranks, first and last done, imbalance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mpi: Option<mpi::MpiSummary>,
    /// Under MPI, each rank: its host and its own sections, in the run's shape.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<mpi::RankSummary>,
    /// The MariaDB run's report (`--workload mysql`): the server, SHOW
    /// GLOBAL STATUS over the window, load profile, session states,
    /// InnoDB's reads beside the device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mysql: Option<mysql::MysqlSummary>,
    /// An open-loop run's rate asked and achieved, verdict and lateness
    /// (`--rate`; absent in a closed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<open_loop::OpenLoop>,
    /// A replay's faithfulness (`--workload replay`): the replay beside
    /// its capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::workload::replay::faith::Faithfulness>,
    /// A `--steady-state` run's rounds, the band of its last window,
    /// whether and when it was steady, and the steady window's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<crate::harness::rounds::SteadyState>,
    /// What `--precondition` wrote before a steady-state run's rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<steady::Preconditioned>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TargetSummary {
    pub kind: TargetKind,
    pub path: PathBuf,
    pub files: Vec<PathBuf>,
    pub size_bytes: u64,
    pub block_size_bytes: u32,
    pub blocks: u64,
    pub layout: Option<LayoutReport>,
    /// The run's part of a device shared by MPI ranks (`--region-per-rank`;
    /// rank 0's: rank r's starts at r × `bytes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<crate::storage::region::Region>,
}

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub p99_99_us: f64,
    pub max_us: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    /// I/O requests (system calls or ring submissions) completed in the window.
    pub requests: u64,
    /// Blocks of block_size_bytes moved by those requests.
    pub blocks: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    /// Service time: from each request's issue to its completion.
    pub latency: Latency,
    /// An open-loop run's latency from each request's due time (`--rate`):
    /// the service time plus any wait for a free session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<Latency>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CpuSummary {
    pub user_s: f64,
    pub sys_s: f64,
    /// dbio's CPU time (all threads) per I/O request in the window.
    pub us_per_io: f64,
}

impl CpuSummary {
    /// CPU time over `ios` I/O requests.
    pub fn new(cpu: &crate::measure::cpu::CpuTime, ios: u64) -> Self {
        CpuSummary {
            user_s: cpu.user_s,
            sys_s: cpu.sys_s,
            us_per_io: if ios > 0 {
                cpu.total_s() * 1e6 / ios as f64
            } else {
                0.0
            },
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutlierSummary {
    pub threshold_ms: f64,
    pub count: u64,
    /// Outliers counted but not listed (over 10 000 in one session).
    pub unlisted: u64,
    pub list: Vec<Outlier>,
}

pub(crate) fn summarize(s: &OpStats, block_size: u32, secs: f64) -> OpSummary {
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    OpSummary {
        requests: s.count,
        blocks: s.bytes / u64::from(block_size),
        bytes: s.bytes,
        iops: per_s(s.count as f64),
        mib_per_s: per_s(s.bytes as f64 / (1 << 20) as f64),
        latency: latency_of(s),
        due: None,
    }
}

/// The percentiles of `s` in microseconds (all 0 when it is empty).
pub(crate) fn latency_of(s: &OpStats) -> Latency {
    let us = |ns: u64| ns as f64 / 1e3;
    if s.count == 0 {
        return Latency::default();
    }
    Latency {
        min_us: us(s.min_ns),
        mean_us: s.mean_ns() / 1e3,
        p50_us: us(s.quantile_ns(0.5)),
        p90_us: us(s.quantile_ns(0.9)),
        p99_us: us(s.quantile_ns(0.99)),
        p99_9_us: us(s.quantile_ns(0.999)),
        p99_99_us: us(s.quantile_ns(0.9999)),
        max_us: us(s.max_ns),
    }
}

impl Report {
    pub fn new(cfg: &RunConfig, target: &Target, r: RunResult, environment: Environment) -> Report {
        let bs = target.block_size;
        let secs = r.measured_s;
        let op = |k: Kind| {
            let s = &r.stats.ops[k as usize];
            (s.count > 0).then(|| summarize(s, bs, secs))
        };
        let mut both = r.stats.ops[Kind::Read as usize].clone();
        both.merge(&r.stats.ops[Kind::Write as usize]);
        let mut total = summarize(&both, bs, secs);
        let (mut read, mut write) = (op(Kind::Read), op(Kind::Write));
        // A raw run's requests are what its rate paced: each has a due time.
        if let (Some(d), Some(Paced::Requests)) = (r.stats.open.as_deref(), cfg.workload.paced()) {
            open_loop::due_latencies(d, [read.as_mut(), write.as_mut()], &mut total);
        }
        let open_loop = open_loop::OpenLoop::new(cfg, &r, &total);
        let ios = total.requests;
        Report {
            schema: SCHEMA.into(),
            dbio_version: env!("CARGO_PKG_VERSION").into(),
            interrupted_by: (r.status == Status::Interrupted)
                .then(crate::interrupt::interrupt_cause)
                .flatten()
                .map(String::from),
            status: r.status,
            error: r.error,
            started_unix_ms: r.start_unix_ns / 1_000_000,
            config: cfg.clone(),
            target: TargetSummary {
                kind: target.kind,
                path: target.path.clone(),
                files: target.files.clone(),
                size_bytes: target.size_bytes(),
                block_size_bytes: bs,
                blocks: target.total_blocks(),
                layout: target.layout.clone(),
                region: target.region,
            },
            ramp_s: r.ramp_s,
            measured_s: secs,
            start_skew_us: r.start_skew_us,
            peak_rss_bytes: r.peak_rss_bytes,
            read,
            write,
            sync: op(Kind::Sync),
            total,
            cpu: CpuSummary::new(&r.cpu, ios),
            outliers: OutlierSummary {
                threshold_ms: cfg.outlier_ms,
                count: r.stats.outliers.len() as u64 + r.stats.outliers_unlisted,
                unlisted: r.stats.outliers_unlisted,
                list: r.stats.outliers,
            },
            series: r.series,
            environment,
            storage: r.chain,
            telemetry_window: r.window,
            telemetry: r.telemetry,
            slob: None,
            pg: None,
            mpi: None,
            ranks: Vec::new(),
            mysql: None,
            open_loop,
            replay: None,
            steady_state: r.steady,
            precondition: None,
        }
    }
}
