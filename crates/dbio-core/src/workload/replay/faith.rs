//! A replay's faithfulness: what each thread counted (its [`Part`]: the
//! feed counts the captured side as it reads the trace, the sessions the
//! replayed side as they issue and reap) and the [`Faithfulness`] summary
//! that sets the two side by side — requests by operation and size, the
//! read/write mix, inter-arrival times, how late requests were issued
//! against their due times, achieved against captured rate, and latency
//! per operation.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::{ReplayConfig, Speed};
use crate::measure::stats::MAX_LATENCY_NS;
use crate::trace::Op;

/// Request sizes are counted by power of two, 512 bytes up to 8 MiB and more.
pub(crate) const SIZE_CLASSES: usize = 15;

/// The class of a request of `len` bytes: 0 for up to 512 bytes, then one
/// per doubling.
#[inline]
pub(crate) fn size_class(len: u32) -> usize {
    if len <= 512 {
        return 0;
    }
    ((32 - (len - 1).leading_zeros()) as usize - 9).min(SIZE_CLASSES - 1)
}

/// The largest size of class `c`, bytes.
pub(crate) fn class_bytes(c: usize) -> u64 {
    512 << c
}

#[inline]
pub(crate) fn op_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => 2,
        Op::Discard => 3,
    }
}

fn hist() -> Histogram<u64> {
    Histogram::new(2).expect("valid histogram precision")
}

#[inline]
fn record(h: &mut Histogram<u64>, ns: u64) {
    let _ = h.record(ns.clamp(1, MAX_LATENCY_NS));
}

/// Requests, bytes and sizes by operation, and latency per operation.
pub struct Side {
    pub requests: [u64; 4],
    pub bytes: [u64; 4],
    pub sizes: [[u64; SIZE_CLASSES]; 4],
    pub latency: [Histogram<u64>; 4],
    /// Gaps between one thread's (session's) consecutive issues.
    pub inter_arrival: Histogram<u64>,
    /// First and last issue, ns (captured: from the trace's start;
    /// replayed: from the run's start).
    pub first_ns: u64,
    pub last_ns: u64,
}

impl Default for Side {
    fn default() -> Self {
        Side {
            requests: [0; 4],
            bytes: [0; 4],
            sizes: [[0; SIZE_CLASSES]; 4],
            latency: [hist(), hist(), hist(), hist()],
            inter_arrival: hist(),
            first_ns: u64::MAX,
            last_ns: 0,
        }
    }
}

impl Side {
    /// A request of operation `op` issued at `issue_ns`, `gap_ns` after the
    /// one before it on its thread (None for a thread's first).
    #[inline]
    pub fn issued(&mut self, op: usize, len: u32, issue_ns: u64, gap_ns: Option<u64>) {
        self.requests[op] += 1;
        self.bytes[op] += u64::from(len);
        self.sizes[op][size_class(len)] += 1;
        self.first_ns = self.first_ns.min(issue_ns);
        self.last_ns = self.last_ns.max(issue_ns);
        if let Some(g) = gap_ns {
            record(&mut self.inter_arrival, g);
        }
    }

    #[inline]
    pub fn completed(&mut self, op: usize, latency_ns: u64) {
        record(&mut self.latency[op], latency_ns);
    }

    fn merge(&mut self, o: &Side) {
        for op in 0..4 {
            self.requests[op] += o.requests[op];
            self.bytes[op] += o.bytes[op];
            for c in 0..SIZE_CLASSES {
                self.sizes[op][c] += o.sizes[op][c];
            }
            let _ = self.latency[op].add(&o.latency[op]);
        }
        let _ = self.inter_arrival.add(&o.inter_arrival);
        self.first_ns = self.first_ns.min(o.first_ns);
        self.last_ns = self.last_ns.max(o.last_ns);
    }
}

/// What one thread of a replay counted.
pub struct Part {
    /// The trace as the feed read it (the feed thread only).
    pub captured: Side,
    /// What the sessions issued; latency from issue to completion.
    pub replayed: Side,
    /// Issue time minus due time, ns (timed replays).
    pub issue_error: Histogram<u64>,
    /// The same, of the requests that never waited for room in a full ring.
    pub issue_error_had_room: Histogram<u64>,
    /// Requests whose session's ring was full after they fell due: they
    /// waited for the target to complete others (timed replays).
    pub waited_for_room: u64,
    /// Completion minus due time, by operation (timed replays).
    pub due_latency: [Histogram<u64>; 4],
    /// Discards in the trace, not replayed.
    pub skipped: u64,
}

impl Default for Part {
    fn default() -> Self {
        Part {
            captured: Side::default(),
            replayed: Side::default(),
            issue_error: hist(),
            issue_error_had_room: hist(),
            waited_for_room: 0,
            due_latency: [hist(), hist(), hist(), hist()],
            skipped: 0,
        }
    }
}

impl Part {
    /// A request issued `ns` after its due time; `waited` when its ring
    /// was full after it fell due.
    #[inline]
    pub fn issue_error(&mut self, ns: u64, waited: bool) {
        let ns = ns.min(MAX_LATENCY_NS);
        let _ = self.issue_error.record(ns);
        if waited {
            self.waited_for_room += 1;
        } else {
            let _ = self.issue_error_had_room.record(ns);
        }
    }

    #[inline]
    pub fn due_latency(&mut self, op: usize, ns: u64) {
        record(&mut self.due_latency[op], ns);
    }

    pub fn merge(&mut self, o: &Part) {
        self.captured.merge(&o.captured);
        self.replayed.merge(&o.replayed);
        let _ = self.issue_error.add(&o.issue_error);
        let _ = self.issue_error_had_room.add(&o.issue_error_had_room);
        self.waited_for_room += o.waited_for_room;
        for op in 0..4 {
            let _ = self.due_latency[op].add(&o.due_latency[op]);
        }
        self.skipped += o.skipped;
    }
}

/// Microseconds at a few quantiles.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl Quantiles {
    fn of(h: &Histogram<u64>) -> Option<Quantiles> {
        let us = |ns: u64| ns as f64 / 1e3;
        (!h.is_empty()).then(|| Quantiles {
            count: h.len(),
            mean_us: h.mean() / 1e3,
            p50_us: us(h.value_at_quantile(0.5)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(h.max()),
        })
    }
}

/// Requests of one size class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeCount {
    /// The class's largest size (a power of two), bytes.
    pub up_to_bytes: u64,
    pub requests: u64,
}

/// One operation on one side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpSide {
    pub op: String,
    pub requests: u64,
    pub bytes: u64,
    pub mean_size_bytes: f64,
    pub sizes: Vec<SizeCount>,
    /// Captured: issue to completion as the block layer saw it; replayed:
    /// issue to completion of dbio's request.
    pub latency: Option<Quantiles>,
}

/// The captured or the replayed side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideSummary {
    pub requests: u64,
    /// Reads as a percentage of reads + writes.
    pub read_pct: f64,
    /// From the first issue to the last, seconds.
    pub span_s: f64,
    pub rate_per_s: f64,
    pub ops: Vec<OpSide>,
    /// Gaps between a thread's consecutive issues.
    pub inter_arrival: Option<Quantiles>,
}

impl SideSummary {
    fn of(s: &Side) -> SideSummary {
        let requests: u64 = s.requests.iter().sum();
        let span_s = s.last_ns.saturating_sub(s.first_ns.min(s.last_ns)) as f64 / 1e9;
        let rw = s.requests[0] + s.requests[1];
        let ops = Op::ALL
            .into_iter()
            .map(|op| {
                let i = op_index(op);
                OpSide {
                    op: op.name().into(),
                    requests: s.requests[i],
                    bytes: s.bytes[i],
                    mean_size_bytes: if s.requests[i] == 0 {
                        0.0
                    } else {
                        s.bytes[i] as f64 / s.requests[i] as f64
                    },
                    sizes: (0..SIZE_CLASSES)
                        .filter(|&c| s.sizes[i][c] > 0)
                        .map(|c| SizeCount {
                            up_to_bytes: class_bytes(c),
                            requests: s.sizes[i][c],
                        })
                        .collect(),
                    latency: Quantiles::of(&s.latency[i]),
                }
            })
            .filter(|o| o.requests > 0)
            .collect();
        SideSummary {
            requests,
            read_pct: if rw == 0 {
                0.0
            } else {
                100.0 * s.requests[0] as f64 / rw as f64
            },
            span_s,
            rate_per_s: if span_s > 0.0 {
                requests as f64 / span_s
            } else {
                0.0
            },
            ops,
            inter_arrival: Quantiles::of(&s.inter_arrival),
        }
    }
}

/// Due-time latency of one operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DueLatency {
    pub op: String,
    pub latency: Quantiles,
}

/// The replay beside its capture.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Faithfulness {
    /// `1x`, `2x`, `max`.
    pub speed: String,
    /// `modulo`, `scale`, or none (offsets as captured).
    pub map: Option<String>,
    pub captured: SideSummary,
    pub replayed: SideSummary,
    /// The rate the speed asks for: the captured rate times the speed
    /// (none at `max`).
    pub expected_rate_per_s: Option<f64>,
    /// How late requests were issued against their due times (timed replays).
    pub issue_error: Option<Quantiles>,
    /// Requests that waited for room in their session's full ring (the
    /// target fell behind), and the issue error of the others: the
    /// replay's own timing.
    #[serde(default)]
    pub waited_for_room: u64,
    #[serde(default)]
    pub issue_error_had_room: Option<Quantiles>,
    /// Completion minus due time, per operation (timed replays).
    pub due_latency: Vec<DueLatency>,
    /// Discards in the trace, not replayed.
    pub skipped_discards: u64,
}

impl Faithfulness {
    /// The summary of a replay's merged parts.
    pub fn of(rc: &ReplayConfig, parts: &[Part]) -> Faithfulness {
        let mut all = Part::default();
        for p in parts {
            all.merge(p);
        }
        let captured = SideSummary::of(&all.captured);
        let replayed = SideSummary::of(&all.replayed);
        let expected_rate_per_s = match rc.speed {
            Speed::Factor(f) => Some(captured.rate_per_s * f),
            Speed::Max => None,
        };
        Faithfulness {
            speed: rc.speed.to_string(),
            map: rc.map.map(|m| m.name().to_string()),
            expected_rate_per_s,
            issue_error: Quantiles::of(&all.issue_error),
            waited_for_room: all.waited_for_room,
            issue_error_had_room: Quantiles::of(&all.issue_error_had_room),
            due_latency: Op::ALL
                .into_iter()
                .filter_map(|op| {
                    Quantiles::of(&all.due_latency[op_index(op)]).map(|latency| DueLatency {
                        op: op.name().into(),
                        latency,
                    })
                })
                .collect(),
            skipped_discards: all.skipped,
            captured,
            replayed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_their_power_of_two() {
        assert_eq!(size_class(0), 0);
        assert_eq!(size_class(512), 0);
        assert_eq!(size_class(513), 1);
        assert_eq!(size_class(4096), 3);
        assert_eq!(size_class(8192), 4);
        assert_eq!(size_class(u32::MAX), SIZE_CLASSES - 1);
        assert_eq!(class_bytes(size_class(8192)), 8192);
    }
}
