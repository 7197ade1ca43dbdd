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
pub(crate) mod bootstrap;
pub mod data;
pub mod endpoint;
pub mod lifecycle;
pub mod run;
pub mod server;
pub mod space;
pub mod stats;

/// Most partitions (`--files`) of a table dbio makes (MariaDB allows 8192;
/// each is an open .ibd file and a B-tree descent per statement).
pub const MAX_FILES: u32 = 64;

/// InnoDB's page size when `--bs` is not given.
pub const DEFAULT_PAGE: u32 = 16384;

pub use crate::config::db::{FLUSH_METHODS, FlushMethod, MysqlConfig};
