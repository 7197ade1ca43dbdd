//! What a run checks as it goes (`--verify`, `--verify-after-write`,
//! `--verify-sync-interval`); `verify::online` does the checking.

/// What a run checks (`--verify`, `--verify-after-write`), and how often a
/// writing run makes its lost-write map durable (`--verify-sync-interval`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerifyOpts {
    /// Every read the workload makes is checked.
    pub reads: bool,
    /// Every acknowledged write is read back and checked.
    pub after_write: bool,
    /// Milliseconds between the lost-write map's sync points while a raw
    /// run writes (0: only at its end).
    pub map_sync_ms: u64,
}

impl VerifyOpts {
    pub fn any(&self) -> bool {
        self.reads || self.after_write
    }

    /// Nothing checked and the map synced only at the end (the report
    /// leaves the options out).
    pub(crate) fn is_off(&self) -> bool {
        !self.any() && self.map_sync_ms == 0
    }

    /// The options as given on the command line, for error messages.
    pub fn flag(&self) -> &'static str {
        if self.reads {
            "--verify"
        } else {
            "--verify-after-write"
        }
    }
}
