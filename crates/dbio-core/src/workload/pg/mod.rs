//! `--workload pg`: the SLOB method on a real PostgreSQL that dbio starts on
//! the storage under test (docs/pg.md). The sessions are connections; the
//! server does the physical I/O; dbio measures each operation from the
//! client, and the server's own statistics (pg_stat_database, bgwriter,
//! WAL) and wait events beside the devices' telemetry.
//!
//! * `server` — binaries, the throwaway cluster, start and always stop.
//! * `data` — SLOB's tables (one row per 8 KiB block, scattered keys),
//!   loaded in parallel and reused when the shape matches.
//! * `stats` — snapshots of the server's counters and their deltas.
//! * `run` — the workload: sessions and the wait-event sampler.

pub mod binaries;
pub mod data;
pub mod endpoint;
mod lifecycle;
mod options;
pub mod run;
pub mod server;
pub mod stats;

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::workload::slob::SlobConfig;

/// PostgreSQL's page size: one SLOB row per page.
pub const PAGE: u32 = 8192;

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "PostgreSQL (--workload pg)")]
pub struct PgArgs {
    /// Directory of PostgreSQL's binaries [default: the highest /usr/lib/postgresql/*/bin].
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,

    /// A server setting, NAME=VALUE (repeatable); wins over dbio's own (e.g. --pg-set wal_compression=on).
    #[arg(long = "pg-set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub pg_set: Vec<(String, String)>,

    /// Bound the memory of the server's processes, page cache included (a memory cgroup), e.g. 256M: physical reads then reach the device.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub pg_memory: Option<u64>,

    /// Use this existing server instead of starting one (postgresql://USER@HOST/DB, or postgresql:///DB?host=/socket/dir): dbio works in a schema dbio of its own there and changes no settings.
    #[arg(long, value_name = "URL")]
    pub pg_url: Option<String>,
}

impl PgArgs {
    /// The first pg option given, for refusing them with other workloads.
    pub fn first_given(&self) -> Option<&'static str> {
        if self.pg_bin.is_some() {
            Some("--pg-bin")
        } else if !self.pg_set.is_empty() {
            Some("--pg-set")
        } else if self.pg_memory.is_some() {
            Some("--pg-memory")
        } else if self.pg_url.is_some() {
            Some("--pg-url")
        } else {
            None
        }
    }
}

/// `NAME=VALUE` with a setting-like name.
fn parse_setting(s: &str) -> Result<(String, String), String> {
    crate::workload::db::parse_setting(s, "wal_compression=on")
}

/// The resolved settings of a pg run (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PgConfig {
    /// SLOB's shape and mix (schemas, scale, work unit, update pct, cache =
    /// shared_buffers, redo dir = WAL dir, work loop).
    pub slob: SlobConfig,
    /// Whether --redo-dir was given (WAL beside the data otherwise).
    pub wal_dir: Option<PathBuf>,
    pub bin: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    /// `--pg-memory`: the server's memory limit (a cgroup), bytes.
    pub memory_bytes: Option<u64>,
    /// `--pg-url` (kept out of reports: it may hold a password).
    #[serde(skip)]
    pub url: Option<String>,
    /// `--pg-url` with its password masked, as reports show it.
    pub url_redacted: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_or_say_what_is_wrong() {
        assert_eq!(
            parse_setting("Wal_Compression = on").unwrap(),
            ("wal_compression".into(), "on".into())
        );
        assert_eq!(
            parse_setting("shared_buffers=1GB").unwrap().1,
            "1GB".to_string()
        );
        assert!(parse_setting("nothing").unwrap_err().contains("NAME=VALUE"));
        assert!(
            parse_setting("a b=1")
                .unwrap_err()
                .contains("not a setting name")
        );
    }
}
