//! Which writes a run has in flight: `dbio-inflight` beside the lost-write
//! map, one slot per session and buffer slot, mapped shared into the run.
//! A session marks a write in its slot before issuing it and clears the
//! slot when the write is acknowledged: one plain store each, to cache
//! lines no other thread writes, no lock, no system call. When the run is
//! killed (kill -9, a crash of dbio) the kernel keeps the file's pages, so
//! `dbio verify` knows exactly which blocks may hold part of a write:
//! those, and no others, were torn by the interruption rather than by the
//! storage. The record is trusted only in the boot that wrote it: after a
//! reboot (a power cut, a kernel crash) its pages may never have reached
//! the disk (see `genmap_file`: such an interruption is recorded as one
//! whose writes in flight are unknown).
//!
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0..8   | magic `DBIOINFL`                                             |
//! | 8..12  | format (1)                                                   |
//! | 12..16 | target id (the manifest's)                                   |
//! | 16..20 | sessions                                                     |
//! | 20..24 | slots per session (a multiple of 8: whole cache lines)       |
//! | 24..60 | the boot id (`/proc/sys/kernel/random/boot_id`)              |
//! | 64..   | the slots, u64 little-endian: 0 = empty, else (global block + 1) << 16 \| generation |

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

pub const NAME: &str = "dbio-inflight";
const MAGIC: &[u8; 8] = b"DBIOINFL";
const FORMAT: u32 = 1;
const HEADER: usize = 64;
const BOOT_ID: std::ops::Range<usize> = 24..60;
/// Slots per cache line.
const LINE: usize = 8;

/// A write that may have been in flight when a run ended without its final
/// sync point: the block and the generation its stamps carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Write {
    pub block: u64,
    pub generation: u16,
}

/// A run's record, mapped shared: each session's slots.
pub(crate) struct Record {
    base: NonNull<AtomicU64>,
    /// Bytes mapped.
    len: usize,
    sessions: usize,
    stride: usize,
}

// SAFETY: the mapping is only read and written through atomics, and lives
// as long as the record.
unsafe impl Send for Record {}
unsafe impl Sync for Record {}

#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {source}", .path.display())]
pub struct RecordError {
    path: PathBuf,
    what: &'static str,
    source: std::io::Error,
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(NAME)
}

/// This boot's id (36 characters; zeros where the kernel does not say).
fn boot_id() -> [u8; 36] {
    let mut id = [0u8; 36];
    if let Ok(s) = fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        let s = s.trim().as_bytes();
        if s.len() == id.len() {
            id.copy_from_slice(s);
        }
    }
    id
}

impl Record {
    /// A fresh record for `sessions` sessions of `depth` writes in flight
    /// each, put in place of any left in `dir` (a new file, renamed over it).
    pub fn create(
        dir: &Path,
        target: u32,
        sessions: u32,
        depth: u32,
    ) -> Result<Record, RecordError> {
        let p = dir.join(format!("{NAME}.tmp"));
        let err = |what| {
            let p = p.clone();
            move |source| RecordError {
                path: p,
                what,
                source,
            }
        };
        let stride = (depth as usize).div_ceil(LINE) * LINE;
        let len = HEADER + 8 * stride * sessions as usize;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .map_err(err("create"))?;
        let mut header = [0u8; HEADER];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&FORMAT.to_le_bytes());
        header[12..16].copy_from_slice(&target.to_le_bytes());
        header[16..20].copy_from_slice(&sessions.to_le_bytes());
        header[20..24].copy_from_slice(&(stride as u32).to_le_bytes());
        header[BOOT_ID].copy_from_slice(&boot_id());
        f.set_len(len as u64).map_err(err("size"))?;
        f.write_all_at(&header, 0).map_err(err("write"))?;
        // SAFETY: a fresh shared mapping of the whole file, unmapped on drop.
        let ptr = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
                &f,
                0,
            )
        }
        .map_err(|e| err("map")(e.into()))?;
        let base = NonNull::new(ptr.cast::<AtomicU64>()).expect("mmap returns a mapping");
        let record = Record {
            base,
            len,
            sessions: sessions as usize,
            stride,
        };
        fs::rename(&p, path(dir)).map_err(err("rename"))?;
        Ok(record)
    }

    /// Session `id`'s slots, one per buffer slot (cache-line aligned).
    pub fn session(&self, id: u32) -> &[AtomicU64] {
        assert!((id as usize) < self.sessions, "session {id} has no slots");
        // SAFETY: inside the mapping (HEADER is a multiple of 8 and of the
        // line), which lives as long as `self`.
        unsafe {
            let first = self
                .base
                .as_ptr()
                .add(HEADER / 8 + id as usize * self.stride);
            std::slice::from_raw_parts(first, self.stride)
        }
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `create`, no longer borrowed.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A write of global block `block` at `generation` is about to be issued.
#[inline]
pub fn mark(slot: &AtomicU64, block: u64, generation: u16) {
    slot.store((block + 1) << 16 | u64::from(generation), Relaxed);
}

/// The slot's write was acknowledged (or failed).
#[inline]
pub fn clear(slot: &AtomicU64) {
    slot.store(0, Relaxed);
}

/// What a record left by a run says.
#[derive(Debug, PartialEq, Eq)]
pub enum Found {
    /// The writes it had in flight (sorted).
    Writes(Vec<Write>),
    /// Written in another boot: its last stores may not have reached the disk.
    OtherBoot,
    /// No record (a run of a dbio that kept none, or it was removed).
    Missing,
    /// Not a record of this target, or cut short.
    Unusable(&'static str),
}

/// Reads the record `dir` holds for target `target`.
pub fn read(dir: &Path, target: u32) -> Found {
    let bytes = match fs::read(path(dir)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        Err(_) => return Found::Unusable("unreadable"),
    };
    if bytes.len() < HEADER || &bytes[0..8] != MAGIC {
        return Found::Unusable("no record header");
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    if u32_at(8) != FORMAT || u32_at(12) != target {
        return Found::Unusable("another format or target");
    }
    let slots = u32_at(16) as usize * u32_at(20) as usize;
    if bytes.len() != HEADER + 8 * slots {
        return Found::Unusable("wrong length");
    }
    let now = boot_id();
    if bytes[BOOT_ID] != now || now == [0; 36] {
        return Found::OtherBoot;
    }
    let mut writes: Vec<Write> = bytes[HEADER..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .filter(|&v| v != 0)
        .map(|v| Write {
            block: (v >> 16) - 1,
            generation: v as u16,
        })
        .collect();
    writes.sort_unstable();
    writes.dedup();
    Found::Writes(writes)
}

/// Removes the record of `dir`, if any (and one a kill left half made).
pub fn remove(dir: &Path) -> std::io::Result<()> {
    remove_if_there(&[path(dir), dir.join(format!("{NAME}.tmp"))])
}

/// Removes each of `paths` that exists.
pub(super) fn remove_if_there(paths: &[PathBuf]) -> std::io::Result<()> {
    for p in paths {
        match fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_survive_the_record_and_clears_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(read(d, 5), Found::Missing);
        let r = Record::create(d, 5, 3, 10).unwrap();
        assert_eq!(r.session(0).len(), 16, "whole cache lines");
        mark(&r.session(0)[9], 1000, 7);
        mark(&r.session(2)[0], 0, 65535);
        mark(&r.session(1)[3], 44, 2);
        clear(&r.session(1)[3]);
        // Read while the run holds it, as after kill -9 (nothing flushed).
        let want = vec![
            Write {
                block: 0,
                generation: 65535,
            },
            Write {
                block: 1000,
                generation: 7,
            },
        ];
        assert_eq!(read(d, 5), Found::Writes(want));
        assert_eq!(read(d, 6), Found::Unusable("another format or target"));
        drop(r);
        let mut bytes = fs::read(path(d)).unwrap();
        bytes[BOOT_ID.start] ^= 1;
        fs::write(path(d), &bytes).unwrap();
        assert_eq!(read(d, 5), Found::OtherBoot);
        fs::write(path(d), &bytes[..100]).unwrap();
        assert_eq!(read(d, 5), Found::Unusable("wrong length"));
        remove(d).unwrap();
        remove(d).unwrap();
        assert_eq!(read(d, 5), Found::Missing);
    }
}
