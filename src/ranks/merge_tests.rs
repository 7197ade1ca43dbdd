//! The merge against what it must equal: one histogram recorded with every
//! rank's latencies, counters summed, series aligned on the shared start,
//! a failed rank named.

use super::merge::merge;
use super::wire::RankResult;
use crate::environment::Environment;
use crate::harness::{RunResult, Status};
use crate::measure::cpu::CpuTime;
use crate::measure::stats::{Kind, OpStats, Outlier, SessionStats};
use crate::samplers::series::{KindPoint, SecondPoint};

const T0: u64 = 1_790_000_000_000_000_000;

fn result(stats: SessionStats, start_unix_ns: u64, measured_s: f64) -> RunResult {
    let point = |t: u32, ops: u64, lat: f64| SecondPoint {
        t_s: t,
        ramp: false,
        read: KindPoint {
            ops,
            bytes: ops * 8192,
            lat_mean_us: lat,
            lat_p99_us: lat * 3.0,
        },
        write: KindPoint::default(),
        sync: KindPoint::default(),
    };
    RunResult {
        status: Status::Completed,
        error: None,
        issued: stats.ops[0].count + stats.ops[1].count,
        stats,
        measured_s,
        ramp_s: 0.0,
        cpu: CpuTime {
            user_s: 0.5,
            sys_s: 1.0,
        },
        series: vec![point(0, 100, 10.0), point(1, 300, 20.0)],
        start_unix_ns,
        chain: None,
        telemetry: Vec::new(),
        window: None,
        start_skew_us: 7.0,
        peak_rss_bytes: 1 << 20,
        steady: None,
    }
}

fn env(host: &str) -> Environment {
    Environment {
        hostname: host.into(),
        ..Environment::capture()
    }
}

/// Each rank's result as it travels: encoded, then decoded on rank 0.
fn sent(rank: u32, r: &RunResult) -> RankResult {
    let host = if rank == 2 { "hostB" } else { "hostA" };
    RankResult::decode(&RankResult::new(rank, [4, 4], r, &env(host)).encode()).unwrap()
}

#[test]
fn merged_percentiles_are_those_of_one_histogram_of_every_rank_s_latencies() {
    let mut all = OpStats::default();
    let mut ranks = vec![
        SessionStats::new(),
        SessionStats::new(),
        SessionStats::new(),
    ];
    // Three ranks with different latency ranges: averaging their
    // percentiles would be far from the truth.
    for i in 0..30_000u64 {
        let rank = (i % 3) as usize;
        let lat = 50_000 * (rank as u64 + 1).pow(3) + (i * 7919) % 400_000;
        all.record(lat, 8192);
        ranks[rank].op(Kind::Read).record(lat, 8192);
        if i % 10 == 0 {
            ranks[rank].op(Kind::Write).record(lat * 2, 8192);
        }
    }
    let results: Vec<RunResult> = ranks
        .into_iter()
        .enumerate()
        .map(|(i, s)| result(s, T0 + i as u64 * 30_000, 10.0))
        .collect();
    let wire: Vec<RankResult> = results
        .iter()
        .enumerate()
        .map(|(i, r)| sent(i as u32, r))
        .collect();
    let m = merge(
        wire,
        results.into_iter().next().unwrap(),
        8192,
        "test MPI".into(),
    )
    .unwrap();
    let read = &m.result.stats.ops[Kind::Read as usize];
    assert_eq!(
        (read.count, read.bytes, read.sum_ns),
        (all.count, all.bytes, all.sum_ns)
    );
    assert_eq!((read.min_ns, read.max_ns), (all.min_ns, all.max_ns));
    for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
        assert_eq!(read.quantile_ns(q), all.quantile_ns(q), "q={q}");
    }
    // The per-rank counters add up to the run's.
    let sum = |f: fn(&super::RankSummary) -> u64| m.ranks.iter().map(f).sum::<u64>();
    assert_eq!(sum(|r| r.read.as_ref().unwrap().requests), read.count);
    assert_eq!(sum(|r| r.write.as_ref().unwrap().requests), 3_000);
    assert_eq!(sum(|r| r.total.requests), 33_000);
    assert_eq!(m.result.issued, 33_000);
    assert!((m.result.cpu.sys_s - 3.0).abs() < 1e-9);
    // The window runs from the earliest start to the last rank's end.
    assert!(
        (m.result.measured_s - 10.00006).abs() < 1e-9,
        "{}",
        m.result.measured_s
    );
    assert_eq!(m.mpi.ranks, 3);
    assert_eq!(m.mpi.hosts, 2);
    assert!((m.mpi.start_skew_us - 60.0).abs() < 1e-6);
    assert!((m.result.start_skew_us - 67.0).abs() < 1e-6);
    assert_eq!((m.mpi.first_done_s, m.mpi.last_done_s), (10.0, 10.00006));
    assert_eq!(m.ranks[2].host, "hostB");
    assert_eq!(m.result.status, Status::Completed);
}

#[test]
fn series_add_up_on_the_shared_start_and_outliers_are_numbered_across_ranks() {
    let mut a = SessionStats::new();
    a.op(Kind::Read).record(1_000, 8192);
    let mut b = a.clone();
    b.outlier(Outlier {
        t_s: 1.5,
        op: Kind::Read,
        session: 1,
        file: 0,
        offset_bytes: 0,
        len_bytes: 8192,
        latency_ms: 700.0,
    });
    let (ra, rb) = (result(a, T0, 2.0), result(b, T0 + 1_000, 2.0));
    let wire = vec![sent(1, &rb), sent(0, &ra)];
    let m = merge(wire, ra, 8192, String::new()).unwrap();
    let s = &m.result.series;
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].read.ops, s[1].read.ops), (200, 600));
    assert_eq!(s[1].read.bytes, 600 * 8192);
    assert_eq!((s[1].read.lat_mean_us, s[1].read.lat_p99_us), (20.0, 60.0));
    // Rank 1's session 1 is the job's session 5 (rank 0 has 4).
    let o = &m.result.stats.outliers;
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].session, 5);
    assert!((o[0].t_s - 1.500001).abs() < 1e-9);
    assert_eq!(m.mpi.imbalance, Some(1.0));
}

#[test]
fn a_failed_rank_fails_the_run_naming_its_rank_and_host() {
    let ok = result(SessionStats::new(), T0, 1.0);
    let mut bad = result(SessionStats::new(), T0, 0.0);
    bad.status = Status::Failed;
    bad.error = Some("cannot open /nope".into());
    let wire = vec![sent(0, &ok), sent(1, &ok), sent(2, &bad)];
    let m = merge(wire, ok, 8192, String::new()).unwrap();
    assert_eq!(m.result.status, Status::Failed);
    assert_eq!(
        m.result.error.as_deref(),
        Some("rank 2 (hostB): cannot open /nope")
    );
    // No rank completed anything: no ratio to give.
    assert_eq!(m.mpi.imbalance, None);
}

#[test]
fn open_loop_due_times_and_lateness_merge_exactly_and_closed_ranks_send_none() {
    use crate::measure::due::DueStats;
    let mut all = DueStats::default();
    let mut ranks = vec![SessionStats::open_loop(), SessionStats::open_loop()];
    for i in 0..20_000u64 {
        let rank = (i % 2) as usize;
        // Rank 1 is behind: its requests start up to 40 ms after they fell due.
        let late = rank as u64 * ((i * 7919) % 40_000_000);
        let (due, start, end) = (i * 1000, i * 1000 + late, i * 1000 + late + 90_000);
        for d in [&mut all, ranks[rank].open.as_deref_mut().unwrap()] {
            d.record(Kind::Read, due, start, end, 8192);
            d.record_op(due, start, end + 10_000);
            d.fell_due += 1;
        }
    }
    let results: Vec<RunResult> = ranks
        .into_iter()
        .enumerate()
        .map(|(i, s)| result(s, T0 + i as u64 * 10_000, 10.0))
        .collect();
    let wire: Vec<RankResult> = results
        .iter()
        .enumerate()
        .map(|(i, r)| sent(i as u32, r))
        .collect();
    let local = results.into_iter().next().unwrap();
    let m = merge(wire, local, 8192, "test MPI".into()).unwrap();
    let d = m.result.stats.open.as_deref().expect("merged due times");
    assert_eq!((d.late, d.fell_due), (all.late, all.fell_due));
    assert!(all.late > 9_000, "rank 1's requests are late: {}", all.late);
    for (got, want) in [
        (&d.due[0], &all.due[0]),
        (&d.lateness, &all.lateness),
        (&d.op_due, &all.op_due),
        (&d.op_service, &all.op_service),
    ] {
        assert_eq!((got.count, got.sum_ns), (want.count, want.sum_ns));
        assert_eq!((got.min_ns, got.max_ns), (want.min_ns, want.max_ns));
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(got.quantile_ns(q), want.quantile_ns(q), "q={q}");
        }
    }
    // A closed-loop rank sends no due times, and its merge has none.
    let closed = result(SessionStats::new(), T0, 10.0);
    let wire = sent(0, &closed);
    assert!(wire.open.is_none());
    assert!(
        !String::from_utf8(wire.encode())
            .unwrap()
            .contains("\"open\"")
    );
    let m = merge(vec![wire], closed, 8192, "test MPI".into()).unwrap();
    assert!(m.result.stats.open.is_none());
}
