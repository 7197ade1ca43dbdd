//! The block format. Every block dbio writes (at layout or by a write
//! request) carries a 40-byte stamp at the start of **every 512-byte
//! sector**, so that what a later read finds can be named: a torn write
//! (sectors of different generations), a misdirected one (a stamp naming
//! another place), a stale or lost one (an older generation), zeros, and bit
//! rot (a sector whose checksum fails) — see `crate::verify::classify`.
//!
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0..4   | magic `DBIO`                                                 |
//! | 4..8   | CRC-32C of bytes 0..4 then 8..512 of the sector (little-endian) |
//! | 8..16  | byte offset of this sector in its file                       |
//! | 16..24 | generation of the block (0 = layout; later writes are larger) |
//! | 24..28 | file number                                                  |
//! | 28..32 | block size in bytes                                          |
//! | 32..36 | target id (random, kept in the target's manifest; 0 = a device) |
//! | 36..40 | seed of the run that wrote the block (low 32 bits)           |
//! | 40..48 | a fresh random word per write (the payload's first word)     |
//!
//! Bytes 8..40 are stored xor-masked with a key derived from bytes 40..48,
//! so that stamps, which repeat from sector to sector, do not compress
//! (without the mask a zstd of dbio's blocks saved 5%: `--compress-pct 0`
//! would not be incompressible). The rest of each sector is pseudo-random
//! data, and with `--compress-pct` a run of zeros at its end
//! ([`refresh_shaped`], `super::content`).
//!
//! A **dedupe copy** (`--dedupe-pct`) is a byte-for-byte copy of one of a
//! small pool of blocks per target: its stamps say file [`POOL_FILE`] and
//! the offset `entry * block size + sector * 512`, generation 0.

use super::crc::{BATCH, sector_crc, sector_crcs};
use crate::rng::Rng;

/// Bytes per stamped sector (the smallest unit a device writes atomically).
pub const SECTOR: usize = 512;
/// Bytes of the stamp at the start of every sector.
pub(crate) const STAMP_LEN: usize = 40;
pub const MAGIC: [u8; 4] = *b"DBIO";
/// The file number in the stamps of a dedupe pool block (`super::content`).
pub const POOL_FILE: u32 = u32::MAX;

/// The identity a block's stamps carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Block number within its file.
    pub block: u64,
    pub generation: u64,
    pub file: u32,
    pub size: u32,
    pub target: u32,
    pub seed: u32,
}

/// One sector's stamp as found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Stamp {
    /// Byte offset of the sector in its file.
    pub offset: u64,
    pub generation: u64,
    pub file: u32,
    pub size: u32,
    pub target: u32,
    pub seed: u32,
}

impl Stamp {
    /// Whether this is the stamp of a dedupe pool block (a dedupe copy).
    pub(crate) fn is_pool(&self) -> bool {
        self.file == POOL_FILE
    }

    /// The stamp sector `sector` of the block `h` carries.
    pub fn of(h: &Header, sector: usize) -> Stamp {
        Stamp {
            offset: h.block * u64::from(h.size) + (sector * SECTOR) as u64,
            generation: h.generation,
            file: h.file,
            size: h.size,
            target: h.target,
            seed: h.seed,
        }
    }

    /// The block whose sector `sector` this stamp says it is.
    pub fn header(&self, sector: usize) -> Header {
        let size = u64::from(self.size.max(1));
        Header {
            block: self.offset.saturating_sub((sector * SECTOR) as u64) / size,
            generation: self.generation,
            file: self.file,
            size: self.size,
            target: self.target,
            seed: self.seed,
        }
    }
}

/// What is wrong with one sector, when its stamp cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SectorError {
    /// Every byte is zero.
    Zero,
    /// No `DBIO` magic: not a sector dbio wrote (or its first bytes rotted).
    NoMagic([u8; 4]),
    /// The magic is there but the checksum does not match.
    Checksum { stored: u32, computed: u32 },
}

/// Why a block failed verification.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    #[error("no dbio stamp (magic {0:02x?})")]
    NoMagic([u8; 4]),
    #[error("sector {sector} is all zeros")]
    Zero { sector: usize },
    #[error(
        "checksum mismatch in sector {sector} (stored {stored:#010x}, computed {computed:#010x})"
    )]
    Checksum {
        sector: usize,
        stored: u32,
        computed: u32,
    },
    #[error("block holds file {file} block {block}, expected file {want_file} block {want_block}")]
    Misplaced {
        file: u32,
        block: u64,
        want_file: u32,
        want_block: u64,
    },
    #[error("torn: sector {sector} holds generation {found}, sector 0 generation {first}")]
    Torn {
        sector: usize,
        found: u64,
        first: u64,
    },
}

/// The four mask words of a sector whose bytes 40..48 are `key`: one
/// multiply each, different per word, so equal fields never mask alike.
#[inline]
fn mask(key: u64) -> [u64; 4] {
    let m = (key ^ 0x9e37_79b9_7f4a_7c15).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let m = m ^ (m >> 31);
    [
        m,
        m.wrapping_mul(0x94d0_49bb_1331_11eb),
        m.wrapping_mul(0xd6e8_feb8_6659_fd93),
        m.wrapping_mul(0xa076_1d64_78bd_642f),
    ]
}

#[inline]
fn stamp_sector(s: &mut [u8], st: &Stamp) {
    let m = mask(le64(s, 40));
    s[0..4].copy_from_slice(&MAGIC);
    let words = [
        st.offset,
        st.generation,
        u64::from(st.file) | u64::from(st.size) << 32,
        u64::from(st.target) | u64::from(st.seed) << 32,
    ];
    for (j, (w, m)) in words.iter().zip(m).enumerate() {
        s[8 + 8 * j..16 + 8 * j].copy_from_slice(&(w ^ m).to_le_bytes());
    }
}

/// Writes every sector's checksum, once its stamp and payload are in place.
#[inline]
fn seal_checksums(block: &mut [u8]) {
    let mut crcs = [0u32; BATCH];
    for chunk in block.chunks_mut(BATCH * SECTOR) {
        sector_crcs(chunk, &mut crcs);
        for (s, c) in chunk.chunks_exact_mut(SECTOR).zip(crcs) {
            s[4..8].copy_from_slice(&c.to_le_bytes());
        }
    }
}

/// Stamps every sector of `block` for `h` and seals each with its checksum.
/// The payload (each sector's bytes after its stamp) must already be in place.
#[inline]
pub(crate) fn seal(block: &mut [u8], h: Header) {
    let mut st = Stamp::of(&h, 0);
    for s in block.chunks_exact_mut(SECTOR) {
        stamp_sector(s, &st);
        st.offset += SECTOR as u64;
    }
    seal_checksums(block);
}

/// Fills `block` with fresh pseudo-random data and seals it.
#[inline]
pub fn fill(block: &mut [u8], h: Header, rng: &mut Rng) {
    rng.fill(block);
    seal(block, h);
}

/// [`fill`] with every sector's bytes from `zero_from` on zeroed (a
/// compressible block, `super::content`; `zero_from` >= 48).
#[inline]
pub(crate) fn fill_shaped(block: &mut [u8], h: Header, rng: &mut Rng, zero_from: usize) {
    rng.fill(block);
    zero_tails(block, zero_from);
    seal(block, h);
}

#[inline]
fn zero_tails(block: &mut [u8], zero_from: usize) {
    if zero_from < SECTOR {
        for s in block.chunks_exact_mut(SECTOR) {
            s[zero_from..].fill(0);
        }
    }
}

/// Makes a block unique without refilling all of it: a fresh random word
/// after the stamp of every sector (like fio's scramble_buffers), then the
/// stamps and checksums. The rest keeps the buffer's earlier random content,
/// so a buffer filled once with [`fill`] stays incompressible and no two
/// written sectors are alike, at a fraction of the cost of a full refill.
#[inline]
pub(crate) fn refresh(block: &mut [u8], h: Header, rng: &mut Rng) {
    let mut st = Stamp::of(&h, 0);
    for s in block.chunks_exact_mut(SECTOR) {
        s[STAMP_LEN..STAMP_LEN + 8].copy_from_slice(&rng.next_u64().to_le_bytes());
        stamp_sector(s, &st);
        st.offset += SECTOR as u64;
    }
    seal_checksums(block);
}

/// [`refresh`] that also zeroes every sector's bytes from `zero_from` on
/// (`--compress-pct`): the buffer may hold a block read earlier.
#[inline]
pub(crate) fn refresh_shaped(block: &mut [u8], h: Header, rng: &mut Rng, zero_from: usize) {
    zero_tails(block, zero_from);
    refresh(block, h, rng);
}

#[inline]
fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads and checks the stamp of one 512-byte sector.
#[inline]
pub(crate) fn read_stamp(s: &[u8]) -> Result<Stamp, SectorError> {
    read_stamp_checked(s, sector_crc(s))
}

/// [`read_stamp`] with the sector's checksum already computed
/// ([`super::crc::sector_crcs`]).
#[inline]
pub(crate) fn read_stamp_checked(s: &[u8], computed: u32) -> Result<Stamp, SectorError> {
    let magic: [u8; 4] = s[0..4].try_into().expect("4 bytes");
    if magic != MAGIC {
        if s.iter().all(|&b| b == 0) {
            return Err(SectorError::Zero);
        }
        return Err(SectorError::NoMagic(magic));
    }
    let stored = le32(s, 4);
    if stored != computed {
        return Err(SectorError::Checksum { stored, computed });
    }
    let m = mask(le64(s, 40));
    let w = |j: usize| le64(s, 8 + 8 * j) ^ m[j];
    let (fs, ts) = (w(2), w(3));
    Ok(Stamp {
        offset: w(0),
        generation: w(1),
        file: fs as u32,
        size: (fs >> 32) as u32,
        target: ts as u32,
        seed: (ts >> 32) as u32,
    })
}

/// The block size a valid stamp at the start of `sector` claims, if it is
/// one dbio could have written (a power of two from 512 to 1 MiB).
pub fn claimed_size(sector: &[u8]) -> Option<u32> {
    let size = read_stamp(sector.get(..SECTOR)?).ok()?.size;
    ((512..=1 << 20).contains(&size) && size.is_power_of_two()).then_some(size)
}

/// Checks every sector of a block: each stamp valid, all naming the same
/// block and generation, consistent with the block's length; `want` =
/// (file, block) to check placement, except for a dedupe copy, which names
/// its pool block. Returns the block's header.
pub fn verify(block: &[u8], want: Option<(u32, u64)>) -> Result<Header, BlockError> {
    let sector_err = |sector: usize, e: SectorError| match e {
        SectorError::Zero => BlockError::Zero { sector },
        SectorError::NoMagic(m) => BlockError::NoMagic(m),
        SectorError::Checksum { stored, computed } => BlockError::Checksum {
            sector,
            stored,
            computed,
        },
    };
    let first = read_stamp(&block[..SECTOR]).map_err(|e| sector_err(0, e))?;
    let h = first.header(0);
    // A dedupe copy is checked as the pool block it copies (no placement).
    let (want_file, want_block) = match want {
        Some(w) if h.file != POOL_FILE => w,
        _ => (h.file, h.block),
    };
    let misplaced = |st: &Stamp, i: usize| BlockError::Misplaced {
        file: st.file,
        block: st.header(i).block,
        want_file,
        want_block,
    };
    if h.file != want_file || h.block != want_block || h.size as usize != block.len() {
        return Err(misplaced(&first, 0));
    }
    for (i, s) in block.chunks_exact(SECTOR).enumerate().skip(1) {
        let st = read_stamp(s).map_err(|e| sector_err(i, e))?;
        if st.offset != first.offset + (i * SECTOR) as u64
            || st.file != first.file
            || st.target != first.target
        {
            return Err(misplaced(&st, i));
        }
        if st.generation != first.generation || st.seed != first.seed {
            return Err(BlockError::Torn {
                sector: i,
                found: st.generation,
                first: first.generation,
            });
        }
    }
    Ok(h)
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
