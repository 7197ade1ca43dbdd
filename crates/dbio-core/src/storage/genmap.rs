//! The generation of every block, as raw writes hand them out and as their
//! acknowledgements fix them: what `dbio verify` expects to find.
//!
//! One atomic 64-bit word per block, no lock:
//!
//! | bits   | field                                                          |
//! |--------|----------------------------------------------------------------|
//! | 48..64 | the last generation handed out (wrapping 16-bit counter)       |
//! | 32..48 | the first generation of the current episode                    |
//! | 16..32 | writes of this block in flight                                 |
//! | 0..16  | the floor: the oldest generation the block may now hold        |
//!
//! An *episode* is a run of writes of one block that overlap: it starts
//! with a write issued while none of its block is in flight and ends when
//! the last write in flight is acknowledged. Every write before an episode
//! was acknowledged before it started, so when it ends the block holds one
//! of its writes — whichever the device applied last (two overlapping
//! writes may land in either order: fio's false verify failures) — and all
//! of them are at or above its first generation, which becomes the floor.
//! A write that fails leaves the episode's floor where it was (the block
//! may still hold what it held before).
//!
//! Generations are compared as serial numbers ([`newer`]): a block rewritten
//! fewer than 32,768 times between two looks is ordered correctly. At most
//! [`MAX_IN_FLIGHT`] writes may be in flight at once over the whole run.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering::AcqRel, Ordering::Acquire};

const GEN_SHIFT: u32 = 48;
const LOW_SHIFT: u32 = 32;
const FLIGHT_SHIFT: u32 = 16;
const FIELD: u64 = 0xffff;
/// Writes in flight a run may have at once for its map to count them.
pub(crate) const MAX_IN_FLIGHT: u64 = FIELD;

/// The generations of a target's blocks, shared by every session of a run.
pub struct GenMap {
    words: Box<[AtomicU64]>,
}

/// A write in flight: the generation its stamps carry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pending {
    pub generation: u16,
}

/// A block with no write in flight, as [`GenMap::settled`] saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Settled {
    pub issued: u16,
    pub floor: u16,
}

#[inline]
fn field(w: u64, shift: u32) -> u64 {
    (w >> shift) & FIELD
}

#[inline]
fn word(generation: u64, low: u64, flight: u64, floor: u64) -> u64 {
    generation << GEN_SHIFT | low << LOW_SHIFT | flight << FLIGHT_SHIFT | floor
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
                AtomicU64::new(word(g, u64::from(f), 0, u64::from(f)))
            })
            .collect();
        GenMap { words }
    }

    pub fn blocks(&self) -> u64 {
        self.words.len() as u64
    }

    /// A write of global block `b` is about to be issued.
    #[inline]
    pub(crate) fn begin(&self, b: u64) -> Pending {
        let mut generation = 0;
        let _ = self.words[b as usize].fetch_update(AcqRel, Acquire, |v| {
            let g = (field(v, GEN_SHIFT) + 1) & FIELD;
            let flight = field(v, FLIGHT_SHIFT);
            let low = if flight == 0 { g } else { field(v, LOW_SHIFT) };
            generation = g as u16;
            Some(word(g, low, flight + 1, v & FIELD))
        });
        Pending { generation }
    }

    /// A write of block `b` was acknowledged.
    #[inline]
    pub(crate) fn acknowledged(&self, b: u64) {
        let _ = self.words[b as usize].fetch_update(AcqRel, Acquire, |v| {
            let flight = field(v, FLIGHT_SHIFT) - 1;
            let low = field(v, LOW_SHIFT);
            let floor = if flight == 0 { low } else { v & FIELD };
            Some(word(field(v, GEN_SHIFT), low, flight, floor))
        });
    }

    /// The write of block `b` failed or was never issued: its episode
    /// leaves the floor where it was.
    #[inline]
    pub(crate) fn abandoned(&self, b: u64) {
        let _ = self.words[b as usize].fetch_update(AcqRel, Acquire, |v| {
            let floor = v & FIELD;
            let flight = field(v, FLIGHT_SHIFT) - 1;
            Some(word(field(v, GEN_SHIFT), floor, flight, floor))
        });
    }

    /// Block `b` as a reader sees it before reading: the last generation
    /// handed out and the floor, or None while a write of it is in flight
    /// (a read racing a write may see old, new or a mix: nothing to judge).
    #[inline]
    pub(crate) fn settled(&self, b: u64) -> Option<Settled> {
        let v = self.words[b as usize].load(Acquire);
        (field(v, FLIGHT_SHIFT) == 0).then_some(Settled {
            issued: field(v, GEN_SHIFT) as u16,
            floor: (v & FIELD) as u16,
        })
    }

    /// True when no write of block `b` has begun since `s` was taken: a
    /// read issued then and completed now saw the block as it was settled.
    #[inline]
    pub(crate) fn still(&self, b: u64, s: Settled) -> bool {
        field(self.words[b as usize].load(Acquire), GEN_SHIFT) as u16 == s.issued
    }

    /// How far any block's last generation handed out is past its floor:
    /// the next run starts this far past the floors, above anything this
    /// one may have left on disk (the later writes of an overlapping episode).
    pub fn span(&self) -> u16 {
        self.words
            .iter()
            .map(|w| {
                let v = w.load(Acquire);
                ((field(v, GEN_SHIFT) as u16).wrapping_sub((v & FIELD) as u16)) as i16
            })
            .max()
            .unwrap_or(0)
            .max(0) as u16
    }

    /// The floor of every block now.
    pub fn floors(&self) -> Vec<u16> {
        self.words
            .iter()
            .map(|w| (w.load(Acquire) & FIELD) as u16)
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
        m.acknowledged(1);
        assert_eq!(m.floors(), vec![0, 8]);
        let q = m.begin(1);
        m.abandoned(1);
        assert_eq!(q.generation, 9);
        assert_eq!(m.floors(), vec![0, 8], "a failed write fixes nothing");
        assert_eq!(m.begin(1).generation, 10);
    }

    #[test]
    fn overlapping_writes_raise_the_floor_to_the_first_when_all_are_done() {
        let m = GenMap::new(&[3], 0);
        let a = m.begin(0);
        m.begin(0); // issued while a is in flight
        m.acknowledged(0);
        assert_eq!(m.floors(), vec![3], "b in flight: a may not be last");
        let c = m.begin(0); // still the same episode
        m.acknowledged(0);
        m.acknowledged(0);
        assert_eq!(m.floors(), vec![a.generation], "a, b or c may be last");
        assert_eq!(newer(c.generation, a.generation), Ordering::Greater);
        let d = m.begin(0);
        m.acknowledged(0);
        assert_eq!(m.floors(), vec![d.generation]);
        // An episode with a failed write leaves the floor alone.
        m.begin(0);
        let _f = m.begin(0);
        m.acknowledged(0);
        m.abandoned(0);
        assert_eq!(m.floors(), vec![d.generation]);
        assert_eq!(m.span(), 2, "two generations handed out past the floor");
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
    fn a_reader_sees_a_block_settled_only_with_no_write_in_flight() {
        let m = GenMap::new(&[5], 0);
        let s = m.settled(0).expect("nothing in flight");
        assert_eq!(
            s,
            Settled {
                issued: 5,
                floor: 5
            }
        );
        assert!(m.still(0, s));
        m.begin(0);
        assert_eq!(m.settled(0), None, "a write in flight");
        assert!(!m.still(0, s), "a write began since the look");
        m.acknowledged(0);
        let t = m.settled(0).expect("acknowledged");
        assert_eq!(
            t,
            Settled {
                issued: 6,
                floor: 6
            }
        );
        assert!(!m.still(0, s));
        assert!(m.still(0, t));
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
                        m.begin(b);
                        m.acknowledged(b);
                    }
                });
            }
        });
        for w in m.words.iter() {
            let v = w.load(Acquire);
            assert_eq!(field(v, FLIGHT_SHIFT), 0, "nothing left in flight");
            assert_eq!(field(v, GEN_SHIFT), 10_000, "every write took a generation");
            assert_eq!(
                v & FIELD,
                field(v, LOW_SHIFT),
                "the floor is the last episode's"
            );
        }
    }
}
