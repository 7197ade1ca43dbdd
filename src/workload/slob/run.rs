//! Runs the model: lays out the redo logs, opens the datafiles and redo
//! logs, starts the sessions, the DB writers and the log writer behind one
//! barrier, runs the shared control loop (series, status line, telemetry,
//! Ctrl-C), stops the background threads once the sessions are done, and
//! merges what every thread measured.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use rustix::fs::{Mode, OFlags};

use super::cache::Cache;
use super::dbwr::DbWriter;
use super::instance::{Checkpoint, Instance, Log, Tally};
use super::keys::{KeyPicker, OpMix, Tablespace};
use super::lgwr::LogWriter;
use super::locks::RowLocks;
use super::session::Session;
use super::{RedoSync, SlobConfig};
use crate::config::{IoMode, RunConfig, RunLength};
use crate::engine::buf::BufPool;
use crate::engine::{AnyEngine, Engine, SyncAfterWrite};
use crate::measure::clock::now_ns;
use crate::measure::stats::SessionStats;
use crate::runner::{self, Ended, RunError, RunResult, Shared, Watch};
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::samplers::status::StatusLine;
use crate::samplers::telemetry::Telemetry;
use crate::target::chain;
use crate::target::layout::{self, Shape};
use crate::target::{Target, TargetError};
use crate::workload::rng::Rng;

pub use crate::target::REDO_SUBDIR;

/// What a model run measured, per function.
pub struct SlobRun {
    /// Sessions' reads and the writers' writes as plain I/O statistics, the
    /// series, CPU and telemetry: what every run reports.
    pub result: RunResult,
    pub sessions: Tally,
    pub dbwr: Tally,
    pub lgwr: Tally,
    pub redo_files: Vec<PathBuf>,
}

/// Lays out (or reuses) the redo log files.
pub fn prepare_redo(
    slob: &SlobConfig,
    seed: u64,
    progress: bool,
    interrupt: &AtomicBool,
) -> Result<Vec<PathBuf>, TargetError> {
    let dir = slob.redo_dir.join(REDO_SUBDIR);
    let shape = Shape {
        files: slob.redo_files,
        file_size: slob.redo_file_size,
        block_size: slob.redo_block,
        grow: false,
    };
    layout::ensure(&dir, shape, seed, progress, interrupt).map(|(files, _)| files)
}

fn open_redo(files: &[PathBuf], mode: IoMode, sync: RedoSync) -> Result<Vec<OwnedFd>, TargetError> {
    let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
    if mode == IoMode::Direct {
        flags |= OFlags::DIRECT;
    }
    if sync == RedoSync::Dsync {
        flags |= OFlags::DSYNC;
    }
    files
        .iter()
        .map(|p| {
            rustix::fs::open(p, flags, Mode::empty())
                .map_err(|e| TargetError::io(p, "open redo log", e.into()))
        })
        .collect()
}

/// Everything each thread needs to build itself.
struct Common<'a> {
    inst: &'a Instance<'a>,
    cfg: &'a RunConfig,
    slob: &'a SlobConfig,
    ts: Tablespace,
    datafiles: &'a [PathBuf],
    redo_files: &'a [PathBuf],
    outlier_ns: u64,
}

/// Runs the model on a prepared target with laid-out redo logs.
pub fn run(
    cfg: &RunConfig,
    slob: &SlobConfig,
    target: &Target,
    redo_files: Vec<PathBuf>,
    interrupt: &AtomicBool,
    status: Option<StatusLine>,
) -> Result<SlobRun, RunError> {
    let data = target.open(cfg.io_mode, slob.update_pct > 0)?;
    let data_fds = data.raw();
    let redo = open_redo(&redo_files, cfg.io_mode, slob.redo_sync)?;
    let redo_fds: Vec<_> = redo.iter().map(|f| f.as_raw_fd()).collect();
    let (ramp_s, time_s) = match cfg.length {
        RunLength::Time { time_s, ramp_s } => (ramp_s, Some(time_s)),
        RunLength::Ops { .. } => (0.0, None),
    };
    let shared = Shared::new(ramp_s);
    let inst = Instance {
        run: &shared,
        cache: Cache::new(slob.cache_buffers(), slob.block_size),
        locks: RowLocks::new(slob.sessions(), slob.work_unit),
        log: Log {
            buffer_size: slob.log_buffer,
            ..Log::default()
        },
        ckpt: Checkpoint::new(slob.db_writers),
        dbwr_post: Default::default(),
        free_wanted: AtomicBool::new(false),
        dbwr_done: Default::default(),
        sessions_done: AtomicBool::new(false),
    };
    let n = slob.sessions();
    let w = slob.db_writers;
    let threads = n + w + 1;
    let slots: Vec<Box<SessionSeries>> = (0..threads).map(|_| SessionSeries::new()).collect();
    let chain = chain::resolve(&target.path).ok();
    let mut devices = chain.as_ref().map(|c| c.devices()).unwrap_or_default();
    if let Ok(c) = chain::resolve(&slob.redo_dir) {
        for d in c.devices() {
            if !devices.contains(&d) {
                devices.push(d);
            }
        }
    }
    let telemetry = (!devices.is_empty()).then(|| Telemetry::start(devices));
    let common = Common {
        inst: &inst,
        cfg,
        slob,
        ts: Tablespace {
            datafiles: target.files.len() as u32,
            block_size: slob.block_size,
        },
        datafiles: &target.files,
        redo_files: &redo_files,
        outlier_ns: (cfg.outlier_ms * 1e6) as u64,
    };
    let ready = Barrier::new(threads as usize + 1);
    let go = Barrier::new(threads as usize + 1);
    let finished = AtomicUsize::new(0);
    let data_sync = SyncAfterWrite::for_mode(cfg.io_mode);
    let redo_sync = match slob.redo_sync {
        RedoSync::Dsync => SyncAfterWrite::None,
        RedoSync::Fdatasync => SyncAfterWrite::Fdatasync,
    };

    let (control, sessions, dbwr, lgwr, stats, last_ns, start_unix_ns) = std::thread::scope(|s| {
        let (c, ready, go, finished) = (&common, &ready, &go, &finished);
        let (data_fds, redo_fds, slots) = (&data_fds, &redo_fds, &slots);
        let named = |name: String| std::thread::Builder::new().name(name);
        let mut handles = Vec::new();
        for id in 0..n {
            handles.push(
                named(format!("dbio-session-{id}")).spawn_scoped(s, move || {
                    let engine = build(c, cfg.engine, data_fds, 1, SyncAfterWrite::None, "session");
                    ready.wait();
                    go.wait();
                    let out = match engine {
                        Some(AnyEngine::Psync(e)) => session(c, id, e, &slots[id as usize]),
                        Some(AnyEngine::Uring(e)) => session(c, id, e, &slots[id as usize]),
                        None => Default::default(),
                    };
                    finished.fetch_add(1, SeqCst);
                    out
                }),
            );
        }
        for k in 0..w {
            handles.push(named(format!("dbio-dbwr-{k}")).spawn_scoped(s, move || {
                let depth = match slob.dbwr_engine {
                    crate::config::EngineKind::Psync => 1,
                    crate::config::EngineKind::IoUring => slob.dbwr_batch,
                };
                let engine = build(c, slob.dbwr_engine, data_fds, depth, data_sync, "DB writer");
                ready.wait();
                go.wait();
                let slot = &slots[(n + k) as usize];
                match engine {
                    Some(AnyEngine::Psync(e)) => dbwr(c, k, n + k, e, slot),
                    Some(AnyEngine::Uring(e)) => dbwr(c, k, n + k, e, slot),
                    None => Default::default(),
                }
            }));
        }
        handles.push(named("dbio-lgwr".into()).spawn_scoped(s, move || {
            let engine = build(c, cfg.engine, redo_fds, 1, redo_sync, "log writer");
            ready.wait();
            go.wait();
            let slot = &slots[(n + w) as usize];
            match engine {
                Some(AnyEngine::Psync(e)) => lgwr(c, n + w, e, slot),
                Some(AnyEngine::Uring(e)) => lgwr(c, n + w, e, slot),
                None => Default::default(),
            }
        }));

        ready.wait();
        let start_unix_ns = shared.begin(time_s);
        go.wait();
        let control = runner::control(Watch {
            shared: &shared,
            slots,
            finished,
            sessions: n as usize,
            ramp_s,
            time_s,
            interrupt,
            status,
            telemetry,
            interval_ns: (cfg.interval_s * 1e9) as u64,
        });
        let mut results = handles
            .into_iter()
            .map(|h| h.expect("spawn thread").join().expect("thread panicked"));
        let mut stats = SessionStats::new();
        let (mut sessions, mut dbwr, mut lgwr) =
            (Tally::default(), Tally::default(), Tally::default());
        let mut last_ns = 0;
        for _ in 0..n {
            let (t, st, last) = results.next().expect("a session result");
            sessions.merge(&t);
            stats.merge(&st);
            last_ns = last_ns.max(last);
        }
        // Sessions are done: let the background threads drain and stop.
        inst.sessions_done.store(true, SeqCst);
        inst.log.post.notify();
        inst.dbwr_post.notify();
        for _ in 0..w {
            let (t, st, _) = results.next().expect("a DB writer result");
            dbwr.merge(&t);
            stats.merge(&st);
        }
        let (t, st, _) = results.next().expect("the log writer result");
        lgwr.merge(&t);
        stats.merge(&st);
        (control, sessions, dbwr, lgwr, stats, last_ns, start_unix_ns)
    });
    let ended = Ended {
        stats,
        last_ns,
        issued: sessions.total.read_requests,
        start_unix_ns,
    };
    Ok(SlobRun {
        result: control.into_result(&shared, ended, ramp_s, chain),
        sessions,
        dbwr,
        lgwr,
        redo_files,
    })
}

/// Builds a thread's engine, or records why it could not.
fn build(
    c: &Common,
    kind: crate::config::EngineKind,
    fds: &[std::os::fd::RawFd],
    depth: u32,
    sync: SyncAfterWrite,
    who: &str,
) -> Option<AnyEngine> {
    AnyEngine::new(kind, fds, None, depth, sync)
        .map_err(|e| {
            c.inst
                .run
                .fail(format!("{who}: cannot set up {}: {e}", kind.name()))
        })
        .ok()
}

fn session<E: Engine>(
    c: &Common,
    id: u32,
    engine: E,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    let slob = c.slob;
    let schema = id / slob.threads_per_schema;
    let scan_len = slob.block_size as usize * slob.scan_blocks.max(1) as usize;
    let mut s = Session {
        id,
        inst: c.inst,
        cfg: slob,
        io_mode: c.cfg.io_mode,
        ts: c.ts,
        files: c.datafiles,
        engine,
        // Sessions of one schema share its key map: it is the schema's table.
        picker: KeyPicker::new(
            slob,
            schema,
            c.cfg.seed ^ u64::from(schema).wrapping_mul(0x9E37_79B9),
        ),
        mix: OpMix::new(slob.update_pct, slob.scan_pct),
        rng: Rng::for_stream(c.cfg.seed, u64::from(id)),
        scan_buf: BufPool::new(scan_len, 1),
        scan_run: Vec::with_capacity(slob.scan_blocks as usize),
        rows: Vec::with_capacity(slob.work_unit as usize),
        clock: 0,
        outlier_ns: c.outlier_ns,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
    };
    s.run();
    let t0 = c.inst.run.start_ns.load(SeqCst);
    (s.tally, s.stats, now_ns().saturating_sub(t0))
}

fn dbwr<E: Engine>(
    c: &Common,
    id: u32,
    thread: u32,
    engine: E,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    let batch = c.slob.dbwr_batch as usize;
    let mut d = DbWriter {
        id,
        thread,
        writers: c.slob.db_writers,
        inst: c.inst,
        engine,
        io_mode: c.cfg.io_mode,
        ts: c.ts,
        files: c.datafiles,
        batch,
        queued: vec![0; batch],
        rng: Rng::for_stream(c.cfg.seed, u64::from(thread)),
        outlier_ns: c.outlier_ns,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
    };
    d.run();
    (d.tally, d.stats, 0)
}

fn lgwr<E: Engine>(
    c: &Common,
    thread: u32,
    engine: E,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    let mut buf = BufPool::new(c.slob.log_buffer as usize, 1);
    let mut rng = Rng::for_stream(c.cfg.seed, u64::from(thread));
    rng.fill(buf.slot_mut(0, c.slob.log_buffer as usize));
    let mut l = LogWriter {
        id: thread,
        inst: c.inst,
        engine,
        io_mode: c.cfg.io_mode,
        files: c.redo_files,
        file_base: c.datafiles.len() as u32,
        file_size: c.slob.redo_file_size,
        redo_block: u64::from(c.slob.redo_block),
        buf,
        outlier_ns: c.outlier_ns,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
    };
    l.run();
    (l.tally, l.stats, 0)
}
