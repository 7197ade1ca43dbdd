//! Where the mysql workload's connections go: the server dbio started (root
//! over its private socket), or an existing server named by `--mysql-url`,
//! where dbio works only in a database `dbio` it created itself (marked by
//! its comment), changes no setting, and drops only that database (`dbio
//! clean --mysql-url`).

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};

use super::server::DATABASE;
use crate::workload::db::ServerError;

/// The comment that marks the database as dbio's.
pub const MARK: &str = "created by dbio (--workload mysql); dbio clean --mysql-url drops it";

/// Connection settings of a run.
#[derive(Clone)]
pub struct Endpoint {
    /// The sessions' (database `dbio`).
    pub work: Opts,
    /// The sampler's and the loader's (no database).
    pub monitor: Opts,
    /// Whether dbio owns the server (it may create the database freely).
    pub own: bool,
}

fn failed(what: &str, e: mysql::Error) -> ServerError {
    ServerError::Failed(format!("{what}: {e}"))
}

impl Endpoint {
    /// `monitor` with database `dbio` for the sessions.
    pub fn new(monitor: Opts, own: bool) -> Endpoint {
        let work = OptsBuilder::from_opts(monitor.clone())
            .db_name(Some(DATABASE))
            .into();
        let monitor = OptsBuilder::from_opts(monitor)
            .db_name(None::<String>)
            .into();
        Endpoint { work, monitor, own }
    }

    /// An existing server: `url` as the mysql crate takes it
    /// (`mysql://USER:PASS@HOST:PORT/`, `?socket=/path` for a unix socket).
    pub fn url(url: &str) -> Result<Endpoint, ServerError> {
        let opts = Opts::from_url(url).map_err(|e| {
            ServerError::Usage(format!(
                "--mysql-url: {e}; give mysql://USER:PASSWORD@HOST:PORT/ (or mysql://USER@localhost/?socket=/path/to/socket)"
            ))
        })?;
        Ok(Endpoint::new(opts, false))
    }

    pub fn connect(&self) -> Result<Conn, ServerError> {
        Conn::new(self.work.clone()).map_err(|e| failed("cannot connect to MariaDB", e))
    }

    pub fn connect_monitor(&self) -> Result<Conn, ServerError> {
        Conn::new(self.monitor.clone()).map_err(|e| failed("cannot connect to MariaDB", e))
    }

    /// Makes the database `dbio`, or checks that the one there is dbio's
    /// (on a server dbio started, it always is).
    pub(crate) fn claim_database(&self) -> Result<(), ServerError> {
        let mut c = self.connect_monitor()?;
        if self.own {
            return c
                .query_drop(format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))
                .map_err(|e| failed("create the dbio database", e));
        }
        match mark(&mut c)? {
            Some(m) if m == MARK => Ok(()),
            Some(_) => Err(ServerError::Usage(format!(
                "--mysql-url: the server has a database {DATABASE} that dbio did not create; dbio works only in a database of its own: rename or drop that database, or use another server"
            ))),
            None => c
                .query_drop(format!("CREATE DATABASE {DATABASE} COMMENT '{MARK}'"))
                .map_err(|e| {
                    failed(
                        &format!("--mysql-url: cannot create database {DATABASE}"),
                        e,
                    )
                }),
        }
    }
}

/// The comment of database `dbio`, if it exists.
fn mark(c: &mut Conn) -> Result<Option<String>, ServerError> {
    c.exec_first(
        "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
        (DATABASE,),
    )
    .map_err(|e| failed("--mysql-url: read the databases", e))
}

/// `dbio clean --mysql-url`: drops the database dbio made there (and only
/// that). Returns whether there was one.
pub fn clean(url: &str) -> Result<bool, ServerError> {
    let e = Endpoint::url(url)?;
    let mut c = e.connect_monitor()?;
    match mark(&mut c)? {
        None => Ok(false),
        Some(m) if m == MARK => {
            c.query_drop(format!("DROP DATABASE {DATABASE}"))
                .map_err(|e| failed(&format!("--mysql-url: drop database {DATABASE}"), e))?;
            Ok(true)
        }
        Some(_) => Err(ServerError::Usage(format!(
            "--mysql-url: the database {DATABASE} there was not created by dbio; nothing was dropped"
        ))),
    }
}

/// A URL with its password replaced, for reports.
pub use crate::workload::db::redact;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_the_sessions_database_dbio() {
        let e = Endpoint::url("mysql://bench:secret@db1:3307/other").unwrap();
        assert!(!e.own);
        assert_eq!(e.work.get_db_name(), Some("dbio"));
        assert_eq!(e.monitor.get_db_name(), None);
        assert_eq!(e.work.get_user(), Some("bench"));
        assert!(Endpoint::url("postgres://x").is_err());
        assert_eq!(
            redact("mysql://bench:secret@db1/x"),
            "mysql://bench:***@db1/x"
        );
    }
}
