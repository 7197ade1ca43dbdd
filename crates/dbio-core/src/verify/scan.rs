//! Reading every block of a target for `dbio verify`: 1 MiB O_DIRECT reads
//! into buffers on huge pages (so that each goes down whole), eight in
//! flight through io_uring (one psync reader where io_uring is off) in one
//! thread, while one checker thread per CPU classifies the chunks already
//! read (checksums cost more CPU than reading); progress and rate on stderr.
//! A file missing or shorter than the layout is a finding of its own (its
//! missing blocks); the rest is read and checked all the same.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::mpsc;

use rustix::fs::{Mode, OFlags};

use super::classify::{Expect, Verdict, classify};
use super::findings::{Findings, MissingFile};
use super::interrupted::Interruption;
use crate::engine::buf::{BufPool, HUGE_PAGE};
use crate::engine::psync::Psync;
use crate::engine::uring::Uring;
use crate::engine::{Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;
use crate::storage::block::{SECTOR, read_stamp};

/// Bytes per read.
const CHUNK: u64 = 1 << 20;
/// Reads in flight.
pub(crate) const IN_FLIGHT: u32 = 8;

/// What to read and what it must hold.
pub struct Layout {
    pub files: Vec<PathBuf>,
    /// Bytes of blocks to read in every file.
    pub file_size: u64,
    pub block_size: u32,
    pub target_id: u32,
    /// The generation map's floor per global block (file-major), if kept.
    pub floors: Option<Vec<u16>>,
    /// The writes a run may have had in flight when it was interrupted.
    pub interrupted: Interruption,
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

/// Buffers: reads in flight plus chunks waiting for or under a check. A
/// checker needs a fraction of a CPU, but on a loaded machine it may wait
/// milliseconds for one; three reads' worth of slack per read in flight
/// keeps the reads going meanwhile.
const BUFFERS: usize = 4 * IN_FLIGHT as usize;

/// A chunk read and handed to a checker: its buffer slot (by address) and place.
struct Chunk {
    slot: u32,
    ptr: usize,
    file: u32,
    offset: u64,
    len: u32,
}

/// The files open for reading, and how much of each there is to read.
struct Opened {
    /// Keeps the descriptors open.
    fds: Vec<OwnedFd>,
    /// A descriptor per file (a missing file's: another file's, never read).
    raw: Vec<RawFd>,
    /// Bytes of whole blocks to read in each file.
    readable: Vec<u64>,
    direct: bool,
}

/// Opens every file of `layout` there is; a file missing or shorter than
/// the layout goes into `findings` as missing blocks.
fn open_files(layout: &Layout, findings: &mut Findings) -> Result<Opened, ScanError> {
    let bs = u64::from(layout.block_size);
    let mut readable = Vec::with_capacity(layout.files.len());
    let mut fds: Vec<Option<OwnedFd>> = Vec::with_capacity(layout.files.len());
    let mut direct = None;
    for (i, p) in layout.files.iter().enumerate() {
        let err = |e: std::io::Error| ScanError::Open {
            path: p.clone(),
            source: e,
        };
        let len = match std::fs::metadata(p) {
            Ok(md) => md.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                findings.missing(MissingFile {
                    file: i as u32,
                    bytes: None,
                    from: 0,
                    blocks: layout.blocks_per_file(),
                });
                readable.push(0);
                fds.push(None);
                continue;
            }
            Err(e) => return Err(err(e)),
        };
        let whole = len.min(layout.file_size) / bs * bs;
        if whole < layout.file_size {
            findings.missing(MissingFile {
                file: i as u32,
                bytes: Some(len),
                from: whole,
                blocks: (layout.file_size - whole) / bs,
            });
        }
        let d = *direct.get_or_insert_with(|| open(p, true).is_ok());
        fds.push(Some(open(p, d).map_err(|e| err(e.into()))?));
        readable.push(whole);
    }
    let any = fds.iter().flatten().next().map(|f| f.as_raw_fd());
    let raw = fds
        .iter()
        .map(|f| f.as_ref().map(|f| f.as_raw_fd()).or(any).unwrap_or(-1))
        .collect();
    Ok(Opened {
        fds: fds.into_iter().flatten().collect(),
        raw,
        readable,
        direct: direct.unwrap_or(false),
    })
}

/// Where each file's blocks end for the reader.
#[derive(Clone, Copy)]
struct Ends<'a> {
    files: &'a [PathBuf],
    readable: &'a [u64],
}

/// Reads and classifies every block of `layout` into `findings`: one thread
/// keeps the reads in flight, one checker per CPU classifies the chunks.
pub fn scan(
    layout: &Layout,
    findings: &mut Findings,
    progress: bool,
    interrupt: &AtomicBool,
) -> Result<ScanStats, ScanError> {
    let Opened {
        fds: _fds,
        raw,
        readable,
        direct,
    } = open_files(layout, findings)?;
    // Two spare slots, so that BUFFERS of them lie on whole huge pages.
    let bufs = BufPool::new(CHUNK as usize, BUFFERS + (HUGE_PAGE / CHUNK as usize));
    let slots = bufs.on_huge_pages(BUFFERS);
    let checked = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    let total: u64 = readable.iter().sum();
    let checkers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let start = now_ns();
    let (result, parts) = std::thread::scope(|s| {
        if progress {
            s.spawn(|| show_progress(&checked, total, &finished));
        }
        let (back_tx, back_rx) = mpsc::channel::<u32>();
        let mut work = Vec::with_capacity(checkers);
        let mut handles = Vec::with_capacity(checkers);
        for _ in 0..checkers {
            let (tx, rx) = mpsc::channel::<Chunk>();
            let back = back_tx.clone();
            let checked = &checked;
            handles.push(s.spawn(move || {
                let mut f = Findings::default();
                for c in rx {
                    // SAFETY: the reader does not touch the slot until it is sent back.
                    let data =
                        unsafe { std::slice::from_raw_parts(c.ptr as *const u8, c.len as usize) };
                    check_chunk(data, c.file, c.offset, layout, &mut f);
                    checked.fetch_add(u64::from(c.len), Relaxed);
                    let _ = back.send(c.slot);
                }
                f
            }));
            work.push(tx);
        }
        drop(back_tx);
        let ends = Ends {
            files: &layout.files,
            readable: &readable,
        };
        let r = match Uring::new(&raw, Some(&bufs), IN_FLIGHT, SyncAfterWrite::None) {
            _ if total == 0 => Ok("none"),
            Ok(mut e) => {
                reader(&mut e, &bufs, &slots, ends, &work, &back_rx, interrupt).map(|()| "io_uring")
            }
            Err(_) => {
                let mut e = Psync::new(&raw, SyncAfterWrite::None);
                reader(&mut e, &bufs, &slots, ends, &work, &back_rx, interrupt).map(|()| "psync")
            }
        };
        drop(work);
        let parts: Vec<Findings> = handles
            .into_iter()
            .map(|h| h.join().expect("a checker panicked"))
            .collect();
        finished.store(true, Relaxed);
        (r, parts)
    });
    let engine = result?;
    for p in parts {
        findings.merge(p);
    }
    Ok(ScanStats {
        bytes: total,
        seconds: (now_ns() - start) as f64 / 1e9,
        direct,
        engine,
    })
}

/// Keeps up to the engine's depth of chunk reads in flight, in order, and
/// hands each completed chunk to the checkers in turn.
fn reader<E: Engine>(
    engine: &mut E,
    bufs: &BufPool,
    slots: &[u32],
    ends: Ends,
    work: &[mpsc::Sender<Chunk>],
    back: &mpsc::Receiver<u32>,
    interrupt: &AtomicBool,
) -> Result<(), ScanError> {
    let depth = engine.depth() as usize;
    // The next chunk to read: file, offset; bytes asked so far.
    let (mut file, mut offset, mut asked, mut handed) = (0usize, 0u64, 0u64, 0usize);
    let files = ends.readable.len();
    let mut free: Vec<u32> = slots.iter().rev().copied().collect();
    let mut meta = vec![(0u32, 0u64, 0u32); bufs.slots()];
    let mut done: Vec<(u32, i32)> = Vec::with_capacity(depth);
    let mut inflight = 0usize;
    let fail = |file: u32, offset: u64, source: std::io::Error| ScanError::Read {
        path: ends.files[file as usize].clone(),
        offset,
        source,
    };
    loop {
        free.extend(back.try_iter());
        while file < files && offset >= ends.readable[file] {
            (file, offset) = (file + 1, 0);
        }
        while inflight < depth && file < files && !free.is_empty() {
            if interrupt.load(Relaxed) {
                let so_far = crate::units::fmt_size(asked);
                return Err(ScanError::Interrupted(so_far));
            }
            let len = CHUNK.min(ends.readable[file] - offset) as u32;
            let (f, at) = (file as u32, offset);
            (offset, asked) = (offset + u64::from(len), asked + u64::from(len));
            while file < files && offset >= ends.readable[file] {
                (file, offset) = (file + 1, 0);
            }
            let (file, offset) = (f, at);
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
            if file >= files {
                return Ok(());
            }
            // Every buffer is with the checkers: wait for one back.
            free.extend(back.recv());
            continue;
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
                            "short read of {res} of {len} bytes (the file was cut short while verify read it)"
                        ),
                    )
                };
                return Err(fail(file, offset, e));
            }
            let chunk = Chunk {
                slot,
                ptr: bufs.ptr(slot as usize) as usize,
                file,
                offset,
                len,
            };
            // A checker that is gone has panicked; its join says so.
            let _ = work[handed % work.len()].send(chunk);
            handed += 1;
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
        let v = classify(b, &e);
        let stamp = |sector| read_stamp(&b[sector * SECTOR..(sector + 1) * SECTOR]).ok();
        match (layout.interrupted.outcome(global, b, &e, &v), v) {
            (Some(o), Verdict::Bad { sector, found, .. }) => {
                findings.interrupted(o, &e, sector, found)
            }
            (Some(o), Verdict::Intact { .. }) => findings.interrupted(o, &e, 0, stamp(0)),
            (None, Verdict::Intact { newer, copy }) => findings.intact(newer, copy),
            (
                None,
                Verdict::Bad {
                    class,
                    sector,
                    found,
                },
            ) => findings.bad(class, &e, sector, found),
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
