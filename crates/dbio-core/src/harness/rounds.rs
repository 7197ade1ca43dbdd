//! The steady-state stop rule (`--steady-state`): the control thread hands
//! each measured second (its counts and compact latency histograms) to a
//! [`Rounds`], which closes a round every `round_s` seconds, judges the last
//! `window` rounds by [`crate::steady::judge`] and says when they are
//! steady, so the control thread ends the window there. What it made — every
//! round, the last window judged, and that window's own result (requests,
//! rates and latency percentiles counted from the per-second series, so the
//! warm-up before it is left out) — is the run's [`SteadyState`].

use serde::{Deserialize, Serialize};

use crate::measure::stats::Kind;
use crate::samplers::series::{self, BUCKETS, SecondHists, SecondPoint};
use crate::steady::{self, Judged, Rules};

/// One round: when it ran and what it measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1 for the first round after the ramp.
    pub round: u32,
    /// Seconds since the sessions started: the round covers [start_s, end_s).
    pub start_s: u32,
    pub end_s: u32,
    pub iops: f64,
    pub mib_per_s: f64,
    /// Reads' and writes' 99th percentile together (compact buckets, ≤ 6%).
    pub p99_us: f64,
    /// The value judged (`iops`, `mib_per_s` or `p99_us`, by the metric).
    pub value: f64,
}

/// One operation kind over the steady window (or the last window).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowOp {
    pub requests: u64,
    pub bytes: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
}

/// What the window of rounds measured, from the per-second series:
/// counts exact, percentiles from the compact histograms (≤ 6%).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub first_round: u32,
    pub last_round: u32,
    pub start_s: u32,
    pub end_s: u32,
    pub read: Option<WindowOp>,
    pub write: Option<WindowOp>,
    /// Reads and writes together.
    pub total: WindowOp,
}

/// A steady-state run's rounds and verdict (`steady_state` in the run document).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    pub rules: Rules,
    /// True when the last window of rounds was steady (the run ended there).
    pub reached: bool,
    /// Seconds from the start to the end of the steady window (null if not reached).
    pub reached_after_s: Option<u32>,
    pub rounds: Vec<Round>,
    /// The last window judged: the steady one, or the last before the cap.
    pub judged: Option<Judged>,
    /// What that window measured.
    pub window: Option<Window>,
}

/// One round's (or one window's) counts, by operation kind.
#[derive(Clone)]
struct Tally {
    ops: [u64; 3],
    bytes: [u64; 3],
    lat_sum_ns: [f64; 3],
    hists: Box<SecondHists>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            ops: [0; 3],
            bytes: [0; 3],
            lat_sum_ns: [0.0; 3],
            hists: Box::new([[0; BUCKETS]; 3]),
        }
    }

    fn add_second(&mut self, p: &SecondPoint, h: &SecondHists) {
        for k in [Kind::Read, Kind::Write, Kind::Sync] {
            let (i, kp) = (k as usize, p.kind(k));
            self.ops[i] += kp.ops;
            self.bytes[i] += kp.bytes;
            self.lat_sum_ns[i] += kp.lat_mean_us * 1e3 * kp.ops as f64;
            for (a, b) in self.hists[i].iter_mut().zip(&h[i]) {
                *a += b;
            }
        }
    }

    fn add(&mut self, o: &Tally) {
        for i in 0..3 {
            self.ops[i] += o.ops[i];
            self.bytes[i] += o.bytes[i];
            self.lat_sum_ns[i] += o.lat_sum_ns[i];
            for (a, b) in self.hists[i].iter_mut().zip(&o.hists[i]) {
                *a += b;
            }
        }
    }

    /// Reads and writes together, as one kind.
    fn both(&self) -> (u64, u64, f64, Box<[u64; BUCKETS]>) {
        let (r, w) = (Kind::Read as usize, Kind::Write as usize);
        let mut h = Box::new([0u64; BUCKETS]);
        for (i, b) in h.iter_mut().enumerate() {
            *b = self.hists[r][i] + self.hists[w][i];
        }
        (
            self.ops[r] + self.ops[w],
            self.bytes[r] + self.bytes[w],
            self.lat_sum_ns[r] + self.lat_sum_ns[w],
            h,
        )
    }
}

/// The figures of one kind over `secs` seconds.
fn op(ops: u64, bytes: u64, lat_sum_ns: f64, hist: &[u64; BUCKETS], secs: f64) -> WindowOp {
    let us = |q: f64| series::quantile(hist, q) as f64 / 1e3;
    WindowOp {
        requests: ops,
        bytes,
        iops: ops as f64 / secs,
        mib_per_s: bytes as f64 / (1 << 20) as f64 / secs,
        mean_us: if ops > 0 {
            lat_sum_ns / ops as f64 / 1e3
        } else {
            0.0
        },
        p50_us: us(0.5),
        p99_us: us(0.99),
        p99_9_us: us(0.999),
    }
}

/// Builds rounds from the seconds of one run and judges them.
pub struct Rounds {
    rules: Rules,
    /// The round being filled and the second it started at.
    current: Tally,
    current_start: Option<u32>,
    current_secs: u32,
    /// The last `window` closed rounds' tallies, oldest first.
    recent: std::collections::VecDeque<Tally>,
    rounds: Vec<Round>,
    judged: Option<Judged>,
    reached: bool,
}

impl Rounds {
    pub fn new(rules: Rules) -> Self {
        Rounds {
            rules,
            current: Tally::new(),
            current_start: None,
            current_secs: 0,
            recent: std::collections::VecDeque::with_capacity(rules.window as usize + 1),
            rounds: Vec::new(),
            judged: None,
            reached: false,
        }
    }

    /// True once a window was steady (later seconds are not taken).
    pub fn reached(&self) -> bool {
        self.reached
    }

    /// One measured second (after the ramp, wholly inside the window).
    /// Returns true when it closed a round that made the window steady.
    pub fn second(&mut self, p: &SecondPoint, h: &SecondHists) -> bool {
        if self.reached || p.ramp {
            return false;
        }
        self.current_start.get_or_insert(p.t_s);
        self.current.add_second(p, h);
        self.current_secs += 1;
        if self.current_secs < self.rules.round_s {
            return false;
        }
        self.close_round(p.t_s + 1);
        if self.recent.len() < self.rules.window as usize {
            return false;
        }
        let values: Vec<f64> = self.window_rounds().iter().map(|r| r.value).collect();
        let judged = steady::judge(&values, &self.rules);
        self.judged = Some(judged);
        self.reached = judged.steady();
        self.reached
    }

    fn close_round(&mut self, end_s: u32) {
        let tally = std::mem::replace(&mut self.current, Tally::new());
        let start_s = self.current_start.take().unwrap_or(end_s);
        self.current_secs = 0;
        let secs = f64::from(self.rules.round_s);
        let (ops, bytes, sum, hist) = tally.both();
        let all = op(ops, bytes, sum, &hist, secs);
        let value = match self.rules.metric {
            steady::Metric::Iops => all.iops,
            steady::Metric::Bw => all.mib_per_s,
            steady::Metric::P99 => all.p99_us,
        };
        self.rounds.push(Round {
            round: self.rounds.len() as u32 + 1,
            start_s,
            end_s,
            iops: all.iops,
            mib_per_s: all.mib_per_s,
            p99_us: all.p99_us,
            value,
        });
        self.recent.push_back(tally);
        if self.recent.len() > self.rules.window as usize {
            self.recent.pop_front();
        }
    }

    fn window_rounds(&self) -> &[Round] {
        let n = self.recent.len().min(self.rounds.len());
        &self.rounds[self.rounds.len() - n..]
    }

    /// What was found: every round, the last window judged and its result.
    pub fn finish(self) -> SteadyState {
        let window = self.judged.map(|_| self.window());
        SteadyState {
            rules: self.rules,
            reached: self.reached,
            reached_after_s: self
                .reached
                .then(|| self.rounds.last().map(|r| r.end_s))
                .flatten(),
            rounds: self.rounds,
            judged: self.judged,
            window,
        }
    }

    /// The last window's figures, from its rounds' tallies.
    fn window(&self) -> Window {
        let rounds = self.window_rounds();
        let mut sum = Tally::new();
        for t in &self.recent {
            sum.add(t);
        }
        let secs = f64::from(self.rules.round_s) * rounds.len() as f64;
        let kind = |k: Kind| {
            let i = k as usize;
            (sum.ops[i] > 0).then(|| {
                op(
                    sum.ops[i],
                    sum.bytes[i],
                    sum.lat_sum_ns[i],
                    &sum.hists[i],
                    secs,
                )
            })
        };
        let (ops, bytes, lat, hist) = sum.both();
        let (first, last) = (&rounds[0], &rounds[rounds.len() - 1]);
        Window {
            first_round: first.round,
            last_round: last.round,
            start_s: first.start_s,
            end_s: last.end_s,
            read: kind(Kind::Read),
            write: kind(Kind::Write),
            total: op(ops, bytes, lat, &hist, secs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::samplers::series::KindPoint;

    /// A second with `reads` reads of 8 KiB, each taking `lat_ns`.
    fn second(t_s: u32, reads: u64, lat_ns: u64) -> (SecondPoint, Box<SecondHists>) {
        let mut h: Box<SecondHists> = Box::new([[0; BUCKETS]; 3]);
        h[Kind::Read as usize][series::bucket(lat_ns)] = reads;
        let p = SecondPoint {
            t_s,
            ramp: false,
            read: KindPoint {
                ops: reads,
                bytes: reads * 8192,
                lat_mean_us: lat_ns as f64 / 1e3,
                lat_p99_us: lat_ns as f64 / 1e3,
            },
            write: KindPoint::default(),
            sync: KindPoint::default(),
        };
        (p, h)
    }

    fn rules(round_s: u32, window: u32) -> Rules {
        Rules {
            round_s,
            window,
            ..Rules::default()
        }
    }

    #[test]
    fn a_constant_rate_is_steady_after_one_window() {
        let mut r = Rounds::new(rules(2, 3));
        let mut steady_at = None;
        for t in 0..20 {
            let (p, h) = second(t, 1000, 100_000);
            if r.second(&p, &h) {
                steady_at = Some(t);
                break;
            }
        }
        assert_eq!(steady_at, Some(5), "3 rounds of 2 s end at second 5");
        let s = r.finish();
        assert!(s.reached);
        assert_eq!(s.reached_after_s, Some(6));
        assert_eq!(s.rounds.len(), 3);
        let w = s.window.expect("window");
        assert_eq!(
            (w.first_round, w.last_round, w.start_s, w.end_s),
            (1, 3, 0, 6)
        );
        assert_eq!(w.total.requests, 6000);
        assert!((w.total.iops - 1000.0).abs() < 1e-9);
        let p99 = w.read.expect("reads").p99_us;
        assert!((p99 - 100.0).abs() / 100.0 < 0.07, "{p99}");
        assert!(w.write.is_none());
    }

    #[test]
    fn a_drop_is_steady_only_once_the_window_is_past_it() {
        // A window wholly before the change (three rounds at 800/s) is
        // already steady: the rule judges only the last window.
        let mut r = Rounds::new(rules(1, 3));
        let mut steady_round = None;
        for t in 0..30u32 {
            let rate = if t < 4 { 800 } else { 400 };
            let (p, h) = second(t, rate, 50_000);
            if r.second(&p, &h) {
                steady_round = Some(t + 1);
                break;
            }
        }
        assert_eq!(steady_round, Some(3));
        // 800/s for 2 rounds, then 400/s: windows holding the change fail
        // the range rule; the first wholly after it is rounds 3..5.
        let mut r = Rounds::new(rules(1, 3));
        let mut steady_round = None;
        for t in 0..30u32 {
            let rate = if t < 2 { 800 } else { 400 };
            let (p, h) = second(t, rate, 50_000);
            if r.second(&p, &h) {
                steady_round = Some(t + 1);
                break;
            }
        }
        assert_eq!(steady_round, Some(5), "window of rounds 3..5, all at 400");
        let s = r.finish();
        let w = s.window.expect("window");
        assert_eq!(w.first_round, 3);
        assert!((w.total.iops - 400.0).abs() < 1e-9);
        assert!(s.judged.expect("judged").steady());
    }

    #[test]
    fn the_ramp_is_not_a_round_and_an_unsteady_run_says_so() {
        let mut r = Rounds::new(rules(1, 2));
        let (mut p, h) = second(0, 5, 1000);
        p.ramp = true;
        assert!(!r.second(&p, &h));
        // Alternating 100 / 300: the range is 100% of the mean every time.
        for t in 1..9 {
            let (p, h) = second(t, if t % 2 == 0 { 100 } else { 300 }, 1000);
            assert!(!r.second(&p, &h));
        }
        let s = r.finish();
        assert!(!s.reached);
        assert_eq!(s.reached_after_s, None);
        assert_eq!(s.rounds.len(), 8);
        assert_eq!(s.rounds[0].start_s, 1);
        let j = s.judged.expect("judged");
        assert!(!j.range_ok);
        assert_eq!(s.window.expect("last window").first_round, 7);
    }

    #[test]
    fn p99_and_bandwidth_are_judged_when_asked() {
        let mut r = Rounds::new(Rules {
            metric: steady::Metric::P99,
            ..rules(1, 2)
        });
        // The rate doubles but the latency holds: steady on p99.
        let (p, h) = second(0, 100, 200_000);
        assert!(!r.second(&p, &h));
        let (p, h) = second(1, 200, 200_000);
        assert!(r.second(&p, &h));
        let s = r.finish();
        assert!((s.rounds[1].value - s.rounds[1].p99_us).abs() < 1e-9);
        let mut r = Rounds::new(Rules {
            metric: steady::Metric::Bw,
            ..rules(1, 2)
        });
        let (p, h) = second(0, 128, 1000);
        assert!(!r.second(&p, &h));
        let (p, h) = second(1, 128, 1000);
        assert!(r.second(&p, &h));
        assert!(
            (r.finish().rounds[0].value - 1.0).abs() < 1e-9,
            "128 x 8 KiB = 1 MiB/s"
        );
    }
}
