//! Where a server run's window sits in the checkpoint cycle: the window
//! option (`--window`: wherever the ramp ends, right after a checkpoint,
//! or over whole cycles), what the server said about its last checkpoint
//! when the window opened ([`Position`]), and the checkpoints that
//! completed while it was open ([`Completions`], from the last
//! checkpoint's LSN seen changing), followed by the sampler ([`Follower`]).
//!
//! WAL or redo bytes and full-page images per update depend on how much
//! has changed since the last checkpoint: two windows at different places
//! in the cycle measure different things, so every report says where its
//! window was.

use serde::{Deserialize, Serialize};

use crate::measure::clock::now_ns;
use crate::workload::Shared;

pub use crate::config::db::CycleWindow;

/// The server's last checkpoint as seen at one instant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Position {
    /// WAL or redo bytes written since the checkpoint's redo point (InnoDB:
    /// its checkpoint age).
    pub log_bytes_since: f64,
    /// Write transactions since the checkpoint began (PostgreSQL: the
    /// transaction ids assigned since; None where the server does not say).
    pub transactions_since: Option<f64>,
    /// Seconds since the checkpoint began (None where the server does not say).
    pub seconds_since: Option<f64>,
    /// The checkpoint's LSN: it changes when another checkpoint completes.
    pub checkpoint_lsn: f64,
    /// Checkpoints dbio's sampler had seen complete (that LSN moving) since
    /// its first read: dbio's count, not the server's.
    #[serde(default)]
    pub checkpoints_seen: u32,
}

/// Checkpoints seen completing: changes of the last checkpoint's LSN
/// between reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Completions {
    last: Option<f64>,
    /// Completions seen since the first read.
    pub seen: u32,
}

impl Completions {
    /// Notes the checkpoint LSN read now; true when it moved since the last read.
    pub fn note(&mut self, lsn: f64) -> bool {
        let moved = self.last.is_some_and(|l| l != lsn);
        self.last = Some(lsn);
        self.seen += u32::from(moved);
        moved
    }
}

/// The checkpoint cycle as a sampler follows it: the checkpoints seen
/// complete since its first read and, over whole cycles (`--window
/// cycles:N`), the window ended at the Nth.
pub(crate) struct Follower<'a> {
    pub window: CycleWindow,
    shared: &'a Shared,
    completions: Completions,
    /// The server lets dbio read its checkpoint (a role may not).
    readable: bool,
}

impl<'a> Follower<'a> {
    /// From the position read before the start, if one was.
    pub fn new(window: CycleWindow, shared: &'a Shared, before: Option<&Position>) -> Follower<'a> {
        let mut completions = Completions::default();
        if let Some(p) = before {
            completions.note(p.checkpoint_lsn);
        }
        Follower {
            window,
            shared,
            completions,
            readable: true,
        }
    }

    /// Notes a snapshot's position and records in it the completions seen
    /// so far (None: the server would not say, so stop asking).
    pub fn note(&mut self, position: Option<&mut Position>) {
        match position {
            Some(p) => {
                self.completions.note(p.checkpoint_lsn);
                p.checkpoints_seen = self.completions.seen;
            }
            None => self.readable = false,
        }
    }

    /// Whether reading the checkpoint's LSN is worth a query.
    pub fn readable(&self) -> bool {
        self.readable
    }

    /// Notes the checkpoint's LSN read between snapshots (None: it could
    /// not be read); ends the window once the whole cycles asked for are done.
    pub(crate) fn follow(&mut self, lsn: Option<f64>) {
        match lsn {
            Some(l) => {
                self.completions.note(l);
            }
            None => self.readable = false,
        }
        if self
            .window
            .cycles()
            .is_some_and(|n| self.completions.seen >= n)
        {
            self.shared.end_window(now_ns());
        }
    }

    /// Fails the run (a checkpoint dbio asked for was refused).
    pub fn fail(&self, why: String) {
        self.shared.fail(why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_option_parses_or_says_what_it_takes() {
        assert_eq!(CycleWindow::parse("any"), Ok(CycleWindow::Any));
        assert_eq!(
            CycleWindow::parse("after-checkpoint"),
            Ok(CycleWindow::AfterCheckpoint)
        );
        assert_eq!(CycleWindow::parse("cycles"), Ok(CycleWindow::Cycles(1)));
        assert_eq!(CycleWindow::parse("cycles:3"), Ok(CycleWindow::Cycles(3)));
        for bad in ["cycles:0", "cycles:x", "cycles:1001", "checkpoint", ""] {
            let e = CycleWindow::parse(bad).unwrap_err();
            assert!(e.contains("cycles:N"), "{bad}: {e}");
        }
        assert_eq!(CycleWindow::Cycles(2).words(), "cycles:2");
        assert_eq!(CycleWindow::Cycles(2).cycles(), Some(2));
        assert!(!CycleWindow::Any.starts_at_checkpoint());
    }

    #[test]
    fn completions_count_the_lsn_moving() {
        let mut c = Completions::default();
        assert!(!c.note(10.0));
        assert!(!c.note(10.0));
        assert!(c.note(20.0));
        assert!(!c.note(20.0));
        assert!(c.note(30.0));
        assert_eq!(c.seen, 2);
    }
}
