//! One dbio command per target at a time.
//!
//! A run (layout and measurement) or a `dbio clean` takes an exclusive
//! `flock` for as long as it works on a target: on the lock file
//! [`LOCK_NAME`] in a directory target (the holder writes its pid into it;
//! the directory itself where it is read-only), or on the device node of a
//! block device target. The ranks of one MPI run sharing a device
//! (`--region-per-rank`) each hold the node's flock shared and an
//! open-file-description lock (`F_OFD_SETLK`) on their own byte range: they
//! run beside each other, while a whole-device command and a run whose
//! regions overlap theirs are refused. A second command is
//! refused at once with one line naming the pid that holds the lock, read
//! from /proc/locks (or the lock file). The kernel drops the lock when the
//! holder exits, however it ends, so a lock is never stale; a lock dropped
//! while the process goes on is unlocked there and then, not when the last
//! copy of its descriptor closes (a psync session's private descriptor
//! table holds one until after the thread was joined).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, flock};

use super::TargetError;

/// The lock file in a directory target.
pub const LOCK_NAME: &str = "dbio.lock";

/// An exclusive lock on a target, held until dropped.
#[derive(Debug)]
pub struct TargetLock {
    /// The locked file, held open: its open file description holds the
    /// flock (and a region's byte-range lock) until [`Drop`] unlocks it.
    file: File,
    /// The lock file of a directory target.
    lock_file: Option<PathBuf>,
    /// A rank's byte range (offset, length) of a shared device.
    range: Option<(u64, u64)>,
}

impl Drop for TargetLock {
    /// Unlocks through the descriptor rather than leaving it to the close:
    /// copies of the descriptor table (a thread's `unshare(CLONE_FILES)`,
    /// a child between fork and exec) keep the open file description, and
    /// so its locks, alive after this descriptor is closed. The next run of
    /// this process would find its own lock held.
    fn drop(&mut self) {
        if let Some((offset, len)) = self.range {
            let fl = range_lock(libc::F_UNLCK, offset, len);
            // SAFETY: F_OFD_SETLK reads one `struct flock`, which `fl` is.
            unsafe {
                libc::fcntl(
                    std::os::fd::AsRawFd::as_raw_fd(&self.file),
                    libc::F_OFD_SETLK,
                    &fl,
                )
            };
        }
        let _ = flock(&self.file, FlockOperation::Unlock);
    }
}

impl TargetLock {
    /// Locks the directory target `dir` (which exists) through its lock file.
    pub fn directory(dir: &Path) -> Result<TargetLock, TargetError> {
        let opt = "--target";
        let path = dir.join(LOCK_NAME);
        // A lock file removed by `dbio clean` between our open and our lock
        // is not the lock any more: retry on the file now at that path.
        for _ in 0..8 {
            let file = match OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .open(&path)
            {
                Ok(f) => f,
                // A read-only directory (a layout measured read-only): lock the directory itself.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EROFS | libc::EACCES)) => {
                    return Self::directory_itself(opt, dir);
                }
                Err(e) => return Err(TargetError::io(&path, "create the lock file", e)),
            };
            take(&file, opt, dir)?;
            let ours = file
                .metadata()
                .map_err(|e| TargetError::io(&path, "stat", e))?;
            match fs::metadata(&path) {
                Ok(now) if now.dev() == ours.dev() && now.ino() == ours.ino() => {
                    let mut file = file;
                    let _ = file.set_len(0);
                    let _ = writeln!(file, "{}", std::process::id());
                    return Ok(TargetLock {
                        file,
                        lock_file: Some(path),
                        range: None,
                    });
                }
                // Not the lock file any more: unlocked as a dropped lock is.
                _ => {
                    let _ = flock(&file, FlockOperation::Unlock);
                    continue;
                }
            }
        }
        Err(TargetError::Invalid(format!(
            "cannot lock {}: its lock file keeps being replaced",
            path.display()
        )))
    }

    /// Locks a block device target through its device node.
    pub fn device(dev: &Path) -> Result<TargetLock, TargetError> {
        let file = File::open(dev).map_err(|e| TargetError::io(dev, "open", e))?;
        take(&file, "--target", dev)?;
        Ok(TargetLock {
            file,
            lock_file: None,
            range: None,
        })
    }

    /// Locks bytes `offset..offset + len` of the block device `dev` for one
    /// rank of a run sharing it: the node's flock shared (a whole-device
    /// lock refuses it and is refused), and an OFD write lock on the range
    /// (a lock of the file description, not of the process: kept however
    /// else the device is opened and closed, and refused to any other
    /// description, in this process or another, whose range overlaps).
    pub fn device_region(dev: &Path, offset: u64, len: u64) -> Result<TargetLock, TargetError> {
        let (file, kind) = match OpenOptions::new().read(true).write(true).open(dev) {
            Ok(f) => (f, libc::F_WRLCK),
            // A read-only device: a read lock still keeps writers' regions out.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EROFS | libc::EACCES)) => (
                File::open(dev).map_err(|e| TargetError::io(dev, "open", e))?,
                libc::F_RDLCK,
            ),
            Err(e) => return Err(TargetError::io(dev, "open", e)),
        };
        take_as(
            &file,
            "--target",
            dev,
            FlockOperation::NonBlockingLockShared,
        )?;
        let mut fl = range_lock(kind, offset, len);
        // SAFETY: F_OFD_SETLK reads one `struct flock`, which `fl` is.
        if unsafe {
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&file),
                libc::F_OFD_SETLK,
                &fl,
            )
        } == 0
        {
            return Ok(TargetLock {
                file,
                lock_file: None,
                range: Some((offset, len)),
            });
        }
        let err = std::io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EAGAIN | libc::EACCES)) {
            return Err(TargetError::io(dev, "lock a byte range of", err));
        }
        // SAFETY: F_OFD_GETLK fills in the `struct flock` it is given.
        let got = unsafe {
            libc::fcntl(
                std::os::fd::AsRawFd::as_raw_fd(&file),
                libc::F_OFD_GETLK,
                &mut fl,
            )
        };
        let theirs = if got == 0 && fl.l_type != libc::F_UNLCK as i16 {
            let end = if fl.l_len == 0 {
                "the end".to_string()
            } else {
                (fl.l_start + fl.l_len).to_string()
            };
            format!(" bytes {}..{end}", fl.l_start)
        } else {
            String::new()
        };
        Err(TargetError::Busy(format!(
            "--target {}: this region (bytes {offset}..{}) overlaps{theirs} in use by another dbio command; wait for it to finish, or give the runs regions that do not overlap",
            dev.display(),
            offset + len
        )))
    }

    /// Locks the directory `dir` given as `opt` through the directory
    /// itself, leaving no file in it (a `--redo-dir` outside the target).
    pub(crate) fn directory_itself(opt: &str, dir: &Path) -> Result<TargetLock, TargetError> {
        let file = File::open(dir).map_err(|e| TargetError::io(dir, "open", e))?;
        take(&file, opt, dir)?;
        Ok(TargetLock {
            file,
            lock_file: None,
            range: None,
        })
    }

    /// Removes the lock file while still holding the lock (`dbio clean`,
    /// so the directory it made can go too).
    pub fn remove_file(&self) {
        if let Some(p) = &self.lock_file {
            let _ = fs::remove_file(p);
        }
    }
}

/// A `struct flock` for `kind` on bytes `offset..offset + len` (0: to the end).
fn range_lock(kind: libc::c_int, offset: u64, len: u64) -> libc::flock {
    // SAFETY: all zeros is a valid `struct flock` (l_pid must be 0 for OFD locks).
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as i16;
    fl.l_whence = libc::SEEK_SET as i16;
    fl.l_start = offset as libc::off_t;
    fl.l_len = len as libc::off_t;
    fl
}

/// Takes the exclusive lock on `file` without waiting, or says who holds it.
fn take(file: &File, opt: &str, target: &Path) -> Result<(), TargetError> {
    take_as(file, opt, target, FlockOperation::NonBlockingLockExclusive)
}

fn take_as(file: &File, opt: &str, target: &Path, op: FlockOperation) -> Result<(), TargetError> {
    match flock(file, op) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => {
            let holder = holder(file)
                .map(|pid| {
                    let comm = fs::read_to_string(format!("/proc/{pid}/comm"))
                        .map(|c| format!(", {}", c.trim()))
                        .unwrap_or_default();
                    format!("pid {pid}{comm}")
                })
                .unwrap_or_else(|| "pid unknown".into());
            Err(TargetError::Busy(format!(
                "{opt} {} is in use by another dbio command ({holder}); wait for it to finish or choose another {opt}",
                target.display()
            )))
        }
        Err(e) => Err(TargetError::io(target, "lock", e.into())),
    }
}

/// The pid holding a flock on `file`: from /proc/locks, else the lock file's content.
fn holder(file: &File) -> Option<u32> {
    let meta = file.metadata().ok()?;
    let locks = fs::read_to_string("/proc/locks").unwrap_or_default();
    let dev = meta.dev();
    from_proc_locks(&locks, libc::major(dev), libc::minor(dev), meta.ino()).or_else(|| {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut &*file, &mut s).ok()?;
        s.trim().parse().ok()
    })
}

/// The pid of the FLOCK on (major, minor, inode) in /proc/locks's text, e.g.
/// `1: FLOCK  ADVISORY  WRITE 4242 00:1f:1234 0 EOF` (device numbers in hex).
fn from_proc_locks(text: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    text.lines().find_map(|line| {
        let mut f = line.split_whitespace().skip(1).peekable();
        if f.peek() == Some(&"->") {
            return None; // a waiter, not the holder
        }
        let (kind, _, _, pid, id) = (f.next()?, f.next()?, f.next()?, f.next()?, f.next()?);
        let mut parts = id.split(':');
        let maj = u32::from_str_radix(parts.next()?, 16).ok()?;
        let min = u32::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        (kind == "FLOCK" && (maj, min, inode) == (major, minor, ino))
            .then(|| pid.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_parse() {
        let text = "1: POSIX  ADVISORY  WRITE 10 00:1f:77 0 EOF\n\
                    2: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 99 fd:01:77 0 EOF\n";
        assert_eq!(from_proc_locks(text, 0xfd, 1, 77), Some(4242));
        assert_eq!(from_proc_locks(text, 0, 0x1f, 77), None);
        assert_eq!(from_proc_locks(text, 0xfd, 1, 78), None);
    }

    #[test]
    fn regions_that_overlap_refuse_each_other_and_whole_locks() {
        let dir = tempfile::tempdir().unwrap();
        let dev = dir.path().join("dev");
        fs::write(&dev, vec![0u8; 1 << 16]).unwrap();
        let a = TargetLock::device_region(&dev, 0, 8192).unwrap();
        let b = TargetLock::device_region(&dev, 8192, 8192).unwrap();
        let e = TargetLock::device_region(&dev, 4096, 8192)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("bytes 4096..12288") && e.contains("overlaps bytes 0..8192"),
            "{e}"
        );
        // A whole-device command is refused while regions are held, and refuses them.
        let e = TargetLock::device(&dev).unwrap_err().to_string();
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop((a, b));
        let whole = TargetLock::device(&dev).unwrap();
        let e = TargetLock::device_region(&dev, 0, 8192)
            .unwrap_err()
            .to_string();
        assert!(e.contains("in use by another dbio command"), "{e}");
        drop(whole);
        TargetLock::device_region(&dev, 0, 8192).unwrap();
    }

    /// Runs `then` while another thread of this process holds a copy of
    /// the descriptor table made after `lock` was taken (a psync session's
    /// `unshare(CLONE_FILES)`), then lets that thread end.
    fn with_a_private_table_alive<T>(lock: TargetLock, then: impl FnOnce() -> T) -> T {
        let (ready_tx, ready) = std::sync::mpsc::channel();
        let (end, end_rx) = std::sync::mpsc::channel::<()>();
        let copy = std::thread::spawn(move || {
            // SAFETY: unshare changes only this thread's descriptor table.
            let r = unsafe { libc::unshare(libc::CLONE_FILES) };
            ready_tx.send(r).unwrap();
            let _ = end_rx.recv();
        });
        assert_eq!(ready.recv().unwrap(), 0, "unshare(CLONE_FILES)");
        drop(lock);
        let got = then();
        end.send(()).unwrap();
        copy.join().unwrap();
        got
    }

    /// A dropped lock is free at once, though a thread's private descriptor
    /// table (which the kernel closes after the thread's join has returned)
    /// still refers to its open file description: the next run of the
    /// same process locks the target (`dbio curve` named its own pid).
    #[test]
    fn a_dropped_lock_is_free_while_a_copy_of_its_descriptor_lives() {
        let dir = tempfile::tempdir().unwrap();
        let lock = TargetLock::directory(dir.path()).unwrap();
        with_a_private_table_alive(lock, || TargetLock::directory(dir.path())).unwrap();
        let dev = dir.path().join("dev");
        fs::write(&dev, vec![0u8; 1 << 16]).unwrap();
        let lock = TargetLock::device(&dev).unwrap();
        with_a_private_table_alive(lock, || TargetLock::device(&dev)).unwrap();
        let lock = TargetLock::device_region(&dev, 0, 8192).unwrap();
        with_a_private_table_alive(lock, || {
            TargetLock::device_region(&dev, 4096, 8192)
                .map(drop)
                .and_then(|()| TargetLock::device(&dev))
        })
        .unwrap();
    }

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = TargetLock::directory(dir.path()).unwrap();
        let e = TargetLock::directory(dir.path()).unwrap_err().to_string();
        let pid = std::process::id();
        assert!(e.contains(&format!("pid {pid}")), "{e}");
        assert_eq!(
            fs::read_to_string(dir.path().join(LOCK_NAME))
                .unwrap()
                .trim(),
            pid.to_string()
        );
        first.remove_file();
        drop(first);
        let again = TargetLock::directory(dir.path()).unwrap();
        drop(again);
        TargetLock::directory(dir.path()).unwrap();
    }
}
