//! `io_uring`: one ring per session thread, up to `depth` requests in flight,
//! submitted and reaped in batches. Files and buffers are registered once
//! (fixed files, fixed buffers); in the fsync/fdatasync modes each write is
//! linked to its sync so the pair completes in order and both are timed.

use std::io;
use std::os::fd::RawFd;

use io_uring::{IoUring, cqueue, opcode, squeue, types};

use super::buf::BufPool;
use super::{Completion, Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;

/// user_data bit marking the sync half of a linked write+sync pair.
const SYNC_BIT: u64 = 1 << 32;

pub struct Uring {
    ring: IoUring,
    depth: u32,
    sync: SyncAfterWrite,
    fixed_bufs: bool,
    pairs: Pairs,
}

impl Uring {
    /// Builds a ring for `depth` requests over `fds`, registering `bufs` as
    /// fixed buffers (then each request's `slot` is its buffer's index);
    /// without `bufs`, requests may point anywhere. Call it on the thread
    /// that will use it (the ring is single-issuer).
    pub fn new(
        fds: &[RawFd],
        bufs: Option<&BufPool>,
        depth: u32,
        sync: SyncAfterWrite,
    ) -> io::Result<Self> {
        let per_io = if sync == SyncAfterWrite::None { 1 } else { 2 };
        let entries = (depth * per_io).next_power_of_two().max(2);
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(entries * 2)
            .build(entries)
            .or_else(|_| IoUring::builder().setup_cqsize(entries * 2).build(entries))?;
        ring.submitter().register_files(fds)?;
        // SAFETY: the buffers outlive the ring (the session owns both and drops
        // the engine first); registration fails cleanly under a low memlock limit.
        let fixed_bufs = bufs.is_some_and(|b| {
            b.slots() <= u16::MAX as usize
                && unsafe { ring.submitter().register_buffers(&b.iovecs()) }.is_ok()
        });
        Ok(Uring {
            ring,
            depth,
            sync,
            fixed_bufs,
            pairs: Pairs {
                write_done_ns: vec![0; depth as usize],
                write_res: vec![PENDING_NONE; depth as usize],
            },
        })
    }

    fn data_entry(&self, io: &Io) -> squeue::Entry {
        let fd = types::Fixed(io.file);
        let e = match (io.kind, self.fixed_bufs) {
            (OpKind::Read, true) => opcode::ReadFixed::new(fd, io.buf, io.len, io.slot as u16)
                .offset(io.offset)
                .build(),
            (OpKind::Read, false) => opcode::Read::new(fd, io.buf, io.len)
                .offset(io.offset)
                .build(),
            (OpKind::Write, true) => opcode::WriteFixed::new(fd, io.buf, io.len, io.slot as u16)
                .offset(io.offset)
                .build(),
            (OpKind::Write, false) => opcode::Write::new(fd, io.buf, io.len)
                .offset(io.offset)
                .build(),
        };
        e.user_data(u64::from(io.slot))
    }

    fn submit_and_wait(&mut self, want: usize) -> io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
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

impl Engine for Uring {
    fn depth(&self) -> u32 {
        self.depth
    }

    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        let data = self.data_entry(io);
        let linked_sync = io.kind == OpKind::Write && self.sync != SyncAfterWrite::None;
        if linked_sync {
            self.pairs.write_res[io.slot as usize] = PENDING_WRITE;
        }
        let mut sq = self.ring.submission();
        if linked_sync {
            let flags = match self.sync {
                SyncAfterWrite::Fdatasync => types::FsyncFlags::DATASYNC,
                _ => types::FsyncFlags::empty(),
            };
            let sync = opcode::Fsync::new(types::Fixed(io.file))
                .flags(flags)
                .build()
                .user_data(u64::from(io.slot) | SYNC_BIT);
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
                sq.push(&data)
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            }
        }
        Ok(())
    }

    fn reap<F: FnMut(Completion)>(&mut self, min: u32, mut done: F) -> io::Result<u32> {
        let mut reaped = 0;
        let mut want = min as usize;
        loop {
            self.submit_and_wait(want)?;
            let sync_mode = self.sync != SyncAfterWrite::None;
            let Uring { ring, pairs, .. } = self;
            let mut cq = ring.completion();
            cq.sync();
            for cqe in &mut cq {
                if let Some(c) = pairs.complete(&cqe, sync_mode) {
                    done(c);
                    reaped += 1;
                }
            }
            if reaped >= min {
                return Ok(reaped);
            }
            want = (min - reaped) as usize;
        }
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
        let _ = self.ring.submitter().unregister_files();
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
