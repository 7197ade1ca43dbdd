//! `psync`: pread/pwrite from the session thread, one request at a time, with
//! an fsync/fdatasync after each write in those modes (timed on its own).

use std::io;
use std::os::fd::RawFd;

use super::{Completion, Engine, Io, OpKind, SyncAfterWrite};
use crate::measure::clock::now_ns;

pub struct Psync {
    fds: Vec<RawFd>,
    sync: SyncAfterWrite,
    done: Option<Completion>,
}

impl Psync {
    pub fn new(fds: &[RawFd], sync: SyncAfterWrite) -> Self {
        Psync {
            fds: fds.to_vec(),
            sync,
            done: None,
        }
    }
}

fn retry_eintr(mut f: impl FnMut() -> isize) -> isize {
    loop {
        let r = f();
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return r;
        }
    }
}

fn errno_result(r: isize) -> i32 {
    if r < 0 {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        r as i32
    }
}

impl Engine for Psync {
    fn depth(&self) -> u32 {
        1
    }

    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        debug_assert!(self.done.is_none(), "psync has one request in flight");
        let fd = self.fds[io.file as usize];
        let off = io.offset as libc::off_t;
        let len = io.len as usize;
        let res = match io.kind {
            // SAFETY: the caller guarantees buf holds len bytes.
            OpKind::Read => errno_result(retry_eintr(|| unsafe {
                libc::pread(fd, io.buf.cast(), len, off)
            })),
            OpKind::Write => errno_result(retry_eintr(|| unsafe {
                libc::pwrite(fd, io.buf.cast(), len, off)
            })),
        };
        let mut sync_ns = 0;
        let mut res = res;
        if io.kind == OpKind::Write && res >= 0 && self.sync != SyncAfterWrite::None {
            let t = now_ns();
            let r = retry_eintr(|| unsafe {
                (match self.sync {
                    SyncAfterWrite::Fdatasync => libc::fdatasync(fd),
                    _ => libc::fsync(fd),
                }) as isize
            });
            sync_ns = now_ns() - t;
            if r < 0 {
                res = errno_result(r);
            }
        }
        self.done = Some(Completion {
            slot: io.slot,
            res,
            sync_ns,
        });
        Ok(())
    }

    fn reap<F: FnMut(Completion)>(&mut self, _min: u32, mut done: F) -> io::Result<u32> {
        match self.done.take() {
            Some(c) => {
                done(c);
                Ok(1)
            }
            None => Ok(0),
        }
    }
}
