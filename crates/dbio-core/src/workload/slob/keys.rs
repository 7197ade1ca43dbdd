//! Where a SLOB operation goes: which operation comes next (an exact mix of
//! updates, scans and selects), which keys it touches, and where those rows
//! live on disk.
//!
//! As in SLOB, rows are loaded in random order: logically adjacent keys sit
//! in physically scattered blocks. The key → block map is a keyed bijection
//! (a Feistel network with cycle walking), so it costs no memory whatever
//! the scale. Schemas are disjoint regions of one tablespace whose extents
//! are spread round-robin over the datafiles, as a database spreads a
//! tablespace over its files.

use super::SlobConfig;
use super::undo::UndoArea;
use crate::rng::Rng;

/// Blocks per extent when a tablespace is spread over several datafiles.
pub(crate) const EXTENT_BLOCKS: u64 = 128;

/// A pseudo-random permutation of `0..n` (n ≥ 1).
#[derive(Clone, Debug)]
pub(crate) struct Permutation {
    n: u64,
    /// Bits of the Feistel domain (the fewest that hold `n - 1`), split into
    /// a left part of `bits - right_bits` and a right part of `right_bits`.
    bits: u32,
    right_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Self {
        assert!(n >= 1);
        let bits = 64 - (n.max(4) - 1).leading_zeros();
        let mut r = Rng::new(seed);
        Permutation {
            n,
            bits,
            right_bits: bits.div_ceil(2),
            keys: [r.next_u64(), r.next_u64(), r.next_u64(), r.next_u64()],
        }
    }

    /// The image of `x` (< n).
    #[inline]
    pub fn apply(&self, x: u64) -> u64 {
        debug_assert!(x < self.n);
        let mut y = x;
        loop {
            y = self.feistel(y);
            if y < self.n {
                return y;
            }
        }
    }

    /// One pass of an unbalanced Feistel network over `bits` bits: the two
    /// parts differ by at most one bit and swap sizes each round (an even
    /// number of rounds gives them back). The domain is the smallest power
    /// of two above `n - 1`, so cycle walking takes under two passes on
    /// average (a balanced network over `2 * right_bits` bits took up to
    /// four when `bits` is odd: 3.3 at SCALE 80000).
    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let (mut lb, mut rb) = (self.bits - self.right_bits, self.right_bits);
        let (mut l, mut r) = (x >> rb, x & ((1u64 << rb) - 1));
        for k in self.keys {
            let f = mix(r ^ k) & ((1u64 << lb) - 1);
            (l, r) = (r, l ^ f);
            (lb, rb) = (rb, lb);
        }
        (l << rb) | r
    }
}

#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What one SLOB operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpType {
    Select,
    Update,
    Scan,
}

/// The exact operation mix of one session: each operation is the kind
/// furthest behind its share (largest remainder), so after `i` operations
/// every kind's count is within one of `i × its percentage / 100`, and
/// exactly that whenever it is a whole number (every 100 operations). SLOB
/// draws at random and only allows some percentages; here every percentage
/// is exact.
#[derive(Clone, Debug)]
pub(crate) struct OpMix {
    /// Percentages of update, scan, select.
    pct: [u64; 3],
    done: [u64; 3],
    i: u64,
}

impl OpMix {
    pub fn new(update_pct: u8, scan_pct: u8) -> Self {
        let (u, s) = (u64::from(update_pct), u64::from(scan_pct));
        OpMix {
            pct: [u, s, 100 - u - s],
            done: [0; 3],
            i: 0,
        }
    }

    #[inline]
    pub(crate) fn next_op(&mut self) -> OpType {
        self.i += 1;
        // Deficit of each kind in hundredths of an operation.
        let deficit = |k: usize| (self.i * self.pct[k]) as i64 - (100 * self.done[k]) as i64;
        let mut pick = 0;
        for k in 1..3 {
            if deficit(k) > deficit(pick) {
                pick = k;
            }
        }
        self.done[pick] += 1;
        [OpType::Update, OpType::Scan, OpType::Select][pick]
    }
}

/// Where a block of the tablespace lives: (datafile, byte offset).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tablespace {
    pub datafiles: u32,
    pub block_size: u32,
    /// The first byte of the data in each datafile (a rank's region of a
    /// shared device; else 0).
    pub base: u64,
    /// `--flavor innodb`: the undo pages, numbered after the tablespace's
    /// blocks, in a file of their own (`undo`).
    pub undo: Option<UndoArea>,
}

impl Tablespace {
    #[inline]
    pub(crate) fn locate(&self, block: u64) -> (u32, u64) {
        if let Some(at) = self.undo.and_then(|u| u.locate(block, self.block_size)) {
            return at;
        }
        let files = u64::from(self.datafiles);
        let extent = block / EXTENT_BLOCKS;
        let file = (extent % files) as u32;
        let in_file = (extent / files) * EXTENT_BLOCKS + block % EXTENT_BLOCKS;
        (file, self.base + in_file * u64::from(self.block_size))
    }
}

/// Picks the keys of each operation for one session.
#[derive(Clone, Debug)]
pub(crate) struct KeyPicker {
    /// Rows per schema.
    scale: u64,
    schema: u64,
    work_unit: u64,
    scan_blocks: u64,
    hot: Option<(u64, u64, u32)>,
    hot_schema_every: Option<u32>,
    perm: Permutation,
    ops: u64,
}

impl KeyPicker {
    pub fn new(cfg: &SlobConfig, schema: u32, seed: u64) -> Self {
        let scale = cfg.scale_blocks;
        let hot = cfg.hotspot.map(|h| {
            let bs = u64::from(cfg.block_size);
            let off = (h.offset_bytes / bs).min(scale - 1);
            let size = (h.size_bytes / bs).clamp(1, scale - off);
            (off, size, h.every)
        });
        KeyPicker {
            scale,
            schema: u64::from(schema),
            work_unit: u64::from(cfg.work_unit),
            scan_blocks: u64::from(cfg.scan_blocks),
            hot,
            hot_schema_every: cfg.hot_schema_every,
            perm: Permutation::new(scale, seed),
            ops: 0,
        }
    }

    /// The schema and first key of the next operation's range of `len` keys.
    #[inline]
    fn start(&mut self, rng: &mut Rng, len: u64) -> (u64, u64) {
        self.ops += 1;
        let schema = match self.hot_schema_every {
            Some(n) if self.ops.is_multiple_of(u64::from(n)) => 0,
            _ => self.schema,
        };
        let span = self.scale.saturating_sub(len) + 1;
        let key = match self.hot {
            Some((off, size, every)) if self.ops.is_multiple_of(u64::from(every)) => {
                off + rng.below(size.saturating_sub(len) + 1).min(span - 1)
            }
            _ => rng.below(span),
        };
        (schema, key)
    }

    /// The schema and first key of the next select or update, and its
    /// number of keys (`key..key + n`): a real database looks rows up by key.
    #[inline]
    pub(crate) fn key_range(&mut self, rng: &mut Rng) -> (u64, u64, u64) {
        let n = self.work_unit.min(self.scale);
        let (schema, key) = self.start(rng, n);
        (schema, key, n)
    }

    /// The tablespace blocks of the next select or update, in key order
    /// (logically adjacent rows, physically scattered).
    #[inline]
    pub fn work_unit(&mut self, rng: &mut Rng, out: &mut [u64]) -> usize {
        let n = (self.work_unit.min(self.scale)) as usize;
        let (schema, key) = self.start(rng, n as u64);
        for (i, b) in out[..n].iter_mut().enumerate() {
            *b = schema * self.scale + self.perm.apply(key + i as u64);
        }
        n
    }

    /// The first tablespace block of the next scan: `scan_blocks` physically
    /// contiguous blocks of the schema's region.
    #[inline]
    pub fn scan(&mut self, rng: &mut Rng) -> u64 {
        let len = self.scan_blocks.min(self.scale);
        let (schema, key) = self.start(rng, len);
        schema * self.scale + key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x);
                assert!(y < n);
                assert!(!seen[y as usize], "n={n}: {y} hit twice");
                seen[y as usize] = true;
            }
        }
    }

    #[test]
    fn cycle_walking_takes_under_two_passes_on_average() {
        // 80000 needs 17 bits: a balanced network over 18 bits took 3.3.
        for n in [80_000u64, 10_000, 1 << 16, (1 << 16) + 1] {
            let p = Permutation::new(n, 3);
            let mut passes = 0u64;
            for x in 0..n {
                let mut y = x;
                loop {
                    passes += 1;
                    y = p.feistel(y);
                    if y < n {
                        break;
                    }
                }
            }
            let avg = passes as f64 / n as f64;
            assert!(avg < 2.0, "n={n}: {avg:.2} passes per key");
        }
    }

    #[test]
    fn adjacent_keys_are_scattered() {
        let p = Permutation::new(1 << 20, 7);
        let adjacent = (0..1000)
            .filter(|&k| p.apply(k).abs_diff(p.apply(k + 1)) <= 1)
            .count();
        assert!(
            adjacent < 5,
            "{adjacent} of 1000 neighbours stayed neighbours"
        );
    }

    #[test]
    fn op_mix_is_exact() {
        for (u, s) in [
            (0u8, 0u8),
            (20, 0),
            (33, 10),
            (100, 0),
            (1, 99),
            (50, 50),
            (7, 0),
            (0, 100),
        ] {
            let mut m = OpMix::new(u, s);
            let mut n = [0u64; 3];
            for i in 1..=1000u64 {
                match m.next_op() {
                    OpType::Update => n[0] += 1,
                    OpType::Scan => n[1] += 1,
                    OpType::Select => n[2] += 1,
                }
                for (k, p) in [u64::from(u), u64::from(s), u64::from(100 - u - s)]
                    .into_iter()
                    .enumerate()
                {
                    let exact = i * p;
                    assert!(
                        100 * n[k] + 100 > exact && 100 * n[k] < exact + 100,
                        "u={u} s={s} i={i} kind {k}: {} vs {}",
                        n[k],
                        exact as f64 / 100.0
                    );
                    if exact % 100 == 0 {
                        assert_eq!(n[k], exact / 100, "u={u} s={s} i={i} kind {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn extents_round_robin_over_datafiles() {
        let ts = Tablespace {
            datafiles: 4,
            block_size: 8192,
            base: 0,
            undo: None,
        };
        assert_eq!(ts.locate(0), (0, 0));
        assert_eq!(ts.locate(127), (0, 127 * 8192));
        assert_eq!(ts.locate(128), (1, 0));
        assert_eq!(ts.locate(4 * 128), (0, 128 * 8192));
        let one = Tablespace {
            datafiles: 1,
            block_size: 8192,
            base: 1 << 20,
            undo: None,
        };
        assert_eq!(one.locate(1000), (0, (1 << 20) + 1000 * 8192));
    }
}
