//! The lost-write map on disk: `dbio-genmap` beside a layout's manifest,
//! the floor of every block ([`super::genmap`]) as of the last sync point,
//! 16 bits per block (1 MiB for 4 GiB of 8 KiB blocks).
//!
//! A sync point fsyncs the data files and then replaces the map (temporary
//! file, fsync, rename, fsync of the directory), with floors taken *before*
//! the data fsync: every write the map counts was acknowledged before that
//! fsync began, so the storage has promised it. A run marks the map dirty
//! (one byte, fdatasync) before its first write and clean at its final sync
//! point; after a run that did not get there (a crash, a power cut, kill -9)
//! blocks newer than the map were in flight or unsynced, and the next run
//! hands out generations well past the floors so it never repeats one the
//! crashed run may have left on disk.
//!
//! While a run writes, the writes it has in flight are in its record
//! ([`super::inflight`]); the next run carries the record of one that was
//! interrupted into the map (the *interrupted writes*), each until a later
//! acknowledged write of its block raises the block's floor past it, so a
//! block half written by a kill is never called damage later. Where the
//! record cannot be trusted (another boot: a power cut) the map notes that
//! an interruption's writes are unknown (*blind*).
//!
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0..8   | magic `DBIOGMAP`                                             |
//! | 8..12  | format (2; 1 had no interrupted writes; 0: no map, and why)  |
//! | 12..16 | target id (the manifest's)                                   |
//! | 16..24 | blocks                                                       |
//! | 24..32 | sync points so far                                           |
//! | 32..36 | CRC-32C of bytes 0..32, 37..40 and everything from 40        |
//! | 36     | 1 = clean (the last run reached its final sync point), 0 = dirty |
//! | 37     | 1 = blind: an interruption's writes in flight are unknown    |
//! | 38..40 | span: how far past its floor any block's last generation was |
//! | 40..   | the floors, u16 little-endian per global block               |
//! | then   | u32 count, then per interrupted write u64 block, u16 generation |
//!
//! When dbio stops keeping a map (the SLOB model's writers, more writes in
//! flight than the map counts, files that grew) it leaves a format-0 file
//! that says why in words, so `dbio verify` can say what is true.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::genmap::newer;
use super::inflight::{self, Record, Write};

pub const MAP_NAME: &str = "dbio-genmap";
const MAGIC: &[u8; 8] = b"DBIOGMAP";
const FORMAT: u32 = 2;
/// A map's place taken by a note of why there is none.
const NOT_KEPT: u32 = 0;
const HEADER: usize = 40;
const STATE_AT: u64 = 36;
const BLIND_AT: usize = 37;
/// How far past the floors a run starts after a run that did not end
/// cleanly: more writes of one block than this between two sync points
/// could repeat a generation the crashed run left on disk.
pub(crate) const CRASH_SKIP: u16 = 4096;

/// What the map says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MapInfo {
    pub sync_points: u64,
    pub clean: bool,
    /// How far past its floor any block's last generation handed out was:
    /// the next run starts its generations this far past the floors.
    pub span: u16,
    /// A run was interrupted where its record of writes in flight could not
    /// be trusted (another boot, or a dbio that kept none): any torn block
    /// whose sectors are all at or above its floor may be one of them.
    pub blind: bool,
}

/// A map read back.
pub struct Loaded {
    pub info: MapInfo,
    pub floors: Vec<u16>,
    /// Writes earlier runs had in flight when they were interrupted, whose
    /// blocks no acknowledged write has replaced since.
    pub interrupted: Vec<Write>,
}

#[derive(Debug, thiserror::Error)]
pub enum MapError {
    #[error("cannot {what} {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{} is damaged ({why}); it is ignored", .path.display())]
    Damaged { why: &'static str, path: PathBuf },
    #[error("{} belongs to another layout; it is ignored", .0.display())]
    Stale(PathBuf),
    /// dbio stopped keeping the map, for this reason.
    #[error("dbio stopped keeping the lost-write map: {0}")]
    NotKept(String),
    #[error(transparent)]
    Record(#[from] inflight::RecordError),
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(MAP_NAME)
}

fn io<'a>(path: &'a Path, what: &'static str) -> impl FnOnce(std::io::Error) -> MapError + 'a {
    move |source| MapError::Io {
        path: path.to_path_buf(),
        what,
        source,
    }
}

/// Reads the map of `dir`, if there is one, for a layout of `blocks` blocks
/// with target id `target`.
pub fn load(dir: &Path, target: u32, blocks: u64) -> Result<Option<Loaded>, MapError> {
    let p = path(dir);
    let bytes = match fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&p, "read")(e)),
    };
    let damaged = |why| MapError::Damaged {
        why,
        path: p.clone(),
    };
    if bytes.len() < 12 || &bytes[0..8] != MAGIC {
        return Err(damaged("no map header"));
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let format = u32_at(8);
    if format == NOT_KEPT {
        return Err(MapError::NotKept(
            String::from_utf8_lossy(&bytes[12..]).into_owned(),
        ));
    }
    if !(1..=FORMAT).contains(&format) || bytes.len() < HEADER {
        return Err(damaged("unknown format"));
    }
    if u32_at(12) != target || u64_at(16) != blocks {
        return Err(MapError::Stale(p));
    }
    let tail = HEADER + 2 * blocks as usize;
    let count = match format {
        1 => 0,
        _ if bytes.len() >= tail + 4 => u32_at(tail) as usize,
        _ => return Err(damaged("wrong length")),
    };
    let len = if format == 1 {
        tail
    } else {
        tail + 4 + 10 * count
    };
    if bytes.len() != len {
        return Err(damaged("wrong length"));
    }
    if u32_at(32) != checksum(&bytes, format) {
        return Err(damaged("checksum mismatch"));
    }
    let floors = bytes[HEADER..tail]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let interrupted = bytes[len - 10 * count..]
        .chunks_exact(10)
        .map(|c| Write {
            block: u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
            generation: u16::from_le_bytes([c[8], c[9]]),
        })
        .collect();
    Ok(Some(Loaded {
        info: MapInfo {
            sync_points: u64_at(24),
            clean: bytes[STATE_AT as usize] == 1,
            span: u16::from_le_bytes([bytes[38], bytes[39]]),
            blind: format > 1 && bytes[BLIND_AT] == 1,
        },
        floors,
        interrupted,
    }))
}

/// The checksum of a map file: all but the checksum and the clean mark
/// (format 1: and the byte after it).
fn checksum(bytes: &[u8], format: u32) -> u32 {
    let from = if format == 1 { 38 } else { BLIND_AT };
    let c = crc32c::crc32c_append(crc32c::crc32c(&bytes[..32]), &bytes[from..HEADER]);
    crc32c::crc32c_append(c, &bytes[HEADER..])
}

/// Replaces the map of `dir` durably (temporary file, fsync, rename, fsync
/// of the directory).
pub fn store(
    dir: &Path,
    target: u32,
    info: MapInfo,
    floors: &[u16],
    interrupted: &[Write],
) -> Result<(), MapError> {
    let mut bytes = Vec::with_capacity(HEADER + 2 * floors.len() + 4 + 10 * interrupted.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&target.to_le_bytes());
    bytes.extend_from_slice(&(floors.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&info.sync_points.to_le_bytes());
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, u8::from(info.blind)]);
    bytes.extend_from_slice(&info.span.to_le_bytes());
    for f in floors {
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    bytes.extend_from_slice(&(interrupted.len() as u32).to_le_bytes());
    for w in interrupted {
        bytes.extend_from_slice(&w.block.to_le_bytes());
        bytes.extend_from_slice(&w.generation.to_le_bytes());
    }
    let c = checksum(&bytes, FORMAT);
    bytes[32..36].copy_from_slice(&c.to_le_bytes());
    bytes[STATE_AT as usize] = u8::from(info.clean);
    replace(dir, &bytes)
}

/// Puts `bytes` in place of the map of `dir`, durably.
fn replace(dir: &Path, bytes: &[u8]) -> Result<(), MapError> {
    let tmp = dir.join(format!("{MAP_NAME}.tmp"));
    let p = path(dir);
    let mut f = File::create(&tmp).map_err(io(&tmp, "create"))?;
    f.write_all(bytes).map_err(io(&tmp, "write"))?;
    f.sync_all().map_err(io(&tmp, "fsync"))?;
    fs::rename(&tmp, &p).map_err(io(&p, "replace"))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir, "fsync"))
}

/// Marks the map of `dir` dirty, durably: a run is about to write.
pub(crate) fn mark_dirty(dir: &Path) -> Result<(), MapError> {
    let p = path(dir);
    let f = OpenOptions::new()
        .write(true)
        .open(&p)
        .map_err(io(&p, "open"))?;
    f.write_all_at(&[0], STATE_AT).map_err(io(&p, "write"))?;
    f.sync_data().map_err(io(&p, "fdatasync"))
}

/// Removes the map of `dir`, any record of writes in flight and any SLOB
/// run's mark (the layout goes, or is laid out anew).
pub fn remove(dir: &Path) -> std::io::Result<()> {
    inflight::remove(dir)?;
    super::slob_mark::remove(dir)?;
    inflight::remove_if_there(&[path(dir), dir.join(format!("{MAP_NAME}.tmp"))])
}

/// Stops keeping the map of `dir`, leaving in its place a note of `why`
/// (what `dbio verify` says instead of checking lost writes).
pub fn retire(dir: &Path, why: &str) -> Result<(), MapError> {
    inflight::remove(dir).map_err(io(dir, "remove the record of writes in flight in"))?;
    let mut bytes = MAGIC.to_vec();
    bytes.extend_from_slice(&NOT_KEPT.to_le_bytes());
    bytes.extend_from_slice(why.as_bytes());
    replace(dir, &bytes)
}

/// Drops the interrupted writes whose blocks' floors have since passed them
/// (an acknowledged, synced write replaced the block whole).
fn prune(interrupted: &mut Vec<Write>, floors: &[u16]) {
    interrupted.retain(|w| {
        floors
            .get(w.block as usize)
            .is_some_and(|&f| newer(f, w.generation) != std::cmp::Ordering::Greater)
    });
    interrupted.sort_unstable();
    interrupted.dedup();
}

/// The map a writing run keeps: its generations, the record of its writes
/// in flight, and where they go.
pub(crate) struct Tracked {
    pub map: super::genmap::GenMap,
    pub record: Record,
    dir: PathBuf,
    target: u32,
    /// Taken by one sync point at a time (the periodic one, then the last).
    state: std::sync::Mutex<(MapInfo, Vec<Write>)>,
}

/// Starts tracking the writes of a run over the layout in `dir` by
/// `sessions` sessions of `depth` writes in flight: the map as the last run
/// left it (past its floors, with that run's writes in flight carried,
/// when it did not end cleanly), a fresh record, the map marked dirty
/// before anything is written. None when the layout keeps no map (laid out
/// before maps, or written by writes the map does not follow, such as the
/// SLOB model's): then nothing can be called lost.
pub(crate) fn begin_run(
    dir: &Path,
    target: u32,
    blocks: u64,
    (sessions, depth): (u32, u32),
) -> Result<Option<Tracked>, MapError> {
    let Ok(Some(loaded)) = load(dir, target, blocks) else {
        return Ok(None);
    };
    let (mut info, mut interrupted) = (loaded.info, loaded.interrupted);
    let skip = if info.clean {
        info.span
    } else {
        // Carry the interrupted run's writes in flight into the map before
        // its record is replaced.
        match inflight::read(dir, target) {
            inflight::Found::Writes(w) => interrupted.extend(w),
            _ => info.blind = true,
        }
        prune(&mut interrupted, &loaded.floors);
        store(dir, target, info, &loaded.floors, &interrupted)?;
        info.span.max(CRASH_SKIP)
    };
    let record = Record::create(dir, target, sessions, depth)?;
    mark_dirty(dir)?;
    info.clean = false;
    Ok(Some(Tracked {
        map: super::genmap::GenMap::new(&loaded.floors, skip),
        record,
        dir: dir.to_path_buf(),
        target,
        state: std::sync::Mutex::new((info, interrupted)),
    }))
}

impl Tracked {
    /// The writes of interrupted runs the map carries, and whether it is
    /// blind (as [`Loaded::interrupted`] and [`MapInfo::blind`]).
    pub fn interrupted(&self) -> (Vec<Write>, bool) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (state.1.clone(), state.0.blind)
    }

    /// A sync point: the floors now, then every data file fsynced, then the
    /// map replaced durably. `last` marks the map clean (the run's end) and
    /// removes the record of writes in flight; otherwise the map stays
    /// dirty (a periodic sync point while the run writes,
    /// `--verify-sync-interval`: a crash then loses at most the writes
    /// acknowledged since). Returns the sync point's number.
    pub(crate) fn sync_point(
        &self,
        files: &[std::os::fd::RawFd],
        last: bool,
    ) -> Result<u64, MapError> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (info, interrupted) = &mut *state;
        let floors = self.map.floors();
        info.span = self.map.span();
        prune(interrupted, &floors);
        for &fd in files {
            // SAFETY: the run keeps its files open while it syncs.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            rustix::fs::fsync(fd).map_err(|e| MapError::Io {
                path: self.dir.clone(),
                what: "fsync the data files in",
                source: e.into(),
            })?;
        }
        info.sync_points += 1;
        info.clean = last;
        store(&self.dir, self.target, *info, &floors, interrupted)?;
        if last {
            inflight::remove(&self.dir)
                .map_err(io(&self.dir, "remove the record of writes in flight in"))?;
        }
        Ok(info.sync_points)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_marks_dirty_and_refuses_damage() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert!(load(d, 7, 4).unwrap().is_none());
        let info = MapInfo {
            sync_points: 3,
            clean: true,
            span: 2,
            blind: true,
        };
        let w = [Write {
            block: 2,
            generation: 9,
        }];
        store(d, 7, info, &[1, 2, 65535, 0], &w).unwrap();
        let l = load(d, 7, 4).unwrap().unwrap();
        assert_eq!((l.info, l.floors), (info, vec![1, 2, 65535, 0]));
        assert_eq!(l.interrupted, w);
        mark_dirty(d).unwrap();
        assert!(!load(d, 7, 4).unwrap().unwrap().info.clean);
        assert!(matches!(load(d, 8, 4), Err(MapError::Stale(_))));
        assert!(matches!(load(d, 7, 5), Err(MapError::Stale(_))));
        let mut bytes = fs::read(path(d)).unwrap();
        bytes[HEADER + 3] ^= 1;
        fs::write(path(d), &bytes).unwrap();
        let e = load(d, 7, 4).err().unwrap().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        bytes[HEADER + 3] ^= 1;
        bytes[BLIND_AT] = 0;
        fs::write(path(d), &bytes).unwrap();
        let e = load(d, 7, 4).err().unwrap().to_string();
        assert!(
            e.contains("checksum mismatch"),
            "the blind mark is checked: {e}"
        );
        fs::write(path(d), &bytes[..bytes.len() - 1]).unwrap();
        let e = load(d, 7, 4).err().unwrap().to_string();
        assert!(e.contains("wrong length"), "{e}");
        remove(d).unwrap();
        remove(d).unwrap();
        assert!(load(d, 7, 4).unwrap().is_none());
    }

    #[test]
    fn a_format_1_map_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(&7u32.to_le_bytes());
        bytes.extend_from_slice(&2u64.to_le_bytes());
        bytes.extend_from_slice(&5u64.to_le_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 0, 1, 0, 3, 0, 4, 0, 6, 0]);
        let c = checksum(&bytes, 1);
        bytes[32..36].copy_from_slice(&c.to_le_bytes());
        fs::write(path(d), &bytes).unwrap();
        let l = load(d, 7, 2).unwrap().unwrap();
        assert_eq!(l.floors, vec![4, 6]);
        assert_eq!(
            l.info,
            MapInfo {
                sync_points: 5,
                clean: true,
                span: 3,
                blind: false
            }
        );
        assert!(l.interrupted.is_empty());
    }

    #[test]
    fn a_retired_map_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        retire(d, "the files grew").unwrap();
        let e = load(d, 7, 4).err().unwrap();
        assert!(
            matches!(&e, MapError::NotKept(w) if w == "the files grew"),
            "{e}"
        );
        assert!(begin_run(d, 7, 4, (1, 1)).unwrap().is_none());
    }

    fn clean_map(d: &Path, floors: &[u16]) {
        let info = MapInfo {
            sync_points: 0,
            clean: true,
            span: 0,
            blind: false,
        };
        store(d, 7, info, floors, &[]).unwrap();
    }

    #[test]
    fn an_interrupted_runs_writes_in_flight_are_carried_until_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        clean_map(d, &[0; 4]);
        let t = begin_run(d, 7, 4, (2, 1)).unwrap().unwrap();
        assert!(!load(d, 7, 4).unwrap().unwrap().info.clean, "dirty first");
        // Blocks 1 and 3 in flight at a kill -9 (the run never ends).
        let g1 = t.map.begin(1).generation;
        inflight::mark(&t.record.session(0)[0], 1, g1);
        let g3 = t.map.begin(3).generation;
        inflight::mark(&t.record.session(1)[0], 3, g3);
        std::mem::forget(t);
        // The next run carries them; its write of block 3 replaces that one.
        let t = begin_run(d, 7, 4, (1, 1)).unwrap().unwrap();
        let l = load(d, 7, 4).unwrap().unwrap();
        let carried = vec![
            Write {
                block: 1,
                generation: g1,
            },
            Write {
                block: 3,
                generation: g3,
            },
        ];
        assert_eq!(
            l.interrupted, carried,
            "stored before the record is replaced"
        );
        assert!(!l.info.blind);
        assert_eq!(inflight::read(d, 7), inflight::Found::Writes(vec![]));
        let g = t.map.begin(3).generation;
        assert!(g.wrapping_sub(g3) >= CRASH_SKIP, "past the killed run's");
        t.map.acknowledged(3);
        t.sync_point(&[], true).unwrap();
        let l = load(d, 7, 4).unwrap().unwrap();
        assert!(l.info.clean);
        assert_eq!(l.interrupted, carried[..1].to_vec());
        assert_eq!(
            inflight::read(d, 7),
            inflight::Found::Missing,
            "removed at the end"
        );
        // A dirty map whose run left no trustworthy record: blind.
        mark_dirty(d).unwrap();
        drop(t);
        let t = begin_run(d, 7, 4, (1, 1)).unwrap().unwrap();
        t.sync_point(&[], true).unwrap();
        assert!(load(d, 7, 4).unwrap().unwrap().info.blind);
    }
}
