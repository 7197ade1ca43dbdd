//! Where a run's window sat in the checkpoint cycle (`checkpoint_cycle` in
//! a pg, mysql or slob section of the `--json` document): WAL or redo
//! since the last checkpoint when the window opened (and when it closed),
//! the checkpoints begun and completed inside it, and the share of first
//! changes since a checkpoint (full-page images per updated row). Two
//! windows at different places in the cycle log different amounts per
//! update; this says which place each run measured.

use serde::{Deserialize, Serialize};

use crate::workload::db::cycle::{CycleWindow, Position};
use crate::workload::slob::cycle::CycleEdges;
use crate::workload::slob::flavor::Flavor;
use crate::workload::slob::instance::Counters;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckpointCycle {
    /// `--window`: any, after-checkpoint or cycles:N.
    pub window: String,
    /// Since the last checkpoint began, when the window opened: WAL/redo
    /// bytes (InnoDB: the checkpoint age), write transactions (updates),
    /// seconds. None where the server would not say.
    pub open_log_bytes_since: Option<f64>,
    pub open_transactions_since: Option<f64>,
    pub open_seconds_since: Option<f64>,
    /// The same when the window closed.
    pub close_log_bytes_since: Option<f64>,
    /// Checkpoints begun inside the window (the server's count; None where
    /// it keeps none).
    pub checkpoints_begun: Option<f64>,
    /// Checkpoints completed inside the window (the last checkpoint seen
    /// changing, sampled 10 times a second).
    pub checkpoints_completed: Option<f64>,
    /// First changes of a page since a checkpoint per changed page:
    /// full-page images per updated row (one row per page); None where
    /// the server logs none or nothing was updated.
    pub first_change_share: Option<f64>,
}

impl CheckpointCycle {
    /// From the server's positions at the window's two edges.
    pub fn between(
        window: CycleWindow,
        open: Option<&Position>,
        close: Option<&Position>,
        checkpoints_begun: Option<f64>,
    ) -> CheckpointCycle {
        let completed = match (open, close) {
            (Some(a), Some(b)) => Some(f64::from(
                b.checkpoints_seen.saturating_sub(a.checkpoints_seen),
            )),
            _ => None,
        };
        CheckpointCycle {
            window: window.words(),
            open_log_bytes_since: open.map(|p| p.log_bytes_since),
            open_transactions_since: open.and_then(|p| p.transactions_since),
            open_seconds_since: open.and_then(|p| p.seconds_since),
            close_log_bytes_since: close.map(|p| p.log_bytes_since),
            checkpoints_begun,
            checkpoints_completed: completed,
            first_change_share: None,
        }
    }

    /// The model's own cycle (`workload::slob::cycle`) from its window's
    /// edges, with the window's counters: full-page images per changed
    /// block for `--flavor postgres` (the flavor that logs them).
    pub fn of_model(edges: &CycleEdges, window: &Counters, flavor: Flavor) -> CheckpointCycle {
        let c = CheckpointCycle::between(
            edges.window,
            Some(&edges.open.position),
            Some(&edges.close.position),
            Some(f64::from(edges.begun_inside())),
        );
        match flavor {
            Flavor::Postgres => {
                c.with_first_changes(window.full_page_images as f64, window.block_changes as f64)
            }
            Flavor::Oracle | Flavor::Innodb => c,
        }
    }

    /// What the model's log is called under `flavor` in its reports.
    pub fn model_log(flavor: Flavor) -> &'static str {
        match flavor {
            Flavor::Postgres => "WAL",
            Flavor::Oracle | Flavor::Innodb => "redo",
        }
    }

    /// With the share of first changes: `images` per `changed` pages.
    pub fn with_first_changes(mut self, images: f64, changed: f64) -> CheckpointCycle {
        self.first_change_share = (changed > 0.0).then(|| images / changed);
        self
    }

    /// The whole cycles the window held, when it was asked to hold some
    /// (`cycles:N`): fewer than N when `--time` ended it first.
    pub fn cycles_short(&self, window: CycleWindow) -> Option<(u32, f64)> {
        let n = window.cycles()?;
        let done = self.checkpoints_completed.unwrap_or(0.0);
        (done < f64::from(n)).then_some((n, done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completed_checkpoints_are_those_seen_between_the_edges() {
        let p = |bytes: f64, seen: u32| Position {
            log_bytes_since: bytes,
            transactions_since: Some(7.0),
            seconds_since: Some(1.5),
            checkpoint_lsn: 1.0,
            checkpoints_seen: seen,
        };
        let c = CheckpointCycle::between(
            CycleWindow::Cycles(2),
            Some(&p(100.0, 0)),
            Some(&p(900.0, 1)),
            Some(2.0),
        )
        .with_first_changes(30.0, 60.0);
        assert_eq!(c.window, "cycles:2");
        assert_eq!(c.open_log_bytes_since, Some(100.0));
        assert_eq!(c.close_log_bytes_since, Some(900.0));
        assert_eq!(c.open_transactions_since, Some(7.0));
        assert_eq!(c.checkpoints_completed, Some(1.0));
        assert_eq!(c.first_change_share, Some(0.5));
        assert_eq!(c.cycles_short(CycleWindow::Cycles(2)), Some((2, 1.0)));
        let none = CheckpointCycle::between(CycleWindow::Any, None, None, None);
        assert_eq!(none.checkpoints_completed, None);
        assert_eq!(none.with_first_changes(1.0, 0.0).first_change_share, None);
    }
}
