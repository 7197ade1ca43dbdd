//! The model's own checkpoint cycle: each checkpoint as it begins (its redo
//! point: every change below it is written before it completes, and
//! `--flavor postgres`'s full-page images restart there) and as it completes
//! (the DB writers' marks past its redo point; `--flavor innodb`'s page
//! cleaner checkpoints begin and complete at once, [`Book::made`]) — a
//! [`Book`] — and the
//! thread that places the measurement window in that cycle (`--window`,
//! [`follow`]): it begins a checkpoint as the ramp ends where asked, reads
//! the model's position at the window's two edges, and ends the window once
//! the whole cycles asked for have completed.
//!
//! A position counts from the last checkpoint that *began*: where the
//! model's redo per update restarts. PostgreSQL's `pg_control_checkpoint()`
//! counts from the last one completed; the two agree right after an
//! immediate checkpoint (dbio's `CHECKPOINT`), and differ while a spread one
//! is in progress.

use std::sync::Mutex;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Duration;

use super::instance::Instance;
use crate::measure::clock::now_ns;
use crate::workload::db::cycle::{CycleWindow, Position};

/// Where a checkpoint began.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Begin {
    /// Its redo point (bytes of redo generated since the start).
    at: u64,
    /// When (monotonic ns; 0: the run's start).
    ns: u64,
    /// Commits made before it (every thread's, from the start).
    commits: u64,
}

/// The checkpoints begun and completed so far. The run starts right after a
/// checkpoint at redo position 0 (as a server started on a cleanly stopped
/// database; `FullPages` starts so too), not counted.
#[derive(Debug, Default)]
struct Ledger {
    begun: u32,
    /// Completed, not counting the one dbio asked for at the window's open
    /// nor those begun before it (it completes no sooner than they do): a
    /// server's `CHECKPOINT` completes them all before its window opens,
    /// and its report counts none of them.
    completed: u32,
    last: Begin,
    /// The redo point of the last completed checkpoint.
    last_done: u64,
    /// Begun, not yet completed: (number, redo point).
    pending: Vec<(u32, u64)>,
    /// The number of the checkpoint dbio began at the window's open (it
    /// and those before it are not counted complete).
    asked: Option<u32>,
}

impl Ledger {
    /// Completes every pending checkpoint whose redo point `done` has passed.
    fn complete_upto(&mut self, done: u64) {
        let (asked, mut completed, mut last_done) = (self.asked, self.completed, self.last_done);
        self.pending.retain(|&(n, at)| {
            if at > done {
                return true;
            }
            completed += u32::from(asked.is_none_or(|a| n > a));
            last_done = last_done.max(at);
            false
        });
        (self.completed, self.last_done) = (completed, last_done);
    }
}

/// The model's checkpoints, begun (by the log writer at a log switch or,
/// `--flavor innodb`, after a page cleaner's flush round, or by [`follow`]
/// at the window's open) and completed (as the DB writers
/// publish their marks): a lock taken once per checkpoint begun and per
/// checkpoint pass, never on a session's path.
#[derive(Debug, Default)]
pub(crate) struct Book {
    ledger: Mutex<Ledger>,
    /// Every checkpoint completed, dbio's own included.
    ends: AtomicU32,
}

/// The book as read at one instant.
#[derive(Clone, Copy, Debug)]
struct Reading {
    last: Begin,
    begun: u32,
    completed: u32,
    last_done: u64,
}

impl Book {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A checkpoint begins at redo point `at` (`asked`: dbio's, at the
    /// window's open). `done` is checkpointed already: read under the lock,
    /// so a pass that completes it meanwhile is never missed.
    pub fn began(&self, at: u64, ns: u64, commits: u64, done: &AtomicU64, asked: bool) {
        let mut l = self.ledger();
        l.begun += 1;
        let n = l.begun;
        if asked {
            l.asked = Some(n);
        }
        l.last = Begin { at, ns, commits };
        l.pending.push((n, at));
        let pending = l.pending.len();
        l.complete_upto(done.load(Acquire));
        // Below what is written already: complete at once.
        let ended = (pending - l.pending.len()) as u32;
        self.ends.fetch_add(ended, Release);
    }

    /// `--flavor innodb`: a checkpoint made at redo point `at` (the pool's
    /// oldest modification, so every change below it is written): begun
    /// and completed at once, as InnoDB's `log_checkpoint` is.
    pub fn made(&self, at: u64, ns: u64, commits: u64) {
        self.began(at, ns, commits, &AtomicU64::new(at), false);
    }

    /// The DB writers' marks have reached `done`.
    pub(crate) fn advanced(&self, done: u64) {
        let mut l = self.ledger();
        let pending = l.pending.len();
        l.complete_upto(done);
        let ended = (pending - l.pending.len()) as u32;
        self.ends.fetch_add(ended, Release);
    }

    /// Checkpoints completed so far, dbio's own included (no lock).
    pub(crate) fn ends(&self) -> u32 {
        self.ends.load(Acquire)
    }

    fn read(&self) -> Reading {
        let l = self.ledger();
        Reading {
            last: l.last,
            begun: l.begun,
            completed: l.completed,
            last_done: l.last_done,
        }
    }
}

/// One edge of the window: the model's position in its cycle and the
/// checkpoints begun until then.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Edge {
    pub position: Position,
    pub begun: u32,
}

/// Where the window sat in the model's checkpoint cycle.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CycleEdges {
    pub window: CycleWindow,
    pub open: Edge,
    pub close: Edge,
}

impl CycleEdges {
    /// Checkpoints begun inside the window (dbio's at the open not counted).
    pub fn begun_inside(&self) -> u32 {
        self.close.begun.saturating_sub(self.open.begun)
    }
}

/// The model's position at `now`: redo, commits and seconds since the last
/// checkpoint began; the last completed one's redo point as its "LSN".
fn edge(inst: &Instance<'_>, now: u64) -> Edge {
    let r = inst.ckpt.book.read();
    let alloc = inst.log.alloc.load(Acquire);
    let commits = super::live::commits(&inst.live);
    let since = match r.last.ns {
        0 => inst.run.start_ns.load(Relaxed),
        ns => ns,
    };
    Edge {
        position: Position {
            log_bytes_since: alloc.saturating_sub(r.last.at) as f64,
            transactions_since: Some(commits.saturating_sub(r.last.commits) as f64),
            seconds_since: Some(now.saturating_sub(since) as f64 / 1e9),
            checkpoint_lsn: r.last_done as f64,
            checkpoints_seen: r.completed,
        },
        begun: r.begun,
    }
}

/// How long the thread sleeps at most between looks: a window that a stop
/// ends (Ctrl-C, `--steady-state`, a failure, the sessions' last operation)
/// has its close read at most this late; `--time`'s end and a completed
/// checkpoint wake it at once.
const LOOK: Duration = Duration::from_millis(20);

/// The window's thread: waits for the ramp's end; there (`--window
/// after-checkpoint`, `cycles:N`) begins a checkpoint and reads the open
/// edge; then follows the checkpoints until the window ends — at `--time`,
/// a stop, the sessions' end, or (`cycles:N`) once N checkpoints have
/// completed, when it ends the window itself — and reads the close edge.
pub(crate) fn follow(inst: &Instance<'_>, window: CycleWindow) -> CycleEdges {
    let run = inst.run;
    let open_at = run.start_ns.load(Acquire) + run.ramp_ns;
    let over = || inst.stopping() || inst.sessions_done.load(Acquire);
    while now_ns() < open_at && !over() {
        let left = open_at.saturating_sub(now_ns());
        std::thread::sleep(Duration::from_nanos(left).min(LOOK));
    }
    if window.starts_at_checkpoint() && !over() {
        inst.begin_checkpoint(inst.log.alloc.load(Acquire), true);
    }
    let open = edge(inst, now_ns().max(open_at));
    loop {
        let seen = inst.ckpt.advanced.seq();
        let now = now_ns();
        let end = run.end_ns.load(Acquire);
        if over() || now >= end {
            break;
        }
        let completed = inst.ckpt.book.read().completed;
        if window
            .cycles()
            .is_some_and(|n| completed.saturating_sub(open.position.checkpoints_seen) >= n)
        {
            run.end_window(now);
            break;
        }
        let left = Duration::from_nanos(end.saturating_sub(now));
        inst.ckpt.advanced.wait_past(seen, left.min(LOOK));
    }
    let close_at = now_ns().min(run.end_ns.load(Acquire));
    CycleEdges {
        window,
        open,
        close: edge(inst, close_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_completes_when_the_marks_pass_its_redo_point() {
        let b = Book::default();
        let done = AtomicU64::new(0);
        b.began(1000, 5, 10, &done, false);
        b.began(3000, 9, 30, &done, false);
        let r = b.read();
        assert_eq!((r.begun, r.completed, r.last.at), (2, 0, 3000));
        b.advanced(999);
        assert_eq!(b.read().completed, 0);
        b.advanced(1000);
        assert_eq!((b.read().completed, b.read().last_done), (1, 1000));
        b.advanced(5000);
        assert_eq!((b.read().completed, b.read().last_done), (2, 3000));
        assert_eq!(b.ends(), 2);
        // Begun below what is written already: complete at once.
        done.store(6000, Relaxed);
        b.began(6000, 12, 40, &done, false);
        assert_eq!((b.read().begun, b.read().completed), (3, 3));
        assert_eq!(b.ends(), 3);
    }

    #[test]
    fn the_checkpoint_dbio_asked_for_and_those_before_it_are_not_counted_complete() {
        let b = Book::default();
        let done = AtomicU64::new(0);
        b.began(300, 1, 1, &done, false);
        b.began(500, 2, 2, &done, true);
        b.began(900, 3, 3, &done, false);
        b.advanced(400);
        assert_eq!(b.read().completed, 0, "begun before dbio's");
        b.advanced(1000);
        let r = b.read();
        assert_eq!((r.begun, r.completed, r.last_done), (3, 1, 900));
        assert_eq!(b.ends(), 3, "every one ended, dbio's included");
    }

    #[test]
    fn an_innodb_checkpoint_begins_and_completes_at_once_at_its_lsn() {
        let b = Book::default();
        b.made(4000, 7, 20);
        b.made(6000, 9, 30);
        let r = b.read();
        assert_eq!((r.begun, r.completed, r.last_done), (2, 2, 6000));
        assert_eq!((r.last.at, r.last.ns, r.last.commits), (6000, 9, 30));
        assert_eq!(b.ends(), 2);
    }
}
