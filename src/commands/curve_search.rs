//! The search of `dbio curve --latency-target`: the highest rate at which a
//! latency percentile holds. Bracket from the measured maximum (probe it,
//! halve until the target is met), then bisect between the highest rate
//! met and the lowest missed until half their gap is within the precision
//! asked of their middle. A probe whose latency lands near the limit is run
//! again (three runs, the majority decides), so one noisy run near the
//! boundary does not send the bisection the wrong way. Pure logic over a
//! probe function: `commands/curve.rs` makes and stores the runs.

use crate::cli::curve::{Basis, LatencyTarget, TargetOp};
use crate::document::{Latency, OpSummary, Report};

/// Runs at most this many probes' runs (repeats included); the answer then
/// has the precision reached, and says so.
pub const MAX_RUNS: usize = 40;
/// A run whose latency is within this factor of the limit (either side) is
/// near the boundary: its probe is decided by [`REPEATS`] runs.
pub const NEAR: f64 = 1.25;
pub const REPEATS: usize = 3;

/// What one run measured for the target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The target's percentile in microseconds (None: the run had no such
    /// requests, e.g. no writes).
    pub value_us: Option<f64>,
    /// The run did not keep up with the rate asked.
    pub saturated: bool,
}

/// The latency `t` judges in run `r`: what the rate paced — a raw run's
/// reads, writes or both (`read`, `write`, `total`), the model's operations
/// or a server's transactions (`open_loop.operations`, whole: only
/// `total` names them) — from the due time or from the issue. None when
/// the run has none of them.
fn latency<'a>(t: &LatencyTarget, r: &'a Report) -> Option<&'a Latency> {
    if let Some(ops) = r.open_loop.as_ref().and_then(|o| o.operations.as_ref()) {
        let whole = t.op == TargetOp::Total && ops.count > 0;
        return whole.then_some(match t.basis {
            Basis::Due => &ops.due,
            Basis::Service => &ops.service,
        });
    }
    let op: &OpSummary = match t.op {
        TargetOp::Read => r.read.as_ref()?,
        TargetOp::Write => r.write.as_ref()?,
        TargetOp::Total => &r.total,
    };
    if op.requests == 0 {
        return None;
    }
    match t.basis {
        Basis::Due => op.due.as_ref(),
        Basis::Service => Some(&op.latency),
    }
}

impl Sample {
    /// The target's percentile of run `r`, and whether it kept up.
    pub fn of(t: &LatencyTarget, r: &Report) -> Sample {
        let p = t.percentile;
        let value_us = latency(t, r).map(|l| {
            if p == 50.0 {
                l.p50_us
            } else if p == 90.0 {
                l.p90_us
            } else if p == 99.0 {
                l.p99_us
            } else if p == 99.9 {
                l.p99_9_us
            } else {
                l.p99_99_us
            }
        });
        Sample {
            value_us,
            saturated: r.open_loop.as_ref().is_some_and(|o| o.saturated),
        }
    }

    /// Met: the run kept up and its percentile is within the limit.
    fn met(&self, limit_us: f64) -> bool {
        !self.saturated && self.value_us.is_some_and(|v| v <= limit_us)
    }

    fn near(&self, limit_us: f64) -> bool {
        self.value_us
            .is_some_and(|v| v <= limit_us * NEAR && v >= limit_us / NEAR)
    }
}

/// Where the search ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// Met at the measured maximum: the storage gives no more than this.
    AtMaximum { rate: u64 },
    /// The boundary lies between `met` and `missed`.
    Between { met: u64, missed: u64 },
    /// Not met even at the lowest rate the sessions allow.
    NeverMet { lowest: u64 },
}

impl Answer {
    /// The rate answered and its ± fraction (None when never met).
    pub fn rate(&self) -> Option<(f64, f64)> {
        match *self {
            Answer::AtMaximum { rate } => Some((rate as f64, 0.0)),
            Answer::Between { met, missed } => {
                let mid = (met + missed) as f64 / 2.0;
                Some((mid, (missed - met) as f64 / 2.0 / mid))
            }
            Answer::NeverMet { .. } => None,
        }
    }
}

/// The search's bounds and stop rule.
#[derive(Clone, Copy, Debug)]
pub struct Search {
    pub limit_us: f64,
    /// The measured maximum (the first rate probed).
    pub max: u64,
    /// The lowest rate a run accepts (one request per second per session).
    pub min: u64,
    /// Stop when half the bracket is within this fraction of its middle.
    pub precision: f64,
}

/// The search's record: each probe's rate, runs and verdict, and the runs
/// spent.
#[derive(Debug, Default)]
pub struct Log {
    pub probes: Vec<(u64, Vec<Sample>, bool)>,
    pub runs: usize,
}

impl Search {
    /// Runs the search, `run(rate)` measuring one run at `rate`; the first
    /// error (a failed or interrupted run) ends it.
    pub fn run<E>(
        &self,
        log: &mut Log,
        mut run: impl FnMut(u64) -> Result<Sample, E>,
    ) -> Result<Answer, E> {
        let mut rate = self.max.max(self.min);
        // Bracket: halve from the maximum until met.
        let mut missed = None;
        let met = loop {
            if self.probe(rate, log, &mut run)? {
                break rate;
            }
            missed = Some(rate);
            if rate <= self.min {
                return Ok(Answer::NeverMet { lowest: rate });
            }
            rate = (rate / 2).max(self.min);
        };
        let Some(missed) = missed else {
            return Ok(Answer::AtMaximum { rate: met });
        };
        let (mut met, mut missed) = (met, missed);
        // Bisect.
        while !self.precise(met, missed) && log.runs < MAX_RUNS {
            let mid = met + (missed - met) / 2;
            if mid == met {
                break;
            }
            if self.probe(mid, log, &mut run)? {
                met = mid;
            } else {
                missed = mid;
            }
        }
        Ok(Answer::Between { met, missed })
    }

    /// Half the bracket within the precision of its middle.
    pub fn precise(&self, met: u64, missed: u64) -> bool {
        let mid = (met + missed) as f64 / 2.0;
        (missed - met) as f64 / 2.0 <= self.precision * mid
    }

    /// One probe at `rate`: a run, and two more when it lands near the
    /// limit; met when most of its runs met the target.
    fn probe<E>(
        &self,
        rate: u64,
        log: &mut Log,
        run: &mut impl FnMut(u64) -> Result<Sample, E>,
    ) -> Result<bool, E> {
        let first = run(rate)?;
        log.runs += 1;
        let mut samples = vec![first];
        if first.near(self.limit_us) && !first.saturated {
            while samples.len() < REPEATS {
                samples.push(run(rate)?);
                log.runs += 1;
            }
        }
        let met = samples.iter().filter(|s| s.met(self.limit_us)).count();
        let verdict = 2 * met > samples.len();
        log.probes.push((rate, samples, verdict));
        Ok(verdict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device whose p99 is 1 ms up to `knee`/s, then grows steeply.
    fn device(knee: f64) -> impl FnMut(u64) -> Result<Sample, ()> {
        move |rate| {
            let r = rate as f64;
            let v = if r <= knee {
                1000.0
            } else {
                1000.0 * (1.0 + 50.0 * (r - knee) / knee)
            };
            Ok(Sample {
                value_us: Some(v),
                saturated: r > 1.05 * knee,
            })
        }
    }

    fn search(max: u64, limit_us: f64) -> Search {
        Search {
            limit_us,
            max,
            min: 4,
            precision: 0.05,
        }
    }

    /// A raw run's target reads its requests; a paced run of operations
    /// (the model, a server) is judged on the operations' latency, whole.
    #[test]
    fn a_paced_operations_run_is_judged_on_its_operations() {
        use crate::document::open_loop::{Lateness, OpenLoop, PacedOps};
        let target = |op, basis| LatencyTarget {
            op,
            basis,
            percentile: 99.0,
            limit_us: 1000.0,
        };
        let lat = |p99_us| Latency {
            p99_us,
            ..Default::default()
        };
        let mut r = crate::report::run::tests::sample();
        r.total.requests = 10;
        r.total.latency = lat(7.0);
        r.total.due = Some(lat(9.0));
        let due = target(TargetOp::Total, Basis::Due);
        assert_eq!(Sample::of(&due, &r).value_us, Some(9.0));
        r.open_loop = Some(OpenLoop {
            arrival: crate::config::Arrival::Uniform,
            asked_per_s: 100.0,
            due_per_s: 100.0,
            achieved_per_s: 100.0,
            saturated: false,
            verdict: String::new(),
            lateness: Lateness {
                late_after_us: 10.0,
                requests: 5,
                late: 0,
                late_pct: 0.0,
                latency: Latency::default(),
            },
            bound: None,
            operations: Some(PacedOps {
                unit: "operations".into(),
                count: 5,
                due: lat(300.0),
                service: lat(200.0),
            }),
        });
        assert_eq!(Sample::of(&due, &r).value_us, Some(300.0));
        let service = target(TargetOp::Total, Basis::Service);
        assert_eq!(Sample::of(&service, &r).value_us, Some(200.0));
        // Reads are not what was paced: nothing to judge.
        let read = target(TargetOp::Read, Basis::Due);
        assert_eq!(Sample::of(&read, &r).value_us, None);
    }

    #[test]
    fn it_halves_then_bisects_to_the_precision_asked() {
        let mut log = Log::default();
        // 2 ms allowed: met up to knee × 1.02.
        let a = search(1000, 2000.0).run(&mut log, device(400.0)).unwrap();
        let Answer::Between { met, missed } = a else {
            panic!("{a:?}")
        };
        assert!(met <= 408 && missed > 408, "{met}..{missed}");
        let (rate, pm) = a.rate().unwrap();
        assert!(pm <= 0.05, "{pm}");
        assert!((rate - 408.0).abs() <= 0.05 * rate, "{rate}");
        // First 1000 (missed), 500 (missed), 250 (met), then bisection.
        let rates: Vec<u64> = log.probes.iter().map(|p| p.0).collect();
        assert_eq!(&rates[..3], [1000, 500, 250], "{rates:?}");
        assert!(log.runs < MAX_RUNS);
    }

    #[test]
    fn a_probe_near_the_limit_is_decided_by_three_runs() {
        let mut log = Log::default();
        let mut n = 0;
        // Around the limit every third run is slow: the majority decides.
        let noisy = |_rate: u64| -> Result<Sample, ()> {
            n += 1;
            Ok(Sample {
                value_us: Some(if n % 3 == 0 { 1300.0 } else { 900.0 }),
                saturated: false,
            })
        };
        let a = search(800, 1000.0).run(&mut log, noisy).unwrap();
        assert_eq!(a, Answer::AtMaximum { rate: 800 });
        assert_eq!(log.probes[0].1.len(), REPEATS);
        assert_eq!(log.runs, 3);
    }

    #[test]
    fn never_met_stops_at_the_lowest_rate_and_errors_end_the_search() {
        let mut log = Log::default();
        let slow = |_| -> Result<Sample, ()> {
            Ok(Sample {
                value_us: Some(1e9),
                saturated: false,
            })
        };
        assert_eq!(
            search(100, 1000.0).run(&mut log, slow).unwrap(),
            Answer::NeverMet { lowest: 4 }
        );
        let rates: Vec<u64> = log.probes.iter().map(|p| p.0).collect();
        assert_eq!(rates, [100, 50, 25, 12, 6, 4]);
        let failing = |_| -> Result<Sample, &str> { Err("run failed") };
        assert_eq!(
            search(100, 1.0).run(&mut Log::default(), failing),
            Err("run failed")
        );
    }

    #[test]
    fn a_saturated_run_misses_whatever_its_percentile() {
        let s = Sample {
            value_us: Some(10.0),
            saturated: true,
        };
        assert!(!s.met(1000.0));
        let none = Sample {
            value_us: None,
            saturated: false,
        };
        assert!(!none.met(1000.0));
    }
}
