//! What `floor` and `floor_steps` share: the file they read, opened with
//! O_DIRECT and counted in blocks (one line and exit 1 when it cannot be),
//! and the process's CPU time.

use std::os::unix::fs::OpenOptionsExt;

/// `file` opened for O_DIRECT reads, and how many `bs`-byte blocks it holds.
pub fn open_direct(tool: &str, file: &str, bs: usize) -> (std::fs::File, u64) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(file)
        .unwrap_or_else(|e| {
            eprintln!("{tool}: cannot open {file} with O_DIRECT: {e}");
            std::process::exit(1)
        });
    let blocks = f.metadata().map(|m| m.len()).unwrap_or(0) / bs as u64;
    if blocks == 0 {
        eprintln!("{tool}: {file} is smaller than one {bs}-byte block");
        std::process::exit(1);
    }
    (f, blocks)
}

/// This process's user + system CPU seconds so far.
pub fn cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(ru.ru_utime) + t(ru.ru_stime)
}
