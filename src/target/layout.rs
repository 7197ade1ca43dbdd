//! Laying out data files: large sequential O_DIRECT writes of sealed,
//! incompressible blocks, several in flight (one per writer thread), after
//! preallocating so a full filesystem is found before anything is written.
//! A layout that fails part-way is removed again; nothing else is touched.

use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rustix::fs::{FallocateFlags, Mode, OFlags};

use super::TargetError;
use super::block::{self, Header};
use super::manifest::{Manifest, data_file_name};
use crate::engine::buf::BufPool;
use crate::measure::clock::now_ns;
use crate::workload::rng::Rng;

/// Bytes per layout write.
const CHUNK: u64 = 1 << 20;
/// Writer threads (= writes in flight).
const WRITERS: usize = 4;

/// What laying out did (or that an existing layout was reused).
#[derive(Clone, Debug, serde::Serialize)]
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
}

/// Makes sure `dir` holds a complete layout of `shape`, reusing a compatible
/// one dbio made before. Returns the data file paths and what was done.
pub fn ensure(
    dir: &Path,
    shape: Shape,
    seed: u64,
    progress: bool,
    interrupt: &AtomicBool,
) -> Result<(Vec<PathBuf>, LayoutReport), TargetError> {
    let created_dir = !dir.exists();
    if created_dir {
        fs::create_dir_all(dir).map_err(|e| TargetError::io(dir, "create directory", e))?;
    }
    let existing = Manifest::load(dir).map_err(TargetError::Manifest)?;
    if let Some(m) = &existing {
        if reusable(dir, m, shape) {
            let report = LayoutReport {
                reused: true,
                bytes: 0,
                seconds: 0.0,
                direct: true,
            };
            return Ok((m.file_paths(dir), report));
        }
        remove_files(dir, m)?;
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
    manifest
        .store(dir)
        .map_err(|e| TargetError::io(dir, "write manifest", e))?;
    let paths = manifest.file_paths(dir);
    match write_files(&paths, shape, seed, progress, interrupt) {
        Ok(report) => {
            manifest.complete = true;
            manifest
                .store(dir)
                .map_err(|e| TargetError::io(dir, "write manifest", e))?;
            Ok((paths, report))
        }
        Err(e) => {
            // Remove the half-written layout, and the directory if we made it.
            let _ = remove_files(dir, &manifest);
            if created_dir {
                let _ = fs::remove_dir(dir);
            }
            Err(e)
        }
    }
}

fn reusable(dir: &Path, m: &Manifest, shape: Shape) -> bool {
    m.complete
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
pub fn remove_files(dir: &Path, m: &Manifest) -> Result<(), TargetError> {
    for p in m.file_paths(dir) {
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(TargetError::io(&p, "remove", e)),
        }
    }
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

fn write_files(
    paths: &[PathBuf],
    shape: Shape,
    seed: u64,
    progress: bool,
    interrupt: &AtomicBool,
) -> Result<LayoutReport, TargetError> {
    // O_DIRECT where the filesystem allows it, else buffered with a final fsync.
    let direct = match create(&paths[0], true) {
        Ok(fd) => {
            drop(fd);
            let _ = fs::remove_file(&paths[0]);
            true
        }
        Err(_) => false,
    };
    let mut fds = Vec::with_capacity(paths.len());
    for p in paths {
        let fd = create(p, direct).map_err(|e| TargetError::io(p, "create", e.into()))?;
        // Preallocate: a full filesystem fails here, before any data is written.
        match rustix::fs::fallocate(&fd, FallocateFlags::empty(), 0, shape.file_size) {
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
    let chunks_per_file = shape.file_size.div_ceil(CHUNK);
    let total_chunks = chunks_per_file * u64::from(shape.files);
    let next = AtomicU64::new(0);
    let written = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let start = now_ns();
    let first_error = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (fds, next, written, failed) = (&fds, &next, &written, &failed);
                s.spawn(move || {
                    let mut rng = Rng::for_stream(seed, 1_000_000 + w as u64);
                    let mut buf = BufPool::new(CHUNK as usize, 1);
                    loop {
                        let g = next.fetch_add(1, Ordering::Relaxed);
                        if g >= total_chunks || failed.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        if interrupt.load(Ordering::Relaxed) {
                            failed.store(true, Ordering::Relaxed);
                            return Err((0, 0, None));
                        }
                        let file = (g / chunks_per_file) as usize;
                        let off = (g % chunks_per_file) * CHUNK;
                        let len = CHUNK.min(shape.file_size - off) as usize;
                        let data = buf.slot_mut(0, len);
                        seal_chunk(data, file as u32, off, shape.block_size, &mut rng);
                        if let Err(e) = pwrite_all(&fds[file], data, off) {
                            failed.store(true, Ordering::Relaxed);
                            return Err((file, off, Some(e)));
                        }
                        written.fetch_add(len as u64, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        if progress {
            show_progress(&written, shape.file_size * u64::from(shape.files), &workers);
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("layout writer panicked"))
            .find_map(|r| r.err())
    });
    match first_error {
        Some((file, off, Some(e))) => {
            return Err(TargetError::Layout {
                path: paths[file].clone(),
                offset: off,
                source: e,
            });
        }
        Some((_, _, None)) => return Err(TargetError::Interrupted),
        None => {}
    }
    for (p, fd) in paths.iter().zip(&fds) {
        rustix::fs::fsync(fd).map_err(|e| TargetError::io(p, "fsync", e.into()))?;
    }
    let seconds = (now_ns() - start) as f64 / 1e9;
    Ok(LayoutReport {
        reused: false,
        bytes: shape.file_size * u64::from(shape.files),
        seconds,
        direct,
    })
}

fn seal_chunk(data: &mut [u8], file: u32, off: u64, bs: u32, rng: &mut Rng) {
    let first = off / u64::from(bs);
    for (i, b) in data.chunks_exact_mut(bs as usize).enumerate() {
        block::fill(
            b,
            Header {
                block: first + i as u64,
                generation: 0,
                file,
                size: bs,
            },
            rng,
        );
    }
}

fn pwrite_all(fd: &OwnedFd, mut data: &[u8], mut off: u64) -> std::io::Result<()> {
    while !data.is_empty() {
        // SAFETY: data is a valid slice for its length.
        let n = unsafe {
            libc::pwrite(
                fd.as_raw_fd(),
                data.as_ptr().cast(),
                data.len(),
                off as libc::off_t,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
        }
        data = &data[n as usize..];
        off += n as u64;
    }
    Ok(())
}

fn show_progress<T>(
    written: &AtomicU64,
    total: u64,
    workers: &[std::thread::ScopedJoinHandle<'_, T>],
) {
    use std::io::Write;
    let start = now_ns();
    while !workers.iter().all(|w| w.is_finished()) {
        std::thread::sleep(std::time::Duration::from_millis(250));
        let w = written.load(Ordering::Relaxed);
        let secs = (now_ns() - start) as f64 / 1e9;
        eprint!(
            "\rlaying out {} of data: {:3.0}%  {:.0} MiB/s ",
            crate::units::fmt_size(total),
            100.0 * w as f64 / total as f64,
            w as f64 / (1 << 20) as f64 / secs.max(1e-9)
        );
        let _ = std::io::stderr().flush();
    }
    eprint!("\r\x1b[2K");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::block::verify;

    fn shape(files: u32, file_size: u64) -> Shape {
        Shape {
            files,
            file_size,
            block_size: 8192,
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
            false,
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
            false,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(again.reused);
        // A different shape replaces dbio's own files.
        let (p3, r3) = ensure(
            &target,
            shape(3, 1 << 20),
            1,
            false,
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(!r3.reused && p3.len() == 3);
        assert_eq!(fs::read_dir(&target).unwrap().count(), 4);
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
            false,
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(matches!(e, TargetError::Foreign(_)), "{e}");
        assert_eq!(fs::read(&foreign).unwrap(), b"precious");
    }
}
