//! How I/O is issued. One small trait, [`Engine`], in the spirit of fio's
//! `ioengine_ops`: queue requests, then submit and reap completions. A session
//! thread owns one engine; engines allocate nothing per request.

pub mod buf;
pub mod null;
pub mod psync;
pub mod uring;

use std::io;
use std::os::fd::RawFd;

use rustix::fs::OFlags;

use crate::config::{EngineKind, IoMode};

/// The direction of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read = 0,
    Write = 1,
    /// A write that is durable when it completes (RWF_DSYNC: a replayed
    /// FUA write).
    WriteDsync = 2,
    /// `fdatasync` of the file (a replayed cache flush); no data, `len` 0.
    Flush = 3,
}

impl OpKind {
    /// True for the kinds that carry data out of the buffer.
    #[inline]
    pub fn writes(self) -> bool {
        matches!(self, OpKind::Write | OpKind::WriteDsync)
    }
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
    pub(crate) fn for_mode(mode: IoMode) -> Self {
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

    /// As `reap(1, done)`, but waits at most `timeout_ns` for the first
    /// completion (an open-loop session's next request falls due then);
    /// returns 0 when none came. An engine that completes a request when it
    /// is queued (psync, null) never waits here.
    fn reap_within<F: FnMut(Completion)>(&mut self, timeout_ns: u64, done: F) -> io::Result<u32> {
        let _ = timeout_ns;
        self.reap(1, done)
    }
}

impl<E: Engine + ?Sized> Engine for Box<E> {
    fn depth(&self) -> u32 {
        (**self).depth()
    }
    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        // SAFETY: forwarded with the caller's promise.
        unsafe { (**self).queue(io) }
    }
    fn reap<F: FnMut(Completion)>(&mut self, min: u32, done: F) -> io::Result<u32> {
        (**self).reap(min, done)
    }
    fn reap_within<F: FnMut(Completion)>(&mut self, timeout_ns: u64, done: F) -> io::Result<u32> {
        (**self).reap_within(timeout_ns, done)
    }
}

/// Performs one request and waits for it.
///
/// # Safety
/// As [`Engine::queue`]: `io.buf` must stay valid until this returns.
#[inline]
pub(crate) unsafe fn perform<E: Engine>(engine: &mut E, io: &Io) -> io::Result<Completion> {
    // SAFETY: the caller's promise; the completion is reaped before returning.
    unsafe { engine.queue(io)? };
    let mut done = None;
    while done.is_none() {
        engine.reap(1, |c| done = Some(c))?;
    }
    Ok(done.expect("reaped"))
}

/// Performs every request of `ios`, keeping up to the engine's depth in
/// flight, and passes each completion to `done` with the time its request
/// was queued (`queued` is scratch space, indexed by slot).
///
/// # Safety
/// As [`Engine::queue`], for every request of `ios`; their `slot`s must be
/// distinct and below `queued.len()`.
pub(crate) unsafe fn perform_all<E: Engine>(
    engine: &mut E,
    ios: &[Io],
    queued: &mut [u64],
    mut done: impl FnMut(Completion, u64),
) -> io::Result<()> {
    let depth = engine.depth().max(1) as usize;
    let (mut next, mut inflight) = (0, 0);
    while next < ios.len() || inflight > 0 {
        while next < ios.len() && inflight < depth {
            queued[ios[next].slot as usize] = crate::measure::clock::now_ns();
            // SAFETY: the caller's promise.
            unsafe { engine.queue(&ios[next])? };
            next += 1;
            inflight += 1;
        }
        inflight -= engine.reap(1, |c| done(c, queued[c.slot as usize]))? as usize;
    }
    Ok(())
}

/// Open flags for an I/O mode: O_DIRECT for direct, O_DSYNC for dsync.
pub(crate) fn open_flags(mode: IoMode, write: bool) -> OFlags {
    let access = if write { OFlags::RDWR } else { OFlags::RDONLY };
    let extra = match mode {
        IoMode::Direct => OFlags::DIRECT,
        IoMode::Dsync => OFlags::DSYNC,
        IoMode::Buffered | IoMode::Fsync | IoMode::Fdatasync => OFlags::empty(),
    };
    access | extra | OFlags::CLOEXEC
}

/// The engines the CLI names, built for one thread over open files. This is
/// the one place an engine is chosen at run time: every workload holds an
/// `AnyEngine`, whose calls pass straight to the engine inside (a predictable
/// branch per call).
pub enum AnyEngine {
    Psync(psync::Psync),
    Uring(Box<uring::Uring>),
    Null(null::Null),
}

impl AnyEngine {
    pub fn new(
        kind: EngineKind,
        fds: &[RawFd],
        bufs: Option<&buf::BufPool>,
        depth: u32,
        sync: SyncAfterWrite,
        opts: uring::UringOpts,
    ) -> io::Result<Self> {
        Ok(match kind {
            EngineKind::Psync => AnyEngine::Psync(psync::Psync::new(fds, sync)),
            EngineKind::IoUring => AnyEngine::Uring(Box::new(uring::Uring::with_opts(
                fds, bufs, depth, sync, opts,
            )?)),
            EngineKind::Null => AnyEngine::Null(null::Null::new(depth)),
        })
    }
}

impl Engine for AnyEngine {
    #[inline]
    fn depth(&self) -> u32 {
        match self {
            AnyEngine::Psync(e) => e.depth(),
            AnyEngine::Uring(e) => e.depth(),
            AnyEngine::Null(e) => e.depth(),
        }
    }

    #[inline]
    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        // SAFETY: forwarded with the caller's promise.
        unsafe {
            match self {
                AnyEngine::Psync(e) => e.queue(io),
                AnyEngine::Uring(e) => e.queue(io),
                AnyEngine::Null(e) => e.queue(io),
            }
        }
    }

    #[inline]
    fn reap<F: FnMut(Completion)>(&mut self, min: u32, done: F) -> io::Result<u32> {
        match self {
            AnyEngine::Psync(e) => e.reap(min, done),
            AnyEngine::Uring(e) => e.reap(min, done),
            AnyEngine::Null(e) => e.reap(min, done),
        }
    }

    #[inline]
    fn reap_within<F: FnMut(Completion)>(&mut self, timeout_ns: u64, done: F) -> io::Result<u32> {
        match self {
            AnyEngine::Psync(e) => e.reap_within(timeout_ns, done),
            AnyEngine::Uring(e) => e.reap_within(timeout_ns, done),
            AnyEngine::Null(e) => e.reap_within(timeout_ns, done),
        }
    }
}

/// Why a request that should have moved `len` bytes returned `res`: an
/// explained errno, or a short transfer.
pub(crate) fn explain_result(res: i32, len: u64, mode: IoMode) -> String {
    if res < 0 {
        explain_errno(-res, mode)
    } else {
        format!("short transfer of {res} of {len} bytes")
    }
}

/// Explains an errno from an I/O the way a user can act on it.
pub(crate) fn explain_errno(errno: i32, mode: IoMode) -> String {
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
