//! `--workload replay`: issues a captured or imported block trace against
//! a target — offsets mapped onto it, each request at its captured issue
//! time (open loop: a late request never delays the next one's due time),
//! or as fast as the captured concurrency allows (`--speed max`). A feed
//! thread reads the trace as a stream and hands each session its requests
//! in batches (`feed`); each session waits for a request's due time,
//! issues it with its engine and times it (`session`); what both count is
//! set beside the capture in the faithfulness report (`faith`). `facts`
//! is the one pass over the trace before the start; `priority` how the
//! sessions and the feed ask the scheduler to run them on time; `shared`
//! how a timed replay's captured threads share a few sessions.

pub mod facts;
pub mod faith;
pub(crate) mod feed;
pub(crate) mod priority;
pub mod session;
pub(crate) mod shared;

use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};

use super::{SetupError, Shared, ThreadEnd, Threads, Workload};
pub use crate::config::replay::{MapMode, ReplayConfig, Sessions, Speed, TraceFacts};
use crate::config::{EngineKind, RunConfig};
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, SyncAfterWrite};
use crate::measure::stats::SessionStats;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::storage::genmap_file;
use crate::storage::{OpenFiles, Target, TargetKind};
use faith::Part;
use feed::{Batch, Feed, Mapper};

/// A replay over a prepared target.
pub struct Replay<'a> {
    cfg: &'a RunConfig,
    rc: &'a ReplayConfig,
    shared: &'a Shared,
    target: &'a Target,
    _files: OpenFiles,
    fds: Vec<RawFd>,
    mapper: Mapper,
    sessions: u32,
    /// Each session's end of its batch channel, taken by its thread.
    inboxes: Mutex<Vec<Option<Receiver<Batch>>>>,
    /// The feed's ends: the sessions' channels and the spare batches.
    outboxes: Mutex<Option<Outboxes>>,
    /// Where sessions hand back their emptied batches.
    spare: Sender<Batch>,
}

/// The feed's ends of the channels: each session's, and the spare batches'.
type Outboxes = (Vec<SyncSender<Batch>>, Receiver<Batch>);

/// A replay thread's state before the start.
pub enum Prepared {
    Session(Box<session::Session>),
    Feed(Box<Feed>),
}

/// Batches waiting per session (per captured thread it issues): the feed
/// reads at most this far ahead of it (2,048 requests: a few KiB a session, and at the 39,000 requests/s
/// of a SLOB capture on a quiet 2-CPU host, tenths of a second of slack
/// for a feed that waits for a CPU; 4 batches left sessions waiting for
/// the feed, docs/replay.md).
pub(crate) const BATCHES_AHEAD: usize = 16;

impl<'a> Replay<'a> {
    /// Opens the target and checks that the trace fits it (or is mapped).
    pub fn new(
        cfg: &'a RunConfig,
        rc: &'a ReplayConfig,
        target: &'a Target,
        shared: &'a Shared,
    ) -> Result<Self, SetupError> {
        let mapper = Mapper::new(rc, target).map_err(SetupError::Invalid)?;
        let files = target.open(cfg.io_mode, rc.facts.writes())?;
        if rc.facts.writes() && target.kind == TargetKind::Directory {
            // Replayed writes carry no stamps: the map no longer applies.
            genmap_file::retire(
                &target.path,
                "a replay wrote these blocks with the trace's offsets and no stamps",
            )
            .map_err(|e| SetupError::Invalid(e.to_string()))?;
        }
        let sessions = rc.session_count();
        let (mut txs, mut rxs) = (Vec::new(), Vec::new());
        for s in 0..sessions {
            // As far ahead for each captured thread a session issues.
            let (tx, rx) = mpsc::sync_channel(BATCHES_AHEAD * shared::lanes(rc, s));
            txs.push(tx);
            rxs.push(Some(rx));
        }
        let (spare, spares) = mpsc::channel();
        Ok(Replay {
            cfg,
            rc,
            shared,
            target,
            fds: files.raw(),
            _files: files,
            mapper,
            sessions,
            inboxes: Mutex::new(rxs),
            outboxes: Mutex::new(Some((txs, spares))),
            spare,
        })
    }

    fn prepare_session(&self, id: u32) -> Result<session::Session, SetupError> {
        let cfg = self.cfg;
        let inbox = self.inboxes.lock().unwrap_or_else(|p| p.into_inner())[id as usize]
            .take()
            .expect("each session prepared once");
        if cfg.engine == EngineKind::Psync {
            crate::engine::psync::private_fd_table();
        }
        let depth = match cfg.engine {
            EngineKind::Psync => 1,
            _ => session_depth(cfg.iodepth, self.rc, id),
        };
        let len = (self.rc.facts.max_len_bytes as usize)
            .max(512)
            .next_multiple_of(4096);
        let bufs = BufPool::new(len, depth as usize);
        let opts = self.rc.uring.unwrap_or_default();
        let engine = AnyEngine::new(
            cfg.engine,
            &self.fds,
            Some(&bufs),
            depth,
            SyncAfterWrite::None,
            opts,
        )
        .map_err(|source| SetupError::Engine {
            who: format!("replay session {id}"),
            engine: cfg.engine.name(),
            source,
        })?;
        priority::fine_timers(self.rc.rt, priority::Role::Session).map_err(SetupError::Invalid)?;
        Ok(session::Session::new(
            id,
            engine,
            (bufs, len),
            (inbox, self.spare.clone()),
            self.rc.speed,
            cfg.seed,
            shared::lanes(self.rc, id),
        ))
    }
}

/// Most requests a ring holds.
const MAX_DEPTH: u32 = 4096;

/// Session `id`'s ring depth: the run's (`--iodepth`, at least the deepest
/// captured thread's), and in a timed replay at least twice what its
/// captured thread had in flight (for a shared session, that for each of
/// its threads, summed: [`shared::depth`]). A
/// replayed request is in flight longer than the block layer saw it (from
/// its submission, through io_uring's worker where the device cannot take
/// it without blocking, to its reaping), so a ring only as deep as the
/// capture fills in the captured thread's bursts and the next requests
/// wait for room: issued late though the target kept up.
fn session_depth(iodepth: u32, rc: &ReplayConfig, id: u32) -> u32 {
    let own = match (rc.speed, rc.sessions) {
        (
            Speed::Factor(_),
            Sessions::PerThread {
                per_thread_in_flight: false,
            },
        ) => rc
            .facts
            .threads
            .get(id as usize)
            .map(|t| 2 * t.max_in_flight),
        (_, Sessions::Shared(_)) => shared::depth(iodepth, rc, id),
        _ => None,
    };
    own.map_or(iodepth, |d| iodepth.max(d)).min(MAX_DEPTH)
}

impl Workload for Replay<'_> {
    type Thread = Prepared;
    type Part = Part;

    fn threads(&self) -> Threads {
        Threads {
            sessions: self.sessions,
            background: vec!["dbio-replay-feed".into()],
        }
    }

    fn storage(&self) -> Vec<PathBuf> {
        vec![self.target.path.clone()]
    }

    fn prepare(&self, t: u32) -> Result<Prepared, SetupError> {
        if t < self.sessions {
            return Ok(Prepared::Session(Box::new(self.prepare_session(t)?)));
        }
        let (txs, spares) = self
            .outboxes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .expect("one feed");
        priority::fine_timers(self.rc.rt, priority::Role::Feed).map_err(SetupError::Invalid)?;
        let feed = Feed::open(self.rc, self.mapper, txs, spares)
            .map_err(|e| SetupError::Invalid(e.to_string()))?;
        Ok(Prepared::Feed(Box::new(feed)))
    }

    fn run(&self, _t: u32, state: Prepared, series: &SessionSeries) -> ThreadEnd<Part> {
        match state {
            Prepared::Feed(mut f) => {
                f.run(self.shared);
                ThreadEnd {
                    stats: SessionStats::new(),
                    last_ns: 0,
                    issued: 0,
                    part: f.into_part(),
                }
            }
            Prepared::Session(mut s) => {
                let mut w = SeriesWriter::new(series);
                let end = s.run(self.shared, &self.target.files, self.cfg.io_mode, &mut w);
                let (stats, part) = s.into_parts();
                ThreadEnd {
                    stats,
                    last_ns: end.last_ns,
                    issued: end.issued,
                    part,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
