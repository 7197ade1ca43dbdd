//! What a replay needs to know of its trace before the start, from one
//! pass over it as a stream (memory bounded by the number of threads and
//! the requests each had in flight, never by the trace's length): how many
//! requests of each kind, the bytes it reaches (its extent), its longest
//! request, the threads that issued it and how many requests each had in
//! flight at most.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;

use crate::trace::{self, Entry, Request, TraceError};

pub use crate::config::replay::{ThreadFacts, TraceFacts};

/// The thread a request belongs to (0 when the trace does not say).
#[inline]
pub(crate) fn thread_of(r: &Request) -> u32 {
    r.tid.or(r.pid).unwrap_or(0)
}

/// Requests each captured thread has in flight: at a request's issue, the
/// earlier requests of its thread that had not completed yet.
#[derive(Default)]
pub struct InFlight {
    completions: HashMap<u32, BinaryHeap<Reverse<u64>>>,
}

impl InFlight {
    /// The requests in flight on `r`'s thread when it was issued, itself
    /// included (1 for a request without a completion time).
    pub(crate) fn at_issue(&mut self, r: &Request) -> u32 {
        let heap = self.completions.entry(thread_of(r)).or_default();
        while heap.peek().is_some_and(|c| c.0 <= r.issue_ns) {
            heap.pop();
        }
        match r.complete_ns {
            Some(c) => {
                heap.push(Reverse(c));
                heap.len() as u32
            }
            None => 1,
        }
    }
}

/// Reads the trace in `paths` once.
pub fn scan(paths: &[PathBuf]) -> Result<TraceFacts, TraceError> {
    let mut f = TraceFacts {
        max_in_flight: 1,
        ..TraceFacts::default()
    };
    let mut inflight = InFlight::default();
    let mut seen: HashMap<u32, usize> = HashMap::new();
    for e in trace::open(paths)? {
        let e = e?;
        f.summary.add(&e);
        let Entry::Request(r) = e else {
            continue;
        };
        if r.len > 0 {
            f.extent_bytes = f.extent_bytes.max(r.offset + u64::from(r.len));
            f.max_len_bytes = f.max_len_bytes.max(r.len);
        }
        let tid = thread_of(&r);
        let i = *seen.entry(tid).or_insert_with(|| {
            f.threads.push(ThreadFacts {
                tid,
                ..ThreadFacts::default()
            });
            f.threads.len() - 1
        });
        let depth = inflight.at_issue(&r);
        let t = &mut f.threads[i];
        t.requests += 1;
        t.max_in_flight = t.max_in_flight.max(depth);
        f.max_in_flight = f.max_in_flight.max(depth);
    }
    Ok(f)
}
