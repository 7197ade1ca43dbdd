//! `--workload pg`: the SLOB method on a real PostgreSQL that dbio starts on
//! the storage under test (docs/pg.md). The sessions are connections; the
//! server does the physical I/O; dbio measures each operation from the
//! client, and the server's own statistics (pg_stat_database, bgwriter,
//! WAL) and wait events beside the devices' telemetry.
//!
//! * `server` — binaries, the throwaway cluster, start and always stop
//!   (`postmaster`: no pg_ctl, no shell; `conf`: postgresql.conf's quoting;
//!   `lifecycle`: every end; `space`: what it will write, for the
//!   free-space check and dbio's `max_wal_size`).
//! * `data` — SLOB's tables (one row per 8 KiB block, scattered keys),
//!   loaded in parallel and reused when the shape matches.
//! * `stats` — snapshots of the server's counters and their deltas.
//! * `run` — the workload: sessions and the wait-event sampler.

pub mod binaries;
pub mod conf;
pub mod data;
pub mod endpoint;
mod lifecycle;
pub mod postmaster;
pub mod run;
pub mod server;
pub mod space;
pub mod stats;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::workload::db::ServerConfig;
use crate::workload::slob::SlobConfig;

/// PostgreSQL's page size: one SLOB row per page.
pub const PAGE: u32 = 8192;

/// The resolved settings of a pg run (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgConfig {
    /// SLOB's shape and mix (schemas, scale, work unit, update pct, cache =
    /// shared_buffers, redo dir = WAL dir, work loop).
    pub slob: SlobConfig,
    /// Whether --redo-dir was given (WAL beside the data otherwise).
    pub wal_dir: Option<PathBuf>,
    /// `--pg-autovacuum`: autovacuum on dbio's tables (the stock server's
    /// default, on; off in runs stored before the option).
    #[serde(default)]
    pub autovacuum: bool,
    /// `--pg-bin`, `--pg-set`, `--pg-memory`, `--pg-url`, `--window` (flattened).
    #[serde(flatten)]
    pub server: ServerConfig,
}
