//! A memory limit for a database server's processes (`--pg-memory`,
//! `--mysql-memory`), so the OS page cache under the server is bounded as
//! pgio users bound it by hand (pgio_reduce_free_memory). A memory cgroup
//! nested under dbio's own (v1 `memory.limit_in_bytes`, or v2 `memory.max`
//! where the memory controller is enabled): the pages the server reads into
//! the page cache are charged to it, so beyond the limit they are reclaimed
//! and re-read from the device. The server's launcher is moved into it
//! before it runs (`user::ServerUser::command_in`), so every server process
//! is in it. The server's files are dropped from the page cache before the
//! start (`evict`): pages cached earlier stay charged to whoever read them
//! and would hide reads from the limit. Its path is kept beside the
//! server's files (`procs::remember_cgroup`), so a later run or `dbio clean`
//! removes one a killed dbio left.

use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ServerError;

/// A memory cgroup dbio made for the server.
#[derive(Clone, Debug)]
pub struct MemCgroup {
    pub path: PathBuf,
    pub limit_bytes: u64,
    /// "v1" or "v2".
    pub version: &'static str,
    procs: CString,
}

/// The directory of this process's own memory cgroup, and its version.
fn own_memory_cgroup() -> Option<(PathBuf, &'static str)> {
    let text = fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, ctrl, path) = (f.next()?, f.next()?, f.next()?);
        if ctrl.split(',').any(|c| c == "memory") {
            let dir = Path::new("/sys/fs/cgroup/memory").join(path.trim_start_matches('/'));
            return dir.is_dir().then_some((dir, "v1"));
        }
    }
    // v2: the unified hierarchy, if its memory controller is on for children.
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
        let dir = Path::new(root).join(path.trim_start_matches('/'));
        let on = fs::read_to_string(dir.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"));
        if on {
            return Some((dir, "v2"));
        }
    }
    None
}

impl MemCgroup {
    /// Makes (or reuses) cgroup `name` under dbio's own, limited to `limit`.
    pub fn create(name: &str, limit: u64, option: &str) -> Result<MemCgroup, ServerError> {
        let (parent, version) = own_memory_cgroup().ok_or_else(|| {
            ServerError::Usage(format!(
                "{option} needs a memory cgroup (v1 /sys/fs/cgroup/memory, or v2 with the memory controller enabled) and root; drop {option}"
            ))
        })?;
        let path = parent.join(name);
        if !path.is_dir() {
            fs::create_dir(&path).map_err(|e| {
                ServerError::Usage(format!(
                    "{option}: cannot make the cgroup {}: {e}; drop {option}",
                    path.display()
                ))
            })?;
        }
        let limit_file = match version {
            "v1" => "memory.limit_in_bytes",
            _ => "memory.max",
        };
        fs::write(path.join(limit_file), limit.to_string()).map_err(|e| {
            let _ = fs::remove_dir(&path);
            ServerError::Usage(format!(
                "{option}: cannot set {} in {}: {e}",
                limit_file,
                path.display()
            ))
        })?;
        let procs = CString::new(path.join("cgroup.procs").as_os_str().as_encoded_bytes())
            .expect("a cgroup path has no NUL");
        Ok(MemCgroup {
            path,
            limit_bytes: limit,
            version,
            procs,
        })
    }

    /// Moves the calling process into the cgroup. Runs in a forked child
    /// before exec: no allocation, only open/write/close.
    pub(crate) fn enter_from_child(&self) -> std::io::Result<()> {
        // SAFETY: async-signal-safe calls on a path prepared before fork.
        unsafe {
            let fd = libc::open(self.procs.as_ptr(), libc::O_WRONLY);
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut buf = [0u8; 20];
            let mut n = libc::getpid() as u64;
            let mut i = buf.len();
            loop {
                i -= 1;
                buf[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            let w = libc::write(fd, buf[i..].as_ptr().cast(), buf.len() - i);
            libc::close(fd);
            if w < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Drops the files under `dir` from the page cache (written back first):
/// pages cached before are charged to whoever read them, not to the
/// server's cgroup, and would hide reads from its limit.
pub fn evict(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => evict(&p),
            Ok(t) if t.is_file() => {
                if let Ok(f) = fs::File::open(&p) {
                    let _ = f.sync_all();
                    let _ = rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed);
                }
            }
            _ => {}
        }
    }
}

/// Removes cgroup `path` once its processes are gone (waits a little for
/// them to leave); quiet if it is already gone.
pub fn remove(path: &Path) {
    let t0 = Instant::now();
    while path.is_dir() {
        if fs::remove_dir(path).is_ok() || t0.elapsed() > Duration::from_secs(10) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
