//! The store's SQL schema and its forward migrations (docs/store.md describes
//! every table for people querying the file with the sqlite3 shell).
//!
//! A dbio store is recognised by `PRAGMA application_id` = [`APPLICATION_ID`]
//! ("dbio" in ASCII); `PRAGMA user_version` is the schema version. Migration
//! `MIGRATIONS[i]` takes a store from version `i` to `i + 1`; a store is
//! migrated inside one `BEGIN IMMEDIATE` transaction together with both
//! pragmas, so a crash leaves it at the old version or the new one.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{SqlResult, StoreError};

/// `PRAGMA application_id` of a dbio store: the bytes of "dbio".
pub const APPLICATION_ID: i32 = 0x6462_696f;

/// The schema version this dbio writes (`PRAGMA user_version`).
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Forward migrations, oldest first: `MIGRATIONS[i]` goes from version `i`
/// to `i + 1`. Append only; never edit a released entry.
pub const MIGRATIONS: &[&str] = &[V1, V2, V3];

/// Version 1: runs with their report, tags, metrics, histograms, series and
/// outliers.
const V1: &str = r#"
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    started_unix_ms  INTEGER NOT NULL,
    ended_unix_ms    INTEGER,
    status           TEXT NOT NULL,
    workload         TEXT,
    pattern          TEXT,
    sessions         INTEGER,
    block_size       INTEGER,
    engine           TEXT,
    io_mode          TEXT,
    target           TEXT,
    plan             TEXT,
    variable         TEXT,
    cell_key         TEXT,
    warmup           INTEGER NOT NULL DEFAULT 0 CHECK (warmup IN (0, 1)),
    note             TEXT,
    dbio_version     TEXT,
    saved_unix_ms    INTEGER NOT NULL,
    report_json      TEXT NOT NULL CHECK (json_valid(report_json)),
    report_text      TEXT NOT NULL,
    environment_json TEXT NOT NULL CHECK (json_valid(environment_json))
) STRICT;
CREATE INDEX runs_started ON runs (started_unix_ms);
CREATE INDEX runs_plan ON runs (plan, variable);
CREATE INDEX runs_variable ON runs (variable);
CREATE INDEX runs_workload ON runs (workload, pattern);
CREATE INDEX runs_pattern ON runs (pattern);

CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    tag    TEXT NOT NULL,
    PRIMARY KEY (run_id, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX run_tags_tag ON run_tags (tag, run_id);

CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name   TEXT NOT NULL,
    value  REAL NOT NULL,
    PRIMARY KEY (run_id, name)
) STRICT, WITHOUT ROWID;
CREATE INDEX metrics_name ON metrics (name, run_id);

CREATE TABLE histograms (
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    op             TEXT NOT NULL,
    hdr_v2_deflate BLOB NOT NULL,
    PRIMARY KEY (run_id, op)
) STRICT, WITHOUT ROWID;

CREATE TABLE series (
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t_s              INTEGER NOT NULL,
    ramp             INTEGER NOT NULL CHECK (ramp IN (0, 1)),
    read_ops         INTEGER NOT NULL,
    read_bytes       INTEGER NOT NULL,
    read_lat_mean_us REAL NOT NULL,
    read_lat_p99_us  REAL NOT NULL,
    write_ops        INTEGER NOT NULL,
    write_bytes      INTEGER NOT NULL,
    write_lat_mean_us REAL NOT NULL,
    write_lat_p99_us REAL NOT NULL,
    sync_ops         INTEGER NOT NULL,
    sync_bytes       INTEGER NOT NULL,
    sync_lat_mean_us REAL NOT NULL,
    sync_lat_p99_us  REAL NOT NULL,
    PRIMARY KEY (run_id, t_s)
) STRICT, WITHOUT ROWID;

CREATE TABLE outliers (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t_s          REAL NOT NULL,
    op           TEXT NOT NULL,
    session      INTEGER NOT NULL,
    file         INTEGER NOT NULL,
    offset_bytes INTEGER NOT NULL,
    len_bytes    INTEGER NOT NULL,
    latency_ms   REAL NOT NULL
) STRICT;
CREATE INDEX outliers_run ON outliers (run_id, t_s);

CREATE VIEW run_summary AS
SELECT r.id,
       strftime('%Y-%m-%dT%H:%M:%SZ', r.started_unix_ms / 1000, 'unixepoch') AS started,
       r.status, r.workload, r.pattern, r.sessions, r.block_size, r.engine,
       r.io_mode, r.target, r.plan, r.variable, r.cell_key, r.warmup,
       (SELECT group_concat(tag, ' ') FROM run_tags t WHERE t.run_id = r.id) AS tags,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.iops') AS total_iops,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.mib_per_s') AS total_mib_per_s,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.latency.p99_us') AS total_p99_us,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'cpu.us_per_io') AS cpu_us_per_io,
       r.note
FROM runs r;
"#;

/// Version 2: imported runs. `source` says where a run came from (`dbio`,
/// `fio`, `awr-info`), `source_file` the file it was imported from, and
/// `model` the SLOB.R model the importer was told (`--model`), NULL when the
/// model follows from the run's metrics. The summary view gains both.
const V2: &str = r#"
ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'dbio';
ALTER TABLE runs ADD COLUMN source_file TEXT;
ALTER TABLE runs ADD COLUMN model TEXT CHECK (model IN ('reads', 'redo', 'writes'));
CREATE INDEX runs_source ON runs (source, source_file);

DROP VIEW run_summary;
CREATE VIEW run_summary AS
SELECT r.id,
       strftime('%Y-%m-%dT%H:%M:%SZ', r.started_unix_ms / 1000, 'unixepoch') AS started,
       r.status, r.workload, r.pattern, r.sessions, r.block_size, r.engine,
       r.io_mode, r.target, r.plan, r.variable, r.cell_key, r.warmup,
       (SELECT group_concat(tag, ' ') FROM run_tags t WHERE t.run_id = r.id) AS tags,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.iops') AS total_iops,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.mib_per_s') AS total_mib_per_s,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'total.latency.p99_us') AS total_p99_us,
       (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name = 'cpu.us_per_io') AS cpu_us_per_io,
       r.note, r.source, r.source_file, r.model
FROM runs r;
"#;

/// Version 3: block traces captured with a run (`dbio run --capture`),
/// one per run: dbio's trace format as written (zlib-compressed inside),
/// with its request count and the events the kernel lost.
const V3: &str = r#"
CREATE TABLE traces (
    run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    format      TEXT NOT NULL CHECK (format IN ('dbtrace')),
    requests    INTEGER NOT NULL,
    lost_events INTEGER NOT NULL,
    devices     TEXT NOT NULL,
    data        BLOB NOT NULL
) STRICT;
"#;

/// What an open SQLite file is, judged from its header pragmas and schema.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Identity {
    /// No tables and no application id: a new file, free to become a store.
    Empty,
    /// A dbio store at this schema version.
    Dbio { version: i64 },
    /// Some other application's database.
    Foreign,
}

/// Reads the identity of the database behind `conn` (reads only). One
/// statement, so one read transaction: another process migrating the file at
/// the same moment is seen entirely or not at all.
pub(crate) fn identify(conn: &Connection) -> SqlResult<Identity> {
    let (app, version, objects): (i32, i64, i64) = conn.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id()), \
                (SELECT user_version FROM pragma_user_version()), \
                (SELECT count(*) FROM sqlite_schema)",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(if app == APPLICATION_ID {
        Identity::Dbio { version }
    } else if app == 0 && version == 0 && objects == 0 {
        Identity::Empty
    } else {
        Identity::Foreign
    })
}

/// Brings the store up to `migrations.len()`, in one `BEGIN IMMEDIATE`
/// transaction (the identity is checked again under the write lock, so two
/// processes opening a new file at once migrate it once).
pub(crate) fn migrate(
    conn: &mut Connection,
    migrations: &[&str],
    path: &Path,
) -> Result<(), StoreError> {
    let target = migrations.len() as i64;
    let sql = |e| StoreError::sql(path, e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql)?;
    let from = match identify(&tx).map_err(sql)? {
        Identity::Empty => 0,
        Identity::Dbio { version } if version > target => {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found: version,
                supported: target,
            });
        }
        Identity::Dbio { version } => version,
        Identity::Foreign => {
            return Err(StoreError::NotDbio {
                path: path.to_path_buf(),
            });
        }
    };
    if from == target {
        return Ok(());
    }
    for step in &migrations[from as usize..] {
        tx.execute_batch(step).map_err(sql)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(sql)?;
    tx.pragma_update(None, "user_version", target)
        .map_err(sql)?;
    tx.commit().map_err(sql)
}
