//! How the model's sessions wait for the log writer, a read in progress or
//! a free buffer (woken as many at a time as buffers were cleaned) without
//! spinning and without a lock: the core's futex ([`crate::futex`]) with
//! the model's nap, and [`Signal`]. Every wait has a timeout, so a waiter
//! always gets back to check the run's stop flag.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

pub use crate::futex::{wait, wake, wake_all};

/// Longest sleep of a waiter that is always woken when what it waits for
/// happens (a row released, a read done, a log write, a log file free):
/// only a safety net, since the log writer wakes every waiter when the run
/// stops ([`super::instance::Instance::wake_waiters`]). Short naps cost a
/// context switch per nap per waiter: at 4096 sessions, 20 ms naps were
/// two thirds of the model's context switches.
pub(crate) const NAP: Duration = Duration::from_millis(500);

/// A counter others can sleep on until it moves: "the log writer finished a
/// write", "a DB writer finished a batch".
#[derive(Default)]
pub struct Signal {
    seq: AtomicU32,
}

impl Signal {
    /// The current value, to pass to [`Signal::wait_past`].
    #[inline]
    pub fn seq(&self) -> u32 {
        self.seq.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Sleeps until the counter moves past `seen` (or `timeout`).
    pub(crate) fn wait_past(&self, seen: u32, timeout: Duration) {
        if self.seq() == seen {
            wait(&self.seq, seen, timeout);
        }
    }

    /// Moves the counter and wakes every sleeper.
    pub(crate) fn notify(&self) {
        self.seq.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        wake_all(&self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn notify_wakes_a_sleeper() {
        let s = Arc::new(Signal::default());
        let seen = s.seq();
        let s2 = Arc::clone(&s);
        let h = std::thread::spawn(move || {
            let t = Instant::now();
            s2.wait_past(seen, Duration::from_secs(10));
            t.elapsed()
        });
        std::thread::sleep(Duration::from_millis(30));
        s.notify();
        assert!(h.join().unwrap() < Duration::from_secs(5));
        assert_eq!(s.seq(), seen + 1);
    }
}
