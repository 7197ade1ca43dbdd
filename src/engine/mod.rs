//! How I/O is issued. One small trait, [`Engine`], in the spirit of fio's
//! `ioengine_ops`: queue requests, then submit and reap completions. A session
//! thread owns one engine; engines allocate nothing per request.

pub mod buf;
pub mod psync;
pub mod uring;

use std::io;
use std::os::fd::RawFd;

use rustix::fs::OFlags;

use crate::config::IoMode;

/// The direction of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read = 0,
    Write = 1,
}

/// One request: `len` bytes at `offset` of file number `file`, into or out of `buf`.
#[derive(Clone, Copy, Debug)]
pub struct Io {
    pub kind: OpKind,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub buf: *mut u8,
    /// The caller's tag for the request (its buffer slot), returned on completion.
    pub slot: u32,
}

/// A finished request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub res: i32,
    /// Time the fsync/fdatasync after a write took, in ns (0 when none ran).
    pub sync_ns: u64,
}

/// What a write is followed by, for the fsync/fdatasync modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncAfterWrite {
    None,
    Fsync,
    Fdatasync,
}

impl SyncAfterWrite {
    pub fn for_mode(mode: IoMode) -> Self {
        match mode {
            IoMode::Fsync => SyncAfterWrite::Fsync,
            IoMode::Fdatasync => SyncAfterWrite::Fdatasync,
            _ => SyncAfterWrite::None,
        }
    }
}

/// An I/O engine: the seam between workloads and the kernel.
pub trait Engine {
    /// Requests that may be in flight at once.
    fn depth(&self) -> u32;

    /// Queues a request (a synchronous engine performs it here).
    ///
    /// # Safety
    /// `io.buf` must point to `io.len` bytes that stay valid and untouched
    /// until the request's completion has been reaped.
    unsafe fn queue(&mut self, io: &Io) -> io::Result<()>;

    /// Submits what is queued, waits for at least `min` completions, and
    /// passes every available completion to `done`. Returns how many.
    fn reap<F: FnMut(Completion)>(&mut self, min: u32, done: F) -> io::Result<u32>;
}

/// Open flags for an I/O mode: O_DIRECT for direct, O_DSYNC for dsync.
pub fn open_flags(mode: IoMode, write: bool) -> OFlags {
    let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
    let extra = match mode {
        IoMode::Direct => OFlags::DIRECT,
        IoMode::Dsync => OFlags::DSYNC,
        IoMode::Buffered | IoMode::Fsync | IoMode::Fdatasync => OFlags::empty(),
    };
    access | extra | OFlags::CLOEXEC
}

/// The engines the CLI names, built for one session over open files.
pub enum AnyEngine {
    Psync(psync::Psync),
    Uring(Box<uring::Uring>),
}

impl AnyEngine {
    pub fn new(
        kind: crate::config::EngineKind,
        fds: &[RawFd],
        bufs: &buf::BufPool,
        depth: u32,
        sync: SyncAfterWrite,
    ) -> io::Result<Self> {
        Ok(match kind {
            crate::config::EngineKind::Psync => AnyEngine::Psync(psync::Psync::new(fds, sync)),
            crate::config::EngineKind::IoUring => {
                AnyEngine::Uring(Box::new(uring::Uring::new(fds, bufs, depth, sync)?))
            }
        })
    }
}

/// Explains an errno from an I/O the way a user can act on it.
pub fn explain_errno(errno: i32, mode: IoMode) -> String {
    let err = io::Error::from_raw_os_error(errno);
    match errno {
        libc::EINVAL if mode == IoMode::Direct => format!(
            "{err}: O_DIRECT was refused; likely causes: the filesystem does not support \
             O_DIRECT (try --io buffered), --bs is below the device's logical sector size, \
             or the offset/buffer is misaligned"
        ),
        libc::ENOSPC => format!("{err}: the filesystem is full; use a smaller --size"),
        libc::EIO => format!("{err}: the device reported an I/O error; check dmesg"),
        _ => err.to_string(),
    }
}
