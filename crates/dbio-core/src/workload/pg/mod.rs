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
pub(crate) mod postmaster;
pub mod run;
pub mod server;
pub mod space;
pub mod stats;

pub use crate::config::db::PgConfig;

/// PostgreSQL's page size: one SLOB row per page.
pub const PAGE: u32 = 8192;
