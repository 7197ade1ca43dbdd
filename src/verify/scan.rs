//! Reading every block of a target for `dbio verify`: 1 MiB O_DIRECT reads,
//! eight in flight through io_uring (one psync reader where io_uring is
//! off), each block classified as soon as its read completes while the
//! other reads stay in flight; progress and rate on stderr.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use rustix::fs::{Mode, OFlags};

use super::classify::{Expect, Verdict, classify};
use super::findings::Findings;
use crate::engine::buf::BufPool;
use crate::engine::psync::Psync;
use crate::engine::uring::Uring;
use crate::engine::{Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;

/// Bytes per read.
const CHUNK: u64 = 1 << 20;
/// Reads in flight.
pub const IN_FLIGHT: u32 = 8;

/// What to read and what it must hold.
pub struct Layout {
    pub files: Vec<PathBuf>,
    /// Bytes of blocks to read in every file.
    pub file_size: u64,
    pub block_size: u32,
    pub target_id: u32,
    /// The generation map's floor per global block (file-major), if kept.
    pub floors: Option<Vec<u16>>,
}

impl Layout {
    fn blocks_per_file(&self) -> u64 {
        self.file_size / u64::from(self.block_size)
    }
}

/// Why the target could not be read to the end.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("cannot open {}: {source}", .path.display())]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("reading {} at byte {offset} failed: {source}", .path.display())]
    Read {
        path: PathBuf,
        offset: u64,
        source: std::io::Error,
    },
    #[error("interrupted after {0} of the data")]
    Interrupted(String),
}

/// How the reading went.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct ScanStats {
    pub bytes: u64,
    pub seconds: f64,
    pub direct: bool,
    pub engine: &'static str,
}

fn open(path: &PathBuf, direct: bool) -> rustix::io::Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    rustix::fs::open(path, flags, Mode::empty())
}

/// Reads and classifies every block of `layout` into `findings`.
pub fn scan(
    layout: &Layout,
    findings: &mut Findings,
    progress: bool,
    interrupt: &AtomicBool,
) -> Result<ScanStats, ScanError> {
    let direct = open(&layout.files[0], true).is_ok();
    let mut fds = Vec::with_capacity(layout.files.len());
    for p in &layout.files {
        let fd = open(p, direct).map_err(|e| ScanError::Open {
            path: p.clone(),
            source: e.into(),
        })?;
        fds.push(fd);
    }
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let mut bufs = BufPool::new(CHUNK as usize, IN_FLIGHT as usize);
    let read = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    let total = layout.file_size * layout.files.len() as u64;
    let start = now_ns();
    let result = std::thread::scope(|s| {
        if progress {
            s.spawn(|| show_progress(&read, total, &finished));
        }
        let r = match Uring::new(&raw, Some(&bufs), IN_FLIGHT, SyncAfterWrite::None) {
            Ok(mut e) => {
                reader(&mut e, &mut bufs, layout, findings, &read, interrupt).map(|()| "io_uring")
            }
            Err(_) => {
                let mut e = Psync::new(&raw, SyncAfterWrite::None);
                reader(&mut e, &mut bufs, layout, findings, &read, interrupt).map(|()| "psync")
            }
        };
        finished.store(true, Relaxed);
        r
    });
    let engine = result?;
    Ok(ScanStats {
        bytes: total,
        seconds: (now_ns() - start) as f64 / 1e9,
        direct,
        engine,
    })
}

/// Keeps the engine's queue full of chunk reads in order; classifies each
/// chunk's blocks as it completes.
fn reader<E: Engine>(
    engine: &mut E,
    bufs: &mut BufPool,
    layout: &Layout,
    findings: &mut Findings,
    read: &AtomicU64,
    interrupt: &AtomicBool,
) -> Result<(), ScanError> {
    let depth = engine.depth() as usize;
    let per_file = layout.file_size.div_ceil(CHUNK);
    let total = per_file * layout.files.len() as u64;
    let mut next = 0u64;
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let mut meta = vec![(0u32, 0u64, 0u32); depth];
    let mut done: Vec<(u32, i32)> = Vec::with_capacity(depth);
    let mut inflight = 0usize;
    let fail = |file: u32, offset: u64, source: std::io::Error| ScanError::Read {
        path: layout.files[file as usize].clone(),
        offset,
        source,
    };
    loop {
        while inflight < depth && next < total {
            if interrupt.load(Relaxed) {
                let so_far = crate::units::fmt_size(read.load(Relaxed));
                return Err(ScanError::Interrupted(so_far));
            }
            let file = (next / per_file) as u32;
            let offset = (next % per_file) * CHUNK;
            let len = CHUNK.min(layout.file_size - offset) as u32;
            next += 1;
            let slot = free.pop().expect("a free slot");
            meta[slot as usize] = (file, offset, len);
            let io = Io {
                kind: OpKind::Read,
                file,
                offset,
                len,
                buf: bufs.ptr(slot as usize),
                slot,
            };
            // SAFETY: the slot's buffer is not touched until its read is reaped.
            unsafe { engine.queue(&io) }.map_err(|e| fail(file, offset, e))?;
            inflight += 1;
        }
        if inflight == 0 {
            return Ok(());
        }
        done.clear();
        let n = engine
            .reap(1, |c| done.push((c.slot, c.res)))
            .map_err(|e| fail(0, 0, e))?;
        inflight -= n as usize;
        for &(slot, res) in &done {
            let (file, offset, len) = meta[slot as usize];
            if res != len as i32 {
                let e = if res < 0 {
                    std::io::Error::from_raw_os_error(-res)
                } else {
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!(
                            "short read of {res} of {len} bytes (is the file shorter than its manifest says?)"
                        ),
                    )
                };
                return Err(fail(file, offset, e));
            }
            check_chunk(
                bufs.slot(slot as usize, len as usize),
                file,
                offset,
                layout,
                findings,
            );
            read.fetch_add(u64::from(len), Relaxed);
            free.push(slot);
        }
    }
}

fn check_chunk(data: &[u8], file: u32, offset: u64, layout: &Layout, findings: &mut Findings) {
    let bs = layout.block_size;
    let first = offset / u64::from(bs);
    for (i, b) in data.chunks_exact(bs as usize).enumerate() {
        let block = first + i as u64;
        let global = u64::from(file) * layout.blocks_per_file() + block;
        let e = Expect {
            target: layout.target_id,
            file,
            offset: block * u64::from(bs),
            size: bs,
            floor: layout.floors.as_ref().map(|f| f[global as usize]),
        };
        match classify(b, &e) {
            Verdict::Intact { newer } => findings.intact(newer),
            Verdict::Bad {
                class,
                sector,
                found,
            } => findings.bad(class, &e, sector, found),
        }
    }
}

fn show_progress(read: &AtomicU64, total: u64, finished: &AtomicBool) {
    use std::io::Write;
    let start = now_ns();
    while !finished.load(Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(250));
        let r = read.load(Relaxed);
        let secs = (now_ns() - start) as f64 / 1e9;
        eprint!(
            "\rverifying {}: {:3.0}%  {:.0} MiB/s ",
            crate::units::fmt_size(total),
            100.0 * r as f64 / total.max(1) as f64,
            r as f64 / (1 << 20) as f64 / secs.max(1e-9)
        );
        let _ = std::io::stderr().flush();
    }
    eprint!("\r\x1b[2K");
}
