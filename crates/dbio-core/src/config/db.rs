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
    /// `--window`: where the window sits in the checkpoint cycle.
    #[serde(default)]
    pub window: CycleWindow,
}

/// Where the measured window opens and closes in the checkpoint cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleWindow {
    /// When the ramp ends, wherever the cycle is (the default).
    #[default]
    Any,
    /// Right after a checkpoint completes (PostgreSQL: dbio's `CHECKPOINT`;
    /// MariaDB: the next checkpoint InnoDB makes).
    AfterCheckpoint,
    /// Right after a checkpoint, closing once this many more have
    /// completed: whole cycles (or at `--time`, the longest it may run).
    Cycles(u32),
}

impl CycleWindow {
    /// `any`, `after-checkpoint`, `cycles` (one) or `cycles:N`.
    pub fn parse(s: &str) -> Result<CycleWindow, String> {
        let bad = || {
            format!(
                "--window {s:?}: give any, after-checkpoint, or cycles:N (N whole checkpoint cycles, 1 to 1000)"
            )
        };
        match s {
            "any" => Ok(CycleWindow::Any),
            "after-checkpoint" => Ok(CycleWindow::AfterCheckpoint),
            "cycles" => Ok(CycleWindow::Cycles(1)),
            _ => {
                let n: u32 = s
                    .strip_prefix("cycles:")
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(bad)?;
                match n {
                    1..=1000 => Ok(CycleWindow::Cycles(n)),
                    _ => Err(bad()),
                }
            }
        }
    }

    /// Wherever the ramp ends (the default).
    pub(crate) fn is_any(&self) -> bool {
        matches!(self, CycleWindow::Any)
    }

    /// The window opens right after a checkpoint.
    pub(crate) fn starts_at_checkpoint(self) -> bool {
        !matches!(self, CycleWindow::Any)
    }

    /// How many completed checkpoints close the window, if any do.
    pub fn cycles(self) -> Option<u32> {
        match self {
            CycleWindow::Cycles(n) => Some(n),
            CycleWindow::Any | CycleWindow::AfterCheckpoint => None,
        }
    }

    /// The option's own words, as a report shows them.
    pub fn words(self) -> String {
        match self {
            CycleWindow::Any => "any".into(),
            CycleWindow::AfterCheckpoint => "after-checkpoint".into(),
            CycleWindow::Cycles(n) => format!("cycles:{n}"),
        }
    }
}

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
