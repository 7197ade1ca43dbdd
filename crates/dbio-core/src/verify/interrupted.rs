//! Interruption is not damage: the blocks a run may have been writing when
//! it ended without its final sync point (kill -9, a crash, a power cut).
//! A write cut short leaves its block torn — part the write, part what the
//! block held — or still the block before it (*stale*): that is the kill,
//! not the storage. The set is exact where the run's record of writes in
//! flight (`storage::inflight`) is trusted, together with the writes of
//! earlier interrupted runs the map still carries; where it is not (another
//! boot, a run that kept none) the map is *blind*, and any torn block whose
//! sectors are all at or above its floor — written since the last sync
//! point, nothing promised for it — may be one.
//!
//! A SLOB run keeps no record of its writes in flight, only a mark that it
//! is writing (`storage::slob_mark`): after one was interrupted, verify is
//! blind in the same way.
//!
//! A block holding less than its floor is never an interruption: a write
//! in flight only ever brings a newer generation, so an older block means
//! an acknowledged, synced write was lost.

use std::cmp::Ordering;

use serde::Serialize;

use super::classify::{Class, Expect, Verdict};
use crate::storage::block::{SECTOR, read_stamp};
use crate::storage::genmap::newer;
use crate::storage::genmap_file::Loaded;
use crate::storage::inflight::{self, Found, Write};

/// What an interrupted write left in its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Part the write in flight, part what the block held before.
    Torn,
    /// Whole, but older than every write of it in flight: none landed.
    Stale,
}

/// What verify knows of the writes in flight at an interruption.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Known {
    /// No run was interrupted since the layout (or no map to tell).
    #[default]
    Nothing,
    /// These writes may have been in flight (the record, and the map's).
    Writes { count: usize },
    /// The writes in flight are not known, for this reason.
    Blind { why: String },
    /// A SLOB run writing the target was interrupted (its mark says so,
    /// `storage::slob_mark`): it keeps no record of its writes in flight,
    /// so any torn block may be one.
    Slob { why: String },
}

impl Known {
    /// What a torn block an interruption left is, in the report's words.
    pub fn torn_text(&self) -> &'static str {
        match self {
            Known::Slob { .. } => "torn: the SLOB run writing it was interrupted (not damage)",
            Known::Nothing | Known::Writes { .. } | Known::Blind { .. } => {
                "torn: part of a write in flight when a run was interrupted (not damage)"
            }
        }
    }
}

/// The writes that may have been in flight, by block.
#[derive(Clone, Debug, Default)]
pub struct Interruption {
    writes: Vec<Write>,
    blind: bool,
}

impl Interruption {
    /// The writes `writes` may have been in flight; `blind`: others too.
    pub fn new(mut writes: Vec<Write>, blind: bool) -> Interruption {
        writes.sort_unstable();
        writes.dedup();
        Interruption { writes, blind }
    }

    /// The interruptions a target's map and record tell of (`dir` holds them).
    pub fn of(dir: &std::path::Path, target: u32, map: &Loaded) -> (Interruption, Known) {
        let mut writes = map.interrupted.clone();
        let mut blind = map.info.blind.then(|| {
            "an earlier run was interrupted where its writes in flight could not be known"
                .to_string()
        });
        if !map.info.clean {
            match inflight::read(dir, target) {
                Found::Writes(w) => writes.extend(w),
                Found::OtherBoot => {
                    blind = Some(
                        "the interrupted run ran before the last boot (a power cut or crash): its record of writes in flight may not have reached the disk".into(),
                    )
                }
                Found::Missing => {
                    blind = Some(format!(
                        "the interrupted run left no record of its writes in flight ({})",
                        inflight::NAME
                    ))
                }
                Found::Unusable(why) => {
                    blind = Some(format!(
                        "its record of writes in flight ({}) is unusable: {why}",
                        inflight::NAME
                    ))
                }
            }
        }
        let i = Interruption::new(writes, blind.is_some());
        let known = match (&blind, i.writes.len()) {
            (Some(why), _) => Known::Blind { why: why.clone() },
            (None, 0) if map.info.clean => Known::Nothing,
            (None, count) => Known::Writes { count },
        };
        (i, known)
    }

    /// What the mark of SLOB runs in `dir` adds to `known` (and to `self`):
    /// after an interrupted SLOB run, any torn block whose sectors are all
    /// at or above its floor (every one, without a map) is its interruption.
    pub fn with_slob_mark(self, dir: &std::path::Path, known: Known) -> (Interruption, Known) {
        match crate::storage::slob_mark::read(dir).interrupted_why() {
            None => (self, known),
            Some(why) => (
                Interruption {
                    blind: true,
                    ..self
                },
                Known::Slob { why },
            ),
        }
    }

    /// The writes of global block `b` that may have been in flight.
    fn writes_of(&self, b: u64) -> &[Write] {
        let from = self.writes.partition_point(|w| w.block < b);
        let to = self.writes.partition_point(|w| w.block <= b);
        &self.writes[from..to]
    }

    /// Whether global block `b`, read back as `data` and judged `verdict`
    /// against `e`, is what an interrupted write left rather than damage.
    pub fn outcome(&self, b: u64, data: &[u8], e: &Expect, verdict: &Verdict) -> Option<Outcome> {
        if self.writes.is_empty() && !self.blind {
            return None;
        }
        match *verdict {
            Verdict::Bad {
                class: Class::Torn, ..
            } => ((self.blind || !self.writes_of(b).is_empty()) && at_or_above(data, e.floor))
                .then_some(Outcome::Torn),
            Verdict::Intact { copy: false, .. } => {
                let ws = self.writes_of(b);
                if ws.is_empty() {
                    return None;
                }
                let held = read_stamp(&data[..SECTOR]).ok()?.generation as u16;
                ws.iter()
                    .all(|w| newer(w.generation, held) == Ordering::Greater)
                    .then_some(Outcome::Stale)
            }
            _ => None,
        }
    }
}

/// Every sector a valid stamp at or above `floor` (or of a dedupe copy):
/// pieces of writes the map had not promised yet, none older.
fn at_or_above(data: &[u8], floor: Option<u16>) -> bool {
    data.chunks_exact(SECTOR).all(|s| match read_stamp(s) {
        Ok(st) => {
            st.is_pool() || floor.is_none_or(|f| newer(st.generation as u16, f) != Ordering::Less)
        }
        Err(_) => false,
    })
}

#[cfg(test)]
#[path = "interrupted_tests.rs"]
mod tests;
