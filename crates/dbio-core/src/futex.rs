//! Sleeping and waking on a 32-bit atomic word (Linux futex, through
//! rustix): the one implementation behind the harness's start gate and the
//! SLOB model's waits (a read in progress, a free buffer, the log writer).
//! No lock and no allocation: a wait is one system call, and every wait has
//! a timeout so a waiter always gets back to check whatever it polls.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::thread::futex::{self, Flags, Timespec};

/// Sleeps while `word` still holds `expected`, at most `timeout`. Returns on
/// a wake, a timeout, a signal or when the word already differs (the caller
/// looks at the word again in every case).
#[inline]
pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = Timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // EAGAIN (the word differs), ETIMEDOUT and EINTR all mean "look again".
    let _ = futex::wait(word, Flags::PRIVATE, expected, Some(&ts));
}

/// Wakes every thread sleeping on `word`.
#[inline]
pub fn wake_all(word: &AtomicU32) {
    wake(word, u32::MAX);
}

/// Wakes at most `n` threads sleeping on `word`.
#[inline]
pub fn wake(word: &AtomicU32, n: u32) {
    // The kernel reads the count as a signed int: more than i32::MAX would
    // be negative, and wake one thread.
    let _ = futex::wake(word, Flags::PRIVATE, n.min(i32::MAX as u32));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering::SeqCst;
    use std::time::Instant;

    #[test]
    fn wait_returns_at_once_when_the_word_differs() {
        let w = AtomicU32::new(5);
        let t = Instant::now();
        wait(&w, 4, Duration::from_secs(5));
        assert!(t.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn wait_times_out() {
        let w = AtomicU32::new(5);
        let t = Instant::now();
        wait(&w, 5, Duration::from_millis(20));
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(15), "{took:?}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }

    #[test]
    fn wake_all_wakes_every_sleeper_at_once() {
        const N: usize = 6;
        let w = AtomicU32::new(0);
        let woke = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..N {
                s.spawn(|| {
                    while w.load(SeqCst) == 0 {
                        wait(&w, 0, Duration::from_secs(30));
                    }
                    woke.fetch_add(1, SeqCst);
                });
            }
            // Let them fall asleep; none may leave while the word is 0.
            std::thread::sleep(Duration::from_millis(100));
            wake(&w, 2);
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(woke.load(SeqCst), 0, "the word still says sleep");
            // Woken well before their 30 s timeout: all of them, not one
            // (a count above i32::MAX would wake a single thread).
            w.store(1, SeqCst);
            let t = Instant::now();
            wake_all(&w);
            while woke.load(SeqCst) < N {
                assert!(t.elapsed() < Duration::from_secs(10), "not all woke");
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    }
}
