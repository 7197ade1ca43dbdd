//! An open-loop run's section of the report (`--rate`): the rate asked and
//! achieved with a verdict in words, each operation's latency from its due
//! time (a raw run's requests: beside the service time in `read`/`write`;
//! the model's operations and the servers' transactions: both here, in
//! `operations`), and how late they were started. Absent from a
//! closed-loop run's document.

use serde::{Deserialize, Serialize};

use super::{Latency, OpSummary, latency_of};
use crate::config::{Arrival, EngineKind, Paced, RunConfig};
use crate::harness::RunResult;
use crate::measure::due::{DueStats, LATE_NS};
use crate::measure::stats::Kind;
use crate::units::fmt_count;

/// Below this share of the asked rate a run is called saturated.
pub const SATURATED_BELOW: f64 = 0.97;

/// The open-loop summary of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoop {
    pub arrival: Arrival,
    /// `--rate`: requests per second asked over all sessions.
    pub asked_per_s: f64,
    /// Requests that fell due in the measurement window, per second (the
    /// asked rate for uniform arrivals; around it for Poisson's).
    pub due_per_s: f64,
    /// Requests completed in the measurement window per second.
    pub achieved_per_s: f64,
    /// The achieved rate fell below 97% of the rate that fell due.
    pub saturated: bool,
    /// The same in words: "asked 50.0K/s, achieved 31.0K/s: saturated".
    pub verdict: String,
    /// How late requests were issued after their due time.
    pub lateness: Lateness,
    /// Why the sessions could not reach the asked rate even with an idle
    /// queue (one line), when their concurrency bounds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// What the rate paced when it was not I/O requests: the SLOB model's
    /// operations or a server's transactions, with their latencies (absent
    /// for a raw run, whose requests' are `read.due` and `read.latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operations: Option<PacedOps>,
}

/// The operations (or transactions) an open-loop run paced, measured in
/// its window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PacedOps {
    /// "operations" (the SLOB model's executes) or "transactions" (a
    /// server's: a select, an update with its commit, a scan).
    pub unit: String,
    /// Completed in the window.
    pub count: u64,
    /// From each one's due time to its end: what a user waits.
    pub due: Latency,
    /// From its start to its end: the service time.
    pub service: Latency,
}

/// Issue lateness (issue − due time) over the requests measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lateness {
    /// A request issued more than this after its due time is late.
    pub late_after_us: f64,
    pub requests: u64,
    pub late: u64,
    pub late_pct: f64,
    pub latency: Latency,
}

impl OpenLoop {
    /// The summary of `r` under `cfg`, None for a closed loop. `total` is
    /// the run's reads and writes together (their service times).
    pub fn new(cfg: &RunConfig, r: &RunResult, total: &OpSummary) -> Option<OpenLoop> {
        let asked = cfg.rate_iops? as f64;
        let d = r.stats.open.as_deref()?;
        let per_s = |n: u64| {
            if r.measured_s > 0.0 {
                n as f64 / r.measured_s
            } else {
                0.0
            }
        };
        let paced = cfg.workload.paced().unwrap_or(Paced::Requests);
        let operations = paced_ops(paced, d);
        let (completed, service_us) = match &operations {
            Some(o) => (o.count, o.service.mean_us),
            None => (total.requests, total.latency.mean_us),
        };
        let (achieved, due) = (per_s(completed), per_s(d.fell_due));
        let saturated = achieved < SATURATED_BELOW * due;
        let l = &d.lateness;
        Some(OpenLoop {
            arrival: cfg.arrival.unwrap_or(Arrival::Uniform),
            asked_per_s: asked,
            due_per_s: due,
            achieved_per_s: achieved,
            saturated,
            verdict: verdict(asked, due, achieved),
            lateness: Lateness {
                late_after_us: LATE_NS as f64 / 1e3,
                requests: l.count,
                late: d.late,
                late_pct: if l.count > 0 {
                    100.0 * d.late as f64 / l.count as f64
                } else {
                    0.0
                },
                latency: latency_of(l),
            },
            bound: bound(cfg, paced, asked, service_us),
            operations,
        })
    }
}

/// The paced operations' section: None for a raw run (its requests are
/// the run's reads and writes).
fn paced_ops(paced: Paced, d: &DueStats) -> Option<PacedOps> {
    match paced {
        Paced::Requests => None,
        Paced::Operations | Paced::Transactions => Some(PacedOps {
            unit: paced.name().into(),
            count: d.op_service.count,
            due: latency_of(&d.op_due),
            service: latency_of(&d.op_service),
        }),
    }
}

/// Each operation's latency from its due time (`read.due`, `write.due`,
/// `total.due`) from the merged statistics.
pub fn due_latencies(d: &DueStats, ops: [Option<&mut OpSummary>; 2], total: &mut OpSummary) {
    for (k, s) in [Kind::Read, Kind::Write].into_iter().zip(ops) {
        if let (Some(s), Some(st)) = (s, d.of(k)) {
            s.due = Some(latency_of(st));
        }
    }
    let mut both = d.due[0].clone();
    both.merge(&d.due[1]);
    total.due = Some(latency_of(&both));
}

/// "asked 50.0K/s, achieved 31.0K/s: saturated", naming what fell due
/// when a Poisson schedule's count strayed from the asked rate.
fn verdict(asked: f64, due: f64, achieved: f64) -> String {
    let word = if achieved < SATURATED_BELOW * due {
        "saturated"
    } else {
        "kept up"
    };
    let fell = if asked > 0.0 && (due / asked - 1.0).abs() > 0.01 {
        format!(" ({}/s fell due)", fmt_count(due))
    } else {
        String::new()
    };
    format!(
        "asked {}/s{fell}, achieved {}/s: {word}",
        fmt_count(asked),
        fmt_count(achieved)
    )
}

/// When the sessions' concurrency bounds the rate: each psync session has
/// one request in flight, an io_uring session `iodepth`, a session of the
/// model or a server one operation; at the mean service time they
/// complete at most concurrency / service per second.
fn bound(cfg: &RunConfig, paced: Paced, asked: f64, service_us: f64) -> Option<String> {
    if service_us <= 0.0 {
        return None;
    }
    let (per_session, what) = match (paced, cfg.engine) {
        (Paced::Operations, _) => (1, "sessions, one operation at a time,"),
        (Paced::Transactions, _) => (1, "sessions, one transaction at a time,"),
        (Paced::Requests, EngineKind::Psync) => (1, "psync sessions, one request each,"),
        (Paced::Requests, EngineKind::IoUring) => (cfg.iodepth, "io_uring sessions at --iodepth"),
        (Paced::Requests, EngineKind::Null) => return None,
    };
    let concurrency = u64::from(cfg.sessions) * u64::from(per_session);
    let most = concurrency as f64 * 1e6 / service_us;
    (most < asked).then(|| {
        let depth = if per_session > 1 {
            format!(" {per_session}")
        } else {
            String::new()
        };
        format!(
            "{} {what}{depth} at a mean service time of {service_us:.0} us complete at most {}/s, below --rate {}: add sessions{}",
            cfg.sessions,
            fmt_count(most),
            fmt_count(asked),
            if per_session > 1 { " or depth" } else { "" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_says_saturated_below_97_percent_of_what_fell_due() {
        assert_eq!(
            verdict(50_000.0, 50_000.0, 31_000.0),
            "asked 50.0K/s, achieved 31.0K/s: saturated"
        );
        assert_eq!(
            verdict(1000.0, 1000.0, 990.0),
            "asked 1000/s, achieved 990/s: kept up"
        );
        // A Poisson schedule that asked less in this window.
        assert_eq!(
            verdict(100.0, 96.8, 96.5),
            "asked 100/s (96.8/s fell due), achieved 96.5/s: kept up"
        );
        assert!(verdict(100.0, 100.0, 96.5).ends_with("saturated"));
    }

    #[test]
    fn psync_sessions_bound_the_rate_by_their_service_time() {
        let mut cfg = crate::report::run::tests::sample().config;
        cfg.engine = EngineKind::Psync;
        cfg.sessions = 4;
        // 4 sessions at 1 ms: 4000/s at most.
        let r = Paced::Requests;
        let b = bound(&cfg, r, 5000.0, 1000.0).expect("bounded");
        assert!(b.starts_with("4 psync sessions"), "{b}");
        assert!(b.contains("at most 4000/s"), "{b}");
        assert_eq!(bound(&cfg, r, 3000.0, 1000.0), None);
        cfg.engine = EngineKind::IoUring;
        cfg.iodepth = 8;
        assert_eq!(bound(&cfg, r, 30_000.0, 1000.0), None);
        assert!(
            bound(&cfg, r, 40_000.0, 1000.0)
                .unwrap()
                .contains("or depth")
        );
        // A server's sessions: one transaction each, whatever the engine.
        let b = bound(&cfg, Paced::Transactions, 5000.0, 1000.0).expect("bounded");
        assert!(
            b.starts_with("4 sessions, one transaction at a time,"),
            "{b}"
        );
        assert!(
            b.contains("at most 4000/s") && b.ends_with("add sessions"),
            "{b}"
        );
        assert_eq!(bound(&cfg, Paced::Operations, 3000.0, 1000.0), None);
    }
}
