//! Ctrl-C and SIGTERM: one flag a run polls to stop, and which signal came,
//! for the report (`interrupted_by`). Commands raise it; reports read it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The number of the last SIGINT/SIGTERM received (0: none).
fn signal_seen() -> &'static Arc<AtomicUsize> {
    static SEEN: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    SEEN.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// A flag raised by SIGINT (Ctrl-C) or SIGTERM. Every signal only
/// raises the flag and records its number: a run that is stopping keeps
/// stopping, and its results so far are still reported and saved however
/// often the signal comes (the stop itself takes at most about a second).
pub fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    // Not SIGHUP: `nohup dbio run` must go on after a logout.
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The number first, so that whoever sees the flag finds it.
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(signal_seen()), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(&flag));
    }
    flag
}

/// The signal that interrupted this process, as a report says it:
/// `Ctrl-C (SIGINT)` or `SIGTERM`; None when none came.
pub fn interrupt_cause() -> Option<&'static str> {
    match signal_seen().load(Ordering::Relaxed) {
        0 => None,
        s if s == signal_hook::consts::SIGINT as usize => Some("Ctrl-C (SIGINT)"),
        s if s == signal_hook::consts::SIGTERM as usize => Some("SIGTERM"),
        _ => Some("a signal"),
    }
}
