//! The report of one run: a serializable document (the `--json` output, see
//! docs/json.md) and its terminal rendering.

pub mod awr;
pub mod awr_text;
pub mod compare;
mod compare_devices;
mod compare_evidence;
pub mod compare_json;
mod compare_text;
pub mod db;
mod db_text;
pub mod html;
pub mod metric_names;
pub mod mysql;
mod mysql_text;
pub mod pg;
mod pg_text;
pub mod replay;
mod rformat;
pub mod select;
pub mod stats;
pub mod stats_text;
pub mod table;
pub mod text;
pub mod upgrade;

use std::path::PathBuf;

use serde::Serialize;

use crate::config::RunConfig;
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

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub dbio_version: &'static str,
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
    pub mpi: Option<crate::ranks::MpiSummary>,
    /// Under MPI, each rank: its host and its own sections, in the run's shape.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<crate::ranks::RankSummary>,
    /// The MariaDB run's report (`--workload mysql`): the server, SHOW
    /// GLOBAL STATUS over the window, load profile, session states,
    /// InnoDB's reads beside the device's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mysql: Option<mysql::MysqlSummary>,
    /// A replay's faithfulness (`--workload replay`): the replay beside
    /// its capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::workload::replay::faith::Faithfulness>,
}

#[derive(Clone, Debug, Serialize)]
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
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
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

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OpSummary {
    /// I/O requests (system calls or ring submissions) completed in the window.
    pub requests: u64,
    /// Blocks of block_size_bytes moved by those requests.
    pub blocks: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    pub latency: Latency,
}

#[derive(Clone, Debug, Serialize)]
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

#[derive(Clone, Debug, Serialize)]
pub struct OutlierSummary {
    pub threshold_ms: f64,
    pub count: u64,
    /// Outliers counted but not listed (over 10 000 in one session).
    pub unlisted: u64,
    pub list: Vec<Outlier>,
}

pub(crate) fn summarize(s: &OpStats, block_size: u32, secs: f64) -> OpSummary {
    let us = |ns: u64| ns as f64 / 1e3;
    let per_s = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    OpSummary {
        requests: s.count,
        blocks: s.bytes / u64::from(block_size),
        bytes: s.bytes,
        iops: per_s(s.count as f64),
        mib_per_s: per_s(s.bytes as f64 / (1 << 20) as f64),
        latency: if s.count == 0 {
            Latency::default()
        } else {
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
        },
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
        let total = summarize(&both, bs, secs);
        let ios = total.requests;
        Report {
            schema: SCHEMA,
            dbio_version: env!("CARGO_PKG_VERSION"),
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
            read: op(Kind::Read),
            write: op(Kind::Write),
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
            replay: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EngineKind, IoMode, Pattern, RunLength};
    use crate::measure::cpu::CpuTime;
    use crate::measure::stats::SessionStats;
    use crate::samplers::series::KindPoint;
    use crate::workload::dist::Distribution;

    /// A report built from fixed measurements, so its renderings are stable.
    pub(super) fn sample() -> Report {
        let cfg = RunConfig {
            workload: "raw",
            target: "/mnt/xfs/dbio".into(),
            files: 1,
            size_bytes: Some(64 << 20),
            block_size: 8192,
            pattern: Some(Pattern::Randrw),
            read_pct: Some(70),
            sessions: 16,
            iodepth: 1,
            engine: EngineKind::Psync,
            uring: None,
            io_mode: IoMode::Fsync,
            length: RunLength::Time {
                time_s: 10.0,
                ramp_s: 2.0,
            },
            distribution: Distribution::Zipf { theta: 1.2 },
            hotspot: None,
            rate_iops: None,
            seed: 42,
            load_parallel: 1,
            outlier_ms: 500.0,
            interval_s: 1.0,
            destroy_device: None,
            allow_root_fs: false,
            verify: Default::default(),
            content: Default::default(),
            pg: None,
            mysql: None,
            slob: None,
            replay: None,
        };
        let target = Target {
            kind: TargetKind::Directory,
            path: "/mnt/xfs/dbio".into(),
            files: vec!["/mnt/xfs/dbio/dbio-data-0000.dat".into()],
            block_size: 8192,
            blocks_per_file: 8192,
            id: 0,
            logical_sector: None,
            layout: Some(LayoutReport {
                reused: false,
                bytes: 64 << 20,
                seconds: 0.5,
                direct: true,
            }),
            region: None,
            locks: Default::default(),
        };
        let mut stats = SessionStats::new();
        for i in 0..7_000u64 {
            stats.op(Kind::Read).record(100_000 + i * 37, 8192);
        }
        for i in 0..3_000u64 {
            stats.op(Kind::Write).record(900_000 + i * 311, 8192);
            stats.op(Kind::Sync).record(700_000 + i * 211, 0);
        }
        stats.op(Kind::Write).record(612_000_000, 8192);
        stats.outlier(Outlier {
            t_s: 7.25,
            op: Kind::Write,
            session: 3,
            file: 0,
            offset_bytes: 4_194_304,
            len_bytes: 8192,
            latency_ms: 612.0,
        });
        let point = |ops: u64| KindPoint {
            ops,
            bytes: ops * 8192,
            lat_mean_us: 250.0,
            lat_p99_us: 900.0,
        };
        let series = (0..12)
            .map(|t| SecondPoint {
                t_s: t,
                ramp: t < 2,
                read: point(700),
                write: point(300),
                sync: point(300),
            })
            .collect();
        let result = RunResult {
            status: Status::Completed,
            error: None,
            stats,
            measured_s: 10.0,
            ramp_s: 2.0,
            cpu: CpuTime {
                user_s: 0.25,
                sys_s: 0.75,
            },
            series,
            start_unix_ns: 1_790_000_000_000_000_000,
            issued: 12_001,
            chain: Some(sample_chain()),
            telemetry: Vec::new(),
            window: Some(sample_window()),
            start_skew_us: 41.5,
            peak_rss_bytes: 96 << 20,
        };
        let env = Environment {
            hostname: "db1".into(),
            kernel: "Linux 6.18.0".into(),
            cpu_model: "Test CPU @ 2.20GHz".into(),
            cpus: 2,
            memory_bytes: 24 << 30,
            dbio_version: "0.0.0-test",
        };
        let mut r = Report::new(&cfg, &target, result, env);
        r.dbio_version = "0.0.0-test";
        r
    }

    /// A SLOB model report from fixed counters and waits.
    fn slob_sample() -> Report {
        use crate::cli::slob::SlobArgs;
        use crate::workload::slob::events::Event;
        use crate::workload::slob::instance::Tally;
        let mut r = sample();
        let slob = SlobArgs {
            // Fixed: the default depends on whether this kernel has io_uring.
            dbwr_engine: Some(crate::config::EngineKind::IoUring),
            // Fixed: the default depends on the sessions per CPU.
            db_writers: Some(1),
            ..SlobArgs::default()
        }
        .into_config(
            Some(16),
            8192,
            1,
            None,
            Some(std::path::Path::new("/mnt/xfs/dbio")),
        )
        .expect("defaults are valid");
        r.config.workload = "slob";
        r.config.slob = Some(slob.clone());
        let (mut fg, mut dbwr, mut lgwr) = (Tally::default(), Tally::default(), Tally::default());
        fg.count(true, |c| {
            c.executes = 1_000;
            c.selects = 800;
            c.updates = 200;
            c.transactions = 200;
            c.logical_reads = 64_000;
            c.cache_hits = 640;
            c.physical_reads = 63_360;
            c.read_requests = 63_360;
            c.read_bytes = 63_360 * 8192;
            c.block_changes = 12_800;
            c.blocks_dirtied = 12_500;
            c.redo_bytes = 200 * 16_448;
            c.db_time_ns = 160_000_000_000;
            c.db_cpu_ns = 12_000_000_000;
        });
        for i in 0..63_360u64 {
            fg.events
                .record(Event::DbFileSequentialRead, 150_000 + i * 7);
        }
        for i in 0..200u64 {
            fg.events.record(Event::LogFileSync, 1_000_000 + i * 10_000);
        }
        fg.events.record(Event::FreeBufferWaits, 4_000_000);
        dbwr.count(true, |c| {
            c.physical_writes = 12_000;
            c.write_requests = 12_000;
            c.write_bytes = 12_000 * 8192;
        });
        for _ in 0..200 {
            dbwr.events.record(Event::DbFileParallelWrite, 9_000_000);
        }
        lgwr.count(true, |c| {
            c.redo_writes = 180;
            c.redo_written_bytes = 200 * 16_448 + 180 * 256;
            c.redo_wastage_bytes = 180 * 256;
            c.log_switches = 1;
        });
        for _ in 0..180 {
            lgwr.events.record(Event::LogFileParallelWrite, 800_000);
        }
        let mut s = awr::SlobSummary::from_tallies(
            [&fg, &dbwr, &lgwr],
            vec!["/mnt/xfs/dbio/dbio-redo/dbio-data-0000.dat".into()],
            10.0,
            16,
            1,
        );
        s.cache_buffers = slob.cache_buffers();
        r.slob = Some(s);
        r
    }

    #[test]
    fn slob_text_snapshot() {
        insta::assert_snapshot!(text::render(&slob_sample()));
    }

    #[test]
    fn long_event_names_are_printed_whole_in_the_histogram() {
        let mut r = slob_sample();
        let s = r.slob.as_mut().unwrap();
        let mut e = s.events[0].clone();
        e.name = "log file switch (checkpoint incomplete)";
        s.events.push(e);
        let t = text::render(&r);
        let hist = &t[t.find("Wait Event Histogram").unwrap()..];
        let head = hist.lines().nth(1).unwrap();
        let row = hist
            .lines()
            .find(|l| l.starts_with("log file switch (checkpoint incomplete) "))
            .unwrap_or_else(|| panic!("the whole name:\n{hist}"));
        // The columns still line up under their headings.
        assert_eq!(row.len(), head.len(), "{head}\n{row}");
        assert!(t.contains("MB: AWR's label for MiB"), "{t}");
    }

    #[test]
    fn slob_summary_is_consistent() {
        let r = slob_sample();
        let s = r.slob.as_ref().unwrap();
        assert_eq!(
            s.counters.logical_reads,
            s.counters.cache_hits + s.counters.physical_reads
        );
        assert!((s.cache_hit_pct - 1.0).abs() < 1e-9);
        let tx = s
            .load_profile
            .iter()
            .find(|l| l.name == "Transactions")
            .unwrap();
        assert_eq!(tx.per_second, 20.0);
        assert_eq!(tx.per_transaction, Some(1.0));
        let sync = s.events.iter().find(|e| e.name == "log file sync").unwrap();
        assert_eq!(sync.waits, 200);
        assert_eq!(sync.histogram.iter().sum::<u64>(), 200);
        assert_eq!(sync.class, "Commit");
        // 200 waits of 1..3 ms: one at exactly 1 ms, the rest up to 2 and 4 ms.
        assert_eq!(sync.histogram[4], 1);
        assert_eq!(sync.histogram[5] + sync.histogram[6], 199);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["slob"]["counters"]["transactions"], 200);
        assert_eq!(json["config"]["slob"]["update_pct"], 25);
    }

    fn sample_chain() -> Chain {
        use crate::storage::chain::{DeviceKind, DeviceLink, Link};
        Chain {
            target: "/mnt/xfs/dbio".into(),
            links: vec![
                Link::Filesystem {
                    path: "/mnt/xfs/dbio".into(),
                    fs_type: "xfs".into(),
                    mount_point: "/mnt/xfs".into(),
                    mount_options: "rw,noatime".into(),
                    source: "/dev/vdb".into(),
                },
                Link::Device(DeviceLink {
                    name: "vdb".into(),
                    major: 254,
                    minor: 16,
                    kind: DeviceKind::Disk,
                    model: Some("virtio".into()),
                    scheduler: Some("none".into()),
                    rotational: Some(false),
                    logical_block: Some(512),
                    physical_block: Some(4096),
                    discard: Some(true),
                    size_bytes: Some(100 << 30),
                    loop_backing: None,
                    loop_direct_io: None,
                }),
            ],
        }
    }

    fn sample_window() -> TelemetrySummary {
        use crate::samplers::diskstats::DeviceRates;
        use crate::samplers::host::HostRates;
        use crate::samplers::telemetry::DeviceSample;
        TelemetrySummary {
            seconds: 10.0,
            host: HostRates {
                user_pct: 10.0,
                system_pct: 20.0,
                iowait_pct: 30.0,
                idle_pct: 40.0,
                ctxt_per_s: 25_000.0,
                intr_per_s: 9_000.0,
                load1: 3.5,
                dirty_kib: 2048.0,
                ..Default::default()
            },
            devices: vec![DeviceSample {
                name: "vdb".into(),
                rates: Some(DeviceRates {
                    r_per_s: 350.0,
                    w_per_s: 600.0,
                    rkib_per_s: 2800.0,
                    wkib_per_s: 4800.0,
                    r_await_ms: 0.2,
                    w_await_ms: 1.4,
                    aqu_sz: 1.1,
                    rareq_sz_kib: 8.0,
                    wareq_sz_kib: 8.0,
                    util_pct: 62.5,
                    ..Default::default()
                }),
            }],
        }
    }

    #[test]
    fn summary_counts_and_rates_follow_from_the_measurements() {
        let r = sample();
        let read = r.read.as_ref().unwrap();
        assert_eq!(
            (read.requests, read.blocks, read.bytes),
            (7_000, 7_000, 7_000 * 8192)
        );
        assert_eq!(read.iops, 700.0);
        assert_eq!(r.total.requests, 10_001);
        assert_eq!(r.sync.as_ref().unwrap().bytes, 0);
        assert!((r.cpu.us_per_io - 1e6 / 10_001.0).abs() < 1e-9);
        assert_eq!(r.outliers.count, 1);
        assert_eq!(r.write.as_ref().unwrap().latency.max_us, 612_000.0);
    }

    #[test]
    fn text_report_snapshot() {
        insta::assert_snapshot!(text::render(&sample()));
    }

    #[test]
    fn json_report_snapshot() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["series"].as_array_mut().unwrap().truncate(3);
        insta::assert_json_snapshot!(v);
    }
}
