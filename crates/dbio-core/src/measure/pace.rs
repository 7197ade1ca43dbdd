//! Pacing a session that runs one operation at a time (the SLOB model's
//! sessions, a database server's clients) under `--rate`: each operation
//! falls due on the run's [`Schedule`] (claimed by whichever session is
//! free), starts at its due time or — when every session was busy past it —
//! at once, late, and is timed from its due
//! time as well as from its start (`DueStats::record_op`). The schedule
//! never waits for the operations: when the sessions fall behind they start
//! the operations owed back to back until they have caught up.

use super::clock::now_ns;
use super::due::DueStats;
use super::schedule::{self, Schedule};

/// One session's pacing: its handle on the schedule and the window's start.
pub(crate) struct Pacer<'a> {
    schedule: Schedule<'a>,
    /// Operations due before this (the ramp) do not count as fallen due.
    ramp_end: u64,
}

/// When the next operation fell due and when it started (ns, `now_ns`'s clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    pub due: u64,
    pub start: u64,
}

impl<'a> Pacer<'a> {
    /// Starts `schedule` at the run's start `t0`; the window opens at
    /// `ramp_end`. Makes this thread's sleeps precise (it is the session's).
    pub fn new(mut schedule: Schedule<'a>, t0: u64, ramp_end: u64) -> Self {
        schedule.start(t0);
        schedule::precise_sleeps();
        Pacer { schedule, ramp_end }
    }

    /// Claims the next operation, waits until it falls due (not at all
    /// when it is past) and moves on, counting it in `open` when it fell
    /// due in the window. None when nothing more falls due before `end` or
    /// `stop` said so while waiting.
    pub fn next(&mut self, end: u64, stop: impl Fn() -> bool, open: &mut DueStats) -> Option<Slot> {
        let due = self.schedule.due(now_ns());
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
    /// window before `until` (its end, or now if sooner) but never started
    /// (its own claimed one; when it is the last session, all the rest).
    pub fn finish(&mut self, until: u64, open: &mut DueStats) {
        let until = until.min(now_ns());
        open.fell_due += self.schedule.leave(self.ramp_end, until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Arrival;
    use crate::measure::schedule::Arrivals;

    #[test]
    fn operations_start_on_time_then_late_and_the_unstarted_are_counted() {
        // 1000/s in one session: due every 1 ms from t0.
        let t0 = now_ns();
        let a = Arrivals::default();
        let s = Schedule::new(1000, Arrival::Uniform, 1, 1, &a);
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
        let a = Arrivals::default();
        let s = Schedule::new(1000, Arrival::Uniform, 1, 1, &a);
        let mut later = Pacer::new(s, now_ns() + 60_000_000_000, 0);
        assert_eq!(later.next(now_ns(), || false, &mut d), None);
        assert_eq!(later.next(u64::MAX, || true, &mut d), None);
        assert_eq!(d.fell_due, 4);
    }

    #[test]
    fn an_operation_due_while_one_session_is_busy_starts_on_time_in_another() {
        // 1000/s over two sessions: one operation due every 1 ms from t0.
        let t0 = now_ns() + 2_000_000;
        let a = Arrivals::default();
        let pacer = || Pacer::new(Schedule::new(1000, Arrival::Uniform, 1, 2, &a), t0, t0);
        let (mut busy, mut free) = (pacer(), pacer());
        let (mut d1, mut d2) = (DueStats::default(), DueStats::default());
        let first = busy.next(u64::MAX, || false, &mut d1).expect("due");
        assert_eq!(first.due, t0);
        // `busy` runs its operation for 5 ms; `free` takes the ones due
        // meanwhile, each at its time (not late behind `busy`).
        for k in 1..=5 {
            let s = free.next(u64::MAX, || false, &mut d2).expect("due");
            assert_eq!(s.due, t0 + k * 1_000_000);
            assert!(s.start >= s.due);
        }
        // Back after 5 ms, `busy` takes the next one not yet taken.
        let back = busy.next(u64::MAX, || false, &mut d1).expect("due");
        assert_eq!(back.due, t0 + 6_000_000);
        assert_eq!(d1.fell_due + d2.fell_due, 7);
        // Both end at 9.5 ms: the last counts 7, 8 and 9 ms, never started.
        schedule::wait_until(t0 + 9_500_000, || false);
        free.finish(t0 + 9_500_000, &mut d2);
        busy.finish(t0 + 9_500_000, &mut d1);
        assert_eq!(d1.fell_due + d2.fell_due, 10);
    }
}
