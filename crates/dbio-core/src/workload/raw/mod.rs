//! `--workload raw`: fio/IObench patterns. Every thread is a session that
//! keeps its engine's queue full with requests from its pattern
//! (`requests`), one session loop each (`session`).

pub mod requests;
pub mod session;

use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::dist::{BlockPicker, Hotspot};
use super::{SetupError, Shared, ThreadEnd, Threads, Workload};
use crate::config::{EngineKind, RawConfig, RunConfig, RunLength};
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, SyncAfterWrite};
use crate::measure::schedule::Schedule;
use crate::measure::stats::SessionStats;
use crate::rng::Rng;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::storage::content::Content;
use crate::storage::genmap::{GenMap, MAX_IN_FLIGHT};
use crate::storage::genmap_file::{self, Tracked};
use crate::storage::{OpenFiles, Target, TargetKind};
use crate::verify::interrupted::Interruption;
use requests::Requests;

/// A raw run over a prepared target.
pub struct Raw<'a> {
    cfg: &'a RunConfig,
    /// The raw workload's own settings (pattern, mix, distribution, checks).
    raw: &'a RawConfig,
    target: &'a Target,
    shared: &'a Shared,
    /// Keeps the files open for the run.
    _files: OpenFiles,
    fds: Vec<RawFd>,
    picker: BlockPicker,
    /// Requests in total for `--ops`.
    quota_total: Option<u64>,
    /// The generations of the blocks, when the run writes a directory
    /// target that keeps a lost-write map.
    map: Option<Tracked>,
    /// The floors a read-only `--verify` run judges its reads against,
    /// from the map the last writing run left.
    floors: Option<GenMap>,
    /// What interrupted runs may have left torn or stale (not bad to `--verify`).
    interrupted: Interruption,
    /// What written blocks hold (`--compress-pct`, `--dedupe-pct`).
    content: Content,
    /// Set when every session has ended: the map's sync thread stops.
    ended: AtomicBool,
}

/// A session's state before the start: its engine and buffers.
pub struct Prepared {
    pub engine: AnyEngine,
    pub bufs: BufPool,
}

impl<'a> Raw<'a> {
    /// Opens the target's files and checks the distribution and hot spot.
    pub fn new(
        cfg: &'a RunConfig,
        raw: &'a RawConfig,
        target: &'a Target,
        shared: &'a Shared,
    ) -> Result<Self, SetupError> {
        let files = target.open(cfg.io_mode, cfg.writes())?;
        let fds = files.raw();
        let hotspot = resolve_hotspot(cfg, target)?;
        let picker = BlockPicker::new(raw.distribution, target.total_blocks(), hotspot)
            .map_err(|e| SetupError::Invalid(format!("--dist {}: {e}", raw.distribution)))?;
        let in_flight = u64::from(cfg.sessions) * u64::from(cfg.iodepth);
        let writes_dir = cfg.writes() && target.kind == TargetKind::Directory;
        let map = if writes_dir && in_flight <= MAX_IN_FLIGHT {
            let shape = (cfg.sessions, cfg.iodepth);
            genmap_file::begin_run(&target.path, target.id, target.total_blocks(), shape)
                .map_err(|e| SetupError::Invalid(e.to_string()))?
        } else {
            if writes_dir {
                // More writes in flight than the map counts: its blocks get
                // wall-clock generations, and the map no longer applies.
                let why = format!(
                    "a raw run had {in_flight} writes in flight, more than the map counts ({MAX_IN_FLIGHT})"
                );
                genmap_file::retire(&target.path, &why)
                    .map_err(|e| SetupError::Invalid(format!("{}: {e}", target.path.display())))?;
            }
            None
        };
        let (floors, interrupted) = match (&map, verify_floors(cfg, raw, target, map.is_some())?) {
            (Some(t), _) => {
                let (writes, blind) = t.interrupted();
                (None, Interruption::new(writes, blind))
            }
            (None, Some((f, i))) => (Some(f), i),
            (None, None) => (None, Interruption::default()),
        };
        Ok(Raw {
            cfg,
            raw,
            target,
            shared,
            _files: files,
            fds,
            picker,
            quota_total: match cfg.length {
                RunLength::Ops { ops } => Some(ops),
                RunLength::Time { .. } => None,
            },
            map,
            floors,
            interrupted,
            content: Content::new(cfg.content, target.block_size, target.id),
            ended: AtomicBool::new(false),
        })
    }

    /// The run's final sync point: its acknowledged writes made durable and
    /// the lost-write map saved clean. Returns (sync point, seconds it took),
    /// or None when the run keeps no map.
    pub fn finish(&mut self) -> Result<Option<(u64, f64)>, genmap_file::MapError> {
        let Some(t) = &self.map else {
            return Ok(None);
        };
        let start = crate::measure::clock::now_ns();
        let n = t.sync_point(&self.fds, true)?;
        Ok(Some((
            n,
            (crate::measure::clock::now_ns() - start) as f64 / 1e9,
        )))
    }

    /// Whether the run keeps a sync thread for its map.
    fn syncs(&self) -> bool {
        self.map.is_some() && self.raw.verify.map_sync_ms > 0
    }

    /// The background thread of a writing run with a map: a sync point
    /// every `--verify-sync-interval` until the sessions end (a failed one
    /// is reported once and ends the periodic syncing; the run goes on).
    fn sync_map(&self) {
        let (Some(t), ms) = (&self.map, self.raw.verify.map_sync_ms) else {
            return;
        };
        let interval = Duration::from_millis(ms);
        let mut next = Instant::now() + interval;
        while !self.ended.load(Ordering::Acquire) && !self.shared.stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if now < next {
                std::thread::sleep((next - now).min(Duration::from_millis(50)));
                continue;
            }
            if let Err(e) = t.sync_point(&self.fds, false) {
                eprintln!("warning: a periodic sync point of the lost-write map failed: {e}");
                return;
            }
            next = Instant::now() + interval;
        }
    }

    /// Session `id`'s share of an `--ops` quota: the remainder goes to the first sessions.
    fn quota(&self, id: u32) -> u64 {
        let n = u64::from(self.cfg.sessions);
        match self.quota_total {
            Some(t) => t / n + u64::from(u64::from(id) < t % n),
            None => u64::MAX,
        }
    }
}

impl Workload for Raw<'_> {
    /// None for the map's sync thread.
    type Thread = Option<Prepared>;
    type Part = ();

    fn threads(&self) -> Threads {
        Threads {
            sessions: self.cfg.sessions,
            background: if self.syncs() {
                vec!["dbio-mapsync".into()]
            } else {
                Vec::new()
            },
        }
    }

    fn sessions_ended(&self) {
        self.ended.store(true, Ordering::Release);
    }

    fn storage(&self) -> Vec<PathBuf> {
        vec![self.target.path.clone()]
    }

    fn prepare(&self, id: u32) -> Result<Option<Prepared>, SetupError> {
        let cfg = self.cfg;
        if id >= cfg.sessions {
            return Ok(None);
        }
        if cfg.engine == EngineKind::Psync {
            // A system call per I/O on files opened before the sessions.
            crate::engine::psync::private_fd_table();
        }
        let bufs = BufPool::new(cfg.block_size as usize, cfg.iodepth as usize);
        let sync = SyncAfterWrite::for_mode(cfg.io_mode);
        let opts = self.raw.uring.unwrap_or_default();
        let engine = AnyEngine::new(cfg.engine, &self.fds, Some(&bufs), cfg.iodepth, sync, opts)
            .map_err(|source| SetupError::Engine {
                who: format!("session {id}"),
                engine: cfg.engine.name(),
                source,
            })?;
        Ok(Some(Prepared { engine, bufs }))
    }

    fn run(&self, id: u32, p: Option<Prepared>, series: &SessionSeries) -> ThreadEnd<()> {
        let cfg = self.cfg;
        let Some(p) = p else {
            self.sync_map();
            return ThreadEnd {
                stats: SessionStats::new(),
                last_ns: 0,
                issued: 0,
                part: (),
            };
        };
        let mut s = session::Session {
            id,
            target: self.target,
            io_mode: cfg.io_mode,
            quota: self.quota(id),
            schedule: Schedule::of_run(cfg, &self.shared.arrivals),
            outlier_ns: (cfg.outlier_ms * 1e6) as u64,
            shared: self.shared,
            map: self.map.as_ref().map(|t| &t.map),
            in_flight: self.map.as_ref().map(|t| t.record.session(id)),
            stamp: (self.target.id, cfg.seed as u32),
            content: &self.content,
            verify: self.raw.verify,
            check_map: self.map.as_ref().map(|t| &t.map).or(self.floors.as_ref()),
            interrupted: &self.interrupted,
            engine: p.engine,
            requests: Requests::new(
                self.raw.pattern,
                self.raw.read_pct,
                self.picker.clone(),
                id,
                cfg.sessions,
                self.target.total_blocks(),
            ),
            bufs: p.bufs,
            rng: Rng::for_stream(cfg.seed, u64::from(id)),
            stats: match cfg.rate_iops {
                Some(_) => SessionStats::open_loop(),
                None => SessionStats::new(),
            },
            series: SeriesWriter::paced(series, cfg.rate_iops.is_some()),
        };
        let end = s.run();
        ThreadEnd {
            stats: s.stats,
            last_ns: end.last_ns,
            issued: end.issued,
            part: (),
        }
    }
}

/// Refuses `--verify` where it cannot judge without false failures, and
/// loads the floors a read-only run judges against and what interrupted
/// runs left (None: none kept, or no checking asked for).
fn verify_floors(
    cfg: &RunConfig,
    raw: &RawConfig,
    target: &Target,
    has_map: bool,
) -> Result<Option<(GenMap, Interruption)>, SetupError> {
    let v = raw.verify;
    if !v.any() {
        return Ok(None);
    }
    if v.after_write && !cfg.writes() {
        return Err(SetupError::Invalid(format!(
            "--verify-after-write reads back writes, and --pattern {} writes nothing; use --verify to check its reads",
            raw.pattern.name()
        )));
    }
    if cfg.writes() {
        if has_map {
            return Ok(None);
        }
        return Err(SetupError::Invalid(format!(
            "{} on a run that writes needs the target's lost-write map (a directory target laid out by dbio, at most {MAX_IN_FLIGHT} writes in flight) to tell a read racing a write from a bad block; on {} check a read-only pattern, or run `dbio verify` afterwards",
            v.flag(),
            target.path.display()
        )));
    }
    if target.kind != TargetKind::Directory {
        return Ok(None);
    }
    // A map that is missing, stale or damaged only means nothing can be
    // called lost (as for a writing run, `genmap_file::begin_run`).
    let loaded = genmap_file::load(&target.path, target.id, target.total_blocks());
    Ok(loaded.ok().flatten().map(|l| {
        let (i, _) = Interruption::of(&target.path, target.id, &l);
        (GenMap::new(&l.floors, 0), i)
    }))
}

fn resolve_hotspot(cfg: &RunConfig, target: &Target) -> Result<Option<Hotspot>, SetupError> {
    let Some(h) = cfg.hotspot else {
        return Ok(None);
    };
    let bs = u64::from(cfg.block_size);
    if h.offset_bytes + h.size_bytes > target.size_bytes() {
        return Err(SetupError::Invalid(format!(
            "--hotspot-offset-mb {} + --hotspot-mb {} reaches past the end of the data ({} MiB); make the hot spot smaller or --size larger",
            h.offset_bytes >> 20,
            h.size_bytes >> 20,
            target.size_bytes() >> 20
        )));
    }
    Ok(Some(Hotspot {
        offset_blocks: h.offset_bytes / bs,
        size_blocks: (h.size_bytes / bs).max(1),
        every: h.every,
    }))
}
