//! What an open-loop run (`--rate`) measures besides service time: each
//! request's latency from its due time (what a user of the storage waits:
//! the service time plus any wait for the session to be free), and how late
//! it was issued. Kept per session like `stats::OpStats`, merged at the end.

use super::stats::{Kind, OpStats};

/// A request issued more than this after its due time counts as late:
/// below it is the clock's and the scheduler's jitter, not a backlog.
pub const LATE_NS: u64 = 10_000;

/// One session's due-time latencies (reads and writes) and issue lateness.
#[derive(Clone, Debug, Default)]
pub struct DueStats {
    /// Completion − due time, per kind (read, write).
    pub due: [OpStats; 2],
    /// Issue − due time of every request measured.
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
}
