//! The settings of `--workload replay` and what one pass over its trace
//! found before the start (counts, extent, threads): plain values, which the
//! run document keeps as the run's configuration. Reading traces is
//! `trace`'s; replaying them is `workload::replay`'s.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How fast the trace is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Speed {
    /// Due times are the captured issue times divided by this (1 = as captured).
    Factor(f64),
    /// Each request as soon as its session has fewer requests in flight
    /// than its captured thread had when it issued it.
    Max,
}

impl fmt::Display for Speed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speed::Factor(x) => write!(f, "{x}x"),
            Speed::Max => f.write_str("max"),
        }
    }
}

/// How captured offsets land on a target smaller than the trace's extent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapMode {
    /// The offset modulo the target's size.
    Modulo,
    /// The offset times the target's size over the trace's extent.
    Scale,
}

impl MapMode {
    pub fn name(self) -> &'static str {
        match self {
            MapMode::Modulo => "modulo",
            MapMode::Scale => "scale",
        }
    }
}

/// Which session issues a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sessions {
    /// Sessions per captured thread, issuing that thread's requests: one
    /// (io_uring, its ring as deep as the thread's requests in flight), or
    /// as many as the thread had in flight (psync), taking them in turn.
    PerThread { per_thread_in_flight: bool },
    /// This many sessions, taking the requests in turn.
    Pool(u32),
    /// A timed replay's captured threads shared among this many sessions
    /// (at most one per CPU the replay may use), each thread's requests
    /// all in one session's ring: fewer threads to wake on a few CPUs.
    Shared(u32),
}

/// `--workload replay`'s settings, with what the pass over the trace found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayConfig {
    /// The trace: one file, or blktrace's per-CPU files (a stored run's
    /// trace is written out to a file first).
    pub trace: Vec<PathBuf>,
    /// What `--trace` named (a file, or `run N`).
    pub source: String,
    pub speed: Speed,
    pub map: Option<MapMode>,
    /// The sessions and the feed at real-time priority (`--rt`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rt: bool,
    pub sessions: Sessions,
    pub facts: TraceFacts,
    /// How each session's io_uring is set up (`--fixedbufs`, …; with
    /// `--engine io_uring`): the run document keeps it as `config.uring`,
    /// as for a raw run.
    #[serde(skip)]
    pub uring: Option<crate::config::uring::UringOpts>,
}

impl ReplayConfig {
    /// The number of sessions.
    pub fn session_count(&self) -> u32 {
        Self::count(&self.facts, self.sessions) as u32
    }

    /// The sessions `sessions` makes for a trace of `facts`.
    pub fn count(facts: &TraceFacts, sessions: Sessions) -> u64 {
        match sessions {
            Sessions::PerThread {
                per_thread_in_flight,
            } => facts
                .threads
                .iter()
                .map(|t| match per_thread_in_flight {
                    true => u64::from(t.max_in_flight.max(1)),
                    false => 1,
                })
                .sum::<u64>()
                .max(1),
            Sessions::Pool(n) => u64::from(n),
            Sessions::Shared(n) => u64::from(n.clamp(1, facts.threads.len().max(1) as u32)),
        }
    }
}

/// A trace's shape, as a replay plans it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceFacts {
    /// Its requests by operation, first and last issue, devices.
    pub summary: Summary,
    /// One byte past the furthest byte any request touches.
    pub extent_bytes: u64,
    /// The longest request, bytes.
    pub max_len_bytes: u32,
    /// The issuing threads, in order of their first request.
    pub threads: Vec<ThreadFacts>,
    /// The most requests one thread had in flight at once (1 when the
    /// trace has no completion times).
    pub max_in_flight: u32,
}

impl TraceFacts {
    pub fn requests(&self) -> u64 {
        self.summary.requests
    }

    /// True when replaying it writes (writes or discards).
    pub fn writes(&self) -> bool {
        self.summary.writes + self.summary.discards > 0
    }
}

/// One issuing thread of a trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadFacts {
    /// Its thread id (the process id where the trace has no thread; 0
    /// where it says neither).
    pub tid: u32,
    pub requests: u64,
    /// The most requests it had in flight at once.
    pub max_in_flight: u32,
}

/// Counts of a trace, by operation: what a capture or import says it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Requests with no completion in the trace.
    pub incomplete: u64,
    /// Writes with FUA or a preflush, and requests marked sync.
    pub fua: u64,
    pub sync: u64,
    pub devices: Vec<String>,
    pub first_issue_ns: u64,
    pub last_issue_ns: u64,
}
