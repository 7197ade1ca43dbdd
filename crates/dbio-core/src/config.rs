//! The resolved, validated settings of one run: what the CLI (and later plan
//! files) produce and what every stage reads. Serialized whole into reports.

use std::path::PathBuf;

use serde::Serialize;

use crate::choice::{Choice, Named};

use crate::workload::dist::Distribution;

/// What a raw workload asks of the storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// SLOB-style hot spot, in blocks once resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HotspotConfig {
    pub size_bytes: u64,
    pub offset_bytes: u64,
    /// Every Nth operation of a session goes to the hot spot.
    pub every: u32,
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLength {
    /// Run for `ramp_s + time_s` seconds; measure the last `time_s`.
    Time { time_s: f64, ramp_s: f64 },
    /// Issue exactly this many I/O requests in total, all measured.
    Ops { ops: u64 },
}

/// Everything one `dbio run` needs, validated.
#[derive(Clone, Debug, Serialize)]
pub struct RunConfig {
    pub workload: &'static str,
    pub target: PathBuf,
    /// Data files to lay out in a directory target.
    pub files: u32,
    /// Requested data size: total over all files, or the span of a device.
    pub size_bytes: Option<u64>,
    #[serde(rename = "block_size_bytes")]
    pub block_size: u32,
    /// The raw workload's pattern; `None` (null in the JSON) for a database
    /// model (slob, pg), whose mix is its update percentage.
    pub pattern: Option<Pattern>,
    /// Percentage of reads in randrw (0..=100); `None` as `pattern`.
    pub read_pct: Option<u8>,
    pub sessions: u32,
    pub iodepth: u32,
    pub engine: EngineKind,
    /// How each session's io_uring is set up (`--fixedbufs`,
    /// `--sqthread-poll`, …): with `--engine io_uring` in a raw run only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uring: Option<crate::engine::uring::UringOpts>,
    pub io_mode: IoMode,
    pub length: RunLength,
    #[serde(serialize_with = "serialize_display")]
    pub distribution: Distribution,
    pub hotspot: Option<HotspotConfig>,
    /// Total target rate over all sessions, I/O requests per second.
    pub rate_iops: Option<u64>,
    pub seed: u64,
    /// Streams laying out the data files (`--load-parallel`); how the
    /// target is written, not what is measured (not in the report).
    #[serde(skip)]
    pub load_parallel: u32,
    pub outlier_ms: f64,
    /// Device and host telemetry sampling interval, seconds.
    pub interval_s: f64,
    /// The device path the user repeated to allow destroying it.
    pub destroy_device: Option<PathBuf>,
    /// A directory target on the root filesystem under a mount-like path is intended.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub allow_root_fs: bool,
    /// Checks of what the run reads (`--verify`, `--verify-after-write`; raw only).
    #[serde(skip_serializing_if = "crate::verify::online::VerifyOpts::is_off")]
    pub verify: crate::verify::online::VerifyOpts,
    /// What written blocks hold (`--compress-pct`, `--dedupe-pct`; raw only).
    #[serde(skip_serializing_if = "crate::storage::content::ContentSpec::is_default")]
    pub content: crate::storage::content::ContentSpec,
    /// The database model's settings (`--workload slob`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slob: Option<crate::workload::slob::SlobConfig>,
    /// The PostgreSQL run's settings (`--workload pg`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pg: Option<crate::workload::pg::PgConfig>,
    /// The MariaDB run's settings (`--workload mysql`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mysql: Option<crate::workload::mysql::MysqlConfig>,
    /// The replay's settings and its trace's shape (`--workload replay`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::workload::replay::ReplayConfig>,
}

impl RunConfig {
    /// True when the run writes to its data: a raw pattern that writes, or a
    /// database model with updates.
    pub fn writes(&self) -> bool {
        if let Some(r) = &self.replay {
            return r.facts.writes();
        }
        match (self.pattern, &self.slob, &self.pg) {
            (Some(p), _, _) => p.writes(),
            (None, Some(s), _) => s.update_pct > 0,
            (None, None, Some(pg)) => pg.slob.update_pct > 0,
            (None, None, None) => false,
        }
    }
}

fn serialize_display<S: serde::Serializer>(v: &Distribution, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}
