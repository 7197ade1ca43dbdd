//! When the requests of an open-loop run fall due (`--rate`, `--arrival`).
//!
//! A run has one arrival process at its whole rate ([`Arrivals`], in the
//! run's shared state): evenly spaced, or a Poisson process (exponential
//! gaps). A session claims the next due time when it is free to issue one
//! (a compare-and-swap on one atomic word: no lock, no allocation), so a
//! request that falls due is issued by whichever session is free — one
//! queue served by N sessions, not N queues of their own, where a request
//! would wait behind its own busy session while another one idles. Each due
//! time is a pure function of the one before and the run's seed, so a seed
//! gives the same sequence whichever session takes which. A schedule never
//! waits for completions: a request is due when the schedule says, whether
//! or not the storage has kept up, and its latency is counted from then
//! (`measure::due`). The wait for a request that is not yet due sleeps and
//! then spins the last stretch, so that it is issued within microseconds of
//! its time.
//!
//! A session that is behind (the next due time is already past when it
//! claims) takes several past due times in one compare-and-swap — its share
//! of the backlog, at most [`BATCH`] — and issues them one after another:
//! every claim moves the shared word's cache line between the CPUs, which
//! near the storage's maximum (1.4M requests/s on tmpfs) cost 6% of the
//! rate. A batch holds only due times already past, so it takes nothing
//! from a session that would have issued one on time.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use crate::config::{Arrival, RunConfig};
use crate::rng;

use super::clock::now_ns;

/// Below this much time left a wait spins instead of sleeping: a sleep's
/// wake-up can be tens of microseconds late.
const SPIN_NS: u64 = 150_000;
/// The longest sleep before the stop flag is looked at again.
const NAP_NS: u64 = 20_000_000;

/// The generator stream of the run's seed that Poisson gaps are drawn
/// from (beyond every session's).
const SCHEDULE_STREAM: u64 = 1 << 40;

/// The most due times one claim takes (all of them past but the first).
pub(crate) const BATCH: usize = 16;

/// A run's due times as its sessions claim them (one per run, in
/// `workload::Shared`; all zero until the first claim).
#[derive(Debug, Default)]
pub(crate) struct Arrivals {
    /// Where the sequence is (see [`Process::step`]), on a cache line of
    /// its own: every claim writes it.
    state: Line,
    /// Sessions that have ended; the last one counts the due times nobody
    /// claimed.
    left: AtomicU32,
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Line(AtomicU64);

/// The arrival process of a run: what a due time is, given the state.
#[derive(Clone, Copy, Debug)]
enum Process {
    /// The state counts the due times claimed; the k-th is k gaps after
    /// the start.
    Uniform { gap_ns: f64 },
    /// The state is the last due time claimed (ns after the start, 0
    /// before the first); the next is an exponential gap later, drawn from
    /// the seed's `key` and that due time.
    Poisson { mean_ns: f64, key: u64 },
}

impl Process {
    /// The mean gap between due times, ns.
    fn mean_gap_ns(self) -> f64 {
        match self {
            Process::Uniform { gap_ns } => gap_ns,
            Process::Poisson { mean_ns, .. } => mean_ns,
        }
    }

    /// The due time (ns after the start) claimed at `state`, and the state
    /// after the claim.
    #[inline]
    fn step(self, state: u64) -> (u64, u64) {
        match self {
            Process::Uniform { gap_ns } => ((state as f64 * gap_ns) as u64, state + 1),
            Process::Poisson { mean_ns, key } => {
                // unit_at is in (0, 1]: the logarithm is finite. At least
                // 1 ns, so that the sequence always moves on.
                let gap = (-rng::unit_at(key, state).ln() * mean_ns).round() as u64;
                let due = state + gap.max(1);
                (due, due)
            }
        }
    }
}

/// One session's handle on its run's [`Arrivals`]: the due times it has
/// claimed and not yet issued.
pub struct Schedule<'a> {
    process: Process,
    arrivals: &'a Arrivals,
    /// Sessions claiming from `arrivals` (the last of them to end counts
    /// the due times left).
    sessions: u32,
    /// Start of the schedule (the run's start), ns on `now_ns`'s clock.
    base_ns: u64,
    /// The due times of this session's last claim, ns after `base_ns`, in
    /// order: `held[next..len]` are not yet issued.
    held: [u64; BATCH],
    next: usize,
    len: usize,
}

impl<'a> Schedule<'a> {
    /// A session's handle on `arrivals`, shared by `sessions` sessions at
    /// `rate` requests per second in all; Poisson gaps from `seed`.
    pub(crate) fn new(
        rate: u64,
        arrival: Arrival,
        seed: u64,
        sessions: u32,
        arrivals: &'a Arrivals,
    ) -> Self {
        let gap_ns = 1e9 / rate.max(1) as f64;
        let process = match arrival {
            Arrival::Uniform => Process::Uniform { gap_ns },
            Arrival::Poisson => Process::Poisson {
                mean_ns: gap_ns,
                key: rng::stream_key(seed, SCHEDULE_STREAM),
            },
        };
        Schedule {
            process,
            arrivals,
            sessions: sessions.max(1),
            base_ns: 0,
            held: [0; BATCH],
            next: 0,
            len: 0,
        }
    }

    /// A session's handle on the run's `arrivals` under `--rate` (None
    /// without one). The gaps have a generator stream of their own, so
    /// that a Poisson run asks for the same blocks (or keys) as a uniform
    /// one.
    pub(crate) fn of_run(cfg: &RunConfig, arrivals: &'a Arrivals) -> Option<Self> {
        let rate = cfg.rate_iops?;
        let arrival = cfg.arrival.unwrap_or(Arrival::Uniform);
        Some(Schedule::new(
            rate,
            arrival,
            cfg.seed,
            cfg.sessions,
            arrivals,
        ))
    }

    /// Starts the schedule at `t0` (the run's start).
    pub fn start(&mut self, t0: u64) {
        self.base_ns = t0;
    }

    /// The due time of this session's next request: the next one it
    /// holds, or else the run's next, claimed now (`now` on `now_ns`'s
    /// clock) — with those after it that are past by `now` when it is
    /// behind.
    #[inline]
    pub fn due(&mut self, now: u64) -> u64 {
        if self.next == self.len {
            self.claim(now.saturating_sub(self.base_ns));
        }
        self.base_ns + self.held[self.next]
    }

    /// The request due at [`due`](Self::due) was issued: the next `due`
    /// is the next one held, or a new claim.
    #[inline]
    pub(crate) fn advance(&mut self) {
        self.next += 1;
    }

    /// The session ended: counts the requests that fell due from `from`
    /// until `until` and were never issued — the ones it held, and when it
    /// is the last session to end, every one nobody claimed.
    pub(crate) fn leave(&mut self, from: u64, until: u64) -> u64 {
        let within = |d: u64| u64::from(d >= from && d < until);
        let held = &self.held[self.next..self.len];
        let mut n = held.iter().map(|&d| within(self.base_ns + d)).sum();
        self.next = self.len;
        if self.arrivals.left.fetch_add(1, Relaxed) + 1 < self.sessions {
            return n;
        }
        // The last one: nobody claims any more.
        let mut state = self.arrivals.state.0.load(Relaxed);
        loop {
            let (due, next) = self.process.step(state);
            if self.base_ns + due >= until {
                break;
            }
            n += within(self.base_ns + due);
            state = next;
        }
        self.arrivals.state.0.store(state, Relaxed);
        n
    }

    /// Claims the run's next due time and, when it is past at `now` (ns
    /// after the start), those after it that are past too, up to this
    /// session's share of the backlog: `held[..len]`, in one
    /// compare-and-swap.
    #[inline]
    fn claim(&mut self, now: u64) {
        let word = &self.arrivals.state.0;
        let mut state = word.load(Relaxed);
        loop {
            let (first, mut after) = self.process.step(state);
            self.held[0] = first;
            let mut len = 1;
            if first < now {
                let want = self.share(now - first);
                while len < want {
                    let (due, next) = self.process.step(after);
                    if due > now {
                        break;
                    }
                    self.held[len] = due;
                    after = next;
                    len += 1;
                }
            }
            match word.compare_exchange_weak(state, after, Relaxed, Relaxed) {
                Ok(_) => {
                    (self.next, self.len) = (0, len);
                    return;
                }
                Err(seen) => state = seen,
            }
        }
    }

    /// How many due times a session behind by `lag` ns takes in one claim:
    /// its share of the due times past (about `lag` / gap + 1, split among
    /// the sessions, so that the others, free sooner, have theirs), from 1
    /// to [`BATCH`].
    #[inline]
    fn share(&self, lag: u64) -> usize {
        let past = lag as f64 / self.process.mean_gap_ns() + 1.0;
        let share = past / f64::from(self.sessions);
        (share as usize).clamp(1, BATCH)
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

    /// The first `n` due times (ns after the start) one session claims,
    /// never behind (claimed at the start: every due time is at or after
    /// it, so each claim takes one).
    fn claims(arrival: Arrival, rate: u64, seed: u64, n: usize) -> Vec<u64> {
        let a = Arrivals::default();
        let mut s = Schedule::new(rate, arrival, seed, 1, &a);
        (0..n)
            .map(|_| {
                let d = s.due(0);
                assert_eq!(s.len, 1, "one at a time when not behind");
                s.advance();
                d
            })
            .collect()
    }

    fn gaps(d: &[u64]) -> Vec<f64> {
        d.windows(2).map(|w| (w[1] - w[0]) as f64).collect()
    }

    #[test]
    fn uniform_requests_are_evenly_spaced_from_the_start() {
        let d = claims(Arrival::Uniform, 1000, 7, 101);
        assert_eq!(d[0], 0);
        assert!(gaps(&d).iter().all(|&g| g == 1e6), "{d:?}");
        // A gap that is not a whole number of ns does not drift.
        let d = claims(Arrival::Uniform, 3, 7, 3001);
        assert_eq!(d[3000], 1_000_000_000_000);
    }

    #[test]
    fn poisson_gaps_are_exponential_with_the_asked_mean_and_independent() {
        let g = gaps(&claims(Arrival::Poisson, 1000, 7, 200_001));
        let n = g.len() as f64;
        let mean = g.iter().sum::<f64>() / n;
        assert!((mean / 1e6 - 1.0).abs() < 0.01, "mean gap {mean}");
        // An exponential's standard deviation equals its mean, and
        // P(gap > mean) = 1/e.
        let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "sd {}", var.sqrt());
        let above = g.iter().filter(|&&x| x > mean).count() as f64 / n;
        assert!((above - (-1.0f64).exp()).abs() < 0.01, "{above}");
        // Each gap is drawn from where the sequence is: neighbours do not
        // correlate (|r| < 0.01 where 4.5 standard errors is 0.01).
        let lag1 = g
            .windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>();
        let r = lag1 / (n - 1.0) / var;
        assert!(r.abs() < 0.01, "lag-1 correlation {r}");
    }

    #[test]
    fn a_seed_gives_one_strictly_increasing_sequence_at_the_asked_rate() {
        for arrival in [Arrival::Uniform, Arrival::Poisson] {
            let a = claims(arrival, 200_000, 42, 1_000_000);
            assert_eq!(a, claims(arrival, 200_000, 42, 1_000_000), "{arrival:?}");
            assert!(a.windows(2).all(|w| w[1] > w[0]), "{arrival:?}");
            // A million claims at 200K/s span 5 s.
            let rate = (a.len() - 1) as f64 * 1e9 / (a[a.len() - 1] - a[0]) as f64;
            assert!(
                (rate / 200_000.0 - 1.0).abs() < 0.01,
                "{arrival:?}: {rate}/s"
            );
        }
        let other = claims(Arrival::Poisson, 200_000, 43, 100);
        assert_ne!(other, claims(Arrival::Poisson, 200_000, 42, 100));
    }

    #[test]
    fn sessions_claiming_together_take_the_one_sequence_without_duplicates() {
        let want = claims(Arrival::Poisson, 1_000_000, 5, 400_000);
        let a = Arrivals::default();
        let took: Vec<Vec<u64>> = std::thread::scope(|sc| {
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    sc.spawn(|| {
                        let mut s = Schedule::new(1_000_000, Arrival::Poisson, 5, 2, &a);
                        (0..200_000)
                            .map(|_| {
                                let d = s.due(0);
                                s.advance();
                                d
                            })
                            .collect()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        // Each session's own claims increase; together they are the
        // sequence one session would have taken, each due time once.
        for t in &took {
            assert!(t.windows(2).all(|w| w[1] > w[0]));
        }
        let mut all: Vec<u64> = took.concat();
        all.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn a_session_behind_takes_its_share_of_the_past_due_times_in_one_claim() {
        // 1000/s from 0: due at 0, 1, 2, ... ms. One session at 10.5 ms
        // is behind by 0..10 ms: it takes those 11 in one claim.
        let a = Arrivals::default();
        let mut s = Schedule::new(1000, Arrival::Uniform, 1, 1, &a);
        let now = 10_500_000;
        for k in 0..=10 {
            assert_eq!(s.due(now), k * 1_000_000);
            assert_eq!(a.state.0.load(Relaxed), 11, "one compare-and-swap");
            s.advance();
        }
        // 11 ms is not yet due: claimed alone.
        assert_eq!(s.due(now), 11_000_000);
        assert_eq!((s.len, a.state.0.load(Relaxed)), (1, 12));
        s.advance();
        // Far behind: at most BATCH at once.
        s.due(1_000_000_000);
        assert_eq!(s.len, BATCH);
        // Two sessions: each takes half of what is past, so that the other
        // has its share when it is free; a backlog of one is one claim.
        let a = Arrivals::default();
        let mut one = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        let mut two = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        assert_eq!((one.due(9_500_000), one.len), (0, 5));
        assert_eq!((two.due(9_500_000), two.len), (5_000_000, 2));
        let mut three = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        assert_eq!((three.due(9_500_000), three.len), (7_000_000, 1));
    }

    #[test]
    fn batches_hold_no_future_due_time_and_do_not_change_the_sequence() {
        // Poisson at 1M/s, claimed by one session whose clock moves on by
        // 0.1-8 µs between its claims: sometimes ahead, sometimes behind.
        let want = claims(Arrival::Poisson, 1_000_000, 9, 100_000);
        let a = Arrivals::default();
        let mut s = Schedule::new(1_000_000, Arrival::Poisson, 9, 2, &a);
        let mut clock = crate::rng::Rng::new(3);
        let (mut now, mut got, mut batches) = (0u64, Vec::new(), 0);
        while got.len() < want.len() {
            now += 100 + clock.below(7_900);
            let first = s.due(now);
            let held = &s.held[..s.len];
            assert_eq!(held[0], first);
            assert!(
                held[1..].iter().all(|&d| d <= now),
                "future {held:?} at {now}"
            );
            batches += usize::from(s.len > 1);
            got.extend_from_slice(held);
            s.next = s.len;
        }
        got.truncate(want.len());
        assert_eq!(got, want, "the seed's one sequence");
        assert!(batches > 1000, "{batches} batches: never behind?");
    }

    #[test]
    fn sessions_behind_claiming_batches_together_take_each_due_time_once() {
        let want = claims(Arrival::Poisson, 1_000_000, 5, 400_000);
        let a = Arrivals::default();
        // Started long ago: every claim is behind and takes a batch.
        let took: Vec<(Vec<u64>, usize)> = std::thread::scope(|sc| {
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    sc.spawn(|| {
                        let mut s = Schedule::new(1_000_000, Arrival::Poisson, 5, 2, &a);
                        let mut claims = 0;
                        let d = (0..200_000)
                            .map(|_| {
                                claims += usize::from(s.next == s.len);
                                let d = s.due(u64::MAX / 2);
                                s.advance();
                                d
                            })
                            .collect();
                        (d, claims)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (t, claims) in &took {
            assert!(t.windows(2).all(|w| w[1] > w[0]));
            assert_eq!(*claims, 200_000 / BATCH, "every claim a full batch");
        }
        let mut all: Vec<u64> = took.into_iter().flat_map(|(t, _)| t).collect();
        all.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn the_last_session_to_leave_counts_what_nobody_claimed() {
        // 1000/s: due at 0, 1, 2, ... ms after the start at 5 ms.
        let a = Arrivals::default();
        let t0 = 5_000_000;
        let mut one = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        let mut two = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        one.start(t0);
        two.start(t0);
        assert_eq!(one.due(t0), t0);
        one.advance();
        assert_eq!(two.due(t0), t0 + 1_000_000);
        assert_eq!(one.due(t0), t0 + 2_000_000);
        // Ended with the 2 ms one claimed: it counts in [0.5, 10) ms.
        assert_eq!(one.leave(t0 + 500_000, t0 + 10_000_000), 1);
        // The last: its own (1 ms) and 3..9 ms, nobody's.
        assert_eq!(two.leave(t0 + 500_000, t0 + 10_000_000), 1 + 7);
        // A claim before the window is not counted; 1, 2 and 3 ms are.
        let a = Arrivals::default();
        let mut s = Schedule::new(1000, Arrival::Uniform, 1, 1, &a);
        s.start(t0);
        s.due(t0);
        assert_eq!(s.leave(t0 + 1, t0 + 3_000_001), 3);
        // Batches held at the end count like unclaimed due times. At 6.5
        // ms (0..6 ms past) `one` takes 0, 1, 2 ms and issues 0; `two`
        // takes 3, 4 ms and issues none.
        let a = Arrivals::default();
        let mut one = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        let mut two = Schedule::new(1000, Arrival::Uniform, 1, 2, &a);
        one.start(t0);
        two.start(t0);
        assert_eq!((one.due(t0 + 6_500_000), one.len), (t0, 3));
        one.advance();
        assert_eq!((two.due(t0 + 6_500_000), two.len), (t0 + 3_000_000, 2));
        // In [0.5, 10) ms: `one` held 1 and 2 ms, `two` 3 and 4, and
        // nobody claimed 5..9 ms.
        assert_eq!(one.leave(t0 + 500_000, t0 + 10_000_000), 2);
        assert_eq!(two.leave(t0 + 500_000, t0 + 10_000_000), 2 + 5);
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
