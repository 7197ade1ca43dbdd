//! The requests of raw I/O patterns as fio and IObench know them: random
//! read / write / mixed with a read percentage over a chosen distribution,
//! and sequential streams.
//! Sequential sessions each stream through their own slice of the data (as
//! fio's `offset_increment`), wrapping at its end, so sessions never overlap.

use crate::config::Pattern;
use crate::engine::OpKind;
use crate::rng::Rng;
use crate::workload::dist::BlockPicker;

/// One session's source of requests.
pub struct Requests {
    pattern: Pattern,
    /// Reads out of 100 for randrw.
    read_pct: u64,
    picker: BlockPicker,
    seq_first: u64,
    seq_len: u64,
    seq_pos: u64,
}

impl Requests {
    /// The workload of session `session` of `sessions` over `nblocks` blocks.
    pub fn new(
        pattern: Pattern,
        read_pct: u8,
        picker: BlockPicker,
        session: u32,
        sessions: u32,
        nblocks: u64,
    ) -> Self {
        let per = (nblocks / u64::from(sessions)).max(1);
        let first = (u64::from(session) * per).min(nblocks - 1);
        let len = per.min(nblocks - first);
        Requests {
            pattern,
            read_pct: u64::from(read_pct),
            picker,
            seq_first: first,
            seq_len: len,
            seq_pos: 0,
        }
    }
}

impl Requests {
    /// The next request: its direction and the global block it touches.
    #[inline]
    pub(crate) fn next_io(&mut self, rng: &mut Rng) -> (OpKind, u64) {
        match self.pattern {
            Pattern::Randread => (OpKind::Read, self.picker.next(rng)),
            Pattern::Randwrite => (OpKind::Write, self.picker.next(rng)),
            Pattern::Randrw => {
                let kind = if rng.below(100) < self.read_pct {
                    OpKind::Read
                } else {
                    OpKind::Write
                };
                (kind, self.picker.next(rng))
            }
            Pattern::Seqread | Pattern::Seqwrite => {
                let b = self.seq_first + self.seq_pos;
                self.seq_pos += 1;
                if self.seq_pos == self.seq_len {
                    self.seq_pos = 0;
                }
                let kind = if self.pattern == Pattern::Seqread {
                    OpKind::Read
                } else {
                    OpKind::Write
                };
                (kind, b)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dist::Distribution;

    fn raw(p: Pattern, pct: u8, s: u32, n: u32, blocks: u64) -> Requests {
        let picker = BlockPicker::new(Distribution::Uniform, blocks, None).unwrap();
        Requests::new(p, pct, picker, s, n, blocks)
    }

    #[test]
    fn sequential_sessions_stream_their_own_slice_and_wrap() {
        let mut rng = Rng::new(1);
        let mut a = raw(Pattern::Seqwrite, 0, 1, 4, 100);
        let got: Vec<u64> = (0..27).map(|_| a.next_io(&mut rng).1).collect();
        assert_eq!(&got[..3], &[25, 26, 27]);
        assert_eq!(got[24], 49);
        assert_eq!(&got[25..], &[25, 26]);
        assert!(matches!(a.next_io(&mut rng).0, OpKind::Write));
    }

    #[test]
    fn randrw_mix_follows_read_pct() {
        let mut rng = Rng::new(2);
        let mut w = raw(Pattern::Randrw, 30, 0, 1, 1000);
        let reads = (0..100_000)
            .filter(|_| w.next_io(&mut rng).0 == OpKind::Read)
            .count();
        assert!((reads as f64 / 100_000.0 - 0.30).abs() < 0.01, "{reads}");
        let mut r = raw(Pattern::Randread, 100, 0, 1, 1000);
        assert!((0..1000).all(|_| {
            let (k, b) = r.next_io(&mut rng);
            k == OpKind::Read && b < 1000
        }));
    }
}
