//! Whether a layout dbio made is still what it laid out, before it is reused.
//!
//! A data file replaced by an all-holes file of the same size, or truncated
//! and grown again, still matches the manifest's sizes; reusing it would
//! measure reads of holes. So every file must have no hole (`SEEK_HOLE`
//! finds none before its end: dbio writes every byte of a layout), and a
//! sample of its blocks, spread over each file, must carry valid dbio
//! headers (magic, CRC-32C) naming that file and block. A block torn
//! between two of dbio's writes of it (a run killed mid-write) is still
//! dbio's: `dbio verify` judges it, and the layout is reused.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rustix::fs::{Advice, SeekFrom, fadvise, seek};

use super::block::{BlockError, verify};

/// Blocks read over all files of a layout (at least one per file).
const SAMPLE_BLOCKS: u64 = 256;

/// Why the files of a layout are not as dbio laid them out, if they are not.
/// `file_size` bytes per file, `block_size` bytes per block; files are
/// numbered in order. Without `headers` (redo logs, which the log writer
/// overwrites) only holes count.
pub fn damage(paths: &[PathBuf], file_size: u64, block_size: u32, headers: bool) -> Option<String> {
    let bs = u64::from(block_size);
    let blocks = file_size / bs;
    let per_file = if headers {
        (SAMPLE_BLOCKS / paths.len().max(1) as u64).clamp(1, blocks.max(1))
    } else {
        0
    };
    for (i, p) in paths.iter().enumerate() {
        if let Some(why) = file_damage(p, i as u32, file_size, bs, per_file) {
            return Some(format!("{} {why}", p.display()));
        }
    }
    None
}

fn file_damage(path: &Path, file_no: u32, size: u64, bs: u64, samples: u64) -> Option<String> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    if let Ok(hole) = seek(&f, SeekFrom::Hole(0))
        && hole < size
    {
        return Some(format!(
            "has a hole at byte {hole} (a sparse, or truncated and regrown, file)"
        ));
    }
    let blocks = size / bs;
    if blocks == 0 || samples == 0 {
        return None;
    }
    let mut buf = vec![0u8; bs as usize];
    for k in 0..samples {
        // Spread over the file; one sample per file rotates with the file number.
        let b = if samples > 1 {
            k * (blocks - 1) / (samples - 1)
        } else {
            (u64::from(file_no) * 7919) % blocks
        };
        let at = b * bs;
        if let Err(e) = f.read_exact_at(&mut buf, at) {
            return Some(format!("cannot be read at byte {at} ({e})"));
        }
        match verify(&buf, Some((file_no, b))) {
            Ok(_) | Err(BlockError::Torn { .. }) => {}
            Err(e) => return Some(format!("block {b} is not the block dbio wrote there ({e})")),
        }
    }
    // The sample was read through the page cache: leave the cache as it was for the run.
    let _ = fadvise(&f, 0, None, Advice::DontNeed);
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::layout::{Shape, ensure};
    use std::sync::atomic::AtomicBool;

    #[test]
    fn holes_zeros_and_foreign_blocks_are_damage() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("d");
        let shape = Shape {
            files: 2,
            file_size: 2 << 20,
            block_size: 8192,
            grow: false,
            headers: true,
            content: Default::default(),
            streams: 2,
        };
        let (paths, _) = ensure(&t, shape, 1, false, &AtomicBool::new(false)).unwrap();
        assert_eq!(damage(&paths, 2 << 20, 8192, true), None);
        // Swapped files: each block names the other file.
        let (a, b) = (
            std::fs::read(&paths[0]).unwrap(),
            std::fs::read(&paths[1]).unwrap(),
        );
        std::fs::write(&paths[0], &b).unwrap();
        std::fs::write(&paths[1], &a).unwrap();
        let d = damage(&paths, 2 << 20, 8192, true).unwrap();
        assert!(d.contains("block 0 is not") && d.contains("file 1"), "{d}");
        std::fs::write(&paths[0], &a).unwrap();
        std::fs::write(&paths[1], &b).unwrap();
        assert_eq!(damage(&paths, 2 << 20, 8192, true), None);
        // Torn between two of dbio's writes (a run killed mid-write): dbio's.
        let st = crate::storage::block::read_stamp(&a[..512]).unwrap();
        let mut newer = vec![0u8; 8192];
        let h = crate::storage::block::Header {
            block: 0,
            generation: st.generation + 1,
            file: 0,
            size: 8192,
            target: st.target,
            seed: st.seed,
        };
        crate::storage::block::fill(&mut newer, h, &mut crate::rng::Rng::new(1));
        let mut torn = a.clone();
        torn[..4096].copy_from_slice(&newer[..4096]);
        std::fs::write(&paths[0], &torn).unwrap();
        assert_eq!(damage(&paths, 2 << 20, 8192, true), None);
        std::fs::write(&paths[0], &a).unwrap();
        // Truncated and regrown.
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&paths[1])
            .unwrap();
        f.set_len(1 << 20).unwrap();
        f.set_len(2 << 20).unwrap();
        let d = damage(&paths, 2 << 20, 8192, true).unwrap();
        assert!(d.contains("hole at byte 1048576"), "{d}");
        // Zeros written (allocated, no hole).
        std::fs::write(&paths[1], vec![0u8; 2 << 20]).unwrap();
        let d = damage(&paths, 2 << 20, 8192, true).unwrap();
        assert!(d.contains("all zeros"), "{d}");
    }
}
