//! The monotonic clock every latency is measured with, in nanoseconds.
//!
//! Every I/O is timed twice, so the clock read is on the hot path. By
//! default `now_ns` is `clock_gettime(CLOCK_MONOTONIC)` (the vDSO, about
//! 35 ns here). With `DBIO_CLOCK=tsc` in the environment, where the kernel
//! itself keeps time with the CPU's time-stamp counter (clocksource `tsc`,
//! which it only picks when the TSC is invariant and synchronised across
//! CPUs) and the CPU says so (`constant_tsc` and `nonstop_tsc`), `now_ns`
//! reads the TSC directly (`lfence; rdtsc`, about 17 ns here) and scales it
//! with a factor measured once against CLOCK_MONOTONIC: the same counter the
//! vDSO reads, without its sequence lock, clock-mode dispatch and timespec.
//! It is not the default: in dbio's psync runs here its gain was within the
//! noise (bench/README.md, "psync: the kernel's share"), and it does not
//! follow NTP's slewing of CLOCK_MONOTONIC.
//!
//! The TSC clock starts at CLOCK_MONOTONIC's value and runs at its rate as
//! measured over the calibration (about 20 ms, error ~1e-5), so latencies
//! are exact to that ratio; as it does not follow NTP's later slewing of
//! CLOCK_MONOTONIC (at most 500 ppm), over a long run it may drift from it
//! by milliseconds. Use `now_ns` for intervals within one process; hand the
//! kernel (futex timeouts, sleeps) durations, never its timestamps.

use std::sync::OnceLock;

use rustix::time::{ClockId, clock_gettime};

/// Nanoseconds on the process's monotonic clock (see the module's doc).
#[inline]
pub fn now_ns() -> u64 {
    match clock() {
        Some(tsc) => tsc.now(),
        None => monotonic_ns(),
    }
}

/// Which clock `now_ns` reads: "tsc" (asked for and trusted) or "clock_gettime".
pub fn source() -> &'static str {
    if clock().is_some() {
        "tsc"
    } else {
        "clock_gettime"
    }
}

/// Nanoseconds on CLOCK_MONOTONIC (a vDSO call: tens of nanoseconds, no syscall).
#[inline]
pub fn monotonic_ns() -> u64 {
    let ts = clock_gettime(ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds since the Unix epoch (wall clock), for timestamps people read.
pub(crate) fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The TSC scaled to nanoseconds: `ns0 + (tsc - tsc0) × mult / 2^32`.
#[derive(Debug, Clone, Copy)]
struct Tsc {
    tsc0: u64,
    ns0: u64,
    mult: u64,
}

impl Tsc {
    #[inline]
    fn now(&self) -> u64 {
        self.at(read_tsc())
    }

    /// The nanoseconds at TSC value `tsc` (one 64×64→128-bit multiply).
    #[inline]
    fn at(&self, tsc: u64) -> u64 {
        let d = tsc.wrapping_sub(self.tsc0);
        self.ns0 + ((u128::from(d) * u128::from(self.mult)) >> 32) as u64
    }
}

static CLOCK: OnceLock<Option<Tsc>> = OnceLock::new();

#[inline]
fn clock() -> Option<&'static Tsc> {
    CLOCK.get_or_init(calibrate).as_ref()
}

/// The time-stamp counter, ordered after earlier loads as the vDSO orders it
/// (`lfence; rdtsc`), so a read after an I/O is not taken before it returns.
#[cfg(target_arch = "x86_64")]
#[inline]
fn read_tsc() -> u64 {
    // SAFETY: lfence and rdtsc exist on every x86_64 CPU.
    unsafe {
        std::arch::x86_64::_mm_lfence();
        std::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn read_tsc() -> u64 {
    unreachable!("the TSC clock is only chosen on x86_64")
}

/// Whether the kernel keeps time with an invariant, synchronised TSC.
fn tsc_trusted() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    if source.map_or(true, |s| s.trim() != "tsc") {
        return false;
    }
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = flags.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|w| w == f);
    has("constant_tsc") && has("nonstop_tsc")
}

/// A (CLOCK_MONOTONIC ns, TSC) pair read as close together as the best of a
/// few tries allows (the TSC read bracketed by two clock reads).
fn pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = monotonic_ns();
        let t = read_tsc();
        let b = monotonic_ns();
        if b - a < best.0 {
            best = (b - a, a + (b - a) / 2, t);
        }
    }
    (best.1, best.2)
}

/// The TSC clock, when `DBIO_CLOCK=tsc` asks for it and the TSC is trusted.
fn calibrate() -> Option<Tsc> {
    if std::env::var_os("DBIO_CLOCK").is_none_or(|v| v != "tsc") {
        return None;
    }
    calibrate_tsc()
}

/// Measures the TSC's rate against CLOCK_MONOTONIC over at least 20 ms.
fn calibrate_tsc() -> Option<Tsc> {
    if !tsc_trusted() {
        return None;
    }
    let (ns0, tsc0) = pair();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (ns1, tsc1) = pair();
    let (dns, dtsc) = (ns1.checked_sub(ns0)?, tsc1.checked_sub(tsc0)?);
    if dtsc == 0 || dns < 10_000_000 {
        return None;
    }
    // mult = ns per tick × 2^32; a TSC between 10 MHz and 100 GHz.
    let mult = ((u128::from(dns) << 32) / u128::from(dtsc)) as u64;
    if !((1u64 << 32) / 100..=100u64 << 32).contains(&mult) {
        return None;
    }
    Some(Tsc {
        tsc0: tsc1,
        ns0: ns1,
        mult,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = now_ns();
        assert!(b - a >= 2_000_000, "{a} {b}");
    }

    /// `now_ns` (the TSC where the machine has a trusted one) agrees with
    /// CLOCK_MONOTONIC, in level and over intervals.
    #[test]
    fn agrees_with_clock_gettime() {
        let _ = now_ns(); // calibrated
        let (m0, n0, m0b) = (monotonic_ns(), now_ns(), monotonic_ns());
        // The same instant on both clocks, within what a busy machine allows.
        assert!(
            n0 + 2_000_000 >= m0 && n0 <= m0b + 2_000_000,
            "{m0} {n0} {m0b} ({})",
            source()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (m1, n1, m1b) = (monotonic_ns(), now_ns(), monotonic_ns());
        let (dm, dn) = ((m1 - m0) as f64, (n1 - n0) as f64);
        let slack = (m1b - m1 + m0b - m0) as f64 + 1e5;
        assert!(
            (dn - dm).abs() <= dm * 1e-3 + slack,
            "over {dm} ns of CLOCK_MONOTONIC the clock moved {dn} ns ({})",
            source()
        );
    }

    /// The TSC clock itself, where this machine has a trusted TSC (it is
    /// only used when asked for, so `now_ns` above may be clock_gettime).
    #[test]
    fn tsc_clock_agrees_with_clock_gettime() {
        let Some(c) = calibrate_tsc() else {
            eprintln!("no trusted TSC here: nothing to check");
            return;
        };
        let (m0, n0, m0b) = (monotonic_ns(), c.now(), monotonic_ns());
        assert!(
            n0 + 2_000_000 >= m0 && n0 <= m0b + 2_000_000,
            "{m0} {n0} {m0b}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (m1, n1, m1b) = (monotonic_ns(), c.now(), monotonic_ns());
        let (dm, dn) = ((m1 - m0) as f64, (n1 - n0) as f64);
        let slack = (m1b - m1 + m0b - m0) as f64 + 1e5;
        assert!(
            (dn - dm).abs() <= dm * 1e-3 + slack,
            "over {dm} ns of CLOCK_MONOTONIC the TSC clock moved {dn} ns"
        );
        // On whichever CPU each thread runs, in order.
        let hs: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    let mut last = c.now();
                    for _ in 0..200_000 {
                        let t = c.now();
                        assert!(t >= last, "{t} after {last}");
                        last = t;
                    }
                })
            })
            .collect();
        hs.into_iter().for_each(|h| h.join().unwrap());
    }

    #[test]
    fn never_goes_backwards_across_threads() {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let mut last = now_ns();
                    for _ in 0..200_000 {
                        let t = now_ns();
                        assert!(t >= last, "{t} after {last}");
                        last = t;
                    }
                    last
                })
            })
            .collect();
        let ends: Vec<u64> = hs.into_iter().map(|h| h.join().unwrap()).collect();
        assert!(ends.iter().all(|&e| e <= now_ns()));
    }

    #[test]
    fn scaling_is_exact_for_a_known_rate() {
        // 2.5 GHz: 0.4 ns per tick.
        let c = Tsc {
            tsc0: 1000,
            ns0: 5,
            mult: (4u64 << 32) / 10,
        };
        let ns = c.at(1000 + 2_500_000_000); // one second of ticks
        assert!((ns as i64 - 1_000_000_005).abs() <= 1, "{ns}");
        // A day of ticks does not overflow.
        let ns = c.at(1000 + 2_500_000_000 * 86_400) - c.ns0;
        assert!((ns as f64 - 86_400e9).abs() < 86_400e9 * 1e-9, "{ns}");
    }
}
