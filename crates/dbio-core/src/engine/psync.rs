//! `psync`: pread/pwrite from the session thread, one request at a time, with
//! an fsync/fdatasync after each write in those modes (timed on its own).
//!
//! The reads and writes are rustix's raw system calls, not glibc's wrappers:
//! in a process with more than one thread glibc makes every `pread` a
//! cancellation point and toggles the thread's cancellation state around
//! the call (two library calls per I/O, about 0.02 µs here); dbio never
//! cancels a thread. A session thread can also take a private copy of the
//! descriptor table ([`private_fd_table`]), so the kernel looks up its
//! files without taking and dropping a reference on every call.

use std::io;
use std::os::fd::{BorrowedFd, RawFd};

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

/// Gives the calling thread its own copy of the process's descriptor table
/// (`unshare(CLONE_FILES)`), for a session thread that issues every I/O as a
/// system call on descriptors opened before it started. While a table is
/// shared by several threads, the kernel takes and drops a reference on the
/// file at every `pread` (`fdget`/`fput`: about 0.025 µs per I/O here, a
/// third of dbio's own work per I/O); with a table of its own, the thread's
/// lookups borrow it. The copy holds the process's descriptors open until
/// the thread ends, and descriptors other threads open later are not in it.
/// Only advice: if the kernel refuses, the thread keeps the shared table.
pub fn private_fd_table() {
    // SAFETY: unshare changes only the calling thread's descriptor table.
    unsafe { libc::unshare(libc::CLONE_FILES) };
}

impl Engine for Psync {
    fn depth(&self) -> u32 {
        1
    }

    unsafe fn queue(&mut self, io: &Io) -> io::Result<()> {
        debug_assert!(self.done.is_none(), "psync has one request in flight");
        let fd = self.fds[io.file as usize];
        let len = io.len as usize;
        // SAFETY: the descriptor stays open while the engine lives.
        let f = unsafe { BorrowedFd::borrow_raw(fd) };
        let res = loop {
            let r = match io.kind {
                // SAFETY: the caller guarantees buf holds len bytes, untouched
                // by anyone else until the request is reaped.
                OpKind::Read => rustix::io::pread(
                    f,
                    unsafe { std::slice::from_raw_parts_mut(io.buf, len) },
                    io.offset,
                ),
                OpKind::Write => rustix::io::pwrite(
                    f,
                    unsafe { std::slice::from_raw_parts(io.buf.cast_const(), len) },
                    io.offset,
                ),
                OpKind::WriteDsync => rustix::io::pwritev2(
                    f,
                    &[std::io::IoSlice::new(unsafe {
                        std::slice::from_raw_parts(io.buf.cast_const(), len)
                    })],
                    io.offset,
                    rustix::io::ReadWriteFlags::DSYNC,
                ),
                OpKind::Flush => rustix::fs::fdatasync(f).map(|()| 0),
            };
            match r {
                Ok(n) => break n as i32,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => break -e.raw_os_error(),
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, IntoRawFd};

    /// A thread with its own descriptor table still reads the files opened
    /// before (through the raw system calls, short reads and errors as
    /// results), and what it opens afterwards is its own.
    #[test]
    fn a_private_table_keeps_the_files_opened_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let fd = f.as_raw_fd();
        let p = path.clone();
        let (got, errs, own) = std::thread::spawn(move || {
            private_fd_table();
            let mut e = Psync::new(&[fd], SyncAfterWrite::None);
            let mut buf = [0u8; 8];
            let mut res = Vec::new();
            for (offset, kind) in [(2, OpKind::Read), (6, OpKind::Read), (0, OpKind::Write)] {
                let io = Io {
                    kind,
                    file: 0,
                    offset,
                    len: 8,
                    buf: buf.as_mut_ptr(),
                    slot: 0,
                };
                unsafe { e.queue(&io) }.unwrap();
                e.reap(1, |c| res.push(c.res)).unwrap();
                if res.len() == 1 {
                    assert_eq!(&buf, b"23456789");
                }
            }
            let own = std::fs::File::open(&p).unwrap().into_raw_fd();
            (res[0], res[1..].to_vec(), own)
        })
        .join()
        .unwrap();
        assert_eq!(got, 8);
        // A short read at the end; a write on a read-only descriptor: EBADF.
        assert_eq!(errs, vec![4, -libc::EBADF]);
        // The thread's own descriptor is not in this thread's table (the
        // number may be reused here, so compare what it names).
        let same = unsafe {
            let (mut a, mut b): (libc::stat, libc::stat) = (std::mem::zeroed(), std::mem::zeroed());
            libc::fstat(own, &mut a) == 0
                && libc::fstat(fd, &mut b) == 0
                && own != fd
                && a.st_ino == b.st_ino
        };
        assert!(
            !same,
            "fd {own} opened in the private table is open here too"
        );
        drop(f);
    }
}
