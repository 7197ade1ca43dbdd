//! A session writes dirty buffers itself (`--flavor postgres`): a
//! PostgreSQL backend whose clock sweep's victim is dirty flushes it before
//! reusing it ([`Lookup::DirtyVictim`](super::cache::Lookup), counted also
//! in `victim_writes`), and one whose miss found nothing it could take
//! writes a dirty buffer of the working set. With the background writer
//! capped (`--dbwr-rate`) and the checkpointer spread out, such backend
//! writes are most of PostgreSQL's buffer writes under updates
//! (`buffers_backend` in pg_stat_bgwriter). The write is timed as "backend
//! buffer write", counted in the session's physical writes and in
//! `backend_writes`, and stamped as a DB writer stamps its blocks. Oracle's
//! sessions never write: they wait for DBWR ("free buffer waits").

use std::sync::atomic::Ordering::Acquire;

use super::cache::FreeWait;
use super::events::Event;
use super::session::Session;
use crate::engine::{Engine, Io, OpKind, explain_result, perform};
use crate::measure::clock::now_ns;
use crate::measure::stats::Kind;
use crate::storage::block::Header;
use crate::storage::content::Content;

/// What a session needs to write blocks as the DB writers do: what the
/// blocks hold and their stamps (target id, run seed).
pub(crate) struct BackendWriter {
    pub content: Content,
    pub stamp: (u32, u32),
}

/// What trying to write a buffer free came to.
enum Freed {
    /// A dirty buffer was written: look the block up again.
    Wrote,
    /// Every dirty buffer there is pinned or busy: wait for one.
    NoneTaken,
    /// The write failed (the run is failed).
    Failed,
}

impl<E: Engine> Session<'_, E> {
    /// A miss found no clean buffer: a session that writes (`--flavor
    /// postgres`) writes a dirty one of the working set itself; otherwise, or
    /// when none can be taken, it waits for a DB writer. False when the run
    /// stops or fails.
    pub(super) fn no_free_buffer(&mut self, w: FreeWait) -> bool {
        match self.write_one_free(w) {
            Freed::Wrote => true,
            Freed::NoneTaken => self.free_buffer_wait(w),
            Freed::Failed => false,
        }
    }

    fn write_one_free(&mut self, w: FreeWait) -> Freed {
        if self.backend.is_none() {
            return Freed::NoneTaken;
        }
        let cache = &self.inst.cache;
        let Some((buf, block)) = cache.take_dirty(w) else {
            return Freed::NoneTaken;
        };
        let ok = self.write_buffer(buf, block, false);
        cache.end_write(buf);
        cache.cleaned(&[buf]);
        if ok { Freed::Wrote } else { Freed::Failed }
    }

    /// The clock's victim `buf`, holding `old`, is dirty (`--flavor
    /// postgres`): writes it, then takes it for `block`. Some(buffer) to
    /// read `block` into; Some(None) when the victim was used meanwhile
    /// (look `block` up again); None when the write failed.
    pub(super) fn write_victim(&mut self, buf: u32, old: u64, block: u64) -> Option<Option<u32>> {
        if !self.write_buffer(buf, old, true) {
            self.inst.cache.victim_write_failed(buf);
            return None;
        }
        Some(self.inst.cache.reuse_written(buf, block))
    }

    /// Writes `buf` (held WRITING), which holds `block`; false when the
    /// write failed (the run is failed). `victim`: the clock chose it.
    fn write_buffer(&mut self, buf: u32, block: u64, victim: bool) -> bool {
        let cache = &self.inst.cache;
        let (file, offset) = self.ts.locate(block);
        let bs = cache.block_size();
        self.seal(buf, file, offset);
        let io = Io {
            kind: OpKind::Write,
            file,
            offset,
            len: bs,
            buf: cache.ptr(buf),
            slot: 0,
        };
        let t = now_ns();
        // SAFETY: WRITING is held on the buffer until end_write below.
        let res = unsafe { perform(&mut self.engine, &io) };
        let end = now_ns();
        let why = match res {
            Ok(c) if c.res == bs as i32 => None,
            Ok(c) => Some(explain_result(c.res, u64::from(bs), self.io_mode)),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = why {
            self.inst.run.fail(format!(
                "session {}: writing {} at byte {offset} failed: {why}",
                self.id,
                self.files[file as usize].display()
            ));
            return false;
        }
        self.wrote(t, end, bs, victim);
        true
    }

    /// Stamps buffer `buf` (held WRITING) for `file` at `offset`.
    fn seal(&mut self, buf: u32, file: u32, offset: u64) {
        let Some(b) = &self.backend else {
            return;
        };
        let inst = self.inst;
        let bs = inst.cache.block_size();
        // SAFETY: WRITING is held on the buffer: no one else touches its bytes.
        let bytes = unsafe { std::slice::from_raw_parts_mut(inst.cache.ptr(buf), bs as usize) };
        let h = Header {
            block: offset / u64::from(bs),
            generation: inst.run.wall_minus_mono_ns + now_ns(),
            file,
            size: bs,
            target: b.stamp.0,
            seed: b.stamp.1,
        };
        b.content.write(bytes, h, &mut self.rng);
    }

    /// Counts one backend write of `len` bytes that ran from `t` to `end`.
    fn wrote(&mut self, t: u64, end: u64, len: u32, victim: bool) {
        self.wait(Event::BackendBufferWrite, t, end);
        let inst = self.inst;
        inst.live[self.id as usize].wrote(1, u64::from(len));
        let t0 = inst.run.start_ns.load(Acquire);
        self.series
            .record(Kind::Write, end - t0, end - t, u64::from(len));
        let w = inst.in_window(end);
        if w {
            self.stats.op(Kind::Write).record(end - t, u64::from(len));
        }
        self.tally.count(w, |c| {
            c.physical_writes += 1;
            c.write_requests += 1;
            c.write_bytes += u64::from(len);
            c.backend_writes += 1;
            c.victim_writes += u64::from(victim);
        });
    }
}
