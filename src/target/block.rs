//! The block format. Every block dbio writes (at layout or by a write request)
//! starts with a 32-byte header so its content can be verified later:
//!
//! | bytes  | field                                                  |
//! |--------|--------------------------------------------------------|
//! | 0..4   | magic `DBIO`                                           |
//! | 4..8   | CRC-32C of bytes 8..len then bytes 0..4 (little-endian) |
//! | 8..16  | block number within its file                           |
//! | 16..24 | write generation (0 = layout; later writes are larger)  |
//! | 24..28 | file number                                            |
//! | 28..32 | block size in bytes                                    |
//!
//! The rest of the block is incompressible pseudo-random data.

use crate::rng::Rng;

pub const HEADER_LEN: usize = 32;
pub const MAGIC: [u8; 4] = *b"DBIO";

/// The identity a block's header carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub block: u64,
    pub generation: u64,
    pub file: u32,
    pub size: u32,
}

/// Why a block failed verification.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    #[error("no dbio header (magic {0:02x?})")]
    NoMagic([u8; 4]),
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    Checksum { stored: u32, computed: u32 },
    #[error("block holds file {file} block {block}, expected file {want_file} block {want_block}")]
    Misplaced {
        file: u32,
        block: u64,
        want_file: u32,
        want_block: u64,
    },
}

fn checksum(block: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&block[0..4]), &block[8..])
}

/// Writes a header for `h` into `block` and seals it with its checksum.
/// The payload (bytes 32..) must already be in place.
#[inline]
pub fn seal(block: &mut [u8], h: Header) {
    block[0..4].copy_from_slice(&MAGIC);
    block[8..16].copy_from_slice(&h.block.to_le_bytes());
    block[16..24].copy_from_slice(&h.generation.to_le_bytes());
    block[24..28].copy_from_slice(&h.file.to_le_bytes());
    block[28..32].copy_from_slice(&h.size.to_le_bytes());
    let c = checksum(block);
    block[4..8].copy_from_slice(&c.to_le_bytes());
}

/// Fills `block` with fresh pseudo-random data and seals it.
#[inline]
pub fn fill(block: &mut [u8], h: Header, rng: &mut Rng) {
    rng.fill(&mut block[HEADER_LEN..]);
    seal(block, h);
}

/// Makes a block unique without refilling all of it: a fresh random word at
/// the start of every 512-byte sector (like fio's scramble_buffers), then the
/// header and checksum. The rest keeps the buffer's earlier random content, so
/// a buffer filled once with [`fill`] stays incompressible and no two written
/// sectors are alike, at a fraction of the cost of a full refill.
#[inline]
pub fn refresh(block: &mut [u8], h: Header, rng: &mut Rng) {
    block[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&rng.next_u64().to_le_bytes());
    for sector in (512..block.len()).step_by(512) {
        block[sector..sector + 8].copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    seal(block, h);
}

/// Reads and checks a block's header; `want` = (file, block) to check placement.
pub fn verify(block: &[u8], want: Option<(u32, u64)>) -> Result<Header, BlockError> {
    let magic: [u8; 4] = block[0..4].try_into().expect("4 bytes");
    if magic != MAGIC {
        return Err(BlockError::NoMagic(magic));
    }
    let stored = u32::from_le_bytes(block[4..8].try_into().expect("4 bytes"));
    let computed = checksum(block);
    if stored != computed {
        return Err(BlockError::Checksum { stored, computed });
    }
    let h = Header {
        block: u64::from_le_bytes(block[8..16].try_into().expect("8 bytes")),
        generation: u64::from_le_bytes(block[16..24].try_into().expect("8 bytes")),
        file: u32::from_le_bytes(block[24..28].try_into().expect("4 bytes")),
        size: u32::from_le_bytes(block[28..32].try_into().expect("4 bytes")),
    };
    if let Some((want_file, want_block)) = want
        && (h.file != want_file || h.block != want_block)
    {
        return Err(BlockError::Misplaced {
            file: h.file,
            block: h.block,
            want_file,
            want_block,
        });
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_blocks_verify_and_corruption_is_caught() {
        let mut rng = Rng::new(1);
        let mut b = vec![0u8; 8192];
        let h = Header {
            block: 77,
            generation: 3,
            file: 2,
            size: 8192,
        };
        fill(&mut b, h, &mut rng);
        assert_eq!(verify(&b, Some((2, 77))), Ok(h));
        assert!(matches!(
            verify(&b, Some((2, 78))),
            Err(BlockError::Misplaced { .. })
        ));
        b[5000] ^= 1;
        assert!(matches!(verify(&b, None), Err(BlockError::Checksum { .. })));
        let zero = vec![0u8; 512];
        assert!(matches!(verify(&zero, None), Err(BlockError::NoMagic(_))));
    }

    #[test]
    fn refreshed_blocks_verify_and_change_every_sector() {
        let mut rng = Rng::new(3);
        let mut b = vec![0u8; 8192];
        let h = Header {
            block: 5,
            generation: 1,
            file: 0,
            size: 8192,
        };
        fill(&mut b, h, &mut rng);
        let before = b.clone();
        refresh(&mut b, Header { generation: 2, ..h }, &mut rng);
        assert_eq!(verify(&b, Some((0, 5))).unwrap().generation, 2);
        for (old, new) in before.chunks(512).zip(b.chunks(512)) {
            assert_ne!(old, new, "every sector changes");
        }
    }

    #[test]
    fn payloads_differ_between_blocks() {
        let mut rng = Rng::new(9);
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill(
            &mut a,
            Header {
                block: 0,
                generation: 0,
                file: 0,
                size: 4096,
            },
            &mut rng,
        );
        fill(
            &mut b,
            Header {
                block: 0,
                generation: 0,
                file: 0,
                size: 4096,
            },
            &mut rng,
        );
        assert_ne!(a[HEADER_LEN..], b[HEADER_LEN..]);
    }
}
