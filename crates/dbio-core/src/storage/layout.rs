//! Laying out data files: large sequential O_DIRECT writes of sealed,
//! incompressible blocks (fresh random content and a stamp in every sector,
//! see [`block::fill`]) after preallocating, so a full filesystem is found
//! before anything is written. Several streams write at once
//! (`--load-parallel`, SLOB's LOAD_PARALLEL_DEGREE; one per core by
//! default): the chunks of the layout, file after file, are split into that
//! many contiguous regions (whole files when the files divide evenly), and
//! each stream writes its region in order on a thread of its own with eight
//! writes in flight through its own io_uring (or eight psync threads where
//! io_uring is off). A layout that fails part-way is removed again; nothing
//! else is touched.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{FallocateFlags, Mode, OFlags};

use super::TargetError;
use super::block::Header;
use super::content::{Content, ContentSpec};
use super::manifest::{Manifest, data_file_name};
use crate::engine::buf::BufPool;
use crate::engine::psync::Psync;
use crate::engine::uring::Uring;
use crate::engine::{Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;
use crate::rng::Rng;
use crate::samplers::progress::Progress;

/// Bytes per layout write.
const CHUNK: u64 = 1 << 20;
/// Layout writes in flight per stream.
const IN_FLIGHT: usize = 8;
/// Most layout streams (`--load-parallel`): each holds 8 MiB of buffers.
pub const MAX_STREAMS: u32 = 64;
/// RNG stream numbers of layout writers (sessions use 0..1024).
const LAYOUT_STREAM: u64 = 1 << 32;

/// What laying out did (or that an existing layout was reused).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct LayoutReport {
    pub reused: bool,
    pub bytes: u64,
    pub seconds: f64,
    pub direct: bool,
}

impl LayoutReport {
    pub fn mib_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / (1 << 20) as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The shape a layout must have.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub files: u32,
    pub file_size: u64,
    pub block_size: u32,
    /// Reuse a larger layout of the same files and block size, and extend a
    /// smaller one instead of laying it out again (the SLOB model's data,
    /// which grows with the number of schemas).
    pub grow: bool,
    /// Whether the files keep dbio's block headers between runs, so that
    /// reuse checks a sample of them. Redo logs do not: the log writer
    /// overwrites them with redo (reuse then checks only for holes).
    pub headers: bool,
    /// What the blocks hold (`--compress-pct`, `--dedupe-pct`): a layout
    /// made with other settings is laid out again.
    pub content: ContentSpec,
    /// Streams writing at once (`--load-parallel`): how the layout is
    /// written, not what it is (a layout written with any number is reused).
    pub streams: u32,
    /// What the files are, as progress names them (`data files`, `redo logs`).
    pub what: &'static str,
}

/// Layout streams when not told: one per core.
pub fn default_streams() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| (n.get() as u32).min(MAX_STREAMS))
}

/// Makes sure `dir` holds a complete layout of `shape`, reusing a compatible
/// one dbio made before; creates `dir` (its last component only) if missing.
/// Returns the data file paths and what was done.
pub fn ensure(
    dir: &Path,
    shape: Shape,
    seed: u64,
    progress: &Progress,
    interrupt: &AtomicBool,
) -> Result<(Vec<PathBuf>, LayoutReport), TargetError> {
    let created_dir = create_last(dir)?;
    ensure_in(dir, created_dir, shape, seed, progress, interrupt)
}

/// Creates `dir` if it does not exist, never its parents: a missing parent
/// is a mistyped or unmounted path. True if it was created.
pub fn create_last(dir: &Path) -> Result<bool, TargetError> {
    if dir.exists() {
        return Ok(false);
    }
    match fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let parent = std::path::absolute(dir)
                .ok()
                .and_then(|d| d.parent().map(Path::to_path_buf))
                .unwrap_or_default();
            Err(super::place::missing_parent("", dir, &parent))
        }
        Err(e) => Err(TargetError::io(dir, "create directory", e)),
    }
}

/// [`ensure`] for a directory that exists; `created_dir` says whether this
/// command created it (kept in the manifest for `dbio clean`).
pub(crate) fn ensure_in(
    dir: &Path,
    created_dir: bool,
    shape: Shape,
    seed: u64,
    progress: &Progress,
    interrupt: &AtomicBool,
) -> Result<(Vec<PathBuf>, LayoutReport), TargetError> {
    let existing = Manifest::load(dir)?;
    if let Some(m) = &existing
        && let Some(done) = reuse_or_remove(dir, m, shape, seed, progress, interrupt)?
    {
        return Ok(done);
    }
    let names: Vec<String> = (0..shape.files).map(data_file_name).collect();
    for n in &names {
        let p = dir.join(n);
        if p.exists() {
            return Err(TargetError::Foreign(p));
        }
    }
    let keep_dir_flag = existing
        .as_ref()
        .map(|m| m.created_dir)
        .unwrap_or(created_dir);
    let mut manifest = Manifest::new(names, shape.file_size, shape.block_size, keep_dir_flag);
    manifest.compress_pct = shape.content.compress_pct;
    manifest.dedupe_pct = shape.content.dedupe_pct;
    manifest
        .store(dir)
        .map_err(|e| TargetError::io(dir, "write manifest", e))?;
    let paths = manifest.file_paths(dir);
    let written = write_files(
        &paths,
        shape,
        0,
        (seed, manifest.target_id),
        progress,
        interrupt,
    );
    let report = match written {
        Ok(report) => report,
        Err(e) => {
            // Remove the half-written layout, and the directory if we made it.
            let _ = remove_files(dir, &manifest);
            if created_dir {
                let _ = fs::remove_dir(dir);
            }
            return Err(e);
        }
    };
    complete(dir, &mut manifest, shape)?;
    Ok((paths, report))
}

/// An earlier layout in `dir` (its manifest `m`): grown or reused when it
/// is intact and of the shape asked (the layout, done), else its files
/// removed (None: lay out anew).
fn reuse_or_remove(
    dir: &Path,
    m: &Manifest,
    shape: Shape,
    seed: u64,
    progress: &Progress,
    interrupt: &AtomicBool,
) -> Result<Option<(Vec<PathBuf>, LayoutReport)>, TargetError> {
    let grows = shape.grow && growable(dir, m, shape);
    let damage = (grows || reusable(dir, m, shape))
        .then(|| {
            let bs = m.block_size;
            super::intact::damage(&m.file_paths(dir), m.file_size, bs, shape.headers)
        })
        .flatten();
    if let Some(why) = &damage {
        // dbio's own files (listed in its manifest): lay them out again.
        eprintln!(
            "{}",
            crate::terminal::field(&format!(
                "the layout in {} is not as dbio wrote it: {why}; laying it out again",
                dir.display()
            ))
        );
    }
    if grows && damage.is_none() {
        return grow(dir, m.clone(), shape, seed, progress, interrupt).map(Some);
    }
    if damage.is_none() && reusable(dir, m, shape) {
        let report = LayoutReport {
            reused: true,
            bytes: 0,
            seconds: 0.0,
            direct: true,
        };
        return Ok(Some((m.file_paths(dir), report)));
    }
    remove_files(dir, m)?;
    Ok(None)
}

/// A new layout written: its lost-write map (every block at generation
/// 0: the map starts exact) and its manifest marked complete.
fn complete(dir: &Path, manifest: &mut Manifest, shape: Shape) -> Result<(), TargetError> {
    if shape.headers && !shape.grow {
        let blocks = shape.file_size / u64::from(shape.block_size) * u64::from(shape.files);
        let clean = super::genmap_file::MapInfo {
            sync_points: 0,
            clean: true,
            span: 0,
            blind: false,
        };
        super::genmap_file::store(
            dir,
            manifest.target_id,
            clean,
            &vec![0; blocks as usize],
            &[],
        )
        .map_err(|e| TargetError::Invalid(e.to_string()))?;
    }
    manifest.complete = true;
    manifest
        .store(dir)
        .map_err(|e| TargetError::io(dir, "write manifest", e))
}

/// A complete layout of the same files and block size, of any size.
fn growable(dir: &Path, m: &Manifest, shape: Shape) -> bool {
    m.complete
        && m.content() == shape.content
        && m.files.len() == shape.files as usize
        && m.block_size == shape.block_size
        && m.file_paths(dir).iter().all(|p| {
            fs::metadata(p)
                .map(|md| md.len() == m.file_size)
                .unwrap_or(false)
        })
}

/// Reuses a layout at least as large as `shape`, or extends every file of a
/// smaller one to `shape.file_size` (the tail written as a layout would).
/// An interrupted or failed extension truncates the files back.
fn grow(
    dir: &Path,
    mut m: Manifest,
    shape: Shape,
    seed: u64,
    progress: &Progress,
    interrupt: &AtomicBool,
) -> Result<(Vec<PathBuf>, LayoutReport), TargetError> {
    let paths = m.file_paths(dir);
    if m.file_size >= shape.file_size {
        let report = LayoutReport {
            reused: true,
            bytes: 0,
            seconds: 0.0,
            direct: true,
        };
        return Ok((paths, report));
    }
    let old = m.file_size;
    // Block numbers move when files grow: the map no longer fits.
    super::genmap_file::retire(
        dir,
        "the files grew, which moved the blocks' numbers (a layout anew, `dbio clean` then a run, keeps one again)",
    )
    .map_err(|e| TargetError::Invalid(e.to_string()))?;
    m.complete = false;
    m.store(dir)
        .map_err(|e| TargetError::io(dir, "write manifest", e))?;
    match write_files(&paths, shape, old, (seed, m.target_id), progress, interrupt) {
        Ok(report) => {
            m.file_size = shape.file_size;
            m.complete = true;
            m.store(dir)
                .map_err(|e| TargetError::io(dir, "write manifest", e))?;
            Ok((paths, report))
        }
        Err(e) => {
            for p in &paths {
                let _ = fs::OpenOptions::new()
                    .write(true)
                    .open(p)
                    .and_then(|f| f.set_len(old));
            }
            m.complete = true;
            let _ = m.store(dir);
            Err(e)
        }
    }
}

fn reusable(dir: &Path, m: &Manifest, shape: Shape) -> bool {
    m.complete
        && m.content() == shape.content
        && m.files.len() == shape.files as usize
        && m.file_size == shape.file_size
        && m.block_size == shape.block_size
        && m.file_paths(dir).iter().all(|p| {
            fs::metadata(p)
                .map(|md| md.len() == shape.file_size)
                .unwrap_or(false)
        })
}

/// Removes the files a manifest lists, then the manifest (never anything else).
pub(crate) fn remove_files(dir: &Path, m: &Manifest) -> Result<(), TargetError> {
    for p in m.file_paths(dir) {
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(TargetError::io(&p, "remove", e)),
        }
    }
    super::genmap_file::remove(dir).map_err(|e| TargetError::io(dir, "remove the map in", e))?;
    let mp = Manifest::path(dir);
    match fs::remove_file(&mp) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(TargetError::io(&mp, "remove", e)),
    }
}

fn create(path: &Path, direct: bool) -> rustix::io::Result<OwnedFd> {
    let mut flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    rustix::fs::open(path, flags, Mode::from_raw_mode(0o644))
}

/// Writes every file of `shape` from byte `from` (0 = a new layout: the
/// files are created; otherwise they exist and are extended), stamped with
/// `(seed, target id)`.
fn write_files(
    paths: &[PathBuf],
    shape: Shape,
    from: u64,
    (seed, target_id): (u64, u32),
    progress: &Progress,
    interrupt: &AtomicBool,
) -> Result<LayoutReport, TargetError> {
    let (fds, direct) = open_files(paths, shape, from)?;
    let per_file = (shape.file_size - from).div_ceil(CHUNK);
    let total = per_file * u64::from(shape.files);
    let chunks = Chunks {
        streams: regions(total, shape.streams),
        per_file,
        from,
        file_size: shape.file_size,
        block_size: shape.block_size,
        target_id,
        seed: seed as u32,
        content: Content::new(shape.content, shape.block_size, target_id),
        written: AtomicU64::new(0),
        failed: AtomicBool::new(false),
        first_write: AtomicU64::new(u64::MAX),
        interrupt,
    };
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let start = now_ns();
    match write_streams(&raw, &chunks, shape, seed, progress) {
        Err(Failure {
            file,
            offset,
            error: Some(e),
        }) => {
            return Err(TargetError::Layout {
                path: paths[file as usize].clone(),
                offset,
                source: e,
            });
        }
        Err(Failure { error: None, .. }) => return Err(TargetError::Interrupted),
        Ok(()) => {}
    }
    for (p, fd) in paths.iter().zip(&fds) {
        rustix::fs::fsync(fd).map_err(|e| TargetError::io(p, "fsync", e.into()))?;
    }
    // From the first write (the streams' buffers and rings are set up
    // before it, as fio's are before its clock starts) to the fsync's end.
    let first = match chunks.first_write.load(Ordering::Relaxed) {
        u64::MAX => start,
        t => t.max(start),
    };
    let seconds = (now_ns() - first) as f64 / 1e9;
    Ok(LayoutReport {
        reused: false,
        bytes: (shape.file_size - from) * u64::from(shape.files),
        seconds,
        direct,
    })
}

/// Opens (from 0: creates) every file and preallocates what is to be
/// written: O_DIRECT where the filesystem allows it (the bool), else
/// buffered with a final fsync. A full filesystem fails here, before any
/// data is written.
fn open_files(
    paths: &[PathBuf],
    shape: Shape,
    from: u64,
) -> Result<(Vec<OwnedFd>, bool), TargetError> {
    let direct = if from > 0 {
        rustix::fs::open(
            &paths[0],
            OFlags::WRONLY | OFlags::DIRECT | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .is_ok()
    } else {
        match create(&paths[0], true) {
            Ok(fd) => {
                drop(fd);
                let _ = fs::remove_file(&paths[0]);
                true
            }
            Err(_) => false,
        }
    };
    let mut fds = Vec::with_capacity(paths.len());
    for p in paths {
        let fd = if from > 0 {
            let mut flags = OFlags::WRONLY | OFlags::CLOEXEC;
            if direct {
                flags |= OFlags::DIRECT;
            }
            rustix::fs::open(p, flags, Mode::empty())
                .map_err(|e| TargetError::io(p, "open", e.into()))?
        } else {
            create(p, direct).map_err(|e| TargetError::io(p, "create", e.into()))?
        };
        match rustix::fs::fallocate(&fd, FallocateFlags::empty(), from, shape.file_size - from) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => {}
            Err(rustix::io::Errno::NOSPC) => {
                let dir = p.parent().unwrap_or(Path::new(".")).to_path_buf();
                let size = crate::units::fmt_size(shape.file_size * u64::from(shape.files));
                return Err(TargetError::NoSpace { dir, size });
            }
            Err(e) => return Err(TargetError::io(p, "preallocate", e.into())),
        }
        fds.push(fd);
    }
    Ok((fds, direct))
}

/// Runs every stream of `chunks` on its own thread (and the progress
/// meter): the failure that stopped the others, not their interruption.
fn write_streams(
    raw: &[RawFd],
    chunks: &Chunks,
    shape: Shape,
    seed: u64,
    progress: &Progress,
) -> Result<(), Failure> {
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        if progress.is_on() {
            let finished = &finished;
            let total = (shape.file_size - chunks.from) * u64::from(shape.files);
            s.spawn(move || progress.meter(shape.what, &chunks.written, total, finished));
        }
        let streams: Vec<_> = (0..chunks.streams.len())
            .map(|k| s.spawn(move || write_stream(raw, chunks, k, seed)))
            .collect();
        let results: Vec<_> = streams
            .into_iter()
            .map(|w| w.join().expect("layout stream panicked"))
            .collect();
        finished.store(true, Ordering::Relaxed);
        let mut failures = results.into_iter().filter_map(Result::err);
        let first = failures.next();
        match first {
            Some(Failure { error: None, .. }) => Err(failures
                .find(|f| f.error.is_some())
                .or(first)
                .expect("a failure")),
            Some(f) => Err(f),
            None => Ok(()),
        }
    })
}

fn seal_chunk(data: &mut [u8], file: u32, off: u64, chunks: &Chunks, rng: &mut Rng) {
    let bs = chunks.block_size;
    let first = off / u64::from(bs);
    for (i, b) in data.chunks_exact_mut(bs as usize).enumerate() {
        let h = Header {
            block: first + i as u64,
            generation: 0,
            file,
            size: bs,
            target: chunks.target_id,
            seed: chunks.seed,
        };
        chunks.content.fill(b, h, rng);
    }
}

/// The chunks of a layout (numbered file after file): each stream's region,
/// handed out in order to whichever of its writers writes next.
struct Chunks<'a> {
    streams: Vec<Region>,
    per_file: u64,
    /// Byte offset where writing starts in every file.
    from: u64,
    file_size: u64,
    block_size: u32,
    target_id: u32,
    seed: u32,
    content: Content,
    written: AtomicU64,
    failed: AtomicBool,
    /// When the first stream was ready to write (the layout's clock starts).
    first_write: AtomicU64,
    interrupt: &'a AtomicBool,
}

/// One stream's chunks: `next` up to `end`.
struct Region {
    next: AtomicU64,
    end: u64,
}

/// `total` chunks split into at most `streams` contiguous regions of equal
/// size (give or take one chunk), none empty.
fn regions(total: u64, streams: u32) -> Vec<Region> {
    let n = u64::from(streams.max(1)).min(total.max(1));
    (0..n)
        .map(|k| Region {
            next: AtomicU64::new(total * k / n),
            end: total * (k + 1) / n,
        })
        .collect()
}

/// Where a layout write failed (no error = interrupted).
struct Failure {
    file: u32,
    offset: u64,
    error: Option<std::io::Error>,
}

/// Writes stream `k`'s region with [`IN_FLIGHT`] writes in flight: one
/// io_uring in this thread where the kernel allows it, else that many psync
/// threads.
fn write_stream(fds: &[RawFd], chunks: &Chunks, k: usize, seed: u64) -> Result<(), Failure> {
    let region = &chunks.streams[k];
    // RNG streams: IN_FLIGHT + 1 per layout stream (the ring's, the psync threads').
    let base = LAYOUT_STREAM + (k * (IN_FLIGHT + 1)) as u64;
    let mut bufs = BufPool::new(CHUNK as usize, IN_FLIGHT);
    if let Ok(mut engine) = Uring::new(fds, Some(&bufs), IN_FLIGHT as u32, SyncAfterWrite::None) {
        let mut rng = Rng::for_stream(seed, base);
        chunks.first_write.fetch_min(now_ns(), Ordering::Relaxed);
        return writer(&mut engine, &mut bufs, chunks, region, &mut rng);
    }
    drop(bufs);
    chunks.first_write.fetch_min(now_ns(), Ordering::Relaxed);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..IN_FLIGHT)
            .map(|w| {
                s.spawn(move || {
                    let mut bufs = BufPool::new(CHUNK as usize, 1);
                    let mut engine = Psync::new(fds, SyncAfterWrite::None);
                    let mut rng = Rng::for_stream(seed, base + 1 + w as u64);
                    writer(&mut engine, &mut bufs, chunks, region, &mut rng)
                })
            })
            .collect();
        let results: Vec<_> = workers
            .into_iter()
            .map(|w| w.join().expect("layout writer panicked"))
            .collect();
        results.into_iter().find(|r| r.is_err()).unwrap_or(Ok(()))
    })
}

/// One writer: keeps its engine's queue full of chunk writes taken in order
/// from `region`, until all are written, one fails (here or in another
/// stream), or Ctrl-C.
fn writer<E: Engine>(
    engine: &mut E,
    bufs: &mut BufPool,
    chunks: &Chunks,
    region: &Region,
    rng: &mut Rng,
) -> Result<(), Failure> {
    let depth = engine.depth() as usize;
    let mut free: Vec<u32> = (0..depth as u32).collect();
    let mut meta = vec![(0u32, 0u64, 0u32); depth];
    let mut inflight = 0;
    let mut failure: Option<Failure> = None;
    loop {
        while inflight < depth && failure.is_none() && !chunks.failed.load(Ordering::Relaxed) {
            if chunks.interrupt.load(Ordering::Relaxed) {
                failure = Some(Failure {
                    file: 0,
                    offset: 0,
                    error: None,
                });
                break;
            }
            let g = region.next.fetch_add(1, Ordering::Relaxed);
            if g >= region.end {
                break;
            }
            let file = (g / chunks.per_file) as u32;
            let offset = chunks.from + (g % chunks.per_file) * CHUNK;
            let len = CHUNK.min(chunks.file_size - offset) as u32;
            let slot = free.pop().expect("a free slot");
            let data = bufs.slot_mut(slot as usize, len as usize);
            seal_chunk(data, file, offset, chunks, rng);
            meta[slot as usize] = (file, offset, len);
            let io = Io {
                kind: OpKind::Write,
                file,
                offset,
                len,
                buf: data.as_mut_ptr(),
                slot,
            };
            // SAFETY: the slot's buffer is not touched again until reaped.
            if let Err(e) = unsafe { engine.queue(&io) } {
                free.push(slot);
                failure = Some(Failure {
                    file,
                    offset,
                    error: Some(e),
                });
                break;
            }
            inflight += 1;
        }
        if inflight == 0 {
            break;
        }
        let reaped = engine.reap(1, |c| {
            let (file, offset, len) = meta[c.slot as usize];
            free.push(c.slot);
            if c.res == len as i32 {
                chunks.written.fetch_add(u64::from(len), Ordering::Relaxed);
            } else if failure.is_none() {
                let errno = if c.res < 0 { -c.res } else { libc::ENOSPC };
                let error = Some(std::io::Error::from_raw_os_error(errno));
                failure = Some(Failure {
                    file,
                    offset,
                    error,
                });
            }
        });
        match reaped {
            Ok(n) => inflight -= n as usize,
            Err(e) => {
                failure.get_or_insert(Failure {
                    file: 0,
                    offset: 0,
                    error: Some(e),
                });
                break;
            }
        }
    }
    match failure {
        Some(f) => {
            chunks.failed.store(true, Ordering::Relaxed);
            Err(f)
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::block::verify;

    fn shape(files: u32, file_size: u64) -> Shape {
        Shape {
            files,
            file_size,
            block_size: 8192,
            grow: false,
            headers: true,
            content: ContentSpec::default(),
            streams: 3,
            what: "data files",
        }
    }

    #[test]
    fn lays_out_sealed_blocks_and_reuses_them() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("data");
        let (paths, r) = ensure(
            &target,
            shape(2, 3 << 20),
            1,
            &Progress::Off,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(!r.reused);
        assert_eq!(paths.len(), 2);
        for (f, p) in paths.iter().enumerate() {
            let bytes = fs::read(p).unwrap();
            assert_eq!(bytes.len(), 3 << 20);
            for (b, blk) in bytes.chunks(8192).enumerate() {
                verify(blk, Some((f as u32, b as u64))).unwrap();
            }
        }
        let (_, again) = ensure(
            &target,
            shape(2, 3 << 20),
            1,
            &Progress::Off,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(again.reused);
        // A different shape replaces dbio's own files.
        let (p3, r3) = ensure(
            &target,
            shape(3, 1 << 20),
            1,
            &Progress::Off,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(!r3.reused && p3.len() == 3);
        // Three data files, the manifest and the lost-write map.
        assert_eq!(fs::read_dir(&target).unwrap().count(), 5);
        assert!(target.join(super::super::genmap_file::MAP_NAME).is_file());
    }

    #[test]
    fn regions_cover_every_chunk_once_and_none_is_empty() {
        for (total, streams) in [(1, 1), (1, 4), (7, 2), (8, 4), (10, 3), (3, 64), (1000, 7)] {
            let r = regions(total, streams);
            assert_eq!(r.len() as u64, u64::from(streams).min(total));
            let mut at = 0;
            for g in &r {
                assert_eq!(g.next.load(Ordering::Relaxed), at);
                assert!(g.end > at, "{total} chunks in {streams}: an empty region");
                at = g.end;
            }
            assert_eq!(at, total);
        }
        // Files that divide evenly: a whole file per stream.
        let r = regions(4 * 16, 4);
        assert!(
            r.iter()
                .all(|g| g.next.load(Ordering::Relaxed) % 16 == 0 && g.end % 16 == 0)
        );
    }

    #[test]
    fn refuses_to_overwrite_a_file_it_did_not_make() {
        let dir = tempfile::tempdir().unwrap();
        let foreign = dir.path().join(data_file_name(0));
        fs::write(&foreign, b"precious").unwrap();
        let e = ensure(
            dir.path(),
            shape(1, 1 << 20),
            1,
            &Progress::Off,
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(e, TargetError::Foreign(_)), "{e}");
        assert_eq!(fs::read(&foreign).unwrap(), b"precious");
    }
}
