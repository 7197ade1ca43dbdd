//! SLOB's data as pgio builds it: `--schemas` tables `dbio_t<N>` of
//! `--scale` rows, one row per 8 KiB page (fillfactor 10 and a 500-byte
//! pad: a second row never fits), keys scattered over the pages (row `g`
//! holds key `g × P mod SCALE` for a prime P, so a work unit of adjacent
//! keys lands on pages far apart), a b-tree index on the key, vacuumed
//! (hint bits, visibility map) and checkpointed; autovacuum on them as
//! `--pg-autovacuum` says, each run. The tables load in
//! parallel, a connection each; the shape is recorded in `dbio_meta` and
//! the tables are reused when it matches.

use std::sync::atomic::AtomicBool;

use postgres::Client;

use super::endpoint::Endpoint;
use super::server::{DATABASE, ServerError};
use crate::workload::db::Refused;
use crate::workload::db::data::{self, Canceller, LoadConn, Tables};

pub use crate::workload::db::data::{LoadReport, MAX_SCALE, SCATTER};

/// Bytes of padding per row: with fillfactor 10, one row per page.
pub(crate) const PAD: u32 = 500;

/// Table `i`'s name.
pub fn table(i: u32) -> String {
    format!("dbio_t{i}")
}

/// dbio's tables in the schema it works in.
const DBIO_TABLES: &str = "FROM pg_class WHERE relkind = 'r' AND relname ~ '^dbio_t[0-9]+$' \
     AND relnamespace = current_schema()::text::regnamespace";

/// The server's message for a database error, the client's otherwise.
fn detail(e: postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| e.to_string())
}

fn err(what: &str, e: postgres::Error) -> ServerError {
    ServerError::Failed(format!("{what}: {}", detail(e)))
}

/// Makes the database and the tables unless they have this shape already.
/// Ctrl-C (`interrupt`) cancels the load; the shape is recorded only once
/// every table is complete, so the next run loads again.
pub fn ensure(
    server: &Endpoint,
    schemas: u32,
    scale: u64,
    interrupt: &AtomicBool,
) -> Result<LoadReport, ServerError> {
    data::ensure(
        &PgTables {
            server,
            schemas,
            scale,
        },
        interrupt,
    )
}

/// Turns autovacuum on or off for dbio's tables (`--pg-autovacuum`), loaded
/// or reused: the stock server vacuums them, a run may ask it not to.
pub fn set_autovacuum(server: &Endpoint, schemas: u32, on: bool) -> Result<(), ServerError> {
    let mut c = server.connect()?;
    let value = if on { "on" } else { "off" };
    for i in 0..schemas {
        let t = table(i);
        c.batch_execute(&format!(
            "ALTER TABLE {t} SET (autovacuum_enabled = {value})"
        ))
        .map_err(|e| err(&format!("set autovacuum {value} on {t}"), e))?;
    }
    Ok(())
}

/// SLOB's tables on PostgreSQL.
struct PgTables<'a> {
    server: &'a Endpoint,
    schemas: u32,
    scale: u64,
}

impl LoadConn for Client {
    fn execute(&mut self, sql: &str) -> Result<(), Refused> {
        self.batch_execute(sql).map_err(|e| Refused(detail(e)))
    }

    fn strings(&mut self, sql: &str) -> Result<Vec<String>, Refused> {
        let rows = self.query(sql, &[]).map_err(detail)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn number(&mut self, sql: &str) -> Result<u64, Refused> {
        let v: i64 = self.query_one(sql, &[]).map_err(detail)?.get(0);
        Ok(v as u64)
    }

    fn canceller(&self) -> Option<Canceller> {
        let token = self.cancel_token();
        Some(Box::new(move || {
            let _ = token.cancel_query(postgres::NoTls);
        }))
    }
}

impl Tables for PgTables<'_> {
    type Conn = Client;

    fn claim(&self) -> Result<(), ServerError> {
        if !self.server.own {
            return self.server.claim_schema();
        }
        let mut admin = self.server.connect_monitor()?;
        let exists = admin
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .map_err(|e| err("look for the dbio database", e))?
            .is_some();
        if !exists {
            admin
                .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .map_err(|e| err("create the dbio database", e))?;
        }
        Ok(())
    }

    fn connect(&self) -> Result<Client, ServerError> {
        self.server.connect()
    }

    fn tables(&self) -> u32 {
        self.schemas
    }

    fn rows(&self) -> u64 {
        self.scale
    }

    fn shape(&self) -> String {
        format!(
            "v1 schemas={} scale={} pad={PAD} scatter={SCATTER}",
            self.schemas, self.scale
        )
    }

    fn meta_sql(&self) -> &'static str {
        "CREATE TABLE IF NOT EXISTS dbio_meta (shape text NOT NULL)"
    }

    fn tables_sql(&self) -> String {
        format!("SELECT relname::text {DBIO_TABLES}")
    }

    fn bytes_sql(&self) -> String {
        format!("SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint {DBIO_TABLES}")
    }

    /// Create, fill with scattered keys, index, vacuum.
    fn load_sql(&self, i: u32) -> Vec<(String, String)> {
        let t = table(i);
        let n = self.scale as i64;
        [
            format!(
                "CREATE TABLE {t} (mykey bigint NOT NULL, scratch bigint NOT NULL, pad text NOT NULL) \
                 WITH (fillfactor = 10, autovacuum_enabled = false)"
            ),
            format!(
                "INSERT INTO {t} SELECT (g * {SCATTER}::bigint) % {n}, 0, repeat('x', {PAD}) \
                 FROM generate_series(0::bigint, {}::bigint) g",
                n - 1
            ),
            format!("CREATE INDEX {t}_key ON {t} (mykey)"),
            format!("VACUUM ANALYZE {t}"),
        ]
        .into_iter()
        .map(|sql| (format!("load {t}"), sql))
        .collect()
    }

    fn after_load(&self) -> Option<(&'static str, &'static str)> {
        Some(("checkpoint after loading", "CHECKPOINT"))
    }
}
