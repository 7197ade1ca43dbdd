//! The settings of the workloads on a real database server (`--workload pg`,
//! `--workload mysql`): SLOB's shape, each server's own options, and what
//! every server has (`ServerConfig`). Plain values, resolved and validated
//! by the `dbio` crate's `cli/pg.rs`, `cli/mysql.rs` and `cli/db.rs`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::slob::SlobConfig;

/// A server workload's own options resolved (flattened into its config:
/// `pg.bin`, `mysql.set`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerConfig {
    /// `--pg-bin`, `--mysql-bin`.
    pub bin: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    /// `--pg-memory`, `--mysql-memory`: the server's memory limit (a
    /// cgroup), bytes.
    pub memory_bytes: Option<u64>,
    /// `--pg-url`, `--mysql-url` (kept out of reports: it may hold a password).
    #[serde(skip)]
    pub url: Option<String>,
    /// The URL with its password masked, as reports show it.
    pub url_redacted: Option<String>,
}

/// The resolved settings of a pg run (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgConfig {
    /// SLOB's shape and mix (schemas, scale, work unit, update pct, cache =
    /// shared_buffers, redo dir = WAL dir, work loop).
    pub slob: SlobConfig,
    /// Whether --redo-dir was given (WAL beside the data otherwise).
    pub wal_dir: Option<PathBuf>,
    /// `--pg-bin`, `--pg-set`, `--pg-memory`, `--pg-url` (flattened).
    #[serde(flatten)]
    pub server: ServerConfig,
}

/// The innodb_flush_method values dbio sets (`--io direct`, `fsync`, `dsync`).
pub const FLUSH_METHODS: [&str; 3] = ["O_DIRECT", "fsync", "O_DSYNC"];

/// An innodb_flush_method, one of [`FLUSH_METHODS`] (a name of its own so
/// that serde reads it through [`flush_method`], not as borrowed text).
pub type FlushMethod = &'static str;

/// A stored flush method read back as the one of [`FLUSH_METHODS`] it names.
fn flush_method<'de, D: serde::Deserializer<'de>>(d: D) -> Result<FlushMethod, D::Error> {
    let text = String::deserialize(d)?;
    FLUSH_METHODS
        .into_iter()
        .find(|m| *m == text)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "flush_method {text:?} is not one of {}",
                FLUSH_METHODS.join(", ")
            ))
        })
}

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
    /// `--io`: innodb_flush_method, one of [`FLUSH_METHODS`].
    #[serde(deserialize_with = "flush_method")]
    pub flush_method: FlushMethod,
    /// `--redo-dir`: innodb_log_group_home_dir (beside the data otherwise).
    pub redo_dir: Option<PathBuf>,
    /// `--mysql-bin`, `--mysql-set`, `--mysql-memory`, `--mysql-url` (flattened).
    #[serde(flatten)]
    pub server: ServerConfig,
}
