//! Whether a device's ends hold data nobody can name: bytes that are neither
//! zeros nor blocks dbio wrote. A disk with unknown content is someone's data
//! (a signature dbio and blkid do not know, a raw database file, a wiped
//! superblock over a live filesystem), so the write gate refuses it unless
//! `--destroy-device` names it.
//!
//! The first and last MiB are read. Every 512-byte sector there must be all
//! zeros or lie inside a block carrying a valid dbio header (magic, CRC-32C)
//! that names its own place: file 0, block number = offset / block size, as
//! dbio writes a device.

use std::fs::File;
use std::io;
use std::path::Path;

use super::signatures::read_up_to;
use super::{DeviceError, io_err};
use crate::storage::block::{claimed_size, verify};

/// Bytes examined at each end; a multiple of every block size dbio writes.
const SPAN: u64 = 1 << 20;
const SECTOR: usize = 512;

/// The first byte of the device's ends that is neither zero nor part of a
/// block dbio wrote, if any.
pub(super) fn foreign_data(path: &Path, size: u64) -> Result<Option<u64>, DeviceError> {
    let file = File::open(path).map_err(io_err("open", path))?;
    scan(&file, size).map_err(io_err("read", path))
}

fn scan(file: &File, size: u64) -> io::Result<Option<u64>> {
    let head_len = size.min(SPAN);
    if let Some(o) = first_foreign(&read_up_to(file, 0, head_len)?, 0) {
        return Ok(Some(o));
    }
    // The tail from a SPAN-aligned offset, so dbio blocks start on their own alignment.
    let tail_start = size.saturating_sub(SPAN) & !(SPAN - 1);
    if tail_start < head_len {
        let rest = read_up_to(file, head_len, size - head_len)?;
        return Ok(first_foreign(&rest, head_len));
    }
    Ok(first_foreign(
        &read_up_to(file, tail_start, size - tail_start)?,
        tail_start,
    ))
}

/// The absolute offset of the first foreign byte in `buf`, which starts at
/// byte `base` of the device (`base` is a multiple of [`SPAN`] or the end of
/// the head, itself a multiple of [`SPAN`] unless the device is smaller).
pub(super) fn first_foreign(buf: &[u8], base: u64) -> Option<u64> {
    let mut i = 0;
    while i < buf.len() {
        let end = (i + SECTOR).min(buf.len());
        if buf[i..end].iter().all(|&b| b == 0) {
            i = end;
            continue;
        }
        match dbio_block_at(buf, i, base) {
            Some(len) => i += len,
            None => {
                let nz = buf[i..end].iter().position(|&b| b != 0).unwrap_or(0);
                return Some(base + (i + nz) as u64);
            }
        }
    }
    None
}

/// The length of the dbio block that starts at `buf[i]`, if one does.
fn dbio_block_at(buf: &[u8], i: usize, base: u64) -> Option<usize> {
    let size = claimed_size(buf.get(i..)?)?;
    let at = base + i as u64;
    if !at.is_multiple_of(u64::from(size)) {
        return None;
    }
    let block = buf.get(i..i + size as usize)?;
    verify(block, Some((0, at / u64::from(size)))).ok()?;
    Some(size as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::storage::block::{Header, fill};

    fn sealed(buf: &mut [u8], at: usize, bs: usize, block: u64, file: u32) {
        let mut rng = Rng::new(block);
        let h = Header {
            block,
            generation: 1,
            file,
            size: bs as u32,
            target: 0,
            seed: 1,
        };
        fill(&mut buf[at..at + bs], h, &mut rng);
    }

    #[test]
    fn zeros_and_dbio_blocks_are_known_anything_else_is_not() {
        let mut buf = vec![0u8; 1 << 20];
        assert_eq!(first_foreign(&buf, 0), None);
        sealed(&mut buf, 8192 * 3, 8192, 3, 0);
        sealed(&mut buf, 4096 * 40, 4096, 40, 0);
        assert_eq!(first_foreign(&buf, 0), None);
        // The same blocks read from further into the device: misplaced.
        assert_eq!(first_foreign(&buf, 1 << 20), Some((1 << 20) + 8192 * 3));
        // A block of another file (a data file copied onto the device).
        sealed(&mut buf, 0, 8192, 0, 1);
        assert_eq!(first_foreign(&buf, 0), Some(0));
        buf[..8192].fill(0);
        // A corrupted dbio block, and a stray byte.
        buf[8192 * 3 + 100] ^= 1;
        assert_eq!(first_foreign(&buf, 0), Some(8192 * 3));
        buf[8192 * 3..8192 * 4].fill(0);
        buf[700_001] = 7;
        assert_eq!(first_foreign(&buf, 0), Some(700_001));
    }

    #[test]
    fn both_ends_of_a_file_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("img");
        let f = File::create(&p).unwrap();
        let size = 64 * SPAN + 4096;
        f.set_len(size).unwrap();
        assert_eq!(foreign_data(&p, size).unwrap(), None);
        std::os::unix::fs::FileExt::write_at(&f, b"x", size - 1).unwrap();
        assert_eq!(foreign_data(&p, size).unwrap(), Some(size - 1));
        // Small files: head and tail overlap.
        let q = dir.path().join("small");
        std::fs::write(&q, [0u8, 0, 9]).unwrap();
        assert_eq!(foreign_data(&q, 3).unwrap(), Some(2));
    }
}
