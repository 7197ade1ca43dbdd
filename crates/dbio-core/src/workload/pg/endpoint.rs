//! Where the pg workload's connections go: the server dbio started (the
//! `dbio` database, the sampler in `postgres`), or an existing server named
//! by `--pg-url`, where dbio works only in a schema `dbio` of the URL's
//! database that it created itself (marked by a comment), never changes
//! server settings, and drops only that schema (`dbio clean --pg-url`).

use std::path::PathBuf;
use std::str::FromStr;

use super::server::{DATABASE, Server, ServerError};

/// The schema dbio works in on an existing server.
pub const SCHEMA: &str = "dbio";
/// The comment that marks the schema as dbio's.
pub const MARK: &str = "created by dbio (--workload pg); dbio clean --pg-url drops it";

/// Connection settings of a run.
#[derive(Clone)]
pub struct Endpoint {
    /// The workload's connections (tables, sessions).
    pub work: postgres::Config,
    /// The sampler's connection (another database when dbio owns the
    /// server, so its queries do not count in the workload's statistics).
    pub monitor: postgres::Config,
    /// The workload's database (pg_stat_database, pg_stat_activity).
    pub database: String,
    /// Whether dbio owns the server (it may create the database).
    pub own: bool,
}

impl Endpoint {
    /// The server dbio started.
    pub fn of(server: &Server) -> Endpoint {
        Endpoint {
            work: server.config(DATABASE),
            monitor: server.config("postgres"),
            database: DATABASE.into(),
            own: true,
        }
    }

    /// An existing server: `url` as libpq takes it (postgresql://...).
    pub fn url(url: &str) -> Result<Endpoint, ServerError> {
        let mut work = postgres::Config::from_str(url).map_err(|e| {
            ServerError::Usage(format!(
                "--pg-url: {e}; give postgresql://USER@HOST/DATABASE (or postgresql:///DB?host=/socket/dir)"
            ))
        })?;
        let database = work
            .get_dbname()
            .or(work.get_user())
            .ok_or_else(|| {
                ServerError::Usage(
                    "--pg-url names no database and no user; give postgresql://USER@HOST/DATABASE"
                        .into(),
                )
            })?
            .to_string();
        if work.get_application_name().is_none() {
            work.application_name("dbio");
        }
        let monitor = work.clone();
        work.options(&format!("-c search_path={SCHEMA}"));
        Ok(Endpoint {
            work,
            monitor,
            database,
            own: false,
        })
    }

    pub fn connect(&self) -> Result<postgres::Client, ServerError> {
        connect(&self.work)
    }

    pub fn connect_monitor(&self) -> Result<postgres::Client, ServerError> {
        connect(&self.monitor)
    }

    /// The data directory and WAL directory of a server on this host, when
    /// the connection may read them (superuser or pg_read_all_settings).
    pub fn local_storage(&self) -> Vec<PathBuf> {
        let Ok(mut c) = self.connect_monitor() else {
            return Vec::new();
        };
        let Ok(row) = c.query_one("SELECT current_setting('data_directory')", &[]) else {
            return Vec::new();
        };
        let data = PathBuf::from(row.get::<_, String>(0));
        if !data.is_dir() {
            return Vec::new();
        }
        let wal = std::fs::canonicalize(data.join("pg_wal")).unwrap_or(data.join("pg_wal"));
        vec![data, wal]
    }

    /// On an existing server: makes the schema `dbio`, or checks that the
    /// one there is dbio's. Refuses a schema of that name dbio did not make.
    pub(crate) fn claim_schema(&self) -> Result<(), ServerError> {
        let mut c = self.connect_monitor()?;
        let mark: Option<Option<String>> = c
            .query_opt(
                "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
                &[&SCHEMA],
            )
            .map_err(|e| ServerError::Failed(format!("--pg-url: read the schemas: {e}")))?
            .map(|r| r.get(0));
        match mark {
            Some(Some(m)) if m == MARK => Ok(()),
            Some(_) => Err(ServerError::Usage(format!(
                "--pg-url: database {} has a schema {SCHEMA} that dbio did not create; dbio works only in a schema of its own: rename or drop that schema, or use another database",
                self.database
            ))),
            None => c
                .batch_execute(&format!(
                    "CREATE SCHEMA {SCHEMA}; COMMENT ON SCHEMA {SCHEMA} IS '{MARK}'"
                ))
                .map_err(|e| {
                    ServerError::Failed(format!("--pg-url: cannot create schema {SCHEMA}: {e}"))
                }),
        }
    }
}

fn connect(c: &postgres::Config) -> Result<postgres::Client, ServerError> {
    c.connect(postgres::NoTls).map_err(|e| {
        ServerError::Failed(format!(
            "cannot connect to PostgreSQL: {}",
            super::run::db_message(&e)
        ))
    })
}

/// `dbio clean --pg-url`: drops the schema dbio made there (and only that).
/// Returns whether there was one.
pub fn clean(url: &str) -> Result<bool, ServerError> {
    let e = Endpoint::url(url)?;
    let mut c = e.connect_monitor()?;
    let mark: Option<Option<String>> = c
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&SCHEMA],
        )
        .map_err(|e| ServerError::Failed(format!("--pg-url: read the schemas: {e}")))?
        .map(|r| r.get(0));
    match mark {
        None => Ok(false),
        Some(Some(m)) if m == MARK => {
            c.batch_execute(&format!("DROP SCHEMA {SCHEMA} CASCADE"))
                .map_err(|e| ServerError::Failed(format!("--pg-url: drop schema {SCHEMA}: {e}")))?;
            Ok(true)
        }
        Some(_) => Err(ServerError::Usage(format!(
            "--pg-url: the schema {SCHEMA} in database {} was not created by dbio; nothing was dropped",
            e.database
        ))),
    }
}

pub use crate::workload::db::redact;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_the_report() {
        assert_eq!(
            redact("postgres://bench:secret@db1/bench"),
            "postgres://bench:***@db1/bench"
        );
        assert_eq!(
            redact("postgres://bench@db1/bench"),
            "postgres://bench@db1/bench"
        );
        assert_eq!(
            redact("postgresql:///b?host=/run&password=x&user=u"),
            "postgresql:///b?host=/run&password=***&user=u"
        );
    }

    #[test]
    fn a_url_names_its_database_and_schema() {
        let e = Endpoint::url("postgresql:///bench?host=/tmp/s&user=me").unwrap();
        assert_eq!(e.database, "bench");
        assert!(!e.own);
        assert_eq!(e.work.get_options(), Some("-c search_path=dbio"));
        let e = Endpoint::url("postgresql://me@h").unwrap();
        assert_eq!(e.database, "me");
        assert!(Endpoint::url("mysql://x").is_err());
    }
}
