//! `io_uring`: one ring per session thread, up to `depth` requests in flight.
//! [`Submit`] says when requests go in: each in its own `io_uring_enter` as
//! it is queued (as fio does; that call also collects completions, so the
//! session seldom sleeps), or all queued in the one `io_uring_enter` that
//! waits for a completion; every completion then in the ring is reaped
//! without another call. What fast NVMe users turn on is
//! in [`UringOpts`]: registered files and buffers (fio's `--registerfiles`,
//! `--fixedbufs`), a registered ring fd, a submission-polling kernel thread
//! (fio's `--sqthread_poll`) and how completion work is run
//! (`SINGLE_ISSUER|DEFER_TASKRUN`, `COOP_TASKRUN`). In the fsync/fdatasync
//! modes each write is linked to its sync so the pair completes in order and
//! both are timed.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{Ordering, fence};

use super::buf::BufPool;
use super::{Completion, Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;
use io_uring::{IoUring, cqueue, opcode, squeue, types};

/// Non-blocking `io_uring_enter` calls `Submit::Each` makes for a
/// completion before it sleeps (measured in bench/floor.rs: 8 beat 0 and 64).
const EACH_LOOKS: u32 = 8;

/// user_data bit marking the sync half of a linked write+sync pair.
const SYNC_BIT: u64 = 1 << 32;

// io_uring_enter(2) and io_uring_register(2) values the crate keeps private.
const ENTER_GETEVENTS: u32 = 1 << 0;
const ENTER_SQ_WAKEUP: u32 = 1 << 1;
const ENTER_SQ_WAIT: u32 = 1 << 2;
const ENTER_EXT_ARG: u32 = 1 << 3;
const ENTER_REGISTERED_RING: u32 = 1 << 4;
const REGISTER_RING_FDS: u32 = 20;
const UNREGISTER_RING_FDS: u32 = 21;

pub use crate::config::uring::{Submit, Taskrun, UringOpts};

pub struct Uring {
    ring: IoUring,
    depth: u32,
    sync: SyncAfterWrite,
    fixed_bufs: bool,
    /// The files by number when they are not registered.
    fds: Option<Vec<RawFd>>,
    /// What `io_uring_enter` is given: the registered index or the ring's fd.
    enter_fd: RawFd,
    enter_flags: u32,
    sqpoll: bool,
    /// Each request submitted as it is queued ([`Submit::each_at`]).
    submit_each: bool,
    /// Entries pushed since the last `io_uring_enter`.
    queued: u32,
    pairs: Pairs,
}

impl Uring {
    /// A ring with the default setup, falling back to what the kernel
    /// allows (for dbio's own I/O: layout, verification scans).
    pub fn new(
        fds: &[RawFd],
        bufs: Option<&BufPool>,
        depth: u32,
        sync: SyncAfterWrite,
    ) -> io::Result<Self> {
        Ok(Self::with_opts(
            fds,
            bufs,
            depth,
            sync,
            UringOpts::default(),
        )?)
    }

    /// Builds a ring for `depth` requests over `fds` as `opts` asks. With
    /// `bufs` and `opts.fixedbufs` the buffers are registered (then each
    /// request's `slot` is its buffer's index); otherwise requests may point
    /// anywhere. A setting the kernel refuses is an error naming it, except
    /// `Taskrun::Auto`, which falls back. Call it on the thread that will use
    /// the ring (it is single-issuer, and a registered ring fd is the
    /// thread's own).
    pub(crate) fn with_opts(
        fds: &[RawFd],
        bufs: Option<&BufPool>,
        depth: u32,
        sync: SyncAfterWrite,
        opts: UringOpts,
    ) -> Result<Self, SetupError> {
        let per_io = if sync == SyncAfterWrite::None { 1 } else { 2 };
        let entries = (depth * per_io).next_power_of_two().max(2);
        let ring = build_ring(entries, &opts)?;
        let fds = if opts.registerfiles {
            ring.submitter()
                .register_files(fds)
                .map_err(SetupError::Files)?;
            None
        } else {
            Some(fds.to_vec())
        };
        let fixed_bufs = match bufs {
            Some(b) if opts.fixedbufs => {
                register_buffers(&ring, b)?;
                true
            }
            _ => false,
        };
        let (enter_fd, enter_flags) = if opts.register_ring {
            (
                register_ring_fd(ring.as_raw_fd()).map_err(SetupError::RingFd)?,
                ENTER_REGISTERED_RING,
            )
        } else {
            (ring.as_raw_fd(), 0)
        };
        Ok(Uring {
            ring,
            depth,
            sync,
            fixed_bufs,
            fds,
            enter_fd,
            enter_flags,
            sqpoll: opts.sqthread_poll_ms.is_some(),
            // With SQPOLL the kernel thread submits: nothing to hurry.
            submit_each: opts.submit.each_at(depth) && opts.sqthread_poll_ms.is_none(),
            queued: 0,
            pairs: Pairs {
                write_done_ns: vec![0; depth as usize],
                write_res: vec![PENDING_NONE; depth as usize],
            },
        })
    }

    #[inline]
    fn data_entry(&self, io: &Io) -> squeue::Entry {
        macro_rules! rw {
            ($fd:expr) => {
                match (io.kind, self.fixed_bufs) {
                    (OpKind::Read, true) => {
                        opcode::ReadFixed::new($fd, io.buf, io.len, io.slot as u16)
                            .offset(io.offset)
                            .build()
                    }
                    (OpKind::Read, false) => opcode::Read::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .build(),
                    (OpKind::Write, true) => {
                        opcode::WriteFixed::new($fd, io.buf, io.len, io.slot as u16)
                            .offset(io.offset)
                            .build()
                    }
                    (OpKind::Write, false) => opcode::Write::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .build(),
                    (OpKind::WriteDsync, _) => opcode::Write::new($fd, io.buf, io.len)
                        .offset(io.offset)
                        .rw_flags(libc::RWF_DSYNC as _)
                        .build(),
                    (OpKind::Flush, _) => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
                }
            };
        }
        let e = match &self.fds {
            None => rw!(types::Fixed(io.file)),
            Some(fds) => rw!(types::Fd(fds[io.file as usize])),
        };
        e.user_data(u64::from(io.slot))
    }

    #[inline]
    fn sync_entry(&self, io: &Io) -> squeue::Entry {
        let flags = match self.sync {
            SyncAfterWrite::Fdatasync => types::FsyncFlags::DATASYNC,
            _ => types::FsyncFlags::empty(),
        };
        let e = match &self.fds {
            None => opcode::Fsync::new(types::Fixed(io.file)),
            Some(fds) => opcode::Fsync::new(types::Fd(fds[io.file as usize])),
        };
        e.flags(flags)
            .build()
            .user_data(u64::from(io.slot) | SYNC_BIT)
    }

    /// One `io_uring_enter`: submits what is queued and waits for `want`
    /// completions. With SQPOLL the kernel thread submits; the call is made
    /// only to wait or to wake it.
    #[inline]
    fn enter(&mut self, want: u32) -> io::Result<()> {
        let mut flags = ENTER_GETEVENTS | self.enter_flags;
        if self.sqpoll {
            // Orders our tail store before reading the thread's wakeup flag.
            fence(Ordering::SeqCst);
            if self.ring.submission().need_wakeup() {
                flags |= ENTER_SQ_WAKEUP;
            } else if want == 0 {
                self.queued = 0;
                return Ok(());
            }
        }
        let r = sys_enter(self.enter_fd, self.queued, want, flags)?;
        self.queued = if self.sqpoll {
            0
        } else {
            self.queued.saturating_sub(r as u32)
        };
        Ok(())
    }

    fn submit_and_wait(&mut self, want: u32) -> io::Result<()> {
        loop {
            match self.enter(want) {
                Ok(()) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {
                    // A signal (Ctrl-C) arrived: let the caller see it unless
                    // completions are owed.
                    if want == 0 {
                        return Ok(());
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    // CQ overflow pending: reap first.
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Uring {
    fn sq_room(&mut self) -> u32 {
        let sq = self.ring.submission();
        (sq.capacity() - sq.len()) as u32
    }

    /// SQPOLL: waits until the polling thread has taken entries off the
    /// submission queue (IORING_ENTER_SQ_WAIT).
    #[cold]
    fn wait_for_sq_room(&mut self) -> io::Result<()> {
        match sys_enter(self.enter_fd, 0, 0, ENTER_SQ_WAIT | self.enter_flags) {
            Err(e) if e.raw_os_error() != Some(libc::EINTR) => Err(e),
            _ => Ok(()),
        }
    }
}

impl Uring {
    /// Passes every completion in the ring to `done`; returns how many.
    #[inline]
    fn drain<F: FnMut(Completion)>(&mut self, done: &mut F) -> u32 {
        let sync_mode = self.sync != SyncAfterWrite::None;
        let Uring { ring, pairs, .. } = self;
        let mut cq = ring.completion();
        cq.sync();
        let mut n = 0;
        for cqe in &mut cq {
            if let Some(c) = pairs.complete(&cqe, sync_mode) {
                done(c);
                n += 1;
            }
        }
        n
    }
}

/// Registers `ring` as the calling thread's registered ring; returns its index.
fn register_ring_fd(ring: RawFd) -> io::Result<RawFd> {
    let mut up = RsrcUpdate {
        offset: u32::MAX,
        resv: 0,
        data: ring as u64,
    };
    sys_register_ring(ring, REGISTER_RING_FDS, &mut up)?;
    Ok(up.offset as RawFd)
}

/// `struct __kernel_timespec`.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

/// `struct io_uring_getevents_arg`: io_uring_enter's extended argument.
#[repr(C)]
struct GeteventsArg {
    sigmask: u64,
    sigmask_sz: u32,
    min_wait_usec: u32,
    ts: u64,
}

/// io_uring_enter(2) with IORING_ENTER_EXT_ARG: waits for `min_complete`
/// completions or until `arg`'s timeout (ETIME).
fn sys_enter_arg(
    fd: RawFd,
    to_submit: u32,
    min_complete: u32,
    flags: u32,
    arg: &GeteventsArg,
) -> io::Result<usize> {
    let size = std::mem::size_of::<GeteventsArg>();
    enter_syscall(
        fd,
        (to_submit, min_complete, flags),
        (arg as *const GeteventsArg).cast(),
        size,
    )
}

/// The system call itself; `arg` is null or points to `size` bytes that
/// outlive the call.
#[inline]
fn enter_syscall(
    fd: RawFd,
    (to_submit, min_complete, flags): (u32, u32, u32),
    arg: *const libc::c_void,
    size: usize,
) -> io::Result<usize> {
    // SAFETY: `arg` is null or valid for the call (the callers' promise).
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min_complete,
            flags,
            arg,
            size,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

/// io_uring_enter(2) without a signal mask or extra argument.
#[inline]
fn sys_enter(fd: RawFd, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<usize> {
    enter_syscall(fd, (to_submit, min_complete, flags), std::ptr::null(), 0)
}

/// IORING_(UN)REGISTER_RING_FDS of one ring fd.
fn sys_register_ring(ring: RawFd, opcode: u32, up: &mut RsrcUpdate) -> io::Result<()> {
    // SAFETY: `up` is a valid io_uring_rsrc_update for the call's duration.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_register,
            ring,
            opcode,
            up as *mut RsrcUpdate,
            1u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

impl Engine for Uring {
    fn depth(&self) -> u32 {
        self.depth
    }

    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        let linked_sync = io.kind == OpKind::Write && self.sync != SyncAfterWrite::None;
        let need = if linked_sync { 2 } else { 1 };
        // The polling thread moves the queue's head only after issuing its
        // whole batch, which may complete first: wait for room.
        while self.sqpoll && self.sq_room() < need {
            self.wait_for_sq_room()?;
        }
        let data = self.data_entry(io);
        if linked_sync {
            self.pairs.write_res[io.slot as usize] = PENDING_WRITE;
            let sync = self.sync_entry(io);
            let mut sq = self.ring.submission();
            // SAFETY: the caller keeps the buffer alive until completion.
            unsafe {
                sq.push(&data.flags(squeue::Flags::IO_LINK))
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
                sq.push(&sync)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        } else {
            // SAFETY: as above.
            unsafe {
                self.ring
                    .submission()
                    .push(&data)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        self.queued += need;
        if self.submit_each {
            // Also runs completion work, so `reap` may find them waiting.
            // A refusal (EAGAIN, EBUSY, EINTR) leaves the entries queued
            // for `reap`'s call, which reports what persists.
            let _ = self.enter(0);
        }
        Ok(())
    }

    fn reap<F: FnMut(Completion)>(&mut self, min: u32, mut done: F) -> io::Result<u32> {
        let mut reaped = 0;
        if self.submit_each && self.queued == 0 {
            // The last submission's call may have left completions: take
            // them without another call.
            reaped = self.drain(&mut done);
            // Before sleeping, look a few times without blocking: a woken
            // session costs the kernel's worker a wake-up per completion
            // (tmpfs reads go through io-wq), which slows it below the
            // session's pace; a short look keeps both running.
            let mut looks = 0;
            while reaped < min && looks < EACH_LOOKS {
                self.submit_and_wait(0)?;
                reaped += self.drain(&mut done);
                looks += 1;
            }
            if reaped > 0 && reaped >= min {
                return Ok(reaped);
            }
        }
        loop {
            self.submit_and_wait(min.saturating_sub(reaped))?;
            reaped += self.drain(&mut done);
            if reaped >= min {
                return Ok(reaped);
            }
        }
    }

    fn reap_within<F: FnMut(Completion)>(
        &mut self,
        timeout_ns: u64,
        mut done: F,
    ) -> io::Result<u32> {
        // Submit what is queued and look without waiting first.
        let reaped = self.reap(0, &mut done)?;
        if reaped > 0 || self.sqpoll {
            return Ok(reaped);
        }
        let ts = Timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as i64,
            tv_nsec: (timeout_ns % 1_000_000_000) as i64,
        };
        let arg = GeteventsArg {
            sigmask: 0,
            sigmask_sz: 0,
            min_wait_usec: 0,
            ts: &ts as *const Timespec as u64,
        };
        let flags = ENTER_GETEVENTS | ENTER_EXT_ARG | self.enter_flags;
        match sys_enter_arg(self.enter_fd, 0, 1, flags, &arg) {
            // Timed out, a signal (Ctrl-C), or a CQ overflow to reap first:
            // the caller looks again.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        Ok(self.drain(&mut done))
    }
}

/// Per slot: when the write half of a write+sync pair finished and what it returned.
struct Pairs {
    write_done_ns: Vec<u64>,
    write_res: Vec<i32>,
}

impl Pairs {
    /// Turns a CQE into a completion; the write half of a linked pair only
    /// records its time and result.
    #[inline]
    fn complete(&mut self, cqe: &cqueue::Entry, sync_mode: bool) -> Option<Completion> {
        let ud = cqe.user_data();
        let slot = (ud & 0xffff_ffff) as u32;
        if !sync_mode {
            return Some(Completion {
                slot,
                res: cqe.result(),
                sync_ns: 0,
            });
        }
        let s = slot as usize;
        if ud & SYNC_BIT == 0 {
            // A read, or the write half of a write+sync pair.
            if self.write_res[s] == PENDING_WRITE {
                self.write_res[s] = cqe.result();
                self.write_done_ns[s] = now_ns();
                return None;
            }
            return Some(Completion {
                slot,
                res: cqe.result(),
                sync_ns: 0,
            });
        }
        let wres = self.write_res[s];
        let sres = cqe.result();
        let res = if wres < 0 {
            wres
        } else if sres < 0 {
            sres
        } else {
            wres
        };
        self.write_res[s] = PENDING_NONE;
        Some(Completion {
            slot,
            res,
            sync_ns: now_ns().saturating_sub(self.write_done_ns[s]),
        })
    }
}

/// Slot states of the write half of a write+sync pair (sync modes).
const PENDING_NONE: i32 = i32::MIN;
const PENDING_WRITE: i32 = i32::MIN + 1;

impl Drop for Uring {
    /// Releases the registered files before the ring closes: ring teardown
    /// runs asynchronously in the kernel and would otherwise keep the files
    /// (and their filesystem) busy for a moment after dbio exits, so an
    /// immediate `umount` could fail. Unregistering waits for their use to end.
    fn drop(&mut self) {
        if self.enter_flags & ENTER_REGISTERED_RING != 0 {
            let mut up = RsrcUpdate {
                offset: self.enter_fd as u32,
                resv: 0,
                data: 0,
            };
            // A failure (dropped on another thread) is harmless: the
            // registration ends with the thread.
            let _ = sys_register_ring(self.ring.as_raw_fd(), UNREGISTER_RING_FDS, &mut up);
        }
        if self.fds.is_none() {
            let _ = self.ring.submitter().unregister_files();
        }
        if self.fixed_bufs {
            let _ = self.ring.submitter().unregister_buffers();
        }
    }
}

/// Whether this process may make an io_uring here: the kernel may lack it,
/// or forbid it (`kernel.io_uring_disabled`, a container's seccomp filter).
/// Asked once.
pub fn available() -> bool {
    static OK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OK.get_or_init(|| io_uring::IoUring::new(2).is_ok())
}

/// The ring of `entries` as `opts` asks (SQPOLL, task running); a setting
/// the kernel refuses is an error naming it (`Taskrun::Auto` falls back).
fn build_ring(entries: u32, opts: &UringOpts) -> Result<IoUring, SetupError> {
    let build = |taskrun: Taskrun| {
        let mut b = IoUring::builder();
        b.setup_cqsize(entries * 2);
        if let Some(ms) = opts.sqthread_poll_ms {
            b.setup_sqpoll(ms);
        }
        match taskrun {
            Taskrun::Defer | Taskrun::Auto => {
                b.setup_single_issuer().setup_defer_taskrun();
            }
            Taskrun::Coop => {
                b.setup_coop_taskrun();
            }
            Taskrun::None => {}
        }
        b.build(entries)
    };
    match (opts.taskrun, opts.sqthread_poll_ms) {
        // DEFER_TASKRUN needs the session to submit: not with SQPOLL.
        (Taskrun::Auto, Some(_)) => build(Taskrun::None),
        (Taskrun::Auto, None) => build(Taskrun::Auto).or_else(|_| build(Taskrun::None)),
        (t, _) => build(t),
    }
    .map_err(|source| refused_ring(entries, opts, source))
}

/// A ring the kernel refused: the settings that asked for it, and a hint.
fn refused_ring(entries: u32, opts: &UringOpts, source: io::Error) -> SetupError {
    let mut what = Vec::new();
    if let Some(ms) = opts.sqthread_poll_ms {
        what.push(format!("--sqthread-poll {ms} (SQPOLL)"));
    }
    match opts.taskrun {
        Taskrun::Defer => what.push("--uring-taskrun defer (DEFER_TASKRUN)".into()),
        Taskrun::Coop => what.push("--uring-taskrun coop (COOP_TASKRUN)".into()),
        _ => {}
    }
    let hint = match (opts.sqthread_poll_ms, opts.taskrun) {
        (Some(_), Taskrun::Defer) => {
            "; DEFER_TASKRUN cannot go with SQPOLL: pass --uring-taskrun auto"
        }
        (None, Taskrun::Auto | Taskrun::None) => "",
        _ => "; leave that option out (the kernel may be too old or forbid it)",
    };
    SetupError::Ring {
        what: if what.is_empty() {
            format!("{entries} entries")
        } else {
            what.join(" and ")
        },
        hint,
        source,
    }
}

/// Registers the session's buffers with the ring (fixed buffers: at most
/// 65535 slots).
fn register_buffers(ring: &IoUring, b: &BufPool) -> Result<(), SetupError> {
    if b.slots() > usize::from(u16::MAX) {
        return Err(SetupError::Buffers {
            slots: b.slots(),
            source: io::Error::other("more than 65535"),
        });
    }
    // SAFETY: the buffers outlive the ring (the session owns both and drops
    // the engine first).
    unsafe { ring.submitter().register_buffers(&b.iovecs()) }.map_err(|source| {
        SetupError::Buffers {
            slots: b.slots(),
            source,
        }
    })
}

#[cfg(test)]
#[path = "uring_tests.rs"]
mod tests;

/// The kernel (or this process's limits) refused an io_uring setting.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the kernel refused to make an io_uring with {what}: {source}{hint}")]
    Ring {
        what: String,
        hint: &'static str,
        source: io::Error,
    },
    #[error(
        "cannot register the files with io_uring (--registerfiles): {0}; pass --registerfiles false"
    )]
    Files(io::Error),
    #[error(
        "cannot register {slots} buffers with io_uring (--fixedbufs): {source}; raise the locked-memory limit (ulimit -l) or pass --fixedbufs false"
    )]
    Buffers { slots: usize, source: io::Error },
    #[error(
        "cannot register the io_uring's own fd (--register-ring, Linux 5.18+): {0}; pass --register-ring false"
    )]
    RingFd(io::Error),
}

impl From<SetupError> for io::Error {
    fn from(e: SetupError) -> Self {
        io::Error::other(e.to_string())
    }
}
