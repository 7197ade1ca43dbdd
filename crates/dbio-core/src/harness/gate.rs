//! The start gate: every thread of a run says it is ready and sleeps on one
//! futex word; the harness waits until all are ready, then opens the gate and
//! wakes them all with one FUTEX_WAKE. No lock is taken on the way out:
//! std's `Barrier` wakes its waiters through a mutex each must take again in
//! turn, every hand-off waiting for the next thread to be scheduled, so with
//! thousands of busy sessions on a few cores the last left seconds after the
//! first (raw psync on tmpfs, 2 cores: 3.3 s at 1024 sessions).

use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::time::Duration;

use crate::futex::{self, wake_all};

/// The open word: 0 while closed, then how the threads leave.
const RUN: u32 = 1;
const END: u32 = 2;

/// Longest single sleep before a waiter looks at the word again.
const NAP: Duration = Duration::from_millis(100);

#[derive(Default)]
pub(crate) struct Gate {
    ready: AtomicU32,
    open: AtomicU32,
}

impl Gate {
    /// Counts the calling thread as ready (of `total`) and sleeps until the
    /// gate opens: true to run, false to end at once (not every thread of
    /// the run could be started).
    pub(crate) fn ready_then_wait(&self, total: u32) -> bool {
        if self.ready.fetch_add(1, AcqRel) + 1 == total {
            wake_all(&self.ready);
        }
        loop {
            match self.open.load(Acquire) {
                0 => futex::wait(&self.open, 0, NAP),
                how => return how == RUN,
            }
        }
    }

    /// Sleeps until `total` threads are ready.
    pub(crate) fn wait_ready(&self, total: u32) {
        loop {
            let n = self.ready.load(Acquire);
            if n >= total {
                return;
            }
            futex::wait(&self.ready, n, NAP);
        }
    }

    /// Releases every thread at once, to run (`go`) or to end.
    pub fn open(&self, go: bool) {
        self.open.store(if go { RUN } else { END }, Release);
        wake_all(&self.open);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering::SeqCst;

    #[test]
    fn no_thread_passes_before_the_gate_opens_and_all_pass_after() {
        const N: u32 = 64;
        let gate = Gate::default();
        let passed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..N {
                s.spawn(|| {
                    assert!(gate.ready_then_wait(N), "opened to run");
                    passed.fetch_add(1, SeqCst);
                });
            }
            gate.wait_ready(N);
            assert_eq!(gate.ready.load(SeqCst), N);
            // Every thread is ready, none may pass while the gate is shut.
            std::thread::sleep(Duration::from_millis(150));
            assert_eq!(passed.load(SeqCst), 0);
            gate.open(true);
        });
        assert_eq!(passed.load(SeqCst), N as usize);
    }

    #[test]
    fn a_gate_opened_to_end_releases_everyone_to_end() {
        let gate = Gate::default();
        let ran = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    if gate.ready_then_wait(8) {
                        ran.fetch_add(1, SeqCst);
                    }
                });
            }
            // Fewer threads than the run has: the harness waits for those that came.
            gate.wait_ready(8);
            gate.open(false);
        });
        assert_eq!(ran.load(SeqCst), 0);
    }
}
