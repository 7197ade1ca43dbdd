//! The monotonic clock every latency is measured with, in nanoseconds.

use rustix::time::{ClockId, clock_gettime};

/// Nanoseconds on CLOCK_MONOTONIC (a vDSO call: tens of nanoseconds, no syscall).
#[inline]
pub fn now_ns() -> u64 {
    let ts = clock_gettime(ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds since the Unix epoch (wall clock), for timestamps people read.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn monotonic_clock_advances() {
        let a = super::now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = super::now_ns();
        assert!(b - a >= 2_000_000, "{a} {b}");
    }
}
