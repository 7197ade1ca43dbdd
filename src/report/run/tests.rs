//! The run report's golden outputs: a raw run and a SLOB model run built
//! from fixed measurements, rendered as text and as the JSON document.

use super::text;
use crate::config::RunConfig;
use crate::config::{EngineKind, IoMode, Pattern, RawConfig, RunLength, WorkloadConfig};
use crate::document::{Report, awr};
use crate::environment::Environment;
use crate::harness::{RunResult, Status};
use crate::measure::cpu::CpuTime;
use crate::measure::stats::SessionStats;
use crate::measure::stats::{Kind, Outlier};
use crate::samplers::series::KindPoint;
use crate::samplers::series::SecondPoint;
use crate::samplers::telemetry::TelemetrySummary;
use crate::storage::chain::Chain;
use crate::storage::layout::LayoutReport;
use crate::storage::{Target, TargetKind};
use crate::workload::dist::Distribution;

/// A report built from fixed measurements, so its renderings are stable.
pub(crate) fn sample() -> Report {
    let cfg = RunConfig {
        target: "/mnt/xfs/dbio".into(),
        files: 1,
        size_bytes: Some(64 << 20),
        block_size: 8192,
        sessions: 16,
        iodepth: 1,
        engine: EngineKind::Psync,
        io_mode: IoMode::Fsync,
        length: RunLength::Time {
            time_s: 10.0,
            ramp_s: 2.0,
        },
        hotspot: None,
        rate_iops: None,
        arrival: None,
        seed: 42,
        load_parallel: 1,
        outlier_ms: 500.0,
        interval_s: 1.0,
        destroy_device: None,
        allow_root_fs: false,
        content: Default::default(),
        steady: None,
        workload: WorkloadConfig::Raw(RawConfig {
            pattern: Pattern::Randrw,
            read_pct: 70,
            distribution: Distribution::Zipf { theta: 1.2 },
            uring: None,
            verify: Default::default(),
        }),
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
        steady: None,
    };
    let env = Environment {
        hostname: "db1".into(),
        kernel: "Linux 6.18.0".into(),
        cpu_model: "Test CPU @ 2.20GHz".into(),
        cpus: 2,
        memory_bytes: 24 << 30,
        dbio_version: "0.0.0-test".into(),
    };
    let mut r = Report::new(&cfg, &target, result, env);
    r.dbio_version = "0.0.0-test".into();
    r
}

/// A SLOB model report from fixed counters and waits.
pub(crate) fn slob_sample() -> Report {
    use crate::options::slob::SlobArgs;
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
    r.config.workload = WorkloadConfig::Slob(slob.clone());
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
    e.name = "log file switch (checkpoint incomplete)".into();
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

/// The document written and read back is the same document: every field
/// of a raw run's and a SLOB run's report survives the round trip.
#[test]
fn the_document_reads_back_as_written() {
    for r in [sample(), slob_sample()] {
        let written = serde_json::to_value(&r).unwrap();
        let back = Report::from_stored(&written).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&back).unwrap(), written);
        assert_eq!(text::render(&back), text::render(&r));
    }
}

/// A replay's faithfulness section, pinned byte for byte: one at 2x with
/// every part (rate asked, issue error, due-time latency, skipped discards)
/// and one at max speed with reads only.
#[test]
fn replay_text_snapshot() {
    let q = |p50: f64| serde_json::json!({"count": 100, "mean_us": p50 * 1.2, "p50_us": p50, "p99_us": p50 * 9.0, "max_us": p50 * 30.0});
    let op = |name: &str, requests: u64, size: u64| {
        serde_json::json!({
            "op": name, "requests": requests, "bytes": requests * size,
            "mean_size_bytes": size as f64,
            "sizes": [{"up_to_bytes": size, "requests": requests - 1}, {"up_to_bytes": 4 * size, "requests": 1}],
            "latency": q(size as f64 / 100.0)
        })
    };
    let side = |requests: u64, rate: f64, ops: serde_json::Value| {
        serde_json::json!({
            "requests": requests, "read_pct": 75.0, "span_s": requests as f64 / rate,
            "rate_per_s": rate, "ops": ops, "inter_arrival": q(250.0)
        })
    };
    let full = serde_json::json!({
        "speed": "2x", "map": "modulo",
        "captured": side(400, 4000.0, serde_json::json!([op("read", 300, 8192), op("write", 99, 16384), op("flush", 1, 0)])),
        "replayed": side(400, 7900.0, serde_json::json!([op("read", 300, 8192), op("write", 100, 16384)])),
        "expected_rate_per_s": 8000.0,
        "issue_error": q(3.0),
        "waited_for_room": 12, "issue_error_had_room": q(2.0),
        "due_latency": [{"op": "read", "latency": q(120.0)}],
        "skipped_discards": 7
    });
    let max = serde_json::json!({
        "speed": "max", "map": null,
        "captured": side(1000, 500.0, serde_json::json!([op("read", 1000, 4096)])),
        "replayed": side(1000, 90000.0, serde_json::json!([op("read", 1000, 4096)])),
        "expected_rate_per_s": null, "issue_error": null, "due_latency": [], "skipped_discards": 0
    });
    let mut text = String::new();
    for f in [full, max] {
        let f: crate::workload::replay::faith::Faithfulness = serde_json::from_value(f).unwrap();
        text += &super::replay_text::render(&f);
    }
    insta::assert_snapshot!(text);
}
