//! What is asked of the storage, and the seam every workload plugs into.
//!
//! A [`Workload`] is a set of threads: *sessions* (the run ends when every
//! session has ended) and *background* threads (a database's writers, which
//! run until the workload stops them once the sessions are done). The
//! harness (`crate::harness`) starts them all together behind one barrier,
//! runs the control loop, joins them and merges what they measured; a
//! workload only says what each thread does. This is the shape of fio's
//! `thread_main` driving any `ioengine_ops`, one level up: `raw` (fio
//! patterns) and `slob` (the database model) are workloads; a workload whose
//! sessions are connections to a real database server fits the same trait
//! (its physical I/O is the server's; its own counters go in its `Part`).

pub mod db;
pub mod dist;
pub mod live;
pub mod mysql;
pub mod pg;
pub mod raw;
pub mod replay;
pub mod shared;
pub mod slob;

use std::path::PathBuf;

use crate::measure::stats::SessionStats;
use crate::samplers::series::SessionSeries;

pub use shared::{Shared, Status};

/// Most sessions a run starts (SLOB's limit: schemas x THREADS_PER_SCHEMA).
pub const MAX_SESSIONS: u32 = 4096;

/// Why a workload could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Its files could not be opened or laid out (the run fails, exit 1).
    #[error(transparent)]
    Target(#[from] crate::storage::TargetError),
    /// Its settings do not fit the target (a usage error, exit 2).
    #[error("{0}")]
    Invalid(String),
    /// A thread's engine could not be set up (io_uring refused, ...).
    #[error("{who}: cannot set up {engine}: {source}")]
    Engine {
        who: String,
        engine: &'static str,
        source: std::io::Error,
    },
}

/// The threads of a run.
#[derive(Clone, Debug, Default)]
pub struct Threads {
    /// Sessions: threads `0..sessions`, named `dbio-session-N`.
    pub sessions: u32,
    /// Background threads after them, by name (`dbio-dbwr-0`, `dbio-lgwr`).
    pub background: Vec<String>,
}

impl Threads {
    pub fn total(&self) -> u32 {
        self.sessions + self.background.len() as u32
    }

    /// The name of thread `t`.
    pub fn name(&self, t: u32) -> String {
        match t.checked_sub(self.sessions) {
            None => format!("dbio-session-{t}"),
            Some(b) => self.background[b as usize].clone(),
        }
    }
}

/// What a thread hands back when it ends.
#[derive(Default)]
pub struct ThreadEnd<P> {
    /// Its I/O statistics over the measurement window.
    pub stats: SessionStats,
    /// Its last completion (or the end of its last operation), ns after the start.
    pub last_ns: u64,
    /// Requests a session issued (the run's `issued`).
    pub issued: u64,
    /// What else the workload counts (per-thread database counters, ...).
    pub part: P,
}

/// A workload: the threads of a run and what each does. Shared by every
/// thread (`Sync`); each thread's own state is its [`Workload::Thread`],
/// built on that thread.
pub trait Workload: Sync {
    /// A thread's own state (its engine, buffers), built before the start.
    type Thread;
    /// What a thread counts besides plain I/O statistics.
    type Part: Send + Default;

    /// The threads to start.
    fn threads(&self) -> Threads;

    /// Paths whose storage the run watches (devices and filesystems under
    /// them). The first is the target: its storage chain is the run's.
    fn storage(&self) -> Vec<PathBuf>;

    /// Builds thread `t`'s state on that thread, before the start barrier.
    /// An error fails the run (the message names what could not be set up).
    fn prepare(&self, t: u32) -> Result<Self::Thread, SetupError>;

    /// Runs thread `t` from the start until its work is done, the window
    /// ends or the run stops, recording its per-second counters in `series`.
    fn run(&self, t: u32, state: Self::Thread, series: &SessionSeries) -> ThreadEnd<Self::Part>;

    /// Every session has ended: let the background threads drain and stop.
    fn sessions_ended(&self) {}

    /// What a database workload has counted so far, for a live view: asked
    /// by the control thread once a second while the run is watched (a
    /// sampler thread may publish it in [`Shared`] instead).
    fn live(&self) -> Option<live::LiveDb> {
        None
    }
}
