//! The buffer cache: `--cache` bytes of block buffers shared by every session,
//! found by block number through a partitioned hash (Oracle's cache buffers
//! chains, one short lock per partition), replaced by a clock sweep (a use
//! bit per buffer, second chance) that never takes a dirty, pinned or busy
//! buffer. Each buffer's state is one atomic word, so pinning, dirtying and
//! starting or ending I/O are single atomic operations; a session that wants
//! a block another session is reading sleeps on that word ("read by other
//! session").
//!
//! Bytes of a buffer are touched only by the thread that holds its READING
//! (the session reading it in) or WRITING (the DB writer writing it out) bit,
//! so no two threads ever write a buffer's bytes at once.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::time::Duration;

use super::futex;
use crate::engine::buf::BufPool;
use crate::measure::clock::now_ns;

const PIN_ONE: u32 = 1;
const PIN_MASK: u32 = 0xFFFF;
const VALID: u32 = 1 << 16;
const DIRTY: u32 = 1 << 17;
const READING: u32 = 1 << 18;
const WRITING: u32 = 1 << 19;
const WAITERS: u32 = 1 << 20;
const USED: u32 = 1 << 21;

const PARTITIONS: usize = 256;
/// Buffers the clock hand moves per step.
const SWEEP: u64 = 8;

/// What looking a block up gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// In the cache (a logical read only), pinned. `waited_ns` > 0 when the
    /// block was being read by another session and this one waited for it.
    Hit { buf: u32, waited_ns: u64 },
    /// Not in the cache: a buffer is now reserved for it, pinned and marked
    /// READING. The caller reads the block into it, then calls
    /// [`Cache::read_done`] (or [`Cache::read_failed`]).
    Claimed { buf: u32 },
    /// Every buffer is pinned, dirty or busy: wait for a DB writer.
    NoFreeBuffer,
    /// The run is stopping.
    Stopped,
}

#[derive(Default)]
pub(super) struct BlockHasher(u64);

impl Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by block number (blocks are already well spread: a cheap hash).
pub(super) type BlockMap<V> = HashMap<u64, V, BuildHasherDefault<BlockHasher>>;
type Map = BlockMap<u32>;

pub struct Cache {
    mem: BufPool,
    block_size: u32,
    n: u32,
    state: Box<[AtomicU32]>,
    /// Block number + 1 of each buffer; 0 = holds no block.
    tag: Box<[AtomicU64]>,
    /// Redo position when the buffer was first dirtied (valid while DIRTY).
    dirty_lsn: Box<[AtomicU64]>,
    parts: Box<[Mutex<Map>]>,
    hand: AtomicU64,
    dirty: AtomicU64,
}

// SAFETY: the buffer memory is shared by design; a buffer's bytes are only
// accessed by the one thread holding its READING or WRITING bit (see above).
unsafe impl Sync for Cache {}

impl Cache {
    pub fn new(buffers: u32, block_size: u32) -> Self {
        let per_part = (buffers as usize / PARTITIONS) * 2 + 16;
        Cache {
            mem: BufPool::new(block_size as usize, buffers as usize),
            block_size,
            n: buffers,
            state: (0..buffers).map(|_| AtomicU32::new(0)).collect(),
            tag: (0..buffers).map(|_| AtomicU64::new(0)).collect(),
            dirty_lsn: (0..buffers).map(|_| AtomicU64::new(0)).collect(),
            parts: (0..PARTITIONS)
                .map(|_| Mutex::new(Map::with_capacity_and_hasher(per_part, Default::default())))
                .collect(),
            hand: AtomicU64::new(0),
            dirty: AtomicU64::new(0),
        }
    }

    pub fn buffers(&self) -> u32 {
        self.n
    }

    /// Buffers dirty now.
    pub fn dirty(&self) -> u64 {
        self.dirty.load(Relaxed)
    }

    /// The memory of buffer `buf`; only for the holder of its READING or WRITING bit.
    #[inline]
    pub fn ptr(&self, buf: u32) -> *mut u8 {
        self.mem.ptr(buf as usize)
    }

    #[inline]
    fn part(&self, block: u64) -> std::sync::MutexGuard<'_, Map> {
        let h = (block ^ (block >> 17)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56;
        self.parts[h as usize % PARTITIONS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Finds `block`, or reserves a buffer to read it into.
    pub fn lookup(&self, block: u64, stop: &AtomicBool) -> Lookup {
        loop {
            let part = self.part(block);
            if let Some(&buf) = part.get(&block) {
                let s = self.state[buf as usize].fetch_add(PIN_ONE, AcqRel) + PIN_ONE;
                drop(part);
                match self.await_read(buf, s, stop) {
                    Some((s, waited_ns)) if s & VALID != 0 => {
                        if s & USED == 0 {
                            self.state[buf as usize].fetch_or(USED, Relaxed);
                        }
                        return Lookup::Hit { buf, waited_ns };
                    }
                    Some(_) => {
                        // The other session's read failed: try again.
                        self.unpin(buf);
                        continue;
                    }
                    None => {
                        self.unpin(buf);
                        return Lookup::Stopped;
                    }
                }
            }
            drop(part);
            let Some(victim) = self.claim_victim() else {
                return Lookup::NoFreeBuffer;
            };
            let mut part = self.part(block);
            if part.contains_key(&block) {
                // Another session brought it in meanwhile: give the victim back.
                self.state[victim as usize].store(0, Release);
                continue;
            }
            part.insert(block, victim);
            self.tag[victim as usize].store(block + 1, Release);
            self.state[victim as usize].store(PIN_ONE | READING | USED, Release);
            return Lookup::Claimed { buf: victim };
        }
    }

    /// Waits while another session reads the buffer in. Returns the state
    /// after and the time waited, or None when the run stops.
    fn await_read(&self, buf: u32, mut s: u32, stop: &AtomicBool) -> Option<(u32, u64)> {
        if s & READING == 0 {
            return Some((s, 0));
        }
        let t0 = now_ns();
        let word = &self.state[buf as usize];
        while s & READING != 0 {
            if stop.load(Relaxed) {
                return None;
            }
            let with = word.fetch_or(WAITERS, AcqRel) | WAITERS;
            if with & READING != 0 {
                futex::wait(word, with, Duration::from_millis(20));
            }
            s = word.load(Acquire);
        }
        Some((s, now_ns() - t0))
    }

    /// A clock sweep for a clean, unpinned, idle buffer; returns it pinned
    /// and holding no block. None after two turns of the clock found none.
    /// The hand advances [`SWEEP`] buffers at a time, so sessions sweeping
    /// at once share its cache line once per stretch, not once per buffer.
    fn claim_victim(&self) -> Option<u32> {
        let n = u64::from(self.n);
        let stretches = (2 * n).div_ceil(SWEEP);
        for _ in 0..stretches {
            let base = self.hand.fetch_add(SWEEP, Relaxed);
            for k in 0..SWEEP {
                let i = ((base + k) % n) as usize;
                if let Some(v) = self.try_claim(i) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// Claims buffer `i` if it is clean, unpinned and idle, giving a used
    /// one its second chance instead.
    #[inline]
    fn try_claim(&self, i: usize) -> Option<u32> {
        let s = self.state[i].load(Acquire);
        if s & (PIN_MASK | DIRTY | READING | WRITING) != 0 {
            return None;
        }
        if s & USED != 0 {
            self.state[i].fetch_and(!USED, Relaxed);
            return None;
        }
        let old = self.tag[i].load(Acquire);
        if old == 0 {
            return self.state[i]
                .compare_exchange(s, PIN_ONE, AcqRel, Relaxed)
                .ok()
                .map(|_| i as u32);
        }
        let mut part = self.part(old - 1);
        if self.tag[i].load(Acquire) != old
            || self.state[i]
                .compare_exchange(s, PIN_ONE, AcqRel, Relaxed)
                .is_err()
        {
            return None;
        }
        part.remove(&(old - 1));
        self.tag[i].store(0, Release);
        Some(i as u32)
    }

    /// The block is in the buffer now: make it visible and wake waiters.
    pub fn read_done(&self, buf: u32) {
        self.finish_read(buf, VALID);
    }

    /// The read failed: forget the block (waiters retry).
    pub fn read_failed(&self, buf: u32) {
        if let Some(block) = self.block_of(buf) {
            let mut part = self.part(block);
            part.remove(&block);
            self.tag[buf as usize].store(0, Release);
        }
        self.finish_read(buf, 0);
    }

    fn finish_read(&self, buf: u32, valid: u32) {
        let word = &self.state[buf as usize];
        let mut s = word.load(Acquire);
        loop {
            let new = (s | valid) & !(READING | WAITERS);
            match word.compare_exchange(s, new, AcqRel, Acquire) {
                Ok(_) => break,
                Err(now) => s = now,
            }
        }
        if s & WAITERS != 0 {
            futex::wake_all(word);
        }
    }

    #[inline]
    pub fn unpin(&self, buf: u32) {
        self.state[buf as usize].fetch_sub(PIN_ONE, Release);
    }

    /// Marks a pinned buffer changed at redo position `lsn`. True when it
    /// was clean (a newly dirtied block).
    #[inline]
    pub fn mark_dirty(&self, buf: u32, lsn: u64) -> bool {
        let word = &self.state[buf as usize];
        if word.load(Acquire) & DIRTY != 0 {
            return false;
        }
        self.dirty_lsn[buf as usize].store(lsn, Release);
        if word.fetch_or(DIRTY, AcqRel) & DIRTY == 0 {
            self.dirty.fetch_add(1, Relaxed);
            true
        } else {
            false
        }
    }

    /// The block a buffer holds.
    #[inline]
    pub fn block_of(&self, buf: u32) -> Option<u64> {
        self.tag[buf as usize].load(Acquire).checked_sub(1)
    }

    /// True when the buffer is dirty and free to be written.
    #[inline]
    pub fn writable(&self, buf: u32) -> bool {
        let s = self.state[buf as usize].load(Acquire);
        s & (DIRTY | VALID) == (DIRTY | VALID) && s & (READING | WRITING) == 0
    }

    /// The redo position a dirty buffer was first changed at.
    #[inline]
    pub fn dirty_lsn(&self, buf: u32) -> Option<u64> {
        let s = self.state[buf as usize].load(Acquire);
        (s & DIRTY != 0).then(|| self.dirty_lsn[buf as usize].load(Acquire))
    }

    /// Starts writing a dirty buffer out (a DB writer): clears DIRTY, sets
    /// WRITING. Returns the block, or None if the buffer is not writable.
    pub fn begin_write(&self, buf: u32) -> Option<u64> {
        let word = &self.state[buf as usize];
        let s = word.load(Acquire);
        if s & (DIRTY | VALID) != (DIRTY | VALID) || s & (READING | WRITING) != 0 {
            return None;
        }
        let new = (s & !DIRTY) | WRITING;
        word.compare_exchange(s, new, AcqRel, Relaxed).ok()?;
        self.dirty.fetch_sub(1, Relaxed);
        self.block_of(buf)
    }

    pub fn end_write(&self, buf: u32) {
        self.state[buf as usize].fetch_and(!WRITING, Release);
    }

    /// Where the clock hand is (DB writers write from there: the cold end).
    pub fn hand(&self) -> u32 {
        (self.hand.load(Relaxed) % u64::from(self.n)) as u32
    }

    pub fn block_size(&self) -> u32 {
        self.block_size
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
