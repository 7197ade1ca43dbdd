//! The per-second series of a run's own counters: ops, bytes, mean and p99
//! latency per operation kind.
//!
//! Each session writes into its own [`SessionSeries`] with plain relaxed
//! atomic loads and stores (no read-modify-write, no locks: only the owner
//! writes). A slot per second, four seconds deep, lets the collector read
//! second `s` after it is over while the session writes second `s + 1`.
//! Per-second percentiles come from a compact log-linear histogram
//! (16 sub-buckets per power of two: ≤ 6% error), enough for a time series.
//!
//! A paced run (`--rate`) also records each read's and write's latency from
//! its due time and its issue lateness ([`SeriesWriter::record_due`]) in
//! histograms of the same buckets beside the service ones. That part is
//! made when a paced session's writer is made ([`SeriesWriter::paced`]),
//! before its first request: a closed-loop run never makes it, never
//! touches it, and pays no memory for it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use serde::{Deserialize, Serialize};

use crate::measure::stats::Kind;

const SLOTS: usize = 4;
/// Buckets of the compact histogram: 0..16 ns exact, then 16 per power of two up to 2^37 ns.
pub const BUCKETS: usize = 544;
const NONE: u32 = u32::MAX;

struct Slot {
    sec: AtomicU32,
    ops: [AtomicU64; 3],
    bytes: [AtomicU64; 3],
    lat_sum_ns: [AtomicU64; 3],
    hist: [[AtomicU32; BUCKETS]; 3],
}

/// The kinds that have a due time: read and write (a sync follows a write).
pub const DUE_KINDS: usize = 2;

/// A slot's paced part: per kind (read, write), completions with a due
/// time, the sums and histograms of their due-time latency and lateness
/// (kind `k`'s buckets at `k * BUCKETS..`; on the heap, never on a
/// session's small stack).
struct DueSlot {
    ops: [AtomicU64; DUE_KINDS],
    due_sum_ns: [AtomicU64; DUE_KINDS],
    late_sum_ns: [AtomicU64; DUE_KINDS],
    due: Box<[AtomicU32]>,
    late: Box<[AtomicU32]>,
}

impl DueSlot {
    fn new() -> Self {
        let hist = || {
            (0..DUE_KINDS * BUCKETS)
                .map(|_| AtomicU32::new(0))
                .collect()
        };
        DueSlot {
            ops: Default::default(),
            due_sum_ns: Default::default(),
            late_sum_ns: Default::default(),
            due: hist(),
            late: hist(),
        }
    }

    /// Kind `k`'s due-time and lateness buckets.
    fn hists(&self, k: usize) -> [&[AtomicU32]; 2] {
        let at = k * BUCKETS..(k + 1) * BUCKETS;
        [&self.due[at.clone()], &self.late[at]]
    }

    fn clear(&self) {
        for k in 0..DUE_KINDS {
            self.ops[k].store(0, Relaxed);
            self.due_sum_ns[k].store(0, Relaxed);
            self.late_sum_ns[k].store(0, Relaxed);
        }
        for b in self.due.iter().chain(self.late.iter()) {
            b.store(0, Relaxed);
        }
    }
}

impl Slot {
    fn new() -> Self {
        Slot {
            sec: AtomicU32::new(NONE),
            ops: Default::default(),
            bytes: Default::default(),
            lat_sum_ns: Default::default(),
            hist: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU32::new(0))),
        }
    }
}

/// One session's per-second counters, shared with the collector.
pub struct SessionSeries {
    slots: [Slot; SLOTS],
    /// A paced session's due part, slot by slot (made by [`SeriesWriter::paced`]).
    due: OnceLock<Box<[DueSlot]>>,
}

impl SessionSeries {
    pub fn new() -> Box<Self> {
        Box::new(SessionSeries {
            slots: std::array::from_fn(|_| Slot::new()),
            due: OnceLock::new(),
        })
    }
}

#[inline]
fn bump64(a: &AtomicU64, by: u64) {
    a.store(a.load(Relaxed) + by, Relaxed);
}

/// The owning session's handle: records completions into the current second.
pub struct SeriesWriter<'a> {
    series: &'a SessionSeries,
    cur_sec: u32,
    /// A paced session's due part (None in a closed loop).
    due: Option<&'a [DueSlot]>,
}

impl<'a> SeriesWriter<'a> {
    pub fn new(series: &'a SessionSeries) -> Self {
        SeriesWriter {
            series,
            cur_sec: NONE,
            due: None,
        }
    }

    /// [`SeriesWriter::new`], for a session that is `paced` (`--rate`):
    /// makes the series' due part now, before its first request, for
    /// [`Self::record_due`]. Not paced, it is `new`.
    pub fn paced(series: &'a SessionSeries, paced: bool) -> Self {
        let mut w = SeriesWriter::new(series);
        if paced {
            let made = series
                .due
                .get_or_init(|| (0..SLOTS).map(|_| DueSlot::new()).collect());
            w.due = Some(made);
        }
        w
    }

    /// Records one operation that completed `t_ns` after the run started.
    #[inline]
    pub fn record(&mut self, kind: Kind, t_ns: u64, lat_ns: u64, bytes: u64) {
        let sec = (t_ns / 1_000_000_000) as u32;
        if sec != self.cur_sec {
            self.roll(sec);
        }
        let slot = &self.series.slots[sec as usize % SLOTS];
        let k = kind as usize;
        bump64(&slot.ops[k], 1);
        bump64(&slot.bytes[k], bytes);
        bump64(&slot.lat_sum_ns[k], lat_ns);
        let h = &slot.hist[k][bucket(lat_ns)];
        h.store(h.load(Relaxed) + 1, Relaxed);
    }

    /// Records a paced request (or operation) of kind `kind` that completed
    /// `t_ns` after the run started, `due_ns` after it fell due, and was
    /// issued `late_ns` after it fell due. A sync has no due time, and a
    /// writer not made [`Self::paced`] has no due part: both ignored.
    #[inline]
    pub(crate) fn record_due(&mut self, kind: Kind, t_ns: u64, due_ns: u64, late_ns: u64) {
        let k = match kind {
            Kind::Read => 0,
            Kind::Write => 1,
            Kind::Sync => return,
        };
        let Some(due) = self.due else { return };
        let sec = (t_ns / 1_000_000_000) as u32;
        if sec != self.cur_sec {
            self.roll(sec);
        }
        let d = &due[sec as usize % SLOTS];
        bump64(&d.ops[k], 1);
        bump64(&d.due_sum_ns[k], due_ns);
        bump64(&d.late_sum_ns[k], late_ns);
        for (hist, ns) in d.hists(k).into_iter().zip([due_ns, late_ns]) {
            let h = &hist[bucket(ns)];
            h.store(h.load(Relaxed) + 1, Relaxed);
        }
    }

    #[cold]
    fn roll(&mut self, sec: u32) {
        let slot = &self.series.slots[sec as usize % SLOTS];
        slot.sec.store(NONE, Release);
        for k in 0..3 {
            slot.ops[k].store(0, Relaxed);
            slot.bytes[k].store(0, Relaxed);
            slot.lat_sum_ns[k].store(0, Relaxed);
            for b in &slot.hist[k] {
                b.store(0, Relaxed);
            }
        }
        if let Some(due) = self.due {
            due[sec as usize % SLOTS].clear();
        }
        slot.sec.store(sec, Release);
        self.cur_sec = sec;
    }
}

/// The compact histogram bucket of a latency.
#[inline]
pub fn bucket(ns: u64) -> usize {
    if ns < 16 {
        return ns as usize;
    }
    let msb = 63 - ns.leading_zeros() as usize;
    let sub = ((ns >> (msb - 4)) & 15) as usize;
    ((msb - 3) * 16 + sub).min(BUCKETS - 1)
}

/// The middle of a bucket's range, in ns.
pub(crate) fn bucket_mid(i: usize) -> u64 {
    if i < 16 {
        return i as u64;
    }
    let msb = i / 16 + 3;
    let sub = (i % 16) as u64;
    let width = 1u64 << (msb - 4);
    ((16 + sub) << (msb - 4)) + width / 2
}

/// One second of one operation kind, over all sessions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KindPoint {
    pub ops: u64,
    pub bytes: u64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
}

/// One second of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SecondPoint {
    /// Seconds since the sessions started: this point covers [t_s, t_s + 1).
    pub t_s: u32,
    /// True while the ramp (warm-up) was still going.
    pub ramp: bool,
    pub read: KindPoint,
    pub write: KindPoint,
    pub sync: KindPoint,
}

impl SecondPoint {
    pub fn kind(&self, k: Kind) -> &KindPoint {
        match k {
            Kind::Read => &self.read,
            Kind::Write => &self.write,
            Kind::Sync => &self.sync,
        }
    }
}

/// One second's latency histograms over all sessions, per operation kind
/// (indexed by `Kind as usize`), in the compact buckets of [`bucket`].
pub type SecondHists = [[u64; BUCKETS]; 3];

/// Sums second `sec` over all sessions. Call it once the second is over.
pub fn collect(sessions: &[Box<SessionSeries>], sec: u32, ramp: bool) -> SecondPoint {
    collect_with_hists(sessions, sec, ramp).0
}

/// [`collect`], also giving the second's histograms (for an observer).
pub(crate) fn collect_with_hists(
    sessions: &[Box<SessionSeries>],
    sec: u32,
    ramp: bool,
) -> (SecondPoint, Box<SecondHists>) {
    let mut ops = [0u64; 3];
    let mut bytes = [0u64; 3];
    let mut sum = [0u64; 3];
    let mut hist: Box<SecondHists> = Box::new([[0u64; BUCKETS]; 3]);
    for s in sessions {
        let slot = &s.slots[sec as usize % SLOTS];
        if slot.sec.load(Acquire) != sec {
            continue; // no completion in that second
        }
        for k in 0..3 {
            ops[k] += slot.ops[k].load(Relaxed);
            bytes[k] += slot.bytes[k].load(Relaxed);
            sum[k] += slot.lat_sum_ns[k].load(Relaxed);
            if slot.ops[k].load(Relaxed) > 0 {
                for (acc, b) in hist[k].iter_mut().zip(&slot.hist[k]) {
                    *acc += u64::from(b.load(Relaxed));
                }
            }
        }
    }
    let point = |k: usize| KindPoint {
        ops: ops[k],
        bytes: bytes[k],
        lat_mean_us: if ops[k] > 0 {
            sum[k] as f64 / ops[k] as f64 / 1e3
        } else {
            0.0
        },
        lat_p99_us: quantile(&hist[k], 0.99) as f64 / 1e3,
    };
    let point = SecondPoint {
        t_s: sec,
        ramp,
        read: point(0),
        write: point(1),
        sync: point(2),
    };
    (point, hist)
}

/// One second's paced part over all sessions, per kind (read, write):
/// completions with a due time, and their due-time latency and issue
/// lateness (sums in ns, histograms in the compact buckets of [`bucket`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DueHists {
    pub ops: [u64; DUE_KINDS],
    pub due_sum_ns: [u64; DUE_KINDS],
    pub late_sum_ns: [u64; DUE_KINDS],
    pub due: [[u64; BUCKETS]; DUE_KINDS],
    pub late: [[u64; BUCKETS]; DUE_KINDS],
}

impl Default for DueHists {
    fn default() -> Self {
        DueHists {
            ops: [0; DUE_KINDS],
            due_sum_ns: [0; DUE_KINDS],
            late_sum_ns: [0; DUE_KINDS],
            due: [[0; BUCKETS]; DUE_KINDS],
            late: [[0; BUCKETS]; DUE_KINDS],
        }
    }
}

/// Sums second `sec`'s paced part over all sessions (all zero in a
/// closed-loop run). Call it once the second is over.
pub(crate) fn collect_due(sessions: &[Box<SessionSeries>], sec: u32) -> Box<DueHists> {
    let mut out = Box::<DueHists>::default();
    for s in sessions {
        let slot = &s.slots[sec as usize % SLOTS];
        let Some(due) = s.due.get() else {
            continue; // a closed loop
        };
        if slot.sec.load(Acquire) != sec {
            continue;
        }
        let d = &due[sec as usize % SLOTS];
        for k in 0..DUE_KINDS {
            let ops = d.ops[k].load(Relaxed);
            if ops == 0 {
                continue;
            }
            out.ops[k] += ops;
            out.due_sum_ns[k] += d.due_sum_ns[k].load(Relaxed);
            out.late_sum_ns[k] += d.late_sum_ns[k].load(Relaxed);
            let [due, late] = d.hists(k);
            for (acc, b) in out.due[k].iter_mut().zip(due) {
                *acc += u64::from(b.load(Relaxed));
            }
            for (acc, b) in out.late[k].iter_mut().zip(late) {
                *acc += u64::from(b.load(Relaxed));
            }
        }
    }
    out
}

/// The upper edge of a bucket (exclusive), in ns: bucket `i` holds
/// latencies in `[bucket_low(i), bucket_high(i))`.
pub fn bucket_high(i: usize) -> u64 {
    if i < 16 {
        return i as u64 + 1;
    }
    let msb = i / 16 + 3;
    let sub = (i % 16) as u64;
    (17 + sub) << (msb - 4)
}

/// The value at quantile `q` of a compact histogram (bucket middle), 0 if empty.
pub fn quantile(hist: &[u64; BUCKETS], q: f64) -> u64 {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return 0;
    }
    let want = ((q * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (i, &c) in hist.iter().enumerate() {
        seen += c;
        if seen >= want {
            return bucket_mid(i);
        }
    }
    bucket_mid(BUCKETS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for ns in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            100,
            1_000,
            12_345,
            1_000_000,
            59_000_000_000,
        ] {
            let b = bucket(ns);
            assert!(b >= last, "{ns}");
            last = b;
            let mid = bucket_mid(b) as f64;
            assert!(
                (mid - ns as f64).abs() <= ns as f64 * 0.07 + 1.0,
                "{ns} -> {mid}"
            );
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn a_buckets_high_edge_is_the_next_buckets_first_value() {
        for i in 0..BUCKETS - 1 {
            let high = bucket_high(i);
            assert_eq!(bucket(high - 1), i, "bucket {i} ends at {high}");
            assert_eq!(bucket(high), i + 1, "bucket {} starts at {high}", i + 1);
            assert!(bucket_mid(i) < high);
        }
    }

    #[test]
    fn collects_each_second_from_every_session() {
        let sessions: Vec<_> = (0..3).map(|_| SessionSeries::new()).collect();
        let mut writers: Vec<_> = sessions.iter().map(|s| SeriesWriter::new(s)).collect();
        for w in writers.iter_mut() {
            for n in 0..100u64 {
                w.record(Kind::Read, 500_000_000 + n, 10_000 * (n + 1), 4096);
            }
            w.record(Kind::Write, 1_200_000_000, 2_000_000, 8192);
        }
        let (p0, hists) = collect_with_hists(&sessions, 0, true);
        assert_eq!(p0, collect(&sessions, 0, true));
        assert_eq!(hists[Kind::Read as usize].iter().sum::<u64>(), 300);
        assert_eq!(hists[Kind::Write as usize].iter().sum::<u64>(), 0);
        assert_eq!(p0.read.ops, 300);
        assert_eq!(p0.read.bytes, 300 * 4096);
        assert!((p0.read.lat_mean_us - 505.0).abs() < 0.01);
        let p99 = p0.read.lat_p99_us;
        assert!((p99 - 990.0).abs() / 990.0 < 0.07, "{p99}");
        assert_eq!(p0.write.ops, 0);
        let p1 = collect(&sessions, 1, false);
        assert_eq!((p1.write.ops, p1.read.ops), (3, 0));
        assert!((p1.write.lat_mean_us - 2000.0).abs() < 0.01);
        // Second 5 reuses second 1's slot: second 1 is then gone, not mixed in.
        for w in writers.iter_mut() {
            w.record(Kind::Write, 5_100_000_000, 1_000, 8192);
        }
        assert_eq!(collect(&sessions, 1, false).write.ops, 0);
        assert_eq!(collect(&sessions, 5, false).write.ops, 3);
        assert_eq!(collect(&sessions, 3, false).write.ops, 0);
    }

    #[test]
    fn paced_requests_fill_the_due_part_and_a_closed_loop_leaves_it_empty() {
        let sessions: Vec<_> = (0..2).map(|_| SessionSeries::new()).collect();
        let mut paced = SeriesWriter::paced(&sessions[0], true);
        let mut closed = SeriesWriter::paced(&sessions[1], false);
        for n in 0..100u64 {
            let t = 200_000_000 + n;
            // 100 us of service, issued 0..99 ms after it fell due.
            paced.record(Kind::Read, t, 100_000, 4096);
            paced.record_due(Kind::Read, t, 100_000 + n * 1_000_000, n * 1_000_000);
            closed.record(Kind::Write, t, 50_000, 4096);
        }
        paced.record_due(Kind::Sync, 300_000_000, 1, 1); // no due time: ignored
        closed.record_due(Kind::Read, 300_000_000, 1, 1); // no due part: ignored
        assert!(sessions[1].due.get().is_none(), "a closed loop makes none");
        let d = collect_due(&sessions, 0);
        assert_eq!(d.ops, [100, 0]);
        assert_eq!(d.due[0].iter().sum::<u64>(), 100);
        assert_eq!(d.late[0].iter().sum::<u64>(), 100);
        assert!(d.due[1].iter().chain(&d.late[1]).all(|&n| n == 0));
        assert_eq!(d.due_sum_ns[0], 100 * 100_000 + 4950 * 1_000_000);
        assert_eq!(d.late_sum_ns[0], 4950 * 1_000_000);
        let due_p99 = quantile(&d.due[0], 0.99) as f64;
        assert!((due_p99 - 99.1e6).abs() / 99.1e6 < 0.07, "{due_p99}");
        let (p, h) = collect_with_hists(&sessions, 0, false);
        assert_eq!((p.read.ops, p.write.ops), (100, 100));
        assert!(quantile(&h[0], 0.99) < 110_000, "service stays 100 us");
        // The closed-loop session alone: nothing in the due part.
        assert_eq!(*collect_due(&sessions[1..], 0), DueHists::default());
        // Second 4 reuses second 0's slot: the paced part is cleared too.
        paced.record(Kind::Read, 4_000_000_000, 100_000, 4096);
        assert_eq!(collect_due(&sessions, 4).ops, [0, 0]);
        paced.record_due(Kind::Write, 4_000_000_001, 300, 0);
        let d4 = collect_due(&sessions, 4);
        assert_eq!((d4.ops, d4.due[0].iter().sum::<u64>()), ([0, 1], 0));
    }
}
