//! Pacing a session that runs one operation at a time (the SLOB model's
//! sessions, a database server's clients) under `--rate`: each operation
//! falls due on the session's [`Schedule`], starts at its due time or — when
//! the one before ran past it — at once, late, and is timed from its due
//! time as well as from its start (`DueStats::record_op`). The schedule
//! never waits for the operations: a session that falls behind starts the
//! operations it owes back to back until it has caught up.

use super::clock::now_ns;
use super::due::DueStats;
use super::schedule::{self, Schedule};

/// One session's pacing: its schedule and the window's start.
pub(crate) struct Pacer {
    schedule: Schedule,
    /// Operations due before this (the ramp) do not count as fallen due.
    ramp_end: u64,
}

/// When the next operation fell due and when it started (ns, `now_ns`'s clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub due: u64,
    pub start: u64,
}

impl Pacer {
    /// Starts `schedule` at the run's start `t0`; the window opens at
    /// `ramp_end`. Makes this thread's sleeps precise (it is the session's).
    pub fn new(mut schedule: Schedule, t0: u64, ramp_end: u64) -> Self {
        schedule.start(t0);
        schedule::precise_sleeps();
        Pacer { schedule, ramp_end }
    }

    /// Waits until the next operation falls due (not at all when it is
    /// past) and moves the schedule on, counting it in `open` when it fell
    /// due in the window. None when nothing more falls due before `end` or
    /// `stop` said so while waiting.
    pub fn next(&mut self, end: u64, stop: impl Fn() -> bool, open: &mut DueStats) -> Option<Slot> {
        let due = self.schedule.due();
        if due >= end {
            return None;
        }
        let start = schedule::wait_until(due, &stop);
        if start < due {
            return None; // stopped
        }
        self.schedule.advance();
        open.fell_due += u64::from(due >= self.ramp_end);
        Some(Slot { due, start })
    }

    /// The session ended: counts the operations that fell due in the
    /// window before `until` (its end, or now if sooner) but never started.
    pub fn finish(&mut self, until: u64, open: &mut DueStats) {
        let until = until.min(now_ns());
        open.fell_due += self.schedule.skip_until(self.ramp_end, until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arrival;
    use crate::rng::Rng;

    #[test]
    fn operations_start_on_time_then_late_and_the_unstarted_are_counted() {
        // 1000/s in one session: due every 1 ms from t0.
        let t0 = now_ns();
        let s = Schedule::new(1000, Arrival::Uniform, 0, 1, Rng::new(1));
        let mut p = Pacer::new(s, t0, t0);
        let mut d = DueStats::default();
        let first = p.next(u64::MAX, || false, &mut d).expect("due");
        assert_eq!(first.due, t0);
        let second = p.next(u64::MAX, || false, &mut d).expect("due");
        assert_eq!(second.due, t0 + 1_000_000);
        assert!(second.start >= second.due, "never before its due time");
        // An operation that ran 5 ms: the next ones are late, started at once.
        std::thread::sleep(std::time::Duration::from_millis(5));
        let late = p.next(u64::MAX, || false, &mut d).expect("due");
        assert!(late.start - late.due > 3_000_000, "{late:?}");
        assert_eq!(d.fell_due, 3);
        // Ended at 3.5 ms: the one due at 3 ms was never started.
        p.finish(t0 + 3_500_000, &mut d);
        assert_eq!(d.fell_due, 4);
        // Nothing falls due past the end, and a stop ends a wait.
        let s = Schedule::new(1000, Arrival::Uniform, 0, 1, Rng::new(1));
        let mut later = Pacer::new(s, now_ns() + 60_000_000_000, 0);
        assert_eq!(later.next(now_ns(), || false, &mut d), None);
        assert_eq!(later.next(u64::MAX, || true, &mut d), None);
        assert_eq!(d.fell_due, 4);
    }
}
