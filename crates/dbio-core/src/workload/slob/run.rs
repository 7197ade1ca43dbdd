//! The model as a workload: lays out the redo logs (and `--flavor innodb`'s
//! doublewrite file), opens the datafiles and redo logs, and says what each thread does — sessions first, then the DB
//! writers and the log writer as background threads, which drain and stop
//! once the sessions are done, and a last one that places the window in the
//! model's checkpoint cycle (`cycle`). The harness starts, watches and joins them.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::SeqCst;

use rustix::fs::{Mode, OFlags};

use super::bufsync::Marked;
use super::cache::Cache;
use super::ckpt_end::CheckpointEnd;
use super::dbwr::DbWriter;
use super::doublewrite::Doublewrite;
use super::flavor::{Flavor, FullPages};
use super::group_commit::GroupCommit;
use super::instance::{Checkpoint, Instance, Log, Tally};
use super::keys::{KeyPicker, OpMix, Tablespace};
use super::lgwr::{Durability, LogWriter};
use super::live::LiveSlot;
use super::locks::RowLocks;
use super::pace::WriterPace;
use super::session::Session;
use super::writeback::{BGWRITER_FLUSH_AFTER, CHECKPOINT_FLUSH_AFTER, Writeback};
use super::{RedoSync, SlobConfig};
use crate::config::{EngineKind, IoMode, RunConfig};
use crate::engine::AnyEngine;
use crate::engine::SyncAfterWrite;
use crate::engine::buf::BufPool;
use crate::measure::clock::now_ns;
use crate::measure::schedule::Schedule;
use crate::measure::stats::SessionStats;
use crate::rng::Rng;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::storage::content::Content;
use crate::storage::layout::{self, Shape};
use crate::storage::slob_mark::{self, MarkError};
use crate::storage::{OpenFiles, Target, TargetError, TargetKind};
use crate::workload::{SetupError, Shared, ThreadEnd, Threads, Workload};

pub use crate::storage::{DBLWR_SUBDIR, REDO_SUBDIR};

/// What a model run counted per function, besides the plain I/O
/// statistics every run reports.
pub struct SlobRun {
    pub sessions: Tally,
    pub dbwr: Tally,
    pub lgwr: Tally,
    pub redo_files: Vec<PathBuf>,
    /// Where the window sat in the model's checkpoint cycle (None: a run
    /// merged from MPI ranks, or one whose window thread never ran).
    pub cycle: Option<super::cycle::CycleEdges>,
}

/// Lays out (or reuses) the redo log files, and under `--flavor innodb`
/// the doublewrite file beside them ([`doublewrite_file`]).
pub fn prepare_redo(
    slob: &SlobConfig,
    seed: u64,
    progress: &crate::samplers::progress::Progress,
    interrupt: &AtomicBool,
) -> Result<Vec<PathBuf>, TargetError> {
    if slob.flavor == Flavor::Innodb {
        let shape = Shape {
            files: 1,
            file_size: slob.doublewrite_bytes(),
            block_size: slob.block_size,
            grow: false,
            // The page cleaners overwrite it with copies of data pages.
            headers: false,
            content: Default::default(),
            streams: 1,
            what: "doublewrite file",
        };
        let dir = slob.redo_dir.join(DBLWR_SUBDIR);
        layout::ensure(&dir, shape, seed, progress, interrupt)?;
    }
    let dir = slob.redo_dir.join(REDO_SUBDIR);
    let shape = Shape {
        files: slob.redo_files,
        file_size: slob.redo_file_size,
        block_size: slob.redo_block,
        grow: false,
        // The log writer overwrites the headers with redo.
        headers: false,
        content: Default::default(),
        streams: layout::default_streams(),
        what: "redo logs",
    };
    layout::ensure(&dir, shape, seed, progress, interrupt).map(|(files, _)| files)
}

/// The doublewrite file [`prepare_redo`] lays out under `--flavor innodb`.
pub(crate) fn doublewrite_file(slob: &SlobConfig) -> Option<PathBuf> {
    (slob.flavor == Flavor::Innodb).then(|| {
        let dir = slob.redo_dir.join(DBLWR_SUBDIR);
        dir.join(crate::storage::manifest::data_file_name(0))
    })
}

/// `--flavor innodb`'s redo logs `files`, written by whoever leads a
/// commit group, stamped with the run's seed and the redo layout's id.
fn group_commit(cfg: &RunConfig, slob: &SlobConfig, files: &[PathBuf]) -> GroupCommit {
    let target = files
        .first()
        .and_then(|f| f.parent())
        .and_then(|d| crate::storage::manifest::Manifest::load(d).ok().flatten())
        .map_or(0, |m| m.target_id);
    let sizes = (
        slob.redo_file_size,
        u64::from(slob.redo_block),
        slob.log_buffer,
    );
    let fsync = slob.redo_sync == RedoSync::Fdatasync;
    GroupCommit::new(
        files.to_vec(),
        sizes,
        cfg.io_mode,
        fsync,
        (cfg.seed as u32, target),
    )
}

/// Opens the doublewrite file as the datafiles are opened (`--io`).
fn open_doublewrite(path: &std::path::Path, mode: IoMode) -> Result<OwnedFd, TargetError> {
    let flags = crate::engine::open_flags(mode, true);
    rustix::fs::open(path, flags, Mode::empty())
        .map_err(|e| TargetError::io(path, "open the doublewrite file", e.into()))
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

/// `--memory`: the datafiles read through the page cache without the
/// kernel's readahead. A session reads exactly the block it misses, as
/// PostgreSQL does: its bitmap heap scan asks for each page ahead
/// (`posix_fadvise(WILLNEED)`, exactly that page), so the kernel's readahead
/// never runs for it. Without this, random reads of a file mostly in the page
/// cache look like sequential streams to the kernel (the pages before a miss
/// are cached) and each miss reads more pages that are never used: on XFS
/// over a loop device 2.3 device reads per miss, the page cache filled with
/// them. Advice only: a failure changes nothing else.
fn no_readahead(fds: &[RawFd]) {
    for &fd in fds {
        // SAFETY: the workload keeps its datafiles open while it runs.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        let _ = rustix::fs::fadvise(fd, 0, None, rustix::fs::Advice::Random);
    }
}

/// The model over a prepared target with laid-out redo logs.
pub struct Slob<'a> {
    cfg: &'a RunConfig,
    slob: &'a SlobConfig,
    inst: Instance<'a>,
    ts: Tablespace,
    datafiles: &'a [PathBuf],
    /// The files sessions and DB writers address by number: the datafiles,
    /// then the doublewrite file (`--flavor innodb`: its undo pages too).
    io_files: Vec<PathBuf>,
    /// The target id the DB writers stamp into blocks.
    target_id: u32,
    redo_files: Vec<PathBuf>,
    redo_dir: PathBuf,
    target_dir: PathBuf,
    /// Keep the files open for the run.
    _data: OpenFiles,
    _redo: Vec<OwnedFd>,
    /// `--flavor innodb`: the doublewrite file and its descriptor.
    doublewrite: Option<(PathBuf, OwnedFd)>,
    data_fds: Vec<RawFd>,
    /// The DB writers' files: the datafiles, then the doublewrite file if any.
    dbwr_fds: Vec<RawFd>,
    /// The sessions' files: the DB writers', then (`--flavor innodb`, whose
    /// sessions write the log themselves) the redo logs.
    session_fds: Vec<RawFd>,
    /// `--flavor innodb`: the redo logs as InnoDB's group commit writes them.
    group: Option<GroupCommit>,
    redo_fds: Vec<RawFd>,
    outlier_ns: u64,
    /// The layouts marked writing until the run ends cleanly.
    mark: slob_mark::Writing,
    /// `--memory`: the process in its memory cgroup until the run ends.
    memory: Option<super::memory::MemoryBound>,
    /// What the window's thread read at the window's edges.
    cycle: std::sync::OnceLock<super::cycle::CycleEdges>,
}

/// What a thread of the model is.
enum Role {
    Session(u32),
    DbWriter(u32),
    LogWriter,
    /// The window's place in the checkpoint cycle (`cycle::follow`).
    Cycle,
}

impl<'a> Slob<'a> {
    /// Opens the datafiles and redo logs and builds the instance's shared state.
    pub fn new(
        cfg: &'a RunConfig,
        slob: &'a SlobConfig,
        target: &'a Target,
        redo_files: Vec<PathBuf>,
        shared: &'a Shared,
    ) -> Result<Self, SetupError> {
        let data = target.open(cfg.io_mode, slob.update_pct > 0)?;
        let data_fds = data.raw();
        if slob.memory.is_some() {
            no_readahead(&data_fds);
        }
        let redo = open_redo(&redo_files, cfg.io_mode, slob.redo_sync)?;
        let redo_fds = redo.iter().map(|f| f.as_raw_fd()).collect();
        let doublewrite = doublewrite_file(slob)
            .map(|p| open_doublewrite(&p, cfg.io_mode).map(|fd| (p, fd)))
            .transpose()?;
        let mut dbwr_fds = data_fds.clone();
        dbwr_fds.extend(doublewrite.iter().map(|(_, fd)| fd.as_raw_fd()));
        let group = (slob.flavor == Flavor::Innodb).then(|| group_commit(cfg, slob, &redo_files));
        let mut session_fds = dbwr_fds.clone();
        if group.is_some() {
            session_fds.extend(redo.iter().map(|f| f.as_raw_fd()));
        }
        // Marked before the first write: a kill leaves the mark (a block
        // device has no place for one).
        let mut marked = vec![slob.redo_dir.join(REDO_SUBDIR)];
        if doublewrite.is_some() {
            marked.push(slob.redo_dir.join(DBLWR_SUBDIR));
        }
        if target.kind == TargetKind::Directory {
            marked.push(target.path.clone());
        }
        let mark = slob_mark::begin(&marked)
            .map_err(|e| SetupError::Target(TargetError::Invalid(e.to_string())))?;
        let memory = slob
            .memory
            .map(|limit| {
                let dirs = [target.path.as_path(), slob.redo_dir.as_path()];
                let held = super::memory::held_for(slob.flavor, slob.sessions());
                let beside =
                    super::memory::settled_beside(slob.flavor, slob.sessions(), slob.cache_bytes);
                super::memory::MemoryBound::enter(limit, &dirs, held, beside)
            })
            .transpose()
            .map_err(|e| SetupError::Invalid(e.to_string()))?;
        let inst = Instance {
            run: shared,
            cache: Cache::new(slob.cache_buffers(), slob.block_size)
                .with_replacement(slob.replacement()),
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
            full_pages: (slob.flavor == Flavor::Postgres)
                .then(|| FullPages::new(slob.tablespace_blocks())),
            live: LiveSlot::many((slob.sessions() + slob.db_writers + 1) as usize),
        };
        Ok(Slob {
            cfg,
            slob,
            inst,
            ts: Tablespace {
                datafiles: target.files.len() as u32,
                block_size: slob.block_size,
                base: target.base(),
                undo: slob.undo_area(target.files.len() as u32),
            },
            datafiles: &target.files,
            io_files: target
                .files
                .iter()
                .chain(doublewrite.iter().map(|(p, _)| p))
                .cloned()
                .collect(),
            target_id: target.id,
            redo_files,
            redo_dir: slob.redo_dir.clone(),
            target_dir: target.path.clone(),
            _data: data,
            _redo: redo,
            doublewrite,
            data_fds,
            dbwr_fds,
            session_fds,
            group,
            redo_fds,
            outlier_ns: (cfg.outlier_ms * 1e6) as u64,
            mark,
            memory,
            cycle: Default::default(),
        })
    }

    /// The run ended (the harness joined every thread): the datafiles and
    /// redo logs fsynced, then the layouts' marks taken away (docs/verify.md,
    /// "Interrupted runs"). An error leaves the marks: verify then counts a
    /// torn block as the run's interruption, never as damage.
    pub fn ended(mut self) -> Result<(), MarkError> {
        // Out of the memory cgroup (and it removed) before anything else.
        drop(self.memory.take());
        let files = self.datafiles.iter().zip(&self.data_fds);
        let dw = self.doublewrite.iter().map(|(p, fd)| (p, fd.as_raw_fd()));
        let redo = self.redo_files.iter().zip(self.redo_fds.iter().copied());
        for (p, fd) in files.map(|(p, &fd)| (p, fd)).chain(redo).chain(dw) {
            // SAFETY: `self` keeps its files open until it drops, below.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
            rustix::fs::fsync(fd).map_err(|e| MarkError::fsync(p, e.into()))?;
        }
        self.mark.end()
    }

    /// The datafiles' descriptors when their writes are not durable by
    /// themselves (buffered, never synced: `--io buffered`, `--memory`):
    /// each checkpoint fsyncs them.
    fn unsynced_datafiles(&self) -> &[RawFd] {
        match self.cfg.io_mode {
            IoMode::Buffered => &self.data_fds,
            _ => &[],
        }
    }

    /// `--flavor postgres` through the page cache: a DB writer's writeback
    /// contexts, its checkpoint writes' and its other writes'.
    fn writeback(&self) -> Option<[Writeback; 2]> {
        let bs = self.slob.block_size;
        (self.slob.flavor == Flavor::Postgres && !self.unsynced_datafiles().is_empty()).then(|| {
            [
                Writeback::new(CHECKPOINT_FLUSH_AFTER, bs),
                Writeback::new(BGWRITER_FLUSH_AFTER, bs),
            ]
        })
    }

    fn role(&self, t: u32) -> Role {
        let n = self.slob.sessions();
        if t < n {
            Role::Session(t)
        } else if t < n + self.slob.db_writers {
            Role::DbWriter(t - n)
        } else if t == n + self.slob.db_writers {
            Role::LogWriter
        } else {
            Role::Cycle
        }
    }

    /// The model's counters per function, from what each thread counted
    /// (in thread order: sessions, DB writers, the log writer).
    pub fn finish(&self, parts: &[Tally]) -> SlobRun {
        let n = self.slob.sessions() as usize;
        let w = self.slob.db_writers as usize;
        let (mut sessions, mut dbwr, mut lgwr) =
            (Tally::default(), Tally::default(), Tally::default());
        for (t, part) in parts.iter().enumerate() {
            match t {
                t if t < n => sessions.merge(part),
                t if t < n + w => dbwr.merge(part),
                t if t == n + w => lgwr.merge(part),
                // The window's thread counts nothing.
                _ => {}
            }
        }
        SlobRun {
            sessions,
            dbwr,
            lgwr,
            redo_files: self.redo_files.clone(),
            cycle: self.cycle.get().cloned(),
        }
    }
}

impl Workload for Slob<'_> {
    type Thread = AnyEngine;
    type Part = Tally;

    fn threads(&self) -> Threads {
        let mut background: Vec<String> = (0..self.slob.db_writers)
            .map(|k| format!("dbio-dbwr-{k}"))
            .collect();
        background.push("dbio-lgwr".into());
        background.push("dbio-ckpt-cycle".into());
        Threads {
            sessions: self.slob.sessions(),
            background,
        }
    }

    fn storage(&self) -> Vec<PathBuf> {
        vec![self.target_dir.clone(), self.redo_dir.clone()]
    }

    fn prepare(&self, t: u32) -> Result<AnyEngine, SetupError> {
        let (kind, fds, depth, sync, who) = match self.role(t) {
            Role::Session(_) => (
                self.cfg.engine,
                // The doublewrite file too: `--flavor innodb` reads undo
                // pages there (and writes the log itself).
                &self.session_fds,
                1,
                SyncAfterWrite::None,
                "session",
            ),
            Role::DbWriter(_) => {
                let depth = match self.slob.dbwr_engine {
                    EngineKind::Psync => 1,
                    _ => self.slob.dbwr_batch,
                };
                // A page cleaner fsyncs once per batch, not after each write.
                let sync = match self.slob.flavor {
                    Flavor::Innodb => SyncAfterWrite::None,
                    Flavor::Oracle | Flavor::Postgres => SyncAfterWrite::for_mode(self.cfg.io_mode),
                };
                (
                    self.slob.dbwr_engine,
                    &self.dbwr_fds,
                    depth,
                    sync,
                    "DB writer",
                )
            }
            Role::LogWriter => {
                let sync = Durability::of(self.slob.flavor, self.slob.redo_sync)
                    .engine_sync(self.slob.redo_sync);
                (self.cfg.engine, &self.redo_fds, 1, sync, "log writer")
            }
            // It does no I/O.
            Role::Cycle => (
                EngineKind::Null,
                &self.redo_fds,
                1,
                SyncAfterWrite::None,
                "window",
            ),
        };
        if kind == EngineKind::Psync {
            // A system call per I/O on files opened before the threads
            // (as raw's psync sessions): the kernel then borrows the file
            // instead of taking a reference at every call.
            crate::engine::psync::private_fd_table();
        }
        AnyEngine::new(kind, fds, None, depth, sync, Default::default()).map_err(|source| {
            SetupError::Engine {
                who: who.to_string(),
                engine: kind.name(),
                source,
            }
        })
    }

    fn run(&self, t: u32, engine: AnyEngine, slot: &SessionSeries) -> ThreadEnd<Tally> {
        let (tally, stats, last_ns) = match self.role(t) {
            Role::Session(id) => session(self, id, engine, slot),
            Role::DbWriter(k) => dbwr(self, k, t, engine, slot),
            Role::LogWriter => lgwr(self, t, engine, slot),
            Role::Cycle => {
                let edges = super::cycle::follow(&self.inst, self.slob.window);
                let _ = self.cycle.set(edges);
                (Tally::default(), SessionStats::new(), 0)
            }
        };
        ThreadEnd {
            stats,
            last_ns,
            issued: tally.total.read_requests,
            part: tally,
        }
    }

    fn sessions_ended(&self) {
        self.inst.sessions_done.store(true, SeqCst);
        self.inst.log.post.notify();
        self.inst.dbwr_post.notify();
    }

    fn live(&self) -> Option<crate::workload::live::LiveDb> {
        let (sessions, writers) = (self.slob.sessions(), self.slob.db_writers);
        Some(super::live::sum(
            &self.inst.live,
            sessions as usize,
            writers as usize,
            self.slob.flavor,
        ))
    }
}

fn session(
    c: &Slob,
    id: u32,
    engine: AnyEngine,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    let slob = c.slob;
    let schema = id / slob.threads_per_schema;
    // A scan buffer only when there are scans: --scan-size per session
    // (1 MiB by default) would otherwise be most of a session's memory.
    let scan_blocks = if slob.scan_pct > 0 {
        slob.scan_blocks.max(1)
    } else {
        1
    };
    let scan_len = slob.block_size as usize * scan_blocks as usize;
    let mut s = Session {
        id,
        inst: &c.inst,
        cfg: slob,
        io_mode: c.cfg.io_mode,
        ts: c.ts,
        files: &c.io_files,
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
        scan_run: Vec::with_capacity(scan_blocks as usize),
        rows: Vec::with_capacity(slob.work_unit as usize),
        clock: 0,
        outlier_ns: c.outlier_ns,
        schedule: Schedule::of_run(c.cfg, &c.inst.run.arrivals),
        tally: Tally::default(),
        stats: match c.cfg.rate_iops {
            Some(_) => SessionStats::open_loop(),
            None => SessionStats::new(),
        },
        series: SeriesWriter::paced(slot, c.cfg.rate_iops.is_some()),
        backend: slob.backends_write().then(|| super::evict::BackendWriter {
            content: Content::new(c.cfg.content, slob.block_size, c.target_id),
            stamp: (c.target_id, c.cfg.seed as u32),
        }),
        group: c.group.as_ref().map(|g| (g, c.dbwr_fds.len() as u32)),
        prefetch: super::prefetch::Prefetch::of(
            slob.flavor == Flavor::Postgres,
            c.cfg.io_mode != IoMode::Direct,
            &c.data_fds,
        ),
    };
    s.run();
    let t0 = c.inst.run.start_ns.load(SeqCst);
    (s.tally, s.stats, now_ns().saturating_sub(t0))
}

/// `--flavor postgres`'s first DB writer's checkpoint end files, in the
/// redo log directory; None for the others, or when they could not be made
/// (the run fails, saying why).
fn checkpoint_end(c: &Slob, id: u32) -> Option<CheckpointEnd> {
    if id != 0 || c.slob.flavor != Flavor::Postgres {
        return None;
    }
    let dir = c.slob.redo_dir.join(REDO_SUBDIR);
    CheckpointEnd::create(&dir)
        .map_err(|e| {
            c.inst.run.fail(format!(
                "making the checkpoint's control files in {}: {e}",
                dir.display()
            ))
        })
        .ok()
}

fn dbwr(
    c: &Slob,
    id: u32,
    thread: u32,
    engine: AnyEngine,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    let batch = c.slob.dbwr_batch as usize;
    let mut d = DbWriter {
        id,
        thread,
        writers: c.slob.db_writers,
        inst: &c.inst,
        engine,
        io_mode: c.cfg.io_mode,
        ts: c.ts,
        stamp: (c.target_id, c.cfg.seed as u32),
        content: Content::new(c.cfg.content, c.inst.cache.block_size(), c.target_id),
        files: &c.io_files,
        doublewrite: c.doublewrite.as_ref().map(|(p, _)| {
            let file = c.datafiles.len() as u32;
            Doublewrite::new(file, p.clone(), id, c.slob.dbwr_batch, c.slob.block_size)
        }),
        batch,
        queued: vec![0; batch],
        scanned: 0,
        rng: Rng::for_stream(c.cfg.seed, u64::from(thread)),
        outlier_ns: c.outlier_ns,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
        pace: WriterPace::of(c.slob, id, now_ns(), c.unsynced_datafiles()),
        writeback: c.writeback(),
        ckpt_end: checkpoint_end(c, id),
        marked: (c.slob.flavor == Flavor::Postgres).then(|| {
            let buffers = c.inst.cache.buffers();
            Marked::with_capacity(buffers.div_ceil(c.slob.db_writers.max(1)))
        }),
    };
    super::dbwr::raise_priority(c.slob.dbwr_nice);
    d.run();
    (d.tally, d.stats, 0)
}

fn lgwr(
    c: &Slob,
    thread: u32,
    engine: AnyEngine,
    slot: &SessionSeries,
) -> (Tally, SessionStats, u64) {
    // A rewriting write starts up to a redo block before its redo.
    let size = (c.slob.log_buffer + u64::from(c.slob.redo_block)) as usize;
    let mut buf = BufPool::new(size, 1);
    let mut rng = Rng::for_stream(c.cfg.seed, u64::from(thread));
    rng.fill(buf.slot_mut(0, size));
    let mut l = LogWriter {
        id: thread,
        inst: &c.inst,
        engine,
        io_mode: c.cfg.io_mode,
        files: &c.redo_files,
        file_base: c.datafiles.len() as u32,
        file_size: c.slob.redo_file_size,
        redo_block: u64::from(c.slob.redo_block),
        partial: c.slob.flavor.partial_block(),
        durability: Durability::of(c.slob.flavor, c.slob.redo_sync),
        group: c.group.as_ref(),
        buf,
        seed: c.cfg.seed as u32,
        outlier_ns: c.outlier_ns,
        tally: Tally::default(),
        stats: SessionStats::new(),
        series: SeriesWriter::new(slot),
    };
    l.run();
    if c.inst.stopping() {
        // Sessions asleep in a wait see the stop now, not after their nap.
        c.inst.wake_waiters();
    }
    (l.tally, l.stats, 0)
}
