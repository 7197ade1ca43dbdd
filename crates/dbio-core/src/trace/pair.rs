//! Pairing a block request's issue event with its completion: the kernel
//! (and blktrace) report them as two events; a trace holds one [`Request`]
//! each, in issue order. Memory is bounded by the requests in flight (and
//! [`MAX_PENDING`] when completions go missing); a request allocates
//! nothing of its own (the maps and queues reuse their room). The maps
//! hash with FxHash: sectors are the kernel's, not an adversary's, and
//! SipHash was a tenth of the capture's reader.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use super::Request;

/// At most this many requests wait for the oldest one's completion; past
/// it the oldest is given up on (written without a completion).
pub(crate) const MAX_PENDING: usize = 1 << 20;
/// A request with no completion this long after it was issued (by the
/// trace's clock) is given up on too: a requeued request is issued twice
/// and completed once, and some flushes complete without an event.
pub(crate) const MAX_WAIT_NS: u64 = 5_000_000_000;

/// Issues and completions in, requests in issue order out.
#[derive(Default)]
pub(crate) struct Pairer {
    /// Requests in issue order; `base` is the sequence number of the first.
    pending: VecDeque<Request>,
    done: VecDeque<bool>,
    base: u64,
    /// (device, sector) → the sequence number of the oldest request in
    /// flight there.
    inflight: FxHashMap<(u16, u64), u64>,
    /// The later ones at the same place, oldest first (rare: a sector
    /// issued again before its completion, or a flush that never completes).
    more: FxHashMap<(u16, u64), VecDeque<u64>>,
    /// Completions with no issue seen (issued before the trace began).
    pub unmatched_completions: u64,
}

impl Pairer {
    /// A request was issued at `sector` (the key its completion will name).
    pub(crate) fn issue(&mut self, sector: u64, r: Request, out: &mut impl FnMut(Request)) {
        let seq = self.base + self.pending.len() as u64;
        match self.inflight.entry((r.device, sector)) {
            Entry::Vacant(v) => {
                v.insert(seq);
            }
            Entry::Occupied(_) => self
                .more
                .entry((r.device, sector))
                .or_default()
                .push_back(seq),
        }
        self.pending.push_back(r);
        self.done.push_back(false);
        let r = self.pending.back().copied().expect("just pushed");
        if self.pending.len() > MAX_PENDING {
            self.give_up_oldest();
        }
        while let Some(front) = self.pending.front() {
            if self.done[0] || r.issue_ns.saturating_sub(front.issue_ns) <= MAX_WAIT_NS {
                break;
            }
            self.give_up_oldest();
            self.emit(out);
        }
        self.emit(out);
    }

    /// A request at (`device`, `sector`) completed at `ns`.
    pub fn complete(&mut self, device: u16, sector: u64, ns: u64, out: &mut impl FnMut(Request)) {
        let key = (device, sector);
        let seq = loop {
            let Some(seq) = self.inflight.remove(&key) else {
                self.unmatched_completions += 1;
                return;
            };
            if let Some(q) = self.more.get_mut(&key) {
                if let Some(next) = q.pop_front() {
                    self.inflight.insert(key, next);
                }
                if q.is_empty() {
                    self.more.remove(&key);
                }
            }
            if seq >= self.base {
                break seq;
            } // else already given up on: the next one there
        };
        let i = (seq - self.base) as usize;
        self.pending[i].complete_ns = Some(ns.max(self.pending[i].issue_ns));
        self.done[i] = true;
        self.emit(out);
    }

    /// The end of the trace: requests still in flight, without completion.
    pub fn finish(&mut self, out: &mut impl FnMut(Request)) {
        while let Some(r) = self.pending.pop_front() {
            self.done.pop_front();
            self.base += 1;
            out(r);
        }
        self.inflight.clear();
        self.more.clear();
    }

    fn give_up_oldest(&mut self) {
        if let Some(d) = self.done.front_mut() {
            *d = true;
        }
    }

    fn emit(&mut self, out: &mut impl FnMut(Request)) {
        while self.done.front() == Some(&true) {
            self.done.pop_front();
            let r = self.pending.pop_front().expect("pending and done agree");
            self.base += 1;
            out(r);
        }
    }
}
