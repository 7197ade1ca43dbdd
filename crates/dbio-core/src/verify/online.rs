//! Checking blocks while a run reads them (`dbio run --verify`) and reading
//! back each acknowledged write (`--verify-after-write`, as fio's
//! `verify_backlog`). A read is judged with [`classify`] against what the
//! generation map says of its block when the read was issued; a read that
//! raced a write of the same block (one in flight when it was issued, or
//! begun before it completed) is not judged: it may rightly see the old
//! block, the new one or a mix. A block an interrupted run left torn or
//! stale (`interrupted`) is not bad. Nothing here allocates until a block is bad.

use super::classify::{Class, Expect, Verdict, classify};
use super::findings::found_text;
use super::interrupted::Interruption;
use crate::storage::block::Stamp;
use crate::storage::genmap::{GenMap, Settled};

pub use crate::config::verify::VerifyOpts;

/// A read to judge when it completes: what its block was when it was issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Look {
    /// Judge it: the floor (when a map knows it) and the map's state then.
    Judge(Option<Settled>),
    /// A write of the block was in flight: not judged.
    Skip,
}

/// Takes the look at global block `b` before a read of it is issued.
#[inline]
pub(crate) fn before_read(map: Option<&GenMap>, b: u64) -> Look {
    match map {
        None => Look::Judge(None),
        Some(m) => m.settled(b).map_or(Look::Skip, |s| Look::Judge(Some(s))),
    }
}

/// A bad block a run read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bad {
    pub class: Class,
    pub expect: Expect,
    pub sector: usize,
    pub found: Option<Stamp>,
}

/// What a completed read of global block `b` says: Ok(true) judged intact
/// (or what a write in flight at an interruption left), Ok(false) not
/// judged (it raced a write of its block), Err when bad.
#[inline]
pub(crate) fn judge(
    data: &[u8],
    (map, interrupted): (Option<&GenMap>, &Interruption),
    b: u64,
    look: Look,
    mut expect: Expect,
) -> Result<bool, Bad> {
    let settled = match look {
        Look::Skip => return Ok(false),
        Look::Judge(s) => s,
    };
    if let (Some(m), Some(s)) = (map, settled) {
        if !m.still(b, s) {
            return Ok(false);
        }
        expect.floor = Some(s.floor);
    }
    let verdict = classify(data, &expect);
    match verdict {
        Verdict::Intact { .. } => Ok(true),
        _ if interrupted.outcome(b, data, &expect, &verdict).is_some() => Ok(true),
        Verdict::Bad {
            class,
            sector,
            found,
        } => Err(Bad {
            class,
            expect,
            sector,
            found,
        }),
    }
}

impl Bad {
    /// The one-line error a run stops with.
    pub fn message(&self, file: &std::path::Path, after_write: bool) -> String {
        let e = &self.expect;
        let want = e
            .floor
            .map_or_else(|| "any".to_string(), |g| format!(">= {g}"));
        format!(
            "{} block at {} offset {}{}: sector {} expected target {:#010x} file {} offset {} generation {want}; found {}: {}",
            self.class.name(),
            file.display(),
            e.offset,
            if after_write {
                " read back after its write"
            } else {
                ""
            },
            self.sector,
            e.target,
            e.file,
            e.offset + (self.sector * crate::storage::block::SECTOR) as u64,
            found_text(self.found.as_ref()),
            self.class.meaning()
        )
    }
}

#[cfg(test)]
#[path = "online_tests.rs"]
mod tests;
