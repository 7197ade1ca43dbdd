//! Rank 0's merge of every rank's run into one: HDR histograms added (the
//! merged percentiles are those of one histogram of every rank's
//! latencies, never averages of percentiles), exact counters summed, the
//! per-second series aligned on the shared start, outliers numbered by
//! session across ranks; and the per-rank breakdown (each rank's own
//! sections in the run's shape, its host, start offset, when it was done)
//! with the job's start skew, first and last done, and imbalance.

use super::wire::{RankResult, WireError, hist_to_base64};
pub use crate::document::mpi::{MpiSummary, RankSummary};
use crate::document::{CpuSummary, summarize};
use crate::harness::{RunResult, Status};
use crate::measure::cpu::CpuTime;
use crate::measure::stats::{KINDS, Kind, SessionStats};
use crate::samplers::series::{KindPoint, SecondPoint};
use crate::workload::slob::instance::{Counters, Tally};

/// The run merged over every rank.
pub struct Merged {
    pub result: RunResult,
    pub mpi: MpiSummary,
    pub ranks: Vec<RankSummary>,
    /// The SLOB model's tallies summed over the ranks (sessions, DB
    /// writers, log writer): counters added, wait event histograms merged.
    pub slob: Option<[Tally; 3]>,
}

/// Merges `ranks` (every rank's result, any order) into one run of block
/// size `block_size`. `local` is rank 0's own result: its storage chain
/// and telemetry are the run's (every rank's are in its summary).
pub fn merge(
    mut ranks: Vec<RankResult>,
    local: RunResult,
    block_size: u32,
    library: String,
) -> Result<Merged, WireError> {
    ranks.sort_by_key(|r| r.rank);
    let first_start = ranks.iter().map(|r| r.start_unix_ns).min().unwrap_or(0);
    let done_s = |r: &RankResult| since_s(r, first_start) + r.ramp_s + r.measured_s;
    let ramp_s = local.ramp_s;
    let sum = sum_ranks(&ranks, block_size, first_start)?;
    let (status, error) = status_of(&ranks);
    let last_done_s = ranks.iter().map(done_s).fold(0.0, f64::max);
    let mpi = mpi_summary(&ranks, &sum.summaries, library, first_start);
    let result = RunResult {
        status,
        error,
        // The window over every rank: the earliest start's ramp end to the last end.
        measured_s: (last_done_s - ramp_s).max(0.0),
        ramp_s,
        cpu: sum.cpu,
        series: merge_series(&ranks, first_start),
        start_unix_ns: first_start,
        issued: sum.issued,
        // Every session of every rank left its gate within this.
        start_skew_us: sum
            .summaries
            .iter()
            .map(|s| s.start_offset_us + s.start_skew_us)
            .fold(0.0, f64::max),
        peak_rss_bytes: ranks.iter().map(|r| r.peak_rss_bytes).max().unwrap_or(0),
        stats: sum.stats,
        ..local
    };
    Ok(Merged {
        result,
        mpi,
        ranks: sum.summaries,
        slob: sum.slob,
    })
}

/// Seconds from the earliest rank's start (`first_start`) to `r`'s.
fn since_s(r: &RankResult, first_start: u64) -> f64 {
    (r.start_unix_ns - first_start) as f64 / 1e9
}

/// What the ranks add up to.
struct Sum {
    stats: SessionStats,
    cpu: CpuTime,
    summaries: Vec<RankSummary>,
    slob: Option<[Tally; 3]>,
    issued: u64,
}

/// The ranks' statistics merged (outliers numbered across the job's
/// sessions, timed from the earliest start), their CPU, requests and SLOB
/// tallies added, and each rank's own summary.
fn sum_ranks(ranks: &[RankResult], block_size: u32, first_start: u64) -> Result<Sum, WireError> {
    let mut sum = Sum {
        stats: SessionStats::new(),
        cpu: CpuTime::default(),
        summaries: Vec::with_capacity(ranks.len()),
        slob: None,
        issued: 0,
    };
    let mut session_base = 0;
    for r in ranks {
        let mut own = r.stats()?;
        for o in &mut own.outliers {
            o.session += session_base;
            o.t_s += since_s(r, first_start);
        }
        sum.stats.merge(&own);
        let mut own_slob = None;
        if let Some(tallies) = r.slob_tallies()? {
            let total = sum.slob.get_or_insert_with(Default::default);
            let mut counters = Counters::default();
            for (a, b) in total.iter_mut().zip(&tallies) {
                a.merge(b);
                counters.add(&b.window);
            }
            own_slob = Some(counters);
        }
        session_base += r.threads;
        sum.issued += r.issued;
        sum.cpu.user_s += r.cpu_user_s;
        sum.cpu.sys_s += r.cpu_sys_s;
        let done_s = since_s(r, first_start) + r.ramp_s + r.measured_s;
        let mut own = summary(r, &own, block_size, first_start, done_s);
        own.slob = own_slob;
        sum.summaries.push(own);
    }
    sum.stats.outliers.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    Ok(sum)
}

/// The job's status: the first failed rank's (naming it), else
/// interrupted if any was, else completed.
fn status_of(ranks: &[RankResult]) -> (Status, Option<String>) {
    match ranks.iter().find(|r| r.status == Status::Failed) {
        Some(r) => (
            Status::Failed,
            Some(format!(
                "rank {} ({}): {}",
                r.rank,
                r.host,
                r.error.as_deref().unwrap_or("failed")
            )),
        ),
        None if ranks.iter().any(|r| r.status == Status::Interrupted) => {
            (Status::Interrupted, None)
        }
        None => (Status::Completed, None),
    }
}

/// The job over its ranks: hosts, start skew, first and last done,
/// imbalance (the fastest rank's IOPS over the slowest's).
fn mpi_summary(
    ranks: &[RankResult],
    summaries: &[RankSummary],
    library: String,
    first_start: u64,
) -> MpiSummary {
    let done_s = |r: &RankResult| since_s(r, first_start) + r.ramp_s + r.measured_s;
    let (first_done_s, last_done_s) = (
        ranks.iter().map(done_s).fold(f64::INFINITY, f64::min),
        ranks.iter().map(done_s).fold(0.0, f64::max),
    );
    let iops: Vec<f64> = summaries.iter().map(|s| s.total.iops).collect();
    let slowest = iops.iter().copied().fold(f64::INFINITY, f64::min);
    let fastest = iops.iter().copied().fold(0.0, f64::max);
    let mut hosts: Vec<&str> = ranks.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    MpiSummary {
        ranks: ranks.len() as u32,
        hosts: hosts.len() as u32,
        library,
        start_skew_us: summaries
            .iter()
            .map(|s| s.start_offset_us)
            .fold(0.0, f64::max),
        first_done_s: if ranks.is_empty() { 0.0 } else { first_done_s },
        last_done_s,
        imbalance: (slowest > 0.0 && slowest.is_finite()).then(|| fastest / slowest),
        missing_ranks: Vec::new(),
    }
}

/// One rank's own sections, computed as its own report computes them.
fn summary(
    r: &RankResult,
    own: &SessionStats,
    block_size: u32,
    first_start: u64,
    done_s: f64,
) -> RankSummary {
    let op = |k: Kind| {
        let s = &own.ops[k as usize];
        (s.count > 0).then(|| summarize(s, block_size, r.measured_s))
    };
    let mut both = own.ops[Kind::Read as usize].clone();
    both.merge(&own.ops[Kind::Write as usize]);
    let total = summarize(&both, block_size, r.measured_s);
    let cpu = CpuTime {
        user_s: r.cpu_user_s,
        sys_s: r.cpu_sys_s,
    };
    RankSummary {
        rank: r.rank,
        host: r.host.clone(),
        status: r.status.clone(),
        error: r.error.clone(),
        sessions: r.sessions,
        start_offset_us: (r.start_unix_ns - first_start) as f64 / 1e3,
        start_skew_us: r.start_skew_us,
        measured_s: r.measured_s,
        done_s,
        peak_rss_bytes: r.peak_rss_bytes,
        read: op(Kind::Read),
        write: op(Kind::Write),
        sync: op(Kind::Sync),
        cpu: CpuSummary::new(&cpu, total.requests),
        total,
        slob: None,
        histograms: KINDS
            .iter()
            .filter(|k| own.ops[**k as usize].count > 0)
            .map(|k| {
                (
                    k.name().to_string(),
                    hist_to_base64(&own.ops[*k as usize].hist),
                )
            })
            .collect(),
        environment: r.environment.clone(),
        storage: r.storage.clone(),
        telemetry_window: r.telemetry_window.clone(),
    }
}

/// The ranks' per-second series on the shared start: second `t` of the
/// run is second `t` of every rank (their starts are microseconds apart).
/// Operations and bytes add up, mean latencies weigh by operations; a
/// second's p99 is the highest of the ranks' (per-second points keep no
/// histogram to merge: the run's exact percentiles are the HDR ones).
fn merge_series(ranks: &[RankResult], first_start: u64) -> Vec<SecondPoint> {
    let mut out: Vec<SecondPoint> = Vec::new();
    for r in ranks {
        let shift = ((r.start_unix_ns - first_start) / 1_000_000_000) as u32;
        for p in &r.series {
            let t = p.t_s + shift;
            while out.len() <= t as usize {
                out.push(SecondPoint {
                    t_s: out.len() as u32,
                    ramp: f64::from(out.len() as u32) < r.ramp_s,
                    read: KindPoint::default(),
                    write: KindPoint::default(),
                    sync: KindPoint::default(),
                });
            }
            let m = &mut out[t as usize];
            for (a, b) in [
                (&mut m.read, &p.read),
                (&mut m.write, &p.write),
                (&mut m.sync, &p.sync),
            ] {
                add_point(a, b);
            }
        }
    }
    out
}

fn add_point(a: &mut KindPoint, b: &KindPoint) {
    let ops = a.ops + b.ops;
    if ops > 0 {
        a.lat_mean_us = (a.lat_mean_us * a.ops as f64 + b.lat_mean_us * b.ops as f64) / ops as f64;
    }
    a.ops = ops;
    a.bytes += b.bytes;
    a.lat_p99_us = a.lat_p99_us.max(b.lat_p99_us);
}
