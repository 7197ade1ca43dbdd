//! What the tests of real database servers (`pg`, `mysql`) share: the
//! processes working under a directory (a server's processes work in its
//! data directory), a successful run's JSON, and dropping files from the
//! page cache so the next run reads from the device.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

/// Processes whose working directory is under `dir`.
pub fn processes_under(dir: &Path) -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cwd = fs::read_link(e.path().join("cwd")).ok()?;
            cwd.starts_with(dir).then_some(pid)
        })
        .collect()
}

/// Waits (up to 5 s) for the processes under `dir` to go, then says which are left.
pub fn processes_left(dir: &Path) -> Vec<i32> {
    let t0 = std::time::Instant::now();
    while !processes_under(dir).is_empty() && t0.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    processes_under(dir)
}

/// The JSON report of a run that must have succeeded.
pub fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Drops `dir`'s files from the page cache (written back first).
pub fn evict(dir: &Path) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            evict(&p);
        } else if let Ok(file) = fs::File::open(&p) {
            let _ = file.sync_all();
            use std::os::fd::AsRawFd;
            // SAFETY: advice on an open descriptor.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
}

/// stderr without the line saying where the target landed.
pub fn stderr_lines(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("where "))
        .collect::<Vec<_>>()
        .join("\n")
}
