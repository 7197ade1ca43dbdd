//! The resolved, validated settings of one run: what the CLI (and later plan
//! files) produce and what every stage reads. Serialized whole into reports
//! and read back from them (`json.rs`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod content;
pub mod db;
pub mod dist;
mod json;
pub mod replay;
pub mod slob;
pub mod uring;
pub mod verify;
pub use json::ConfigJsonError;

use crate::choice::{Choice, Named};

use dist::Distribution;

/// What a raw workload asks of the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Randread,
    Randwrite,
    Randrw,
    Seqread,
    Seqwrite,
}

impl Choice for Pattern {
    const ALL: &'static [(Self, Named)] = &[
        (Pattern::Randread, Named::plain("randread")),
        (Pattern::Randwrite, Named::plain("randwrite")),
        (Pattern::Randrw, Named::plain("randrw")),
        (Pattern::Seqread, Named::plain("seqread")),
        (Pattern::Seqwrite, Named::plain("seqwrite")),
    ];
}

impl Pattern {
    /// True when the pattern issues any write.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Pattern::Randwrite | Pattern::Randrw | Pattern::Seqwrite
        )
    }
    /// True for sequential patterns.
    pub fn sequential(self) -> bool {
        matches!(self, Pattern::Seqread | Pattern::Seqwrite)
    }
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Randread => "randread",
            Pattern::Randwrite => "randwrite",
            Pattern::Randrw => "randrw",
            Pattern::Seqread => "seqread",
            Pattern::Seqwrite => "seqwrite",
        }
    }
}

/// How I/O is issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    /// pread/pwrite from each session thread, one I/O at a time.
    #[serde(rename = "psync")]
    Psync,
    /// One io_uring per session thread with --iodepth requests in flight.
    #[serde(rename = "io_uring")]
    IoUring,
    /// Completes every request at once without I/O (as fio's null engine): dbio's own cost.
    #[serde(rename = "null")]
    Null,
}

impl Choice for EngineKind {
    const ALL: &'static [(Self, Named)] = &[
        (
            EngineKind::Psync,
            Named::help(
                "psync",
                "pread/pwrite from each session thread, one I/O at a time",
            ),
        ),
        (
            EngineKind::IoUring,
            Named {
                name: "io_uring",
                aliases: &["uring"],
                help: Some("One io_uring per session thread with --iodepth requests in flight"),
            },
        ),
        (
            EngineKind::Null,
            Named::help(
                "null",
                "Completes every request at once without I/O (as fio's null engine): dbio's own cost",
            ),
        ),
    ];
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Psync => "psync",
            EngineKind::IoUring => "io_uring",
            EngineKind::Null => "null",
        }
    }
}

/// How files are opened and when writes become durable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// O_DIRECT: bypass the page cache (aligned buffers).
    Direct,
    /// Through the page cache, never synced.
    Buffered,
    /// Buffered write followed by fsync() (InnoDB's default).
    Fsync,
    /// Buffered write followed by fdatasync().
    Fdatasync,
    /// O_DSYNC: every write is durable when it returns.
    Dsync,
}

impl Choice for IoMode {
    const ALL: &'static [(Self, Named)] = &[
        (
            IoMode::Direct,
            Named::help(
                "direct",
                "O_DIRECT: bypass the page cache (aligned buffers)",
            ),
        ),
        (
            IoMode::Buffered,
            Named::help("buffered", "Through the page cache, never synced"),
        ),
        (
            IoMode::Fsync,
            Named::help(
                "fsync",
                "Buffered write followed by fsync() (InnoDB's default)",
            ),
        ),
        (
            IoMode::Fdatasync,
            Named::help("fdatasync", "Buffered write followed by fdatasync()"),
        ),
        (
            IoMode::Dsync,
            Named::help("dsync", "O_DSYNC: every write is durable when it returns"),
        ),
    ];
}

impl IoMode {
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Direct => "direct",
            IoMode::Buffered => "buffered",
            IoMode::Fsync => "fsync",
            IoMode::Fdatasync => "fdatasync",
            IoMode::Dsync => "dsync",
        }
    }
    /// Whether each write is followed by an explicit sync call.
    pub fn syncs_after_write(self) -> bool {
        matches!(self, IoMode::Fsync | IoMode::Fdatasync)
    }
}

/// How the requests of an open-loop run (`--rate`) fall due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Evenly spaced: one every sessions/rate seconds in each session.
    Uniform,
    /// A Poisson process: exponential gaps from the run's seeded generator.
    Poisson,
}

impl Choice for Arrival {
    const ALL: &'static [(Self, Named)] = &[
        (
            Arrival::Uniform,
            Named::help("uniform", "evenly spaced requests (the default)"),
        ),
        (
            Arrival::Poisson,
            Named::help("poisson", "exponential gaps, as independent users arrive"),
        ),
    ];
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }
}

/// SLOB-style hot spot, in blocks once resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotspotConfig {
    pub size_bytes: u64,
    pub offset_bytes: u64,
    /// Every Nth operation of a session goes to the hot spot.
    pub every: u32,
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLength {
    /// Run for `ramp_s + time_s` seconds; measure the last `time_s`.
    Time { time_s: f64, ramp_s: f64 },
    /// Issue exactly this many I/O requests in total, all measured.
    Ops { ops: u64 },
}

/// Everything one `dbio run` needs, validated: the settings every workload
/// shares, and [`WorkloadConfig`], which workload it is with its own.
///
/// Its JSON (`config` in the run document, `dbio.run.v2`) is the shape it
/// had before the workload was a type: `workload` as a word, a raw run's
/// `pattern` and `read_pct` (null for the others) among the shared fields,
/// a model's or server's settings as `slob`, `pg` or `mysql` (`json.rs`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(into = "json::RunConfigJson", try_from = "json::RunConfigJson")]
pub struct RunConfig {
    pub target: PathBuf,
    /// Data files to lay out in a directory target.
    pub files: u32,
    /// Requested data size: total over all files, or the span of a device.
    pub size_bytes: Option<u64>,
    pub block_size: u32,
    pub sessions: u32,
    pub iodepth: u32,
    pub engine: EngineKind,
    pub io_mode: IoMode,
    pub length: RunLength,
    pub hotspot: Option<HotspotConfig>,
    /// Total rate asked over all sessions (`--rate`), per second: I/O
    /// requests for raw, operations for the SLOB model, transactions for
    /// the servers ([`WorkloadConfig::paced`]). With it the run is
    /// open-loop: they fall due on a schedule that never waits for
    /// completions, and latency is counted from the due time as well as
    /// from the start.
    pub rate_iops: Option<u64>,
    /// How requests fall due under `rate_iops` (`--arrival`); `None`
    /// exactly when there is no rate (a closed loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arrival: Option<Arrival>,
    pub seed: u64,
    /// Streams laying out the data files (`--load-parallel`); how the
    /// target is written, not what is measured (not in the report; 1 when
    /// read back from one).
    pub load_parallel: u32,
    pub outlier_ms: f64,
    /// Device and host telemetry sampling interval, seconds.
    pub interval_s: f64,
    /// The device path the user repeated to allow destroying it.
    pub destroy_device: Option<PathBuf>,
    /// A directory target on the root filesystem under a mount-like path is intended.
    pub allow_root_fs: bool,
    /// What written blocks hold (`--compress-pct`, `--dedupe-pct`: the
    /// workloads that write their own blocks, raw and slob).
    pub content: content::ContentSpec,
    /// Steady state (`--steady-state`, `--precondition`): rounds judged by
    /// the PTS's rules end the run once steady; the length's `time_s` is
    /// then the cap. `None`: the run lasts its length.
    pub steady: Option<crate::steady::Steady>,
    /// Which workload, with the settings only it has.
    pub workload: WorkloadConfig,
}

/// Which workload a run is, with the settings only it has. Adding one is a
/// variant here and the arms the compiler then asks for (ARCHITECTURE.md,
/// "where to add things"), as `Replay` was.
#[derive(Clone, Debug)]
pub enum WorkloadConfig {
    /// `--workload raw`: patterns of block I/O on files or a device.
    Raw(RawConfig),
    /// `--workload slob`: the SLOB database model.
    Slob(slob::SlobConfig),
    /// `--workload pg`: SLOB's shape on a real PostgreSQL.
    Pg(db::PgConfig),
    /// `--workload mysql`: SLOB's shape on a real MariaDB.
    Mysql(db::MysqlConfig),
    /// `--workload replay`: a captured or imported block trace, with the
    /// trace's shape.
    Replay(replay::ReplayConfig),
}

/// The raw workload's own settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawConfig {
    pub pattern: Pattern,
    /// Percentage of reads in randrw (0..=100; 100 or 0 for the others).
    pub read_pct: u8,
    /// Which blocks random patterns pick (`--dist`).
    pub distribution: Distribution,
    /// How each session's io_uring is set up (`--fixedbufs`,
    /// `--sqthread-poll`, …): with `--engine io_uring` only.
    pub uring: Option<uring::UringOpts>,
    /// Checks of what the run reads (`--verify`, `--verify-after-write`).
    pub verify: verify::VerifyOpts,
}

/// What one unit of `--rate` is in a workload: what falls due on its
/// sessions' schedules, and is timed from its due time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paced {
    /// Each I/O request (raw): many in flight per session.
    Requests,
    /// Each operation of the SLOB model (an "execute": a select, an update
    /// with its commit, or a scan), one at a time per session.
    Operations,
    /// Each transaction on a database server (SLOB's select, update +
    /// COMMIT, or scan), one at a time per session.
    Transactions,
}

impl Paced {
    /// The unit in words (plural): "requests", "operations", "transactions".
    pub fn name(self) -> &'static str {
        match self {
            Paced::Requests => "requests",
            Paced::Operations => "operations",
            Paced::Transactions => "transactions",
        }
    }
}

impl WorkloadConfig {
    /// What `--rate` paces in this workload; `None` for a workload that
    /// takes no rate (replay keeps its trace's own times). The one place a
    /// workload says it accepts `--rate` (and so `dbio curve` and
    /// `--latency-target`).
    pub fn paced(&self) -> Option<Paced> {
        match self {
            WorkloadConfig::Raw(_) => Some(Paced::Requests),
            WorkloadConfig::Slob(_) => Some(Paced::Operations),
            WorkloadConfig::Pg(_) | WorkloadConfig::Mysql(_) => Some(Paced::Transactions),
            WorkloadConfig::Replay(_) => None,
        }
    }

    /// `--workload NAME`'s word (`workload` in the JSON, the store's column).
    pub fn name(&self) -> &'static str {
        match self {
            WorkloadConfig::Raw(_) => "raw",
            WorkloadConfig::Slob(_) => "slob",
            WorkloadConfig::Pg(_) => "pg",
            WorkloadConfig::Mysql(_) => "mysql",
            WorkloadConfig::Replay(_) => "replay",
        }
    }

    /// The raw workload's settings; `None` for the others.
    pub fn raw(&self) -> Option<&RawConfig> {
        match self {
            WorkloadConfig::Raw(r) => Some(r),
            WorkloadConfig::Slob(_)
            | WorkloadConfig::Pg(_)
            | WorkloadConfig::Mysql(_)
            | WorkloadConfig::Replay(_) => None,
        }
    }

    /// The SLOB model's settings (`--workload slob`: dbio writes the blocks
    /// and the redo itself); `None` for the others.
    pub fn model(&self) -> Option<&slob::SlobConfig> {
        match self {
            WorkloadConfig::Slob(s) => Some(s),
            WorkloadConfig::Raw(_)
            | WorkloadConfig::Pg(_)
            | WorkloadConfig::Mysql(_)
            | WorkloadConfig::Replay(_) => None,
        }
    }

    /// SLOB's shape and mix: the model's own, or the one a server runs;
    /// `None` for raw.
    pub fn shape(&self) -> Option<&slob::SlobConfig> {
        match self {
            WorkloadConfig::Raw(_) | WorkloadConfig::Replay(_) => None,
            WorkloadConfig::Slob(s) => Some(s),
            WorkloadConfig::Pg(pg) => Some(&pg.slob),
            WorkloadConfig::Mysql(my) => Some(&my.slob),
        }
    }

    /// The server's own options, for a workload on a database server.
    pub fn server(&self) -> Option<&db::ServerConfig> {
        match self {
            WorkloadConfig::Raw(_) | WorkloadConfig::Slob(_) | WorkloadConfig::Replay(_) => None,
            WorkloadConfig::Pg(pg) => Some(&pg.server),
            WorkloadConfig::Mysql(my) => Some(&my.server),
        }
    }
}

impl RunConfig {
    /// True when the run writes to its data: a raw pattern that writes, a
    /// database workload with updates, or `--precondition`.
    pub fn writes(&self) -> bool {
        if self.steady.is_some_and(|s| s.precondition) {
            return true; // the sequential fill before the rounds
        }
        match &self.workload {
            WorkloadConfig::Raw(r) => r.pattern.writes(),
            WorkloadConfig::Slob(s) => s.update_pct > 0,
            WorkloadConfig::Pg(pg) => pg.slob.update_pct > 0,
            WorkloadConfig::Mysql(my) => my.slob.update_pct > 0,
            WorkloadConfig::Replay(r) => r.facts.writes(),
        }
    }

    /// The measured seconds (`--time`), `None` for a run of `--ops`.
    pub fn time_s(&self) -> Option<f64> {
        match self.length {
            RunLength::Time { time_s, .. } => Some(time_s),
            RunLength::Ops { .. } => None,
        }
    }

    /// The seconds before measuring starts (`--ramp`; 0 for `--ops`).
    pub fn ramp_s(&self) -> f64 {
        match self.length {
            RunLength::Time { ramp_s, .. } => ramp_s,
            RunLength::Ops { .. } => 0.0,
        }
    }

    /// The whole run's planned seconds, ramp included; `None` for `--ops`.
    pub fn total_s(&self) -> Option<f64> {
        self.time_s().map(|t| t + self.ramp_s())
    }
}
