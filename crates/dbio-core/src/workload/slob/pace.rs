//! How fast the DB writers write, as PostgreSQL paces its checkpointer and
//! its background writer:
//!
//! * [`Spread`] — a checkpoint's writes spread over the redo of one
//!   checkpoint interval (the model's interval is a redo log file: a
//!   checkpoint begins at each log switch, as `max_wal_size` begins
//!   PostgreSQL's), done when `checkpoint_completion_target` of it is
//!   generated: after looking at a share of its buffers the pass waits until
//!   at least that share of the span is generated (`IsCheckpointOnSchedule`).
//!   A pass the log writer waits for (it must reuse the file) is not paced.
//! * [`Budget`] — at most `--dbwr-rate` buffers a second written outside
//!   checkpoints (`bgwriter_lru_maxpages` per `bgwriter_delay`), with no
//!   more than one round's worth saved up while the writer idles.

/// PostgreSQL's default `checkpoint_completion_target`.
pub(crate) const COMPLETION_TARGET: f64 = 0.9;

/// The background writer's default cap: `bgwriter_lru_maxpages` (100) per
/// `bgwriter_delay` (200 ms), buffers per second.
pub const BGWRITER_RATE: u32 = 500;

/// Rounds of the background writer per second (`bgwriter_delay` 200 ms):
/// a [`Budget`] saves up at most one round.
const ROUNDS_PER_S: u64 = 5;

/// How one DB writer paces itself.
#[derive(Clone, Debug, Default)]
pub(crate) struct WriterPace<'a> {
    /// Spread each checkpoint pass over this many bytes of redo (the
    /// checkpoint interval), or None: write it as fast as possible.
    pub spread: Option<u64>,
    /// This writer's share of `--dbwr-rate`, or None: no cap.
    pub budget: Option<Budget>,
    /// The datafiles to fsync after each checkpoint pass (they are written
    /// through the page cache); empty when each write is durable already.
    pub fsync: &'a [std::os::fd::RawFd],
}

impl<'a> WriterPace<'a> {
    /// Writer `id` of `writers` under `slob`'s settings, from `start_ns`;
    /// `fsync` the datafiles when the writes are not durable by themselves.
    pub fn of(
        slob: &super::SlobConfig,
        id: u32,
        start_ns: u64,
        fsync: &'a [std::os::fd::RawFd],
    ) -> WriterPace<'a> {
        let share = |rate: u32| {
            let w = slob.db_writers.max(1);
            rate / w + u32::from(id < rate % w)
        };
        WriterPace {
            spread: (slob.flavor == super::flavor::Flavor::Postgres).then_some(slob.redo_file_size),
            budget: slob.dbwr_rate.map(|r| Budget::new(share(r), start_ns)),
            fsync,
        }
    }
}

/// A checkpoint pass spread over `span` bytes of redo from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spread {
    start: u64,
    span: u64,
}

impl Spread {
    /// A pass beginning at redo position `start`, to be done when
    /// `target` of `interval` bytes of redo more are generated.
    pub fn new(start: u64, interval: u64, target: f64) -> Spread {
        Spread {
            start,
            span: ((interval as f64 * target) as u64).max(1),
        }
    }

    /// True when the pass, having looked at `seen` of its `total` buffers,
    /// is ahead of its schedule at redo position `now`: it waits before it
    /// writes more.
    pub(crate) fn ahead(&self, seen: u32, total: u32, now: u64) -> bool {
        if total == 0 {
            return false;
        }
        let done = u128::from(seen) * u128::from(self.span);
        let due = u128::from(now.saturating_sub(self.start)) * u128::from(total);
        done > due
    }
}

/// At most `per_s` buffers a second, counted from `start_ns`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    per_s: u64,
    start_ns: u64,
    /// Buffers written, plus what an idle stretch forfeited.
    spent: u64,
}

impl Budget {
    pub fn new(per_s: u32, start_ns: u64) -> Budget {
        Budget {
            per_s: u64::from(per_s.max(1)),
            start_ns,
            spent: 0,
        }
    }

    fn earned(&self, now_ns: u64) -> u64 {
        let ns = u128::from(now_ns.saturating_sub(self.start_ns));
        (ns * u128::from(self.per_s) / 1_000_000_000) as u64
    }

    /// Buffers that may be written at `now_ns`, at most `cap`; credit beyond
    /// one round is forfeited.
    pub fn allowed(&mut self, now_ns: u64, cap: usize) -> usize {
        let earned = self.earned(now_ns);
        let round = self.per_s.div_ceil(ROUNDS_PER_S);
        self.spent = self.spent.max(earned.saturating_sub(round));
        (earned.saturating_sub(self.spent)).min(cap as u64) as usize
    }

    pub(crate) fn spend(&mut self, n: usize) {
        self.spent += n as u64;
    }

    /// Nanoseconds from `now_ns` until one more buffer may be written.
    pub(crate) fn wait_ns(&self, now_ns: u64) -> u64 {
        let next = u128::from(self.spent + 1) * 1_000_000_000;
        let at = self.start_ns + next.div_ceil(u128::from(self.per_s)) as u64;
        at.saturating_sub(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_pass_keeps_pace_with_the_redo() {
        // 100 MiB between checkpoints, done at 90 MiB.
        let s = Spread::new(1000, 100 << 20, COMPLETION_TARGET);
        let span = (100u64 << 20) * 9 / 10;
        assert!(!s.ahead(0, 1000, 1000), "nothing seen: never ahead");
        assert!(s.ahead(1, 1000, 1000), "no redo yet: wait");
        // A tenth seen: ahead until a tenth of the span is generated.
        assert!(s.ahead(100, 1000, 1000 + span / 10 - 1));
        assert!(!s.ahead(100, 1000, 1000 + span / 10));
        // Half seen at 40% of the span: wait; at 60%: behind, write.
        assert!(s.ahead(500, 1000, 1000 + span * 4 / 10));
        assert!(!s.ahead(500, 1000, 1000 + span * 6 / 10));
        // Past the span everything is due.
        assert!(!s.ahead(999, 1000, 1000 + span));
        assert!(!s.ahead(5, 0, 0), "no buffers: nothing to pace");
    }

    #[test]
    fn a_target_of_one_uses_the_whole_interval() {
        let s = Spread::new(0, 1000, 1.0);
        assert!(s.ahead(500, 1000, 499));
        assert!(!s.ahead(500, 1000, 500));
    }

    #[test]
    fn a_budget_allows_its_rate_and_saves_one_round() {
        let s = 1_000_000_000;
        let mut b = Budget::new(500, 0);
        assert_eq!(b.allowed(0, 64), 0);
        assert_eq!(b.allowed(s / 10, 64), 50, "a tenth of a second: 50");
        b.spend(50);
        assert_eq!(b.allowed(s / 10, 64), 0);
        assert_eq!(b.wait_ns(s / 10), 2_000_000, "the next one 2 ms on");
        // Idle for 10 s: only one round (100) saved up.
        assert_eq!(b.allowed(10 * s, 1000), 100);
        assert_eq!(b.allowed(10 * s, 64), 64, "and at most the batch");
        b.spend(64);
        assert_eq!(b.allowed(10 * s, 1000), 36);
    }

    #[test]
    fn over_a_second_a_budget_writes_its_rate() {
        let mut b = Budget::new(300, 7);
        let mut wrote = 0;
        let mut t = 7;
        while t < 7 + 1_000_000_000 {
            let n = b.allowed(t, 64);
            b.spend(n);
            wrote += n;
            t += 13_000_000;
        }
        assert!((295..=300).contains(&wrote), "{wrote}");
    }
}
