//! The generation of every block, as raw writes hand them out and as their
//! acknowledgements fix them: what `dbio verify` expects to find.
//!
//! One atomic 64-bit word per block, no lock:
//!
//! | bits   | field                                                          |
//! |--------|----------------------------------------------------------------|
//! | 48..64 | the last generation handed out (wrapping 16-bit counter)       |
//! | 16..48 | writes of this block in flight                                 |
//! | 0..16  | the floor: the oldest generation the block may now hold        |
//!
//! A write takes the next generation and counts itself in flight in one
//! `fetch_add`. When it is acknowledged it leaves the flight count, and if
//! nothing else was in flight when it was issued, it raises the floor to its
//! own generation (every earlier write was acknowledged before it was issued,
//! so the storage must apply it last). A write issued while another write of
//! the same block was in flight leaves the floor alone: the device may apply
//! the two in either order (fio's false verify failures with overlapping
//! writes), so either generation is right, and both are at or above the floor.
//!
//! Generations are compared as serial numbers ([`newer`]): a block rewritten
//! fewer than 32,768 times between two looks is ordered correctly.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering::AcqRel};

const GEN_ONE: u64 = 1 << 48;
const FLIGHT_ONE: u64 = 1 << 16;
const FLIGHT_MASK: u64 = 0xffff_ffff << 16;
const FLOOR_MASK: u64 = 0xffff;

/// The generations of a target's blocks, shared by every session of a run.
pub struct GenMap {
    words: Box<[AtomicU64]>,
}

/// A write in flight: the generation its stamps carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending {
    pub generation: u16,
    /// Nothing else of its block was in flight when it was issued.
    alone: bool,
}

impl GenMap {
    /// A map whose blocks hold `floors` (the state kept from earlier runs);
    /// new generations start `skip` past the floor (after a run that ended
    /// without its last sync point, past what it may have written since).
    pub fn new(floors: &[u16], skip: u16) -> GenMap {
        let words = floors
            .iter()
            .map(|&f| {
                let g = u64::from(f.wrapping_add(skip));
                AtomicU64::new(g << 48 | u64::from(f))
            })
            .collect();
        GenMap { words }
    }

    pub fn blocks(&self) -> u64 {
        self.words.len() as u64
    }

    /// A write of global block `b` is about to be issued.
    #[inline]
    pub fn begin(&self, b: u64) -> Pending {
        let old = self.words[b as usize].fetch_add(GEN_ONE | FLIGHT_ONE, AcqRel);
        Pending {
            generation: ((old >> 48) as u16).wrapping_add(1),
            alone: old & FLIGHT_MASK == 0,
        }
    }

    /// The write `p` of block `b` was acknowledged.
    #[inline]
    pub fn acknowledged(&self, b: u64, p: Pending) {
        let w = &self.words[b as usize];
        if p.alone {
            let floor = u64::from(p.generation);
            let _ = w.fetch_update(AcqRel, std::sync::atomic::Ordering::Acquire, |v| {
                Some((v - FLIGHT_ONE) & !FLOOR_MASK | floor)
            });
        } else {
            w.fetch_sub(FLIGHT_ONE, AcqRel);
        }
    }

    /// The write of block `b` failed or was never issued: it fixes nothing.
    #[inline]
    pub fn abandoned(&self, b: u64) {
        self.words[b as usize].fetch_sub(FLIGHT_ONE, AcqRel);
    }

    /// The floor of every block now.
    pub fn floors(&self) -> Vec<u16> {
        self.words
            .iter()
            .map(|w| (w.load(std::sync::atomic::Ordering::Acquire) & FLOOR_MASK) as u16)
            .collect()
    }
}

/// How generation `a` compares with `b` as 16-bit serial numbers.
#[inline]
pub fn newer(a: u16, b: u16) -> Ordering {
    (a.wrapping_sub(b) as i16).cmp(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_alone_raises_the_floor_when_acknowledged() {
        let m = GenMap::new(&[0, 7], 0);
        let p = m.begin(1);
        assert_eq!(p.generation, 8);
        assert_eq!(m.floors(), vec![0, 7], "in flight: nothing fixed yet");
        m.acknowledged(1, p);
        assert_eq!(m.floors(), vec![0, 8]);
        let q = m.begin(1);
        m.abandoned(1);
        assert_eq!(q.generation, 9);
        assert_eq!(m.floors(), vec![0, 8], "a failed write fixes nothing");
        assert_eq!(m.begin(1).generation, 10);
    }

    #[test]
    fn overlapping_writes_leave_the_floor_at_the_older_one() {
        let m = GenMap::new(&[3], 0);
        let a = m.begin(0);
        let b = m.begin(0); // issued while a is in flight
        m.acknowledged(0, b);
        assert_eq!(m.floors(), vec![3], "b overlapped a: either may be last");
        m.acknowledged(0, a);
        assert_eq!(m.floors(), vec![a.generation]);
        assert_eq!(newer(b.generation, a.generation), Ordering::Greater);
        let c = m.begin(0);
        m.acknowledged(0, c);
        assert_eq!(m.floors(), vec![c.generation]);
    }

    #[test]
    fn generations_wrap_as_serial_numbers_and_skip_after_a_crash() {
        let m = GenMap::new(&[u16::MAX], 0);
        let p = m.begin(0);
        assert_eq!(p.generation, 0);
        assert_eq!(newer(p.generation, u16::MAX), Ordering::Greater);
        assert_eq!(newer(5, 5), Ordering::Equal);
        assert_eq!(newer(5, 40000), Ordering::Greater);
        let s = GenMap::new(&[10], 4096);
        assert_eq!(s.begin(0).generation, 4107);
        assert_eq!(s.floors(), vec![10]);
    }

    #[test]
    fn many_threads_on_few_blocks_keep_the_counts_exact() {
        let m = GenMap::new(&[0; 4], 0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let m = &m;
                s.spawn(move || {
                    for i in 0..10_000u64 {
                        let b = (i + t) % 4;
                        let p = m.begin(b);
                        m.acknowledged(b, p);
                    }
                });
            }
        });
        for w in m.words.iter() {
            let v = w.load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(v & FLIGHT_MASK, 0, "nothing left in flight");
            assert_eq!(v >> 48, 10_000, "every write took a generation");
        }
    }
}
