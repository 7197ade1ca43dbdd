//! `--workload mysql`: the SLOB method on a real MariaDB/InnoDB that dbio
//! starts on the storage under test (docs/mysql.md). What any database
//! server needs is `db/`'s (the unprivileged user, the memory cgroup, the
//! session loop, the sampler, the report's shared sections); here is only
//! what is MariaDB's:
//!
//! * `binaries` — `mariadbd` and `mariadb-install-db`, the `mysql` user.
//! * `server` — the throwaway instance (`mariadb-install-db`,
//!   `my.cnf` from dbio's options), start as `mysql`, a guard that stops it.
//! * `endpoint` — dbio's server or `--mysql-url`, where dbio works only in
//!   a database of its own.
//! * `lifecycle` — stop, a killed dbio's orphan, a killed server's socket
//!   and pid file, `dbio clean`.
//! * `data` — SLOB's tables in InnoDB (rows of just under half a page,
//!   scattered keys, a secondary index on the key), reused by shape.
//! * `stats` — `SHOW GLOBAL STATUS` snapshots and their deltas.
//! * `run` — the workload: sessions with prepared statements, the sampler.

pub mod binaries;
pub mod data;
pub mod endpoint;
pub mod lifecycle;
mod options;
pub mod run;
pub mod server;
pub mod stats;

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::workload::slob::SlobConfig;

/// Most partitions (`--files`) of a table dbio makes (MariaDB allows 8192;
/// each is an open .ibd file and a B-tree descent per statement).
pub const MAX_FILES: u32 = 64;

/// InnoDB's page size when `--bs` is not given.
pub const DEFAULT_PAGE: u32 = 16384;

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "MariaDB (--workload mysql)")]
pub struct MysqlArgs {
    /// Directory holding mariadbd and mariadb-install-db [default: /usr/sbin and /usr/bin, Debian's mariadb-server].
    #[arg(long, value_name = "DIR")]
    pub mysql_bin: Option<PathBuf>,

    /// A server setting, NAME=VALUE (repeatable), written to dbio's my.cnf after dbio's own (e.g. --mysql-set innodb_doublewrite=0).
    #[arg(long = "mysql-set", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub mysql_set: Vec<(String, String)>,

    /// Use this existing server instead of starting one (mysql://USER:PASSWORD@HOST:PORT/, or mysql://USER@localhost/?socket=/path): dbio works in a database dbio of its own there and changes no settings.
    #[arg(long, value_name = "URL")]
    pub mysql_url: Option<String>,

    /// Bound the memory of the server, page cache included (a memory cgroup), e.g. 512M: with --io fsync, reads then reach the device.
    #[arg(long, value_name = "SIZE", value_parser = crate::units::parse_size)]
    pub mysql_memory: Option<u64>,
}

impl MysqlArgs {
    /// The first mysql option given, for refusing them with other workloads.
    pub fn first_given(&self) -> Option<&'static str> {
        if self.mysql_bin.is_some() {
            Some("--mysql-bin")
        } else if !self.mysql_set.is_empty() {
            Some("--mysql-set")
        } else if self.mysql_memory.is_some() {
            Some("--mysql-memory")
        } else if self.mysql_url.is_some() {
            Some("--mysql-url")
        } else {
            None
        }
    }
}

fn parse_setting(s: &str) -> Result<(String, String), String> {
    crate::workload::db::parse_setting(s, "innodb_doublewrite=0")
}

/// The resolved settings of a mysql run (part of the run's configuration).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MysqlConfig {
    /// SLOB's shape and mix (schemas, scale, work unit, update pct, cache =
    /// innodb_buffer_pool_size, work loop).
    pub slob: SlobConfig,
    /// `--bs`: innodb_page_size.
    pub page_size: u32,
    /// `--files`: the data files of each table, its HASH partitions (each an
    /// .ibd file with innodb_file_per_table); 1 is a table without partitions.
    pub files: u32,
    /// `--io`: innodb_flush_method.
    pub flush_method: &'static str,
    /// `--redo-dir`: innodb_log_group_home_dir (beside the data otherwise).
    pub redo_dir: Option<PathBuf>,
    /// `--mysql-bin`.
    pub bin: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    /// `--mysql-memory`: the server's memory limit (a cgroup), bytes.
    pub memory_bytes: Option<u64>,
    /// `--mysql-url` (kept out of reports: it may hold a password).
    #[serde(skip)]
    pub url: Option<String>,
    /// `--mysql-url` with its password masked, as reports show it.
    pub url_redacted: Option<String>,
}
