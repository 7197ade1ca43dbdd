//! What `dbio verify` found: per class a count and the first few blocks
//! (file, offset, expected and found stamps), and its terminal rendering.

use serde::Serialize;

use super::classify::{CLASSES, Class, Expect};
use crate::storage::block::{SECTOR, Stamp};

/// Blocks shown per class.
pub const EXAMPLES: usize = 5;

/// One damaged block.
#[derive(Clone, Debug, Serialize)]
pub struct Example {
    pub file: u32,
    /// Byte offset of the block in its file.
    pub offset: u64,
    /// The first sector showing the damage.
    pub sector: usize,
    pub expected: Expected,
    /// That sector's stamp, when it has a valid one.
    pub found: Option<Stamp>,
}

/// What the sector should carry (the generation: at least this).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Expected {
    pub target: u32,
    pub file: u32,
    pub offset: u64,
    pub min_generation: Option<u16>,
}

/// One class's tally.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    pub count: u64,
    pub first: Vec<Example>,
}

/// Everything found, block by block.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Findings {
    pub blocks: u64,
    pub intact: u64,
    /// Intact blocks newer than the map (written after its last sync point).
    pub newer_than_map: u64,
    /// Intact blocks that are dedupe copies (`--dedupe-pct`): pool blocks,
    /// whose place and generation cannot be checked.
    pub dedupe_copies: u64,
    pub zeroed: Tally,
    pub checksum: Tally,
    pub misdirected: Tally,
    pub torn: Tally,
    pub lost: Tally,
}

impl Findings {
    pub fn tally(&self, c: Class) -> &Tally {
        match c {
            Class::Zeroed => &self.zeroed,
            Class::Checksum => &self.checksum,
            Class::Misdirected => &self.misdirected,
            Class::Torn => &self.torn,
            Class::Lost => &self.lost,
        }
    }

    fn tally_mut(&mut self, c: Class) -> &mut Tally {
        match c {
            Class::Zeroed => &mut self.zeroed,
            Class::Checksum => &mut self.checksum,
            Class::Misdirected => &mut self.misdirected,
            Class::Torn => &mut self.torn,
            Class::Lost => &mut self.lost,
        }
    }

    #[inline]
    pub fn intact(&mut self, newer: bool, copy: bool) {
        self.blocks += 1;
        self.intact += 1;
        self.newer_than_map += u64::from(newer);
        self.dedupe_copies += u64::from(copy);
    }

    pub fn bad(&mut self, class: Class, e: &Expect, sector: usize, found: Option<Stamp>) {
        self.blocks += 1;
        let t = self.tally_mut(class);
        t.count += 1;
        if t.first.len() < EXAMPLES {
            t.first.push(Example {
                file: e.file,
                offset: e.offset,
                sector,
                expected: Expected {
                    target: e.target,
                    file: e.file,
                    offset: e.offset + (sector * SECTOR) as u64,
                    min_generation: e.floor,
                },
                found,
            });
        }
    }

    /// Adds what another checker found; the first blocks stay the first by place.
    pub fn merge(&mut self, other: Findings) {
        self.blocks += other.blocks;
        self.intact += other.intact;
        self.newer_than_map += other.newer_than_map;
        self.dedupe_copies += other.dedupe_copies;
        for c in CLASSES {
            let theirs = other.tally(c).clone();
            let t = self.tally_mut(c);
            t.count += theirs.count;
            t.first.extend(theirs.first);
            t.first.sort_by_key(|e| (e.file, e.offset));
            t.first.truncate(EXAMPLES);
        }
    }

    /// Damaged blocks of every class.
    pub fn damaged(&self) -> u64 {
        CLASSES.iter().map(|&c| self.tally(c).count).sum()
    }
}

/// The findings as the terminal shows them; `files` names file numbers.
pub fn render(f: &Findings, files: &[std::path::PathBuf]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let copies = if f.dedupe_copies > 0 {
        format!(
            " ({} dedupe copies: place and generation not checkable)",
            f.dedupe_copies
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "blocks   {} read, {} intact{copies}, {} damaged",
        f.blocks,
        f.intact,
        f.damaged()
    );
    for c in CLASSES {
        let t = f.tally(c);
        let _ = writeln!(out, "{:<12} {:>10}  {}", c.name(), t.count, c.meaning());
        for e in &t.first {
            let name = files
                .get(e.file as usize)
                .map_or_else(|| format!("file {}", e.file), |p| p.display().to_string());
            let want = e
                .expected
                .min_generation
                .map_or_else(|| "any".to_string(), |g| format!(">= {g}"));
            let _ = writeln!(
                out,
                "    {name} offset {} sector {}: expected target {:#010x} file {} offset {} generation {want}; found {}",
                e.offset,
                e.sector,
                e.expected.target,
                e.expected.file,
                e.expected.offset,
                found_text(e.found.as_ref())
            );
        }
    }
    out
}

/// What a damaged sector's stamp says, in the words of the report.
pub fn found_text(found: Option<&Stamp>) -> String {
    match found {
        Some(s) => format!(
            "target {:#010x} file {} offset {} generation {} seed {:#010x}",
            s.target, s.file, s.offset, s.generation, s.seed
        ),
        None => "no valid stamp".into(),
    }
}
