//! What one block read back is: intact, or which kind of corruption, from
//! its sectors' stamps (`target::block`) and what the target's generation
//! map expects (`target::genmap`). The classes, most fundamental first (a
//! block is named by the first that applies):
//!
//! * **zeroed** — a sector (or the whole block) reads as zeros: the storage
//!   returned a block it never wrote (Oracle's ORA-1578 "corrupt block").
//! * **checksum** — a sector whose checksum fails or that carries no stamp:
//!   bit rot, or foreign data (ORA-1578 with a bad checksum).
//! * **misdirected** — valid stamps naming another target, file or offset:
//!   the write landed in the wrong place (or this place got another's block).
//! * **torn** — valid stamps of the right place but from different writes
//!   (generations or runs) within one block: a write only partly applied.
//! * **lost** — a whole, valid block older than the generation the map says
//!   was acknowledged and made durable: a lost write (ORA-00752, ORA-600 [3020]).
//!
//! A dedupe copy (`--dedupe-pct`, `target::content`) is intact when it is
//! a whole, valid pool block of this target; its place and generation
//! cannot be checked.
//!
//! A block newer than the map is fine: written after the map's last sync
//! point, or by writes in flight at a crash (nothing promised them).

use serde::Serialize;

use crate::storage::block::{SECTOR, SectorError, Stamp, read_stamp_checked};
use crate::storage::content::POOL_BLOCKS;
use crate::storage::crc::{BATCH, sector_crcs};
use crate::storage::genmap::newer;

/// The kinds of corruption, in the order they are looked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    Zeroed,
    Checksum,
    Misdirected,
    Torn,
    Lost,
}

pub const CLASSES: [Class; 5] = [
    Class::Zeroed,
    Class::Checksum,
    Class::Misdirected,
    Class::Torn,
    Class::Lost,
];

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Zeroed => "zeroed",
            Class::Checksum => "checksum",
            Class::Misdirected => "misdirected",
            Class::Torn => "torn",
            Class::Lost => "lost",
        }
    }

    /// What the class means, in a line.
    pub fn meaning(self) -> &'static str {
        match self {
            Class::Zeroed => "sectors read back as zeros (ORA-1578-like)",
            Class::Checksum => {
                "a sector fails its checksum or holds no stamp: bit rot or foreign data (ORA-1578-like)"
            }
            Class::Misdirected => "stamps name another target, file or offset: a misdirected write",
            Class::Torn => "sectors of different writes in one block: a torn write",
            Class::Lost => {
                "older than the acknowledged, synced generation: a lost write (ORA-00752, ORA-600 [3020]-like)"
            }
        }
    }
}

/// What block `block` of file `file` must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub target: u32,
    pub file: u32,
    /// Byte offset of the block in its file.
    pub offset: u64,
    pub size: u32,
    /// The oldest generation the map allows (none: any generation will do).
    pub floor: Option<u16>,
}

/// How a block differs from what was expected, if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Intact {
        /// Newer than the map's floor (written after its last sync point).
        newer: bool,
        /// A dedupe copy (`--dedupe-pct`): an intact pool block of the
        /// target, whose place and generation cannot be checked.
        copy: bool,
    },
    Bad {
        class: Class,
        /// The first sector that shows it.
        sector: usize,
        /// Its stamp, when it has a valid one.
        found: Option<Stamp>,
    },
}

/// Classifies one block read back (`block.len()` = `e.size`).
pub fn classify(block: &[u8], e: &Expect) -> Verdict {
    let bad = |class, sector, found| Verdict::Bad {
        class,
        sector,
        found,
    };
    // One pass; the most fundamental class seen wins (zeros end it at once).
    let mut worst: Option<(Class, usize, Option<Stamp>)> = None;
    let mut note = |class: Class, i: usize, found: Option<Stamp>| {
        if worst.is_none_or(|(c, _, _)| (class as u8) < (c as u8)) {
            worst = Some((class, i, found));
        }
    };
    let mut first: Option<(Stamp, u64)> = None;
    let mut crcs = [0u32; BATCH];
    for (i, s) in block.chunks_exact(SECTOR).enumerate() {
        if i % BATCH == 0 {
            let end = block.len().min((i + BATCH) * SECTOR);
            sector_crcs(&block[i * SECTOR..end], &mut crcs);
        }
        let st = match read_stamp_checked(s, crcs[i % BATCH]) {
            Ok(st) => st,
            Err(SectorError::Zero) => return bad(Class::Zeroed, i, None),
            Err(_) => {
                note(Class::Checksum, i, None);
                continue;
            }
        };
        let here = (i * SECTOR) as u64;
        let placed = if st.is_pool() {
            // A dedupe copy: sector i of a pool block of this target.
            st.offset % u64::from(e.size) == here
                && st.offset / u64::from(e.size) < POOL_BLOCKS as u64
        } else {
            st.file == e.file && st.offset == e.offset + here
        };
        if st.target != e.target || st.size != e.size || !placed {
            note(Class::Misdirected, i, Some(st));
            continue;
        }
        // Which write a sector is of: its block's place, generation and run.
        let write = |s: &Stamp, at: u64| (s.file, s.offset - at, s.generation, s.seed);
        match first {
            None => first = Some((st, here)),
            Some((f, at)) if write(&st, here) != write(&f, at) => {
                note(Class::Torn, i, Some(st));
            }
            Some(_) => {}
        }
    }
    if let Some((class, i, found)) = worst {
        return bad(class, i, found);
    }
    let (first, _) = first.expect("a block has at least one sector");
    if first.is_pool() {
        // A copy carries no generation of its own: nothing to hold it to.
        return Verdict::Intact {
            newer: false,
            copy: true,
        };
    }
    let intact = |newer| Verdict::Intact { newer, copy: false };
    match e.floor {
        None => intact(false),
        Some(floor) => match newer(first.generation as u16, floor) {
            std::cmp::Ordering::Less => bad(Class::Lost, 0, Some(first)),
            std::cmp::Ordering::Equal => intact(false),
            std::cmp::Ordering::Greater => intact(true),
        },
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
pub(crate) mod tests;
