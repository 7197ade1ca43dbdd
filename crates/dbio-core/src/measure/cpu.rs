//! CPU time dbio itself spends (all threads), and its peak memory, from
//! getrusage(RUSAGE_SELF).

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CpuTime {
    pub user_s: f64,
    pub sys_s: f64,
}

/// CPU time the calling thread has used, ns (CLOCK_THREAD_CPUTIME_ID).
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The process's peak resident set so far, bytes (getrusage's ru_maxrss).
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_maxrss.max(0) as u64 * 1024
}

impl CpuTime {
    /// The process's CPU time so far.
    pub fn now() -> CpuTime {
        // SAFETY: getrusage fills the struct we pass.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        CpuTime {
            user_s: secs(ru.ru_utime),
            sys_s: secs(ru.ru_stime),
        }
    }

    pub fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
        }
    }

    pub fn total_s(self) -> f64 {
        self.user_s + self.sys_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        // Spin until 30 ms of CPU show up; on a loaded machine that takes
        // longer in wall time, but it must happen (the wall limit is generous).
        let a = CpuTime::now();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        let mut d = CpuTime::now().since(a);
        while d.user_s < 0.03 && t.elapsed().as_secs() < 30 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            d = CpuTime::now().since(a);
        }
        std::hint::black_box(x);
        assert!(d.user_s >= 0.03, "{d:?} after {:?}", t.elapsed());
        assert!(d.sys_s >= 0.0);
    }
}
