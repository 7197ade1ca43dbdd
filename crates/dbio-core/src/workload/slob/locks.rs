//! Row locks, Oracle's TX enqueue: an UPDATE locks each of its rows (one row
//! per block) just before it changes it and holds them until its commit is
//! durable.
//! A session that wants a row another session's transaction holds sleeps on
//! that transaction until it ends: "enq: TX - row lock contention".
//!
//! Locks live in a partitioned map (block → holding session), sized up front
//! for every row all sessions can hold at once, so taking and releasing a lock
//! never allocates. A session takes its rows in ascending block order, so two
//! sessions never wait for each other (SLOB's updates, in key order, have no
//! deadlocks either). Only sessions of one schema can meet: schemas are
//! disjoint, so with one thread per schema sessions take no locks at all.

use std::collections::hash_map::Entry;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use super::cache::BlockMap;
use super::futex::{NAP, Signal};
use crate::measure::clock::now_ns;

const PARTITIONS: usize = 64;

pub(crate) struct RowLocks {
    parts: Box<[Mutex<BlockMap<u32>>]>,
    /// Moves when session `i`'s transaction ends (it released its rows).
    ended: Box<[Signal]>,
}

impl RowLocks {
    /// Locks for `sessions` sessions of at most `per_session` rows each.
    pub fn new(sessions: u32, per_session: u32) -> Self {
        let rows = sessions as usize * per_session as usize;
        let per_part = rows / PARTITIONS * 2 + 16;
        RowLocks {
            parts: (0..PARTITIONS)
                .map(|_| {
                    Mutex::new(BlockMap::with_capacity_and_hasher(
                        per_part,
                        Default::default(),
                    ))
                })
                .collect(),
            ended: (0..sessions).map(|_| Signal::default()).collect(),
        }
    }

    fn part(&self, block: u64) -> std::sync::MutexGuard<'_, BlockMap<u32>> {
        let h = (block ^ (block >> 23)).wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 58;
        self.parts[h as usize % PARTITIONS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Locks row `block` for `session`, waiting for the transaction that
    /// holds it. Returns when the wait began (the clock is read only when
    /// there is one), or None when the run stopped first (then the row is
    /// not taken). A session takes its rows in ascending order.
    pub fn lock(&self, session: u32, block: u64, stop: &AtomicBool) -> Option<Option<u64>> {
        let mut since = None;
        loop {
            let (holder, seen) = {
                let mut map = self.part(block);
                match map.entry(block) {
                    Entry::Vacant(v) => {
                        v.insert(session);
                        return Some(since);
                    }
                    Entry::Occupied(o) => {
                        let h = *o.get();
                        (h, self.ended[h as usize].seq())
                    }
                }
            };
            debug_assert_ne!(holder, session, "a row is locked twice");
            since.get_or_insert_with(now_ns);
            if stop.load(Relaxed) {
                return None;
            }
            self.ended[holder as usize].wait_past(seen, NAP);
        }
    }

    /// Locks every row of `sorted` (ascending, no repeats) for `session`,
    /// waiting for the transactions that hold them. Returns whether it had
    /// to wait, or None when the run stopped first (nothing is then held).
    #[cfg(test)]
    pub fn lock_all(&self, session: u32, sorted: &[u64], stop: &AtomicBool) -> Option<bool> {
        debug_assert!(sorted.windows(2).all(|w| w[0] < w[1]));
        let mut waited = false;
        for (i, &block) in sorted.iter().enumerate() {
            match self.lock(session, block, stop) {
                None => {
                    self.unlock_all(session, &sorted[..i]);
                    return None;
                }
                Some(w) => waited |= w.is_some(),
            }
        }
        Some(waited)
    }

    /// Ends `session`'s transaction: releases `rows` and wakes its waiters.
    pub(crate) fn unlock_all(&self, session: u32, rows: &[u64]) {
        for &block in rows {
            let was = self.part(block).remove(&block);
            debug_assert_eq!(
                was,
                Some(session),
                "row {block} was not locked by its releaser"
            );
        }
        self.ended[session as usize].notify();
    }

    /// Wakes every session waiting for a row (the run is stopping).
    pub(crate) fn wake_waiters(&self) {
        for e in self.ended.iter() {
            e.notify();
        }
    }

    /// Rows locked now (tests).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.parts.iter().map(|p| p.lock().unwrap().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU32;
    use std::time::Duration;
    use std::time::Instant;

    #[test]
    fn disjoint_rows_never_wait_and_release_frees_them() {
        let l = RowLocks::new(2, 4);
        let stop = AtomicBool::new(false);
        assert_eq!(l.lock_all(0, &[1, 5, 9], &stop), Some(false));
        assert_eq!(l.lock_all(1, &[2, 6, 10], &stop), Some(false));
        assert_eq!(l.held(), 6);
        l.unlock_all(0, &[1, 5, 9]);
        l.unlock_all(1, &[2, 6, 10]);
        assert_eq!(l.held(), 0);
    }

    #[test]
    fn a_held_row_waits_until_its_transaction_ends() {
        let l = Arc::new(RowLocks::new(2, 4));
        let stop = Arc::new(AtomicBool::new(false));
        assert_eq!(l.lock_all(0, &[3, 7], &stop), Some(false));
        let progress = Arc::new(AtomicU32::new(0));
        let (l2, s2, p2) = (Arc::clone(&l), Arc::clone(&stop), Arc::clone(&progress));
        let waiter = std::thread::spawn(move || {
            let r = l2.lock_all(1, &[1, 7, 8], &s2);
            p2.store(1, Relaxed);
            r
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(progress.load(Relaxed), 0, "row 7 is held: it must wait");
        let t = Instant::now();
        l.unlock_all(0, &[3, 7]);
        assert_eq!(waiter.join().unwrap(), Some(true));
        assert!(t.elapsed() < Duration::from_secs(5), "woken, not timed out");
        assert_eq!(l.held(), 3);
    }

    #[test]
    fn a_stop_while_waiting_gives_back_what_was_taken() {
        let l = Arc::new(RowLocks::new(2, 4));
        let stop = Arc::new(AtomicBool::new(false));
        assert_eq!(l.lock_all(0, &[7], &stop), Some(false));
        let (l2, s2) = (Arc::clone(&l), Arc::clone(&stop));
        let waiter = std::thread::spawn(move || l2.lock_all(1, &[1, 2, 7], &s2));
        std::thread::sleep(Duration::from_millis(30));
        stop.store(true, Relaxed);
        let t = Instant::now();
        l.wake_waiters();
        assert_eq!(waiter.join().unwrap(), None);
        assert!(
            t.elapsed() < NAP / 2,
            "woken by the stop, not at the end of its nap"
        );
        assert_eq!(l.held(), 1, "only session 0's row is left");
    }

    #[test]
    fn many_sessions_on_few_rows_all_finish_in_ascending_order() {
        // Overlapping ranges taken in ascending order: no deadlock, and no
        // two sessions ever hold a row at once. They start together and
        // hold their rows a little while, so they meet whatever the
        // scheduler does.
        let l = Arc::new(RowLocks::new(4, 8));
        let stop = Arc::new(AtomicBool::new(false));
        let inside = Arc::new(AtomicU32::new(0));
        let start = Arc::new(std::sync::Barrier::new(4));
        let handles: Vec<_> = (0..4u32)
            .map(|s| {
                let (l, stop, inside) = (Arc::clone(&l), Arc::clone(&stop), Arc::clone(&inside));
                let start = Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    let mut waits = 0;
                    for i in 0..100u64 {
                        let first = (i * 3 + u64::from(s)) % 12;
                        let rows: Vec<u64> = (first..first + 6).collect();
                        if l.lock_all(s, &rows, &stop).unwrap() {
                            waits += 1;
                        }
                        // Whoever holds row 5 holds it alone.
                        if rows.contains(&5) {
                            assert_eq!(inside.fetch_add(1, Relaxed), 0, "row 5 held twice");
                        }
                        std::thread::sleep(Duration::from_micros(50));
                        if rows.contains(&5) {
                            inside.fetch_sub(1, Relaxed);
                        }
                        l.unlock_all(s, &rows);
                    }
                    waits
                })
            })
            .collect();
        let waits: u32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        assert!(waits > 0, "overlapping rows made someone wait");
        assert_eq!(l.held(), 0);
    }
}
