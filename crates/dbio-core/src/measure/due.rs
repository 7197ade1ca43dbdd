//! What an open-loop run (`--rate`) measures besides service time: each
//! request's latency from its due time (what a user of the storage waits:
//! the service time plus any wait for the session to be free), and how late
//! it was issued. A raw run paces I/O requests (their service times are
//! the run's read and write latencies); the SLOB model and the servers
//! pace whole operations or transactions, whose latencies from their due
//! time and from their start are kept here too. Kept per session like
//! `stats::OpStats`, merged at the end.

use super::stats::{Kind, OpStats};

/// A request issued more than this after its due time counts as late:
/// below it is the clock's and the scheduler's jitter, not a backlog.
pub const LATE_NS: u64 = 10_000;

/// One session's due-time latencies (reads and writes) and issue lateness.
#[derive(Clone, Debug, Default)]
pub struct DueStats {
    /// Completion − due time, per kind (read, write) of paced I/O requests.
    pub due: [OpStats; 2],
    /// Paced operations or transactions (the model, the servers):
    /// end − due time ...
    pub op_due: OpStats,
    /// ... and end − start (their service time).
    pub op_service: OpStats,
    /// Issue − due time of every request (or operation) measured.
    pub lateness: OpStats,
    /// Requests issued more than [`LATE_NS`] after their due time.
    pub late: u64,
    /// Requests that fell due inside the measurement window, issued or not
    /// (what was asked of the storage there: a Poisson schedule's count
    /// varies around rate × time).
    pub fell_due: u64,
}

impl DueStats {
    /// Records a completed request of kind `k` (read or write) that fell due
    /// at `due`, was issued at `issued` and completed at `end` (ns).
    #[inline]
    pub fn record(&mut self, k: Kind, due: u64, issued: u64, end: u64, bytes: u64) {
        let lateness = issued.saturating_sub(due);
        self.due[k as usize & 1].record(end.saturating_sub(due), bytes);
        self.lateness.record(lateness, 0);
        self.late += u64::from(lateness > LATE_NS);
    }

    /// Records a paced operation (or transaction) that fell due at `due`,
    /// started at `start` and ended at `end` (ns).
    #[inline]
    pub fn record_op(&mut self, due: u64, start: u64, end: u64) {
        let lateness = start.saturating_sub(due);
        self.op_due.record(end.saturating_sub(due), 0);
        self.op_service.record(end.saturating_sub(start), 0);
        self.lateness.record(lateness, 0);
        self.late += u64::from(lateness > LATE_NS);
    }

    /// The due-time latencies of `k` (None for `sync`, which has no due time).
    pub fn of(&self, k: Kind) -> Option<&OpStats> {
        match k {
            Kind::Read | Kind::Write => Some(&self.due[k as usize]),
            Kind::Sync => None,
        }
    }

    pub fn merge(&mut self, other: &DueStats) {
        for (a, b) in self.due.iter_mut().zip(&other.due) {
            a.merge(b);
        }
        self.op_due.merge(&other.op_due);
        self.op_service.merge(&other.op_service);
        self.lateness.merge(&other.lateness);
        self.late += other.late;
        self.fell_due += other.fell_due;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_latency_adds_the_wait_and_lateness_counts_late_requests() {
        let mut d = DueStats::default();
        // On time: due = issue, 100 us of service.
        d.record(Kind::Read, 1_000, 1_000, 101_000, 4096);
        // 5 ms late: due-time latency 5.1 ms, the same service.
        d.record(Kind::Read, 2_000, 5_002_000, 5_102_000, 4096);
        // 2 us late: jitter, not late.
        d.record(Kind::Write, 3_000, 5_000, 105_000, 4096);
        let r = d.of(Kind::Read).unwrap();
        assert_eq!((r.count, r.min_ns, r.max_ns), (2, 100_000, 5_100_000));
        assert_eq!(d.of(Kind::Write).unwrap().count, 1);
        assert!(d.of(Kind::Sync).is_none());
        assert_eq!((d.lateness.count, d.late), (3, 1));
        let mut m = DueStats::default();
        m.merge(&d);
        m.merge(&d);
        assert_eq!((m.lateness.count, m.late, m.due[0].count), (6, 2, 4));
    }

    #[test]
    fn a_paced_operation_counts_its_wait_for_the_session_in_due_not_service() {
        let mut d = DueStats::default();
        // Started 3 ms after it fell due, ran 2 ms.
        d.record_op(1_000_000, 4_000_000, 6_000_000);
        // On time, 1 ms.
        d.record_op(10_000_000, 10_000_000, 11_000_000);
        assert_eq!((d.op_due.min_ns, d.op_due.max_ns), (1_000_000, 5_000_000));
        assert_eq!(
            (d.op_service.min_ns, d.op_service.max_ns),
            (1_000_000, 2_000_000)
        );
        assert_eq!((d.lateness.count, d.late, d.due[0].count), (2, 1, 0));
        let mut m = d.clone();
        m.merge(&d);
        assert_eq!((m.op_due.count, m.op_service.count, m.late), (4, 4, 2));
    }
}
