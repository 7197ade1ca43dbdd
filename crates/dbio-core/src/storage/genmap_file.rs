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
//! | bytes  | field                                                        |
//! |--------|--------------------------------------------------------------|
//! | 0..8   | magic `DBIOGMAP`                                             |
//! | 8..12  | format (1)                                                   |
//! | 12..16 | target id (the manifest's)                                   |
//! | 16..24 | blocks                                                       |
//! | 24..32 | sync points so far                                           |
//! | 32..36 | CRC-32C of bytes 0..32, 38..40 and the floors                |
//! | 36     | 1 = clean (the last run reached its final sync point), 0 = dirty |
//! | 37     | zero                                                         |
//! | 38..40 | span: how far past its floor any block's last generation was |
//! | 40..   | the floors, u16 little-endian per global block               |

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

pub const MAP_NAME: &str = "dbio-genmap";
const MAGIC: &[u8; 8] = b"DBIOGMAP";
const FORMAT: u32 = 1;
const HEADER: usize = 40;
const STATE_AT: u64 = 36;
/// How far past the floors a run starts after a run that did not end
/// cleanly: more writes of one block than this between two sync points
/// could repeat a generation the crashed run left on disk.
pub const CRASH_SKIP: u16 = 4096;

/// What the map says about itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MapInfo {
    pub sync_points: u64,
    pub clean: bool,
    /// How far past its floor any block's last generation handed out was:
    /// the next run starts its generations this far past the floors.
    pub span: u16,
}

/// A map read back.
pub struct Loaded {
    pub info: MapInfo,
    pub floors: Vec<u16>,
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
    if bytes.len() < HEADER || &bytes[0..8] != MAGIC {
        return Err(MapError::Damaged {
            why: "no map header",
            path: p,
        });
    }
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    if u32_at(8) != FORMAT {
        return Err(MapError::Damaged {
            why: "unknown format",
            path: p,
        });
    }
    if u32_at(12) != target || u64_at(16) != blocks {
        return Err(MapError::Stale(p));
    }
    if bytes.len() as u64 != HEADER as u64 + 2 * blocks {
        return Err(MapError::Damaged {
            why: "wrong length",
            path: p,
        });
    }
    if u32_at(32) != checksum(&bytes) {
        return Err(MapError::Damaged {
            why: "checksum mismatch",
            path: p,
        });
    }
    let floors = bytes[HEADER..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok(Some(Loaded {
        info: MapInfo {
            sync_points: u64_at(24),
            clean: bytes[STATE_AT as usize] == 1,
            span: u16::from_le_bytes([bytes[38], bytes[39]]),
        },
        floors,
    }))
}

/// The checksum of a map file: all but the checksum and the clean mark.
fn checksum(bytes: &[u8]) -> u32 {
    let c = crc32c::crc32c_append(crc32c::crc32c(&bytes[..32]), &bytes[38..40]);
    crc32c::crc32c_append(c, &bytes[HEADER..])
}

/// Replaces the map of `dir` durably (temporary file, fsync, rename, fsync
/// of the directory).
pub fn store(dir: &Path, target: u32, info: MapInfo, floors: &[u16]) -> Result<(), MapError> {
    let mut bytes = Vec::with_capacity(HEADER + 2 * floors.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT.to_le_bytes());
    bytes.extend_from_slice(&target.to_le_bytes());
    bytes.extend_from_slice(&(floors.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&info.sync_points.to_le_bytes());
    bytes.extend_from_slice(&[0; 6]);
    bytes.extend_from_slice(&info.span.to_le_bytes());
    for f in floors {
        bytes.extend_from_slice(&f.to_le_bytes());
    }
    let c = checksum(&bytes);
    bytes[32..36].copy_from_slice(&c.to_le_bytes());
    bytes[STATE_AT as usize] = u8::from(info.clean);
    let tmp = dir.join(format!("{MAP_NAME}.tmp"));
    let p = path(dir);
    let mut f = File::create(&tmp).map_err(io(&tmp, "create"))?;
    f.write_all(&bytes).map_err(io(&tmp, "write"))?;
    f.sync_all().map_err(io(&tmp, "fsync"))?;
    fs::rename(&tmp, &p).map_err(io(&p, "replace"))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io(dir, "fsync"))
}

/// Marks the map of `dir` dirty, durably: a run is about to write.
pub fn mark_dirty(dir: &Path) -> Result<(), MapError> {
    let p = path(dir);
    let f = OpenOptions::new()
        .write(true)
        .open(&p)
        .map_err(io(&p, "open"))?;
    f.write_all_at(&[0], STATE_AT).map_err(io(&p, "write"))?;
    f.sync_data().map_err(io(&p, "fdatasync"))
}

/// Removes the map of `dir` (a new layout, or writes it does not follow).
pub fn remove(dir: &Path) -> std::io::Result<()> {
    match fs::remove_file(path(dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The map a writing run keeps: its generations, and where they go.
pub struct Tracked {
    pub map: super::genmap::GenMap,
    dir: PathBuf,
    target: u32,
    /// Taken by one sync point at a time (the periodic one, then the last).
    info: std::sync::Mutex<MapInfo>,
}

/// Starts tracking the writes of a run over the layout in `dir`: the map
/// as the last run left it (past its floors when that run did not end
/// cleanly), marked dirty before anything is written. None when the layout
/// keeps no map (laid out before maps, or written by writes the map does
/// not follow, such as the SLOB model's): then nothing can be called lost.
pub fn begin_run(dir: &Path, target: u32, blocks: u64) -> Result<Option<Tracked>, MapError> {
    let Ok(Some(loaded)) = load(dir, target, blocks) else {
        return Ok(None);
    };
    let span = loaded.info.span;
    let skip = if loaded.info.clean {
        span
    } else {
        span.max(CRASH_SKIP)
    };
    mark_dirty(dir)?;
    Ok(Some(Tracked {
        map: super::genmap::GenMap::new(&loaded.floors, skip),
        dir: dir.to_path_buf(),
        target,
        info: std::sync::Mutex::new(MapInfo {
            clean: false,
            ..loaded.info
        }),
    }))
}

impl Tracked {
    /// A sync point: the floors now, then every data file fsynced, then the
    /// map replaced durably. `last` marks the map clean (the run's end);
    /// otherwise it stays dirty (a periodic sync point while the run writes,
    /// `--verify-sync-interval`: a crash then loses at most the writes
    /// acknowledged since). Returns the sync point's number.
    pub fn sync_point(&self, files: &[std::os::fd::RawFd], last: bool) -> Result<u64, MapError> {
        let mut info = self.info.lock().unwrap_or_else(|e| e.into_inner());
        let floors = self.map.floors();
        info.span = self.map.span();
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
        store(&self.dir, self.target, *info, &floors)?;
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
        };
        store(d, 7, info, &[1, 2, 65535, 0]).unwrap();
        let l = load(d, 7, 4).unwrap().unwrap();
        assert_eq!((l.info, l.floors), (info, vec![1, 2, 65535, 0]));
        mark_dirty(d).unwrap();
        assert!(!load(d, 7, 4).unwrap().unwrap().info.clean);
        assert!(matches!(load(d, 8, 4), Err(MapError::Stale(_))));
        assert!(matches!(load(d, 7, 5), Err(MapError::Stale(_))));
        let mut bytes = fs::read(path(d)).unwrap();
        bytes[HEADER + 3] ^= 1;
        fs::write(path(d), &bytes).unwrap();
        let e = load(d, 7, 4).err().unwrap().to_string();
        assert!(e.contains("checksum mismatch"), "{e}");
        remove(d).unwrap();
        remove(d).unwrap();
        assert!(load(d, 7, 4).unwrap().is_none());
    }
}
