//! `--workload mysql`: the SLOB method on a real MariaDB/InnoDB that dbio
//! starts on the storage under test (docs/mysql.md). What any database
//! server needs is `db/`'s (the unprivileged user, the memory cgroup, the
//! session loop, the sampler, the report's shared sections); here is only
//! what is MariaDB's:
//!
//! * `binaries` — `mariadbd`, the SQL of its system tables, the `mysql` user.
//! * `args` — the server's command line: every setting one argument, no
//!   shell and no option file.
//! * `bootstrap` — the system tables made by `mariadbd --bootstrap` (what
//!   `mariadb-install-db` does, without its shell), a failure's cause.
//! * `server` — the throwaway instance, start as `mysql`, a guard that stops it.
//! * `space` — what the server writes, for the free-space check.
//! * `endpoint` — dbio's server or `--mysql-url`, where dbio works only in
//!   a database of its own.
//! * `lifecycle` — stop, a killed dbio's orphan, a killed server's socket
//!   and pid file, `dbio clean`.
//! * `data` — SLOB's tables in InnoDB (rows of just under half a page,
//!   scattered keys, a secondary index on the key), reused by shape.
//! * `stats` — `SHOW GLOBAL STATUS` snapshots and their deltas.
//! * `run` — the workload: sessions with prepared statements, the sampler.

pub mod args;
pub mod binaries;
pub mod bootstrap;
pub mod data;
pub mod endpoint;
pub mod lifecycle;
pub mod run;
pub mod server;
pub mod space;
pub mod stats;

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::workload::db::ServerConfig;
use crate::workload::slob::SlobConfig;

/// Most partitions (`--files`) of a table dbio makes (MariaDB allows 8192;
/// each is an open .ibd file and a B-tree descent per statement).
pub const MAX_FILES: u32 = 64;

/// InnoDB's page size when `--bs` is not given.
pub const DEFAULT_PAGE: u32 = 16384;

/// The resolved settings of a mysql run (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MysqlConfig {
    /// SLOB's shape and mix (schemas, scale, work unit, update pct, cache =
    /// innodb_buffer_pool_size, work loop).
    pub slob: SlobConfig,
    /// `--bs`: innodb_page_size, bytes.
    #[serde(rename = "page_size_bytes")]
    pub page_size: u32,
    /// `--files`: the data files of each table, its HASH partitions (each an
    /// .ibd file with innodb_file_per_table); 1 is a table without partitions.
    pub files: u32,
    /// `--io`: innodb_flush_method.
    #[serde(deserialize_with = "deserialize_flush_method")]
    pub flush_method: crate::config::StaticName,
    /// `--redo-dir`: innodb_log_group_home_dir (beside the data otherwise).
    pub redo_dir: Option<PathBuf>,
    /// `--mysql-bin`, `--mysql-set`, `--mysql-memory`, `--mysql-url` (flattened).
    #[serde(flatten)]
    pub server: ServerConfig,
}

/// The flush methods a mysql run may name (`--io direct`, `fsync`, `dsync`).
const FLUSH_METHODS: [&str; 3] = ["O_DIRECT", "fsync", "O_DSYNC"];

/// A stored `flush_method` read back as this build's name for it.
fn deserialize_flush_method<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<&'static str, D::Error> {
    crate::config::static_name(d, &FLUSH_METHODS)
}
