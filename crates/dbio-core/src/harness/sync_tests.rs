//! The start seam other processes use (`StartSync`, MPI ranks): asked once,
//! after every thread is ready and before the clock starts; its error ends
//! the run everywhere before any I/O, with that error.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};

use super::tests::{config, raw, target};
use super::{NotStarted, Options, StartSync, Status, run_synced};
use crate::config::RunLength;
use crate::measure::stats::Kind;
use crate::workload::Shared;
use crate::workload::raw::Raw;

/// A stand-in for the other ranks: what it was asked, and its answer.
struct Others<'a> {
    shared: &'a Shared,
    answer: Result<(), NotStarted>,
    /// (local error, clock started) of every call.
    calls: Mutex<Vec<(Option<String>, bool)>>,
}

impl StartSync for Others<'_> {
    fn start(&self, local_error: Option<String>) -> Result<(), NotStarted> {
        let started = self.shared.start_ns.load(SeqCst) != 0;
        self.calls.lock().unwrap().push((local_error, started));
        self.answer.clone()
    }
}

fn run_with(answer: Result<(), NotStarted>) -> (super::RunResult, Vec<(Option<String>, bool)>) {
    let (_d, t) = target();
    let cfg = config(&t, 4, RunLength::Ops { ops: 400 });
    let shared = Shared::new(0.0);
    let work = Raw::new(&cfg, raw(&cfg), &t, &shared).unwrap();
    let others = Others {
        shared: &shared,
        answer,
        calls: Mutex::new(Vec::new()),
    };
    let opts = Options {
        time_s: None,
        interval_s: 1.0,
        interrupt: &AtomicBool::new(false),
        status: None,
        observer: None,
        steady: None,
        window: None,
    };
    let r = run_synced(&work, &shared, opts, Some(&others)).result;
    (r, others.calls.into_inner().unwrap())
}

#[test]
fn the_others_are_asked_once_before_the_clock_starts_and_the_run_goes_on() {
    let (r, calls) = run_with(Ok(()));
    assert_eq!(calls, vec![(None, false)]);
    assert_eq!(r.status, Status::Completed);
    assert_eq!(r.issued, 400);
}

#[test]
fn an_error_from_the_others_ends_the_run_before_any_io_with_that_error() {
    let (r, calls) = run_with(Err(NotStarted(
        "rank 2 (db3): --target /x: no space".into(),
    )));
    assert_eq!(calls.len(), 1);
    assert_eq!(r.status, Status::Failed);
    assert_eq!(
        r.error.as_deref(),
        Some("rank 2 (db3): --target /x: no space")
    );
    let ops = |k: Kind| r.stats.ops[k as usize].count;
    assert_eq!((ops(Kind::Read), ops(Kind::Write), r.issued), (0, 0, 0));
    assert_eq!(r.measured_s, 0.0);
}
