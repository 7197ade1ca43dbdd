//! When the requests of an open-loop run fall due (`--rate`, `--arrival`).
//!
//! Each session keeps its own schedule at its share of the rate: evenly
//! spaced, or a Poisson process (exponential gaps from the run's seeded
//! generator; the sessions' streams together are again a Poisson process at
//! the whole rate). A schedule never waits for completions: a request is due
//! when the schedule says, whether or not the storage has kept up, and its
//! latency is counted from then (`measure::due`). The wait for a request
//! that is not yet due sleeps and then spins the last stretch, so that it is
//! issued within microseconds of its time.

use crate::config::{Arrival, RunConfig};
use crate::rng::Rng;

use super::clock::now_ns;

/// Below this much time left a wait spins instead of sleeping: a sleep's
/// wake-up can be tens of microseconds late.
const SPIN_NS: u64 = 150_000;
/// The longest sleep before the stop flag is looked at again.
const NAP_NS: u64 = 20_000_000;

/// Where the schedules' generator streams start (beyond every session's).
const SCHEDULE_STREAMS: u64 = 1 << 40;

/// One session's due times.
#[derive(Clone)]
pub struct Schedule {
    arrival: Arrival,
    /// Mean gap between this session's requests, ns.
    gap_ns: f64,
    /// Start of the schedule (the run's start), ns on `now_ns`'s clock.
    base_ns: u64,
    /// The next request's due time, ns after `base_ns`.
    next: f64,
    rng: Rng,
}

impl Schedule {
    /// Session `id` of `sessions` sharing `rate` requests per second; its
    /// gaps come from `rng` (a stream of the run's seed of its own).
    pub fn new(rate: u64, arrival: Arrival, id: u32, sessions: u32, rng: Rng) -> Self {
        let gap_ns = 1e9 * f64::from(sessions.max(1)) / rate.max(1) as f64;
        let mut s = Schedule {
            arrival,
            gap_ns,
            base_ns: 0,
            next: 0.0,
            rng,
        };
        s.next = match arrival {
            // Staggered: the sessions' requests interleave instead of
            // falling due together.
            Arrival::Uniform => gap_ns * f64::from(id) / f64::from(sessions.max(1)),
            Arrival::Poisson => s.gap(),
        };
        s
    }

    /// Session `id`'s schedule of a run with `--rate` (None without one),
    /// at its share of the rate. Its gaps have a generator stream of their
    /// own, so that a Poisson run asks for the same blocks (or keys) as a
    /// uniform one.
    pub(crate) fn of_run(cfg: &RunConfig, id: u32) -> Option<Self> {
        let rate = cfg.rate_iops?;
        let arrival = cfg.arrival.unwrap_or(Arrival::Uniform);
        let rng = Rng::for_stream(cfg.seed, SCHEDULE_STREAMS + u64::from(id));
        Some(Schedule::new(rate, arrival, id, cfg.sessions, rng))
    }

    /// Starts the schedule at `t0` (the run's start).
    pub fn start(&mut self, t0: u64) {
        self.base_ns = t0;
    }

    /// The due time of the next request.
    #[inline]
    pub fn due(&self) -> u64 {
        self.base_ns + self.next as u64
    }

    /// Moves on to the request after.
    #[inline]
    pub(crate) fn advance(&mut self) {
        self.next += self.gap();
    }

    /// Moves past every request due before `until`, counting those due
    /// from `from` on (the requests a session that ended left unissued).
    pub(crate) fn skip_until(&mut self, from: u64, until: u64) -> u64 {
        let mut n = 0;
        while self.due() < until {
            n += u64::from(self.due() >= from);
            self.advance();
        }
        n
    }

    #[inline]
    fn gap(&mut self) -> f64 {
        match self.arrival {
            Arrival::Uniform => self.gap_ns,
            // 1 - U is in (0, 1]: the logarithm is finite.
            Arrival::Poisson => -(1.0 - self.rng.next_f64()).ln() * self.gap_ns,
        }
    }
}

/// Waits until `due` on `now_ns`'s clock (sleeping, then spinning the last
/// [`SPIN_NS`]), or until `stop` says so. Returns the time it returned at.
pub(crate) fn wait_until(due: u64, stop: impl Fn() -> bool) -> u64 {
    loop {
        let now = now_ns();
        if now >= due || stop() {
            return now;
        }
        let left = due - now;
        if left > SPIN_NS {
            let nap = (left - SPIN_NS).min(NAP_NS);
            std::thread::sleep(std::time::Duration::from_nanos(nap));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Makes this thread's timed sleeps wake when asked rather than up to the
/// kernel's default 50 µs of slack later (PR_SET_TIMERSLACK, this thread only).
pub(crate) fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gaps(arrival: Arrival, n: usize) -> Vec<f64> {
        let mut s = Schedule::new(1000, arrival, 0, 1, Rng::new(7));
        s.start(0);
        let mut last = s.due();
        (0..n)
            .map(|_| {
                s.advance();
                let d = s.due();
                let g = (d - last) as f64;
                last = d;
                g
            })
            .collect()
    }

    #[test]
    fn uniform_requests_are_evenly_spaced_and_staggered() {
        assert!(gaps(Arrival::Uniform, 100).iter().all(|&g| g == 1e6));
        let starts: Vec<u64> = (0..4)
            .map(|id| Schedule::new(4000, Arrival::Uniform, id, 4, Rng::new(1)).due())
            .collect();
        assert_eq!(starts, [0, 250_000, 500_000, 750_000]);
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_asked_mean() {
        let g = gaps(Arrival::Poisson, 200_000);
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        assert!((mean / 1e6 - 1.0).abs() < 0.01, "mean gap {mean}");
        // An exponential's standard deviation equals its mean, and
        // P(gap > mean) = 1/e.
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "sd {}", var.sqrt());
        let above = g.iter().filter(|&&x| x > mean).count() as f64 / n;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "{above}");
    }

    #[test]
    fn waits_end_at_the_due_time_or_the_stop() {
        precise_sleeps();
        // Never before the due time. Within a millisecond of it at best: a
        // loaded host can keep any one wake-up from a CPU for longer (CI
        // saw it), but not every one of 20; a wait that oversleeps every
        // time (a nap past the due time, sleeps in whole milliseconds) fails.
        let mut late: Vec<u64> = (0..20)
            .map(|_| {
                let due = now_ns() + 2_000_000;
                let back = wait_until(due, || false);
                assert!(back >= due, "returned {} ns early", due - back);
                back - due
            })
            .collect();
        late.sort_unstable();
        assert!(late[0] < 1_000_000, "late by {late:?} ns");
        let far = now_ns() + 60_000_000_000;
        let back = wait_until(far, || true);
        assert!(back < far);
    }
}
