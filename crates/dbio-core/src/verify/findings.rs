//! What `dbio verify` found: per class a count and the first few blocks
//! (file, offset, expected and found stamps), the blocks an interrupted run
//! left (not damage), the blocks missing from short or missing files, and
//! its terminal rendering.

use serde::Serialize;

use super::classify::{CLASSES, Class, Expect};
use super::interrupted::Outcome;
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
    /// Blocks a run was writing when it was interrupted (not damage).
    pub in_flight: InFlight,
    /// Blocks not there to read: files missing or shorter than the layout.
    pub missing: Missing,
}

/// What writes in flight at an interruption left (not damage).
#[derive(Clone, Debug, Default, Serialize)]
pub struct InFlight {
    /// Part the write in flight, part what the block held (not intact).
    pub torn: Tally,
    /// Whole, older than the write in flight: it did not land (counted intact).
    pub stale: Tally,
}

/// Blocks of the layout with nothing to read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Missing {
    pub blocks: u64,
    pub files: Vec<MissingFile>,
}

/// One file missing, or shorter than the layout.
#[derive(Clone, Debug, Serialize)]
pub struct MissingFile {
    pub file: u32,
    /// Its length now (None: no such file).
    pub bytes: Option<u64>,
    /// The offset of its first missing block, and how many are missing.
    pub from: u64,
    pub blocks: u64,
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
    pub(crate) fn intact(&mut self, newer: bool, copy: bool) {
        self.blocks += 1;
        self.intact += 1;
        self.newer_than_map += u64::from(newer);
        self.dedupe_copies += u64::from(copy);
    }

    pub fn bad(&mut self, class: Class, e: &Expect, sector: usize, found: Option<Stamp>) {
        self.blocks += 1;
        self.tally_mut(class).add(e, sector, found);
    }

    /// A block an interrupted write left: torn ones are not intact, stale
    /// ones are (whole, at or above the floor).
    pub fn interrupted(&mut self, o: Outcome, e: &Expect, sector: usize, found: Option<Stamp>) {
        self.blocks += 1;
        match o {
            Outcome::Torn => self.in_flight.torn.add(e, sector, found),
            Outcome::Stale => {
                self.intact += 1;
                self.in_flight.stale.add(e, sector, found);
            }
        }
    }

    /// Blocks of file `file` with nothing to read.
    pub fn missing(&mut self, m: MissingFile) {
        self.missing.blocks += m.blocks;
        self.missing.files.push(m);
    }

    /// Adds what another checker found; the first blocks stay the first by place.
    pub fn merge(&mut self, other: Findings) {
        self.blocks += other.blocks;
        self.intact += other.intact;
        self.newer_than_map += other.newer_than_map;
        self.dedupe_copies += other.dedupe_copies;
        for c in CLASSES {
            self.tally_mut(c).merge(other.tally(c).clone());
        }
        self.in_flight.torn.merge(other.in_flight.torn);
        self.in_flight.stale.merge(other.in_flight.stale);
        self.missing.blocks += other.missing.blocks;
        self.missing.files.extend(other.missing.files);
    }

    /// Damaged blocks of every class.
    pub fn damaged(&self) -> u64 {
        CLASSES.iter().map(|&c| self.tally(c).count).sum()
    }

    /// Whether anything is wrong: a damaged block or a missing one.
    pub fn failed(&self) -> bool {
        self.damaged() + self.missing.blocks > 0
    }
}

impl Tally {
    fn add(&mut self, e: &Expect, sector: usize, found: Option<Stamp>) {
        self.count += 1;
        if self.first.len() < EXAMPLES {
            self.first.push(Example {
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

    fn merge(&mut self, theirs: Tally) {
        self.count += theirs.count;
        self.first.extend(theirs.first);
        self.first.sort_by_key(|e| (e.file, e.offset));
        self.first.truncate(EXAMPLES);
    }
}

/// The findings as the terminal shows them; `files` names file numbers,
/// `torn_text` says what a torn block an interruption left is.
pub fn render(f: &Findings, files: &[std::path::PathBuf], torn_text: &str) -> String {
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
    let torn = f.in_flight.torn.count;
    let in_flight = if torn > 0 {
        format!(", {torn} torn by an interrupted run")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "blocks   {} read, {} intact{copies}{in_flight}, {} damaged",
        f.blocks,
        f.intact,
        f.damaged()
    );
    for c in CLASSES {
        let t = f.tally(c);
        let _ = writeln!(out, "{:<12} {:>10}  {}", c.name(), t.count, c.meaning());
        examples(&mut out, t, files);
    }
    for (t, what) in [
        (&f.in_flight.torn, torn_text),
        (
            &f.in_flight.stale,
            "stale: a write in flight when a run was interrupted did not land (not damage)",
        ),
    ] {
        if t.count > 0 {
            let _ = writeln!(out, "{:<12} {:>10}  {what}", "in flight", t.count);
            examples(&mut out, t, files);
        }
    }
    if f.missing.blocks > 0 {
        let _ = writeln!(
            out,
            "{:<12} {:>10}  blocks not there to read: a file missing or shorter than the layout",
            "missing", f.missing.blocks
        );
        for m in &f.missing.files {
            let _ = writeln!(out, "    {}", missing_text(m, files));
        }
    }
    out
}

/// A tally's first blocks, a line each.
fn examples(out: &mut String, t: &Tally, files: &[std::path::PathBuf]) {
    use std::fmt::Write;
    for e in &t.first {
        let want = e
            .expected
            .min_generation
            .map_or_else(|| "any".to_string(), |g| format!(">= {g}"));
        let _ = writeln!(
            out,
            "    {} offset {} sector {}: expected target {:#010x} file {} offset {} generation {want}; found {}",
            file_name(e.file, files),
            e.offset,
            e.sector,
            e.expected.target,
            e.expected.file,
            e.expected.offset,
            found_text(e.found.as_ref())
        );
    }
}

fn file_name(file: u32, files: &[std::path::PathBuf]) -> String {
    files
        .get(file as usize)
        .map_or_else(|| format!("file {file}"), |p| crate::terminal::path(p))
}

/// What is missing of one file, in a line.
pub fn missing_text(m: &MissingFile, files: &[std::path::PathBuf]) -> String {
    let name = file_name(m.file, files);
    match m.bytes {
        None => format!("{name} is missing: its {} blocks", m.blocks),
        Some(b) => format!(
            "{name} holds {b} bytes: {} blocks from offset {} on are missing",
            m.blocks, m.from
        ),
    }
}

/// What a damaged sector's stamp says, in the words of the report.
pub(crate) fn found_text(found: Option<&Stamp>) -> String {
    match found {
        Some(s) => format!(
            "target {:#010x} file {} offset {} generation {} seed {:#010x}",
            s.target, s.file, s.offset, s.generation, s.seed
        ),
        None => "no valid stamp".into(),
    }
}
