//! What the blocks dbio writes hold (`--compress-pct`, `--dedupe-pct`),
//! as a run's settings; `storage::content` makes the blocks.

use serde::{Deserialize, Serialize};

/// The largest `--compress-pct`: the stamp and one random word stay.
pub const MAX_COMPRESS_PCT: u8 = 90;
/// A content setting out of its range.
#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error(
        "--compress-pct {0} is more than {MAX_COMPRESS_PCT}: every 512-byte sector keeps its 40-byte stamp and a random word; give 0 to {MAX_COMPRESS_PCT}"
    )]
    Compress(u8),
    #[error("--dedupe-pct {0} is more than 100; give 0 to 100")]
    Dedupe(u8),
}

/// The content settings of a run or a layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentSpec {
    /// Percent of every sector that is zeros (compresses away).
    pub compress_pct: u8,
    /// Percent of blocks written that are copies of a pool block.
    pub dedupe_pct: u8,
}

impl ContentSpec {
    pub fn is_default(&self) -> bool {
        *self == ContentSpec::default()
    }

    /// Checks the percentages; the error names the option and the range.
    pub fn check(&self) -> Result<(), ContentError> {
        if self.compress_pct > MAX_COMPRESS_PCT {
            return Err(ContentError::Compress(self.compress_pct));
        }
        if self.dedupe_pct > 100 {
            return Err(ContentError::Dedupe(self.dedupe_pct));
        }
        Ok(())
    }
}
