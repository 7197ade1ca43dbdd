//! Per-session measurements: an HDR latency histogram and exact counters per
//! operation kind, and the outlier list. Each session owns one
//! [`SessionStats`] (no sharing, no locks); the runner merges them at the end.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::due::DueStats;

/// Highest latency a histogram tracks (slower ones are clamped to it): 60 s.
pub(crate) const MAX_LATENCY_NS: u64 = 60_000_000_000;
/// Outliers kept per session; more are counted but not listed.
pub(crate) const OUTLIERS_PER_SESSION: usize = 10_000;

/// What a latency was measured for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Read = 0,
    Write = 1,
    /// The fsync/fdatasync after a write (fsync and fdatasync modes).
    Sync = 2,
}

pub const KINDS: [Kind; 3] = [Kind::Read, Kind::Write, Kind::Sync];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Sync => "sync",
        }
    }
}

/// Latency and volume of one kind of operation.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// Latency in nanoseconds, 1 ns .. 60 s, 2 significant digits (≤ 1% error).
    /// It covers only the range recorded so far (2 KiB to start with, about
    /// 1 KiB more per doubling of the largest latency): thousands of sessions
    /// each keep a dozen of these, most of them for events that never happen.
    pub hist: Histogram<u64>,
    pub count: u64,
    pub bytes: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            hist: Histogram::new(2).expect("valid histogram precision"),
            count: 0,
            bytes: 0,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl OpStats {
    #[inline]
    pub fn record(&mut self, lat_ns: u64, bytes: u64) {
        // Grows (allocates) only when a latency is beyond every one before.
        let grown = self.hist.record(lat_ns.clamp(1, MAX_LATENCY_NS));
        debug_assert!(grown.is_ok(), "an auto-resizing histogram takes 60 s");
        self.record_counts(lat_ns, bytes);
    }

    /// Records everything but the histogram, for a caller that fills the
    /// histogram from others recording the same latencies (`hist.add`).
    #[inline]
    pub(crate) fn record_counts(&mut self, lat_ns: u64, bytes: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.sum_ns += lat_ns;
        self.min_ns = self.min_ns.min(lat_ns);
        self.max_ns = self.max_ns.max(lat_ns);
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.hist
            .add(&other.hist)
            .expect("an auto-resizing histogram takes any other");
        self.count += other.count;
        self.bytes += other.bytes;
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// The latency at quantile `q` (0..=1) in ns; exact min/max at the ends.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max_ns;
        }
        self.hist
            .value_at_quantile(q)
            .clamp(self.min_ns, self.max_ns)
    }
}

/// An I/O slower than the outlier threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    /// Completion time, seconds since the sessions started.
    pub t_s: f64,
    pub op: Kind,
    pub session: u32,
    pub file: u32,
    pub offset_bytes: u64,
    pub len_bytes: u32,
    pub latency_ms: f64,
}

/// Everything one session measured inside the measurement window.
#[derive(Clone, Debug)]
pub struct SessionStats {
    pub ops: [OpStats; 3],
    pub outliers: Vec<Outlier>,
    pub outliers_unlisted: u64,
    /// An open-loop run's due-time latencies and lateness (`ops` holds the
    /// service times); None in a closed loop, where due = issue.
    pub open: Option<Box<DueStats>>,
}

impl SessionStats {
    pub fn new() -> Self {
        SessionStats {
            ops: Default::default(),
            outliers: Vec::with_capacity(64),
            outliers_unlisted: 0,
            open: None,
        }
    }

    /// Statistics of a session of an open-loop run (made before its start).
    pub fn open_loop() -> Self {
        SessionStats {
            open: Some(Box::default()),
            ..Self::new()
        }
    }

    #[inline]
    pub fn op(&mut self, k: Kind) -> &mut OpStats {
        &mut self.ops[k as usize]
    }

    /// Keeps an outlier without growing past the per-session cap.
    #[cold]
    pub fn outlier(&mut self, o: Outlier) {
        if self.outliers.len() < OUTLIERS_PER_SESSION {
            self.outliers.push(o);
        } else {
            self.outliers_unlisted += 1;
        }
    }

    pub fn merge(&mut self, other: &SessionStats) {
        for (a, b) in self.ops.iter_mut().zip(&other.ops) {
            a.merge(b);
        }
        self.outliers.extend_from_slice(&other.outliers);
        self.outliers_unlisted += other.outliers_unlisted;
        if let Some(o) = &other.open {
            self.open.get_or_insert_default().merge(o);
        }
    }
}

impl Default for SessionStats {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_histograms_equal_one_recorded_histogram() {
        let mut all = OpStats::default();
        let mut a = OpStats::default();
        let mut b = OpStats::default();
        for i in 1..=10_000u64 {
            let lat = i * 997 % 5_000_000 + 1_000;
            all.record(lat, 8192);
            if i % 3 == 0 {
                a.record(lat, 8192)
            } else {
                b.record(lat, 8192)
            }
        }
        a.merge(&b);
        assert_eq!(a.count, all.count);
        assert_eq!(a.bytes, all.bytes);
        assert_eq!(a.sum_ns, all.sum_ns);
        assert_eq!((a.min_ns, a.max_ns), (all.min_ns, all.max_ns));
        for q in [0.5, 0.9, 0.99, 0.999, 0.9999] {
            assert_eq!(a.quantile_ns(q), all.quantile_ns(q), "q={q}");
        }
    }

    #[test]
    fn histograms_grow_to_the_latencies_recorded() {
        let mut s = OpStats::default();
        let bins = |s: &OpStats| s.hist.distinct_values();
        // An event that never happens costs 256 bins (2 KiB), not 3712.
        assert_eq!(bins(&s), 256);
        s.record(5_000, 0); // 5 us
        let fast = bins(&s);
        assert!(fast <= 7 * 128, "{fast} bins for 5 us");
        s.record(MAX_LATENCY_NS + 1, 0); // clamped to 60 s
        assert!(bins(&s) > fast);
        let p50 = s.quantile_ns(0.5) as f64;
        assert!((p50 / 5_000.0 - 1.0).abs() < 0.01, "{p50}");
        let top = s.hist.value_at_quantile(1.0) as f64;
        assert!((top / MAX_LATENCY_NS as f64 - 1.0).abs() < 0.01, "{top}");
    }

    #[test]
    fn quantiles_are_within_one_percent() {
        let mut s = OpStats::default();
        for v in 1..=100_000u64 {
            s.record(v * 100, 4096); // 100 ns .. 10 ms, uniform
        }
        for (q, want) in [(0.5, 5_000_000.0), (0.9, 9_000_000.0), (0.99, 9_900_000.0)] {
            let got = s.quantile_ns(q) as f64;
            assert!(
                (got - want).abs() / want < 0.01,
                "q={q} got {got} want {want}"
            );
        }
        assert_eq!(s.quantile_ns(1.0), 10_000_000);
        assert_eq!(s.min_ns, 100);
        assert!((s.mean_ns() - 5_000_050.0).abs() < 1.0);
    }

    #[test]
    fn outliers_are_capped_not_grown() {
        let mut s = SessionStats::new();
        let o = Outlier {
            t_s: 1.0,
            op: Kind::Write,
            session: 0,
            file: 0,
            offset_bytes: 0,
            len_bytes: 8192,
            latency_ms: 600.0,
        };
        for _ in 0..OUTLIERS_PER_SESSION + 5 {
            s.outlier(o);
        }
        assert_eq!(s.outliers.len(), OUTLIERS_PER_SESSION);
        assert_eq!(s.outliers_unlisted, 5);
    }
}
