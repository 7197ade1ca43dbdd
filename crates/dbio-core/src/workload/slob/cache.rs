//! The buffer cache: `--cache` bytes of block buffers shared by every session,
//! found by block number through a partitioned hash (Oracle's cache buffers
//! chains, one short lock per partition). Each buffer's state is one atomic
//! word, so pinning, dirtying and starting or ending I/O are single atomic
//! operations; a session that wants a block another session is reading
//! sleeps on that word ("read by other session").
//!
//! Replacement works per working set (Oracle's LRU working sets, InnoDB's
//! buffer pool instances): the buffers are split into sets of about
//! [`SET_BUFFERS`], a block is always cached in the set its number hashes to,
//! and each set has its own clock hand (a use bit per buffer, second chance)
//! and dirty count on a cache line of its own. A miss looks at no more than
//! [`SCAN_PCT`]% of its set (Oracle's `_db_block_max_scan_pct`): it never
//! takes a dirty, pinned or busy buffer, and when it met none it could take
//! it asks the DB writers to clean the set and returns
//! [`Lookup::NoFreeBuffer`] (the session waits: "free buffer waits"). So the
//! work of a miss is bounded whatever the state of the cache, and no word is
//! written by every session on every miss. With PostgreSQL's replacement
//! ([`Replacement::DirtyToo`], `--flavor postgres`) the sweep takes a dirty
//! buffer as it takes a clean one, when its use bit is clear, and the
//! session writes it before reusing it ([`Lookup::DirtyVictim`]), as a
//! PostgreSQL backend's clock sweep does: dirty buffers then stay in the
//! cache as long as clean ones, no longer.
//!
//! Bytes of a buffer are touched only by the thread that holds its READING
//! (the session reading it in) or WRITING (the DB writer writing it out) bit,
//! so no two threads ever write a buffer's bytes at once.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
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
/// Buffers a clock hand moves per step.
const SWEEP: u32 = 8;
/// Buffers per working set, about (fewer sets than this would make).
pub(crate) const SET_BUFFERS: u32 = 1024;
/// Most working sets.
const MAX_SETS: u32 = 1024;
/// Share of its working set a miss looks at, at most, in percent.
pub(crate) const SCAN_PCT: u32 = 40;

/// One working set: buffers `lo..lo + len`, replaced by their own clock.
/// Aligned to its own cache lines: only misses in this set write it.
#[repr(align(128))]
struct WorkSet {
    lo: u32,
    len: u32,
    /// Most buffers one miss looks at (a multiple of [`SWEEP`]).
    limit: u32,
    hand: AtomicU64,
    /// Buffers of the set dirty now.
    dirty: AtomicU64,
    /// Moves each time a miss found no buffer it could take here.
    wanted: AtomicU32,
    /// Moves each time a DB writer batch cleaned buffers here (a futex word).
    freed: AtomicU32,
    /// Sessions sleeping on `freed`.
    sleepers: AtomicU32,
}

/// Which buffers a miss may take (the flavor's buffer replacement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Replacement {
    /// Clean ones only: a dirty buffer stays until a DB writer writes it
    /// (Oracle's and InnoDB's sessions never write).
    CleanOnly,
    /// PostgreSQL's clock sweep (`StrategyGetBuffer`): the first unpinned
    /// buffer whose use bit is clear is the victim, dirty or not, and the
    /// session writes a dirty victim itself before reusing it.
    DirtyToo,
}

/// What looking at one buffer for a victim found.
enum Claim {
    Got(u32),
    /// Dirty, idle and unused since the hand last passed
    /// ([`Replacement::DirtyToo`]): now pinned and WRITING, for the
    /// session to write.
    Dirty(u32),
    /// Clean and idle but recently used: its use bit is cleared now.
    Used,
    /// Dirty, pinned, being read or written, or taken meanwhile.
    Busy,
}

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
    /// The buffers the miss looked at were all pinned, dirty or busy: wait
    /// for a DB writer ([`Cache::wait_free`]).
    NoFreeBuffer(FreeWait),
    /// The clock's victim is dirty ([`Replacement::DirtyToo`]): buffer
    /// `buf`, holding `block`, is pinned and WRITING. The caller writes it,
    /// then calls [`Cache::reuse_written`].
    DirtyVictim { buf: u32, block: u64 },
    /// The run is stopping.
    Stopped,
}

/// What a session waiting for a free buffer waits on: its working set's
/// count of DB writer batches that cleaned buffers there, as the miss saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeWait {
    set: u32,
    seen: u32,
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
    sets: Box<[WorkSet]>,
    replacement: Replacement,
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
            sets: Self::work_sets(buffers),
            replacement: Replacement::CleanOnly,
        }
    }

    /// The cache with `r` as its buffer replacement.
    pub(crate) fn with_replacement(mut self, r: Replacement) -> Self {
        self.replacement = r;
        self
    }

    fn work_sets(n: u32) -> Box<[WorkSet]> {
        let w = (n / SET_BUFFERS).clamp(1, MAX_SETS);
        (0..w)
            .map(|s| {
                let lo = (u64::from(s) * u64::from(n) / u64::from(w)) as u32;
                let hi = (u64::from(s + 1) * u64::from(n) / u64::from(w)) as u32;
                let len = hi - lo;
                WorkSet {
                    lo,
                    len,
                    limit: (len * SCAN_PCT / 100).next_multiple_of(SWEEP).max(SWEEP),
                    hand: AtomicU64::new(0),
                    dirty: AtomicU64::new(0),
                    wanted: AtomicU32::new(0),
                    freed: AtomicU32::new(0),
                    sleepers: AtomicU32::new(0),
                }
            })
            .collect()
    }

    /// The working set block `block` is cached in.
    #[inline]
    fn set_for(&self, block: u64) -> usize {
        let h = block.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 32;
        (h % self.sets.len() as u64) as usize
    }

    /// The working set buffer `buf` belongs to.
    #[inline]
    fn set_of(&self, buf: u32) -> usize {
        let w = self.sets.len() as u64;
        ((u64::from(buf) + 1) * w).div_ceil(u64::from(self.n)) as usize - 1
    }

    /// Working sets.
    pub fn sets(&self) -> usize {
        self.sets.len()
    }

    /// Buffers `lo..lo + len` of working set `s`, and where its clock hand
    /// is (0..len): the cold end, where DB writers write first.
    pub(crate) fn set_span(&self, s: usize) -> (u32, u32, u32) {
        let set = &self.sets[s];
        let at = (set.hand.load(Relaxed) % u64::from(set.len)) as u32;
        (set.lo, set.len, at)
    }

    /// Moves each time a miss in set `s` found no buffer it could take.
    pub(crate) fn set_wanted(&self, s: usize) -> u32 {
        self.sets[s].wanted.load(Acquire)
    }

    /// True when more than a quarter of set `s` is dirty.
    pub(crate) fn set_pressure(&self, s: usize) -> bool {
        let set = &self.sets[s];
        dirty_count(set.dirty.load(Relaxed)) * 4 > u64::from(set.len)
    }

    /// Most buffers one miss for `block` looks at.
    pub fn scan_limit(&self, block: u64) -> u32 {
        self.sets[self.set_for(block)].limit
    }

    pub fn buffers(&self) -> u32 {
        self.n
    }

    /// Buffers dirty now.
    pub fn dirty(&self) -> u64 {
        self.sets
            .iter()
            .map(|s| dirty_count(s.dirty.load(Relaxed)))
            .sum()
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
            let set = self.set_for(block);
            let seen = self.sets[set].freed.load(Acquire);
            let victim = match self.sweep(&self.sets[set]).0 {
                None => {
                    return Lookup::NoFreeBuffer(FreeWait {
                        set: set as u32,
                        seen,
                    });
                }
                Some(Claim::Dirty(buf)) => match self.block_of(buf) {
                    Some(block) => return Lookup::DirtyVictim { buf, block },
                    None => unreachable!("a dirty buffer holds a block"),
                },
                Some(Claim::Got(victim)) => victim,
                Some(Claim::Used | Claim::Busy) => unreachable!("sweep returns a claimed buffer"),
            };
            if self.install(block, victim) {
                return Lookup::Claimed { buf: victim };
            }
        }
    }

    /// Puts `block` into `victim` (pinned, holding no block), READING for
    /// the caller to read it in. False when another session brought the
    /// block in meanwhile: the victim is given back.
    fn install(&self, block: u64, victim: u32) -> bool {
        let mut part = self.part(block);
        if part.contains_key(&block) {
            self.state[victim as usize].store(0, Release);
            return false;
        }
        part.insert(block, victim);
        self.tag[victim as usize].store(block + 1, Release);
        self.state[victim as usize].store(PIN_ONE | READING | USED, Release);
        true
    }

    /// A [`Lookup::DirtyVictim`] the caller has written: ends the write and
    /// takes the buffer for `block`, pinned and READING as
    /// [`Lookup::Claimed`] gives it. None when the buffer was used while it
    /// was written (pinned, hit or changed again: it stays with its block,
    /// as a PostgreSQL backend gives up a victim pinned or re-dirtied
    /// meanwhile) or another session brought `block` in: the caller looks
    /// `block` up again.
    pub(crate) fn reuse_written(&self, buf: u32, block: u64) -> Option<u32> {
        let word = &self.state[buf as usize];
        let s = word.fetch_and(!WRITING, AcqRel) & !WRITING;
        let old = self.tag[buf as usize].load(Acquire);
        let taken = s == PIN_ONE | VALID && old != 0 && {
            let mut part = self.part(old - 1);
            let ok = self.tag[buf as usize].load(Acquire) == old
                && word.compare_exchange(s, PIN_ONE, AcqRel, Relaxed).is_ok();
            if ok {
                part.remove(&(old - 1));
                self.tag[buf as usize].store(0, Release);
            }
            ok
        };
        if !taken {
            self.unpin(buf);
            self.cleaned(&[buf]);
            return None;
        }
        self.install(block, buf).then_some(buf)
    }

    /// A [`Lookup::DirtyVictim`] whose write failed: it stays dirty, with
    /// its block.
    pub(crate) fn victim_write_failed(&self, buf: u32) {
        self.state[buf as usize].fetch_and(!WRITING, Release);
        self.mark_dirty(buf, self.dirty_lsn[buf as usize].load(Acquire));
        self.unpin(buf);
    }

    /// Sleeps until a DB writer cleans buffers in the working set a miss
    /// found none free in (or `timeout`; at once if one did meanwhile).
    pub(crate) fn wait_free(&self, w: FreeWait, timeout: Duration) {
        let set = &self.sets[w.set as usize];
        // SeqCst here and in `cleaned`: a writer that bumps `freed` either
        // sees this sleeper or the futex sees the new `freed`.
        set.sleepers.fetch_add(1, SeqCst);
        futex::wait(&set.freed, w.seen, timeout);
        set.sleepers.fetch_sub(1, Relaxed);
    }

    /// A DB writer wrote `bufs` (now clean): wakes as many sessions waiting
    /// for a free buffer in each of their working sets as it cleaned there.
    pub(crate) fn cleaned(&self, bufs: &[u32]) {
        let mut i = 0;
        while i < bufs.len() {
            let s = self.set_of(bufs[i]);
            let mut n = 1;
            while i + n < bufs.len() && self.set_of(bufs[i + n]) == s {
                n += 1;
            }
            i += n;
            let set = &self.sets[s];
            set.freed.fetch_add(1, SeqCst);
            if set.sleepers.load(SeqCst) > 0 {
                futex::wake(&set.freed, n as u32);
            }
        }
    }

    /// Wakes every session waiting for a free buffer in set `s`.
    pub(crate) fn wake_all(&self, s: usize) {
        let set = &self.sets[s];
        set.freed.fetch_add(1, SeqCst);
        if set.sleepers.load(SeqCst) > 0 {
            futex::wake_all(&set.freed);
        }
    }

    /// Wakes every session waiting in the cache: for a free buffer, or for
    /// a block another session is reading (the run is stopping).
    pub(crate) fn wake_waiters(&self) {
        for s in 0..self.sets.len() {
            self.wake_all(s);
        }
        for word in self.state.iter() {
            if word.load(Relaxed) & WAITERS != 0 {
                futex::wake_all(word);
            }
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
                futex::wait(word, with, futex::NAP);
            }
            s = word.load(Acquire);
        }
        Some((s, now_ns() - t0))
    }

    /// A bounded clock sweep of a working set for a clean, unpinned,
    /// idle buffer; returns it pinned and holding no block. It looks at no
    /// more than the set's limit; when every buffer it looked at had been
    /// used since the hand last passed, it takes the first of them (now
    /// given its second chance). None when it met only dirty, pinned or
    /// busy buffers: the set's `wanted` moves for the DB writers. The hand
    /// advances [`SWEEP`] buffers at a time, so sessions sweeping the set at
    /// once share its cache line once per stretch, not once per buffer.
    /// Also returns how many buffers it looked at.
    fn sweep(&self, set: &WorkSet) -> (Option<Claim>, u32) {
        let len = u64::from(set.len);
        let mut spare = None;
        let mut looked = 0;
        while looked < set.limit {
            let base = set.hand.fetch_add(u64::from(SWEEP), Relaxed);
            for k in 0..u64::from(SWEEP) {
                let i = set.lo as usize + ((base + k) % len) as usize;
                match self.try_claim(i, false) {
                    c @ (Claim::Got(_) | Claim::Dirty(_)) => {
                        return (Some(c), looked + k as u32 + 1);
                    }
                    Claim::Used => {
                        spare.get_or_insert(i);
                    }
                    Claim::Busy => {}
                }
            }
            looked += SWEEP;
        }
        if let Some(i) = spare
            && let c @ (Claim::Got(_) | Claim::Dirty(_)) = self.try_claim(i, true)
        {
            return (Some(c), looked);
        }
        set.wanted.fetch_add(1, Release);
        (None, looked)
    }

    /// Claims buffer `i` if it is clean, unpinned and idle — unless it was
    /// used since the hand last passed and `take_used` is false: then it
    /// gets its second chance instead.
    #[inline]
    fn try_claim(&self, i: usize, take_used: bool) -> Claim {
        let s = self.state[i].load(Acquire);
        if s & (PIN_MASK | READING | WRITING) != 0 {
            return Claim::Busy;
        }
        if s & DIRTY != 0 {
            return self.try_claim_dirty(i, s);
        }
        if s & USED != 0 && !take_used {
            self.state[i].fetch_and(!USED, Relaxed);
            return Claim::Used;
        }
        let old = self.tag[i].load(Acquire);
        if old == 0 {
            return match self.state[i].compare_exchange(s, PIN_ONE, AcqRel, Relaxed) {
                Ok(_) => Claim::Got(i as u32),
                Err(_) => Claim::Busy,
            };
        }
        let mut part = self.part(old - 1);
        if self.tag[i].load(Acquire) != old
            || self.state[i]
                .compare_exchange(s, PIN_ONE, AcqRel, Relaxed)
                .is_err()
        {
            return Claim::Busy;
        }
        part.remove(&(old - 1));
        self.tag[i].store(0, Release);
        Claim::Got(i as u32)
    }

    /// Dirty, idle buffer `i` (state `s`): with [`Replacement::DirtyToo`]
    /// and its use bit clear, claimed for the session to write (pinned,
    /// WRITING, no longer dirty); used since the hand last passed, it gets
    /// its second chance, and may be the sweep's spare as a clean one may
    /// (PostgreSQL's sweep goes on round the clock until a usage count
    /// reaches 0, dirty or not).
    fn try_claim_dirty(&self, i: usize, s: u32) -> Claim {
        match self.replacement {
            Replacement::CleanOnly => Claim::Busy,
            Replacement::DirtyToo if s & USED != 0 => {
                self.state[i].fetch_and(!USED, Relaxed);
                Claim::Used
            }
            Replacement::DirtyToo => {
                let new = (s & !DIRTY) | WRITING | PIN_ONE;
                if s & VALID == 0
                    || self.state[i]
                        .compare_exchange(s, new, AcqRel, Relaxed)
                        .is_err()
                {
                    return Claim::Busy;
                }
                self.sets[self.set_of(i as u32)].dirty.fetch_sub(1, Relaxed);
                Claim::Dirty(i as u32)
            }
        }
    }

    /// The block is in the buffer now: make it visible and wake waiters.
    pub(crate) fn read_done(&self, buf: u32) {
        self.finish_read(buf, VALID);
    }

    /// The read failed: forget the block (waiters retry).
    pub(crate) fn read_failed(&self, buf: u32) {
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

    /// Sessions holding buffer `buf` pinned now (tests).
    #[cfg(test)]
    pub fn pins(&self, buf: u32) -> u32 {
        self.state[buf as usize].load(Acquire) & PIN_MASK
    }

    #[inline]
    pub(crate) fn unpin(&self, buf: u32) {
        self.state[buf as usize].fetch_sub(PIN_ONE, Release);
    }

    /// Marks a pinned buffer changed at redo position `lsn`. True when it
    /// was clean (a newly dirtied block).
    #[inline]
    pub(crate) fn mark_dirty(&self, buf: u32, lsn: u64) -> bool {
        let word = &self.state[buf as usize];
        if word.load(Acquire) & DIRTY != 0 {
            return false;
        }
        self.dirty_lsn[buf as usize].store(lsn, Release);
        if word.fetch_or(DIRTY, AcqRel) & DIRTY == 0 {
            self.sets[self.set_of(buf)].dirty.fetch_add(1, Relaxed);
            true
        } else {
            false
        }
    }

    /// The block a buffer holds.
    #[inline]
    pub(crate) fn block_of(&self, buf: u32) -> Option<u64> {
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
    pub(crate) fn dirty_lsn(&self, buf: u32) -> Option<u64> {
        let s = self.state[buf as usize].load(Acquire);
        (s & DIRTY != 0).then(|| self.dirty_lsn[buf as usize].load(Acquire))
    }

    /// The redo position a buffer was last made dirty at (kept while it is
    /// written: `--flavor innodb`'s page cleaner holds the log ahead of it).
    #[inline]
    pub(crate) fn changed_at(&self, buf: u32) -> u64 {
        self.dirty_lsn[buf as usize].load(Acquire)
    }

    /// Starts writing a dirty buffer out (a DB writer): clears DIRTY, sets
    /// WRITING. Returns the block, or None if the buffer is not writable.
    pub(crate) fn begin_write(&self, buf: u32) -> Option<u64> {
        let word = &self.state[buf as usize];
        let s = word.load(Acquire);
        if s & (DIRTY | VALID) != (DIRTY | VALID) || s & (READING | WRITING) != 0 {
            return None;
        }
        let new = (s & !DIRTY) | WRITING;
        word.compare_exchange(s, new, AcqRel, Relaxed).ok()?;
        self.sets[self.set_of(buf)].dirty.fetch_sub(1, Relaxed);
        self.block_of(buf)
    }

    /// A dirty buffer for a session to write itself (PostgreSQL's backend
    /// write), in the working set where miss `w` found no clean one: the
    /// first unpinned one from the set's clock hand on (where the next miss
    /// looks), within the set's scan limit, taken as [`Self::begin_write`]
    /// takes it. Returns it with its block, or None when every dirty buffer
    /// there is pinned or being read or written.
    pub(crate) fn take_dirty(&self, w: FreeWait) -> Option<(u32, u64)> {
        let set = &self.sets[w.set as usize];
        let at = set.hand.load(Relaxed) % u64::from(set.len);
        (0..u64::from(set.limit.min(set.len)))
            .map(|k| set.lo + ((at + k) % u64::from(set.len)) as u32)
            .filter(|&b| self.state[b as usize].load(Acquire) & PIN_MASK == 0)
            .find_map(|b| self.begin_write(b).map(|block| (b, block)))
    }

    pub(crate) fn end_write(&self, buf: u32) {
        self.state[buf as usize].fetch_and(!WRITING, Release);
    }

    pub fn block_size(&self) -> u32 {
        self.block_size
    }
}

/// A set's dirty count as read. A session counts a buffer it dirtied just
/// after setting its DIRTY bit, so a DB writer that clears the bit in
/// between takes one off first: the count can be -1 (wrapped) for a moment.
/// Read that as none dirty rather than as 2^64 - 1.
fn dirty_count(raw: u64) -> u64 {
    (raw as i64).max(0) as u64
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
