//! `--flavor postgres`'s checkpoint pass as PostgreSQL's checkpointer makes
//! it (`BufferSync`): when the checkpoint begins, the buffers dirty below its
//! redo point are marked (`BM_CHECKPOINT_NEEDED`) and sorted by block; then
//! they are written in that order, each only if it is still dirty below the
//! redo point (a backend or the background writer may have written it
//! meanwhile, and a buffer dirtied again since is the next checkpoint's).
//! Progress is the share of the marked buffers processed, which paces a
//! spread checkpoint (`IsCheckpointOnSchedule`).
//!
//! Oracle's and InnoDB's flavors sweep the writer's buffers in buffer order
//! instead, writing whatever is dirty below the current target (`dbwr`).
//! Measured against PostgreSQL 15 (docs/slob.md), the sweep wrote about twice
//! the buffers per checkpoint that PostgreSQL's checkpointer did.

use super::cache::Cache;

/// One checkpoint's marked buffers, in block order (allocated once per DB
/// writer, refilled at each pass's start).
#[derive(Debug, Default)]
pub(crate) struct Marked {
    /// (block, buffer) of each marked buffer, sorted.
    todo: Vec<(u64, u32)>,
    /// The next one to process.
    next: usize,
    /// The checkpoint's redo point: only changes below it are written.
    target: u64,
}

impl Marked {
    /// Room for `buffers` marks (a writer's share of the cache).
    pub fn with_capacity(buffers: u32) -> Marked {
        Marked {
            todo: Vec::with_capacity(buffers as usize),
            ..Marked::default()
        }
    }

    /// Marks DB writer `id` of `writers`' buffers dirty below `target` and
    /// sorts them by block. Returns the lowest redo position of those dirty
    /// at or above it (they stay dirty: the checkpoint's mark may not pass
    /// them), or `u64::MAX`.
    pub fn start(&mut self, cache: &Cache, id: u32, writers: u32, target: u64) -> u64 {
        self.todo.clear();
        self.next = 0;
        self.target = target;
        let mut low = u64::MAX;
        let mut b = id;
        while b < cache.buffers() {
            match (cache.dirty_lsn(b), cache.block_of(b)) {
                (Some(lsn), Some(block)) if lsn < target => self.todo.push((block, b)),
                (Some(lsn), _) => low = low.min(lsn),
                (None, _) => {}
            }
            b += writers;
        }
        self.todo.sort_unstable();
        low
    }

    /// (processed, marked): the pass's progress.
    pub fn progress(&self) -> (u32, u32) {
        (self.next as u32, self.todo.len() as u32)
    }

    /// True when every marked buffer has been processed.
    pub fn done(&self) -> bool {
        self.next >= self.todo.len()
    }

    /// The next marked buffer that still needs writing, taken for writing
    /// (`Cache::begin_write`) with its block. A marked buffer written by
    /// someone else since, or now holding another block, is passed over; one
    /// still dirty below the target that cannot be written now (being read
    /// or written) lowers `low` to its change. None when the pass is done.
    pub fn take(&mut self, cache: &Cache, low: &mut u64) -> Option<(u32, u64)> {
        while let Some(&(block, b)) = self.todo.get(self.next) {
            self.next += 1;
            let Some(lsn) = cache.dirty_lsn(b) else {
                continue;
            };
            if lsn >= self.target || cache.block_of(b) != Some(block) {
                continue;
            }
            match cache.begin_write(b) {
                Some(blk) => return Some((b, blk)),
                None => *low = (*low).min(lsn),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::slob::cache::Lookup;
    use std::sync::atomic::AtomicBool;

    /// Reads `block` into the cache and dirties it at `lsn`; its buffer.
    fn dirty(c: &Cache, block: u64, lsn: u64) -> u32 {
        let stop = AtomicBool::new(false);
        let b = match c.lookup(block, &stop) {
            Lookup::Claimed { buf } => {
                c.read_done(buf);
                buf
            }
            Lookup::Hit { buf, .. } => buf,
            _ => panic!("block {block}: no buffer"),
        };
        c.mark_dirty(b, lsn);
        c.unpin(b);
        b
    }

    #[test]
    fn marks_what_is_dirty_below_the_redo_point_and_writes_it_in_block_order() {
        let c = Cache::new(64, 8192);
        let blocks = [40u64, 7, 23, 3, 99];
        for (i, &blk) in blocks.iter().enumerate() {
            dirty(&c, blk, 100 + i as u64);
        }
        let late = dirty(&c, 5, 500); // changed after the checkpoint began
        let mut m = Marked::with_capacity(64);
        let low = m.start(&c, 0, 1, 300);
        assert_eq!(low, 500, "the change above the redo point holds the mark");
        assert_eq!(m.progress(), (0, 5));
        let mut low = u64::MAX;
        let mut order = Vec::new();
        while let Some((b, blk)) = m.take(&c, &mut low) {
            order.push(blk);
            c.end_write(b);
        }
        assert_eq!(order, [3, 7, 23, 40, 99]);
        assert!(m.done());
        assert_eq!(low, u64::MAX);
        assert!(
            c.dirty_lsn(late).is_some(),
            "the later change is the next checkpoint's"
        );
    }

    #[test]
    fn passes_over_what_was_written_or_dirtied_again_since_the_mark() {
        let c = Cache::new(64, 8192);
        let a = dirty(&c, 10, 50);
        let b = dirty(&c, 11, 60);
        let busy = dirty(&c, 12, 70);
        let mut m = Marked::with_capacity(64);
        m.start(&c, 0, 1, 100);
        // A backend wrote `a`, and `b` was written and changed again.
        for x in [a, b] {
            c.begin_write(x).unwrap();
            c.end_write(x);
        }
        c.mark_dirty(b, 150);
        // `busy` is being written by a backend right now, and was changed
        // again (below the redo point) while it was.
        c.begin_write(busy).unwrap();
        c.mark_dirty(busy, 70);
        let mut low = u64::MAX;
        assert_eq!(m.take(&c, &mut low), None, "nothing left to write");
        assert_eq!(low, 70, "the one it could not take holds the mark");
        assert_eq!(m.progress(), (3, 3));
    }
}
