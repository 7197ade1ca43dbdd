//! What the blocks dbio writes hold, for storage that compresses and
//! deduplicates (`--compress-pct N`, `--dedupe-pct N`; docs/verify.md).
//!
//! * **Compressible**: every 512-byte sector keeps its stamp and a random
//!   part, and ends in a run of zeros of N% of the sector (as fio's
//!   `buffer_compress_percentage`, but per sector, so that every sector
//!   still carries its stamp). At most 90%: the stamp and the random word
//!   after it (48 bytes) stay.
//! * **Duplicate**: N% of the blocks written (chosen at random per write)
//!   are a byte-for-byte copy of one of [`POOL_BLOCKS`] pool blocks of the
//!   target. A copy cannot name its own place, so its stamps name its pool
//!   block (file [`POOL_FILE`], generation 0): verification checks that it
//!   is an intact pool block of this target, but cannot tell a copy from
//!   another copy misdirected over it, nor a lost write whose old content
//!   was a copy. The pool depends only on the target id, the block size and
//!   the compress setting, so copies written by the layout and by later runs
//!   dedupe with each other.
//!
//! With the defaults (0 and 0) writes are exactly [`block::refresh`]: two
//! predictable branches more per write.

use super::block::{self, Header, POOL_FILE, SECTOR};
use crate::rng::Rng;

pub use crate::config::content::{ContentError, ContentSpec, MAX_COMPRESS_PCT};

/// Blocks in a target's dedupe pool.
pub(crate) const POOL_BLOCKS: usize = 16;
/// Mixed into the target id to seed the pool's content.
const POOL_SALT: u64 = 0x706f_6f6c_6462_696f;

impl ContentSpec {
    /// Where the zeros start in every sector.
    pub(crate) fn zero_from(&self) -> usize {
        SECTOR - (SECTOR * usize::from(self.compress_pct) + 50) / 100
    }
}

/// Makes the content of blocks to write: fresh stamped blocks shaped by
/// the compress setting, or copies of the pool.
pub struct Content {
    zero_from: usize,
    dedupe_pct: u64,
    block_size: usize,
    /// [`POOL_BLOCKS`] sealed blocks (empty without dedupe).
    pool: Vec<u8>,
}

impl Content {
    /// The content of target `target`'s blocks of `block_size` bytes.
    pub fn new(spec: ContentSpec, block_size: u32, target: u32) -> Content {
        let bs = block_size as usize;
        let zero_from = spec.zero_from();
        let mut pool = Vec::new();
        if spec.dedupe_pct > 0 {
            pool = vec![0u8; POOL_BLOCKS * bs];
            let mut rng = Rng::new(u64::from(target) ^ POOL_SALT);
            for (k, b) in pool.chunks_exact_mut(bs).enumerate() {
                let h = Header {
                    block: k as u64,
                    generation: 0,
                    file: POOL_FILE,
                    size: block_size,
                    target,
                    seed: 0,
                };
                block::fill_shaped(b, h, &mut rng, zero_from);
            }
        }
        Content {
            zero_from,
            dedupe_pct: u64::from(spec.dedupe_pct),
            block_size: bs,
            pool,
        }
    }

    /// Copies a pool block into `buf` for a write chosen to be a duplicate.
    #[inline]
    fn copy(&self, buf: &mut [u8], rng: &mut Rng) -> bool {
        if self.dedupe_pct == 0 || rng.below(100) >= self.dedupe_pct {
            return false;
        }
        let k = rng.below(POOL_BLOCKS as u64) as usize;
        buf.copy_from_slice(&self.pool[k * self.block_size..(k + 1) * self.block_size]);
        true
    }

    /// The block `h` for a write from a buffer that already holds random
    /// data (or a block read earlier): see [`block::refresh`]. True when it
    /// is a dedupe copy.
    #[inline]
    pub fn write(&self, buf: &mut [u8], h: Header, rng: &mut Rng) -> bool {
        if self.copy(buf, rng) {
            return true;
        }
        if self.zero_from == SECTOR {
            block::refresh(buf, h, rng);
        } else {
            block::refresh_shaped(buf, h, rng, self.zero_from);
        }
        false
    }

    /// The block `h` made from scratch (the layout).
    #[inline]
    pub fn fill(&self, buf: &mut [u8], h: Header, rng: &mut Rng) {
        if !self.copy(buf, rng) {
            block::fill_shaped(buf, h, rng, self.zero_from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::verify;

    fn header(block: u64) -> Header {
        Header {
            block,
            generation: 5,
            file: 1,
            size: 4096,
            target: 0xabc,
            seed: 9,
        }
    }

    #[test]
    fn shaped_blocks_keep_their_stamps_and_end_sectors_in_zeros() {
        let spec = ContentSpec {
            compress_pct: 50,
            dedupe_pct: 0,
        };
        let c = Content::new(spec, 4096, 0xabc);
        let mut rng = Rng::new(3);
        let mut b = vec![0xffu8; 4096];
        assert!(!c.write(&mut b, header(7), &mut rng));
        assert_eq!(verify(&b, Some((1, 7))).unwrap(), header(7));
        for s in b.chunks_exact(SECTOR) {
            assert!(s[256..].iter().all(|&x| x == 0));
            assert!(s[40..256].iter().filter(|&&x| x == 0).count() < 10);
        }
        c.fill(&mut b, header(8), &mut rng);
        assert_eq!(verify(&b, Some((1, 8))).unwrap(), header(8));
    }

    #[test]
    fn dedupe_copies_are_identical_pool_blocks_of_the_target() {
        let spec = ContentSpec {
            compress_pct: 0,
            dedupe_pct: 40,
        };
        let c = Content::new(spec, 4096, 0xabc);
        let again = Content::new(spec, 4096, 0xabc);
        assert_eq!(c.pool, again.pool, "the pool depends only on the target");
        let mut rng = Rng::new(4);
        let mut b = vec![0u8; 4096];
        rng.fill(&mut b);
        let (mut copies, n) = (0, 10_000);
        for i in 0..n {
            if c.write(&mut b, header(i), &mut rng) {
                copies += 1;
                let h = verify(&b, Some((1, i))).unwrap();
                assert_eq!((h.file, h.target, h.generation), (POOL_FILE, 0xabc, 0));
                let k = h.block as usize;
                assert!(k < POOL_BLOCKS);
                assert_eq!(b, c.pool[k * 4096..(k + 1) * 4096]);
            } else {
                assert_eq!(verify(&b, Some((1, i))).unwrap(), header(i));
            }
        }
        assert!((3700..4300).contains(&copies), "{copies} copies of {n}");
    }

    #[test]
    fn out_of_range_percentages_are_refused() {
        let c = |compress_pct, dedupe_pct| ContentSpec {
            compress_pct,
            dedupe_pct,
        };
        assert!(c(90, 100).check().is_ok());
        assert!(
            c(91, 0)
                .check()
                .unwrap_err()
                .to_string()
                .contains("--compress-pct 91")
        );
        assert!(
            c(0, 101)
                .check()
                .unwrap_err()
                .to_string()
                .contains("--dedupe-pct 101")
        );
        assert_eq!(c(0, 0).zero_from(), SECTOR);
        assert_eq!(c(50, 0).zero_from(), 256);
        assert_eq!(c(90, 0).zero_from(), 51);
    }
}
