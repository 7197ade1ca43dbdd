//! Saving, listing, reading and deleting runs, and their tags and notes.
//! Every write is one `BEGIN IMMEDIATE` transaction, retried while another
//! process holds the store.

use std::path::Path;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::extract::extract;
use super::{NewRun, SqlResult, Store, StoreError, retry_busy, validate_tag};

/// Which runs `list` returns; empty fields do not filter.
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub plan: Option<String>,
    pub variable: Option<String>,
    /// Runs carrying every one of these tags.
    pub tags: Vec<String>,
    /// A workload (`raw`, `slob`) or a raw pattern (`randread`, …).
    pub workload: Option<String>,
    /// Runs started at or after this time.
    pub since_unix_ms: Option<i64>,
    /// Only the most recent N of the matching runs.
    pub limit: Option<usize>,
    /// Runs from this source (`dbio`, `fio`, `awr-info`).
    pub source: Option<String>,
}

/// The headline numbers of a run (from its `metrics` rows).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KeyMetrics {
    pub total_iops: Option<f64>,
    pub total_mib_per_s: Option<f64>,
    pub total_p99_us: Option<f64>,
    pub read_iops: Option<f64>,
    pub read_p99_us: Option<f64>,
    pub write_iops: Option<f64>,
    pub write_p99_us: Option<f64>,
    pub sync_p99_us: Option<f64>,
    pub cpu_us_per_io: Option<f64>,
    /// AWR's physical read and write requests per second (awr-info runs).
    pub db_physical_reads_per_s: Option<f64>,
    pub db_physical_writes_per_s: Option<f64>,
}

/// The metric names behind [`KeyMetrics`], in field order.
const KEY_METRICS: [&str; 11] = [
    "total.iops",
    "total.mib_per_s",
    "total.latency.p99_us",
    "read.iops",
    "read.latency.p99_us",
    "write.iops",
    "write.latency.p99_us",
    "sync.latency.p99_us",
    "cpu.us_per_io",
    crate::vocab::PHYSICAL_READS_S,
    crate::vocab::PHYSICAL_WRITES_S,
];

/// One run as `list` shows it (and as a kept run of `dbio verify` holds
/// its columns, `unsaved`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub started_unix_ms: i64,
    pub ended_unix_ms: Option<i64>,
    pub status: String,
    pub workload: Option<String>,
    pub pattern: Option<String>,
    pub sessions: Option<i64>,
    pub block_size: Option<i64>,
    pub engine: Option<String>,
    pub io_mode: Option<String>,
    pub target: Option<String>,
    pub plan: Option<String>,
    pub variable: Option<String>,
    pub cell_key: Option<String>,
    pub warmup: bool,
    pub note: Option<String>,
    pub dbio_version: Option<String>,
    /// Where the run came from: `dbio`, `fio` or `awr-info`.
    pub source: String,
    /// The file an imported run was read from.
    pub source_file: Option<String>,
    /// The SLOB.R model given at import (`reads`, `redo`, `writes`).
    pub model: Option<String>,
    /// Sorted.
    pub tags: Vec<String>,
    pub metrics: KeyMetrics,
}

/// One second of one operation kind (a slice of a `series` row).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SeriesKind {
    pub ops: i64,
    pub bytes: i64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
}

/// One `series` row: one second of the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SeriesRow {
    pub t_s: i64,
    pub ramp: bool,
    pub read: SeriesKind,
    pub write: SeriesKind,
    pub sync: SeriesKind,
}

/// One `outliers` row.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OutlierRow {
    pub t_s: f64,
    pub op: String,
    pub session: i64,
    pub file: i64,
    pub offset_bytes: i64,
    pub len_bytes: i64,
    pub latency_ms: f64,
}

/// Everything stored for one run.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub row: RunRow,
    pub report: serde_json::Value,
    pub report_text: String,
    pub environment: serde_json::Value,
    /// Every metric, sorted by name.
    pub metrics: Vec<(String, f64)>,
    /// (op, HDR V2+deflate bytes), in read, write, sync order.
    pub histograms: Vec<(String, Vec<u8>)>,
    pub series: Vec<SeriesRow>,
    pub outliers: Vec<OutlierRow>,
}

/// The columns of a [`RunRow`], for `SELECT … FROM runs r`.
fn row_select() -> String {
    let mut sql = String::from(
        "SELECT r.id, r.started_unix_ms, r.ended_unix_ms, r.status, r.workload, r.pattern, \
         r.sessions, r.block_size, r.engine, r.io_mode, r.target, r.plan, r.variable, \
         r.cell_key, r.warmup, r.note, r.dbio_version, r.source, r.source_file, r.model, \
         (SELECT json_group_array(tag) FROM \
            (SELECT tag FROM run_tags t WHERE t.run_id = r.id ORDER BY tag))",
    );
    for name in KEY_METRICS {
        // A run stored by an earlier build may have the metric's old name.
        let names: Vec<String> = crate::vocab::stored_names(name)
            .iter()
            .map(|n| format!("'{n}'"))
            .collect();
        sql += &format!(
            ", (SELECT value FROM metrics m WHERE m.run_id = r.id AND m.name IN ({}) LIMIT 1)",
            names.join(", ")
        );
    }
    sql + " FROM runs r"
}

/// Metrics as this build names them: rows a run stored by an earlier
/// build under an old name (`db.physical_reads_s`) read under the new one
/// (`vocab::canonical_metric`), still ordered by name.
fn canonical(rows: Vec<(String, f64)>) -> Vec<(String, f64)> {
    let mut rows: Vec<(String, f64)> = rows
        .into_iter()
        .map(|(n, v)| (crate::vocab::canonical_metric(&n).into_owned(), v))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

/// A pattern belongs to raw runs only: runs of a database model stored
/// saved by earlier builds recorded the raw defaults (`randrw`) they never used.
fn raw_pattern(workload: Option<String>, pattern: Option<String>) -> Option<String> {
    pattern.filter(|_| workload.as_deref() == Some("raw"))
}

/// The report document with `config.pattern` and `config.read_pct` null
/// unless the run is raw (as `raw_pattern`, for documents saved earlier).
fn without_model_pattern(mut report: serde_json::Value) -> serde_json::Value {
    if let Some(c) = report.get_mut("config").and_then(|c| c.as_object_mut())
        && c.get("workload").and_then(|w| w.as_str()) != Some("raw")
    {
        for key in ["pattern", "read_pct"] {
            if let Some(v) = c.get_mut(key) {
                *v = serde_json::Value::Null;
            }
        }
    }
    report
}

fn run_row(r: &Row) -> SqlResult<RunRow> {
    let tags: String = r.get(20)?;
    let m = |i: usize| r.get::<_, Option<f64>>(21 + i);
    Ok(RunRow {
        id: r.get(0)?,
        started_unix_ms: r.get(1)?,
        ended_unix_ms: r.get(2)?,
        status: r.get(3)?,
        workload: r.get(4)?,
        pattern: raw_pattern(r.get(4)?, r.get(5)?),
        sessions: r.get(6)?,
        block_size: r.get(7)?,
        engine: r.get(8)?,
        io_mode: r.get(9)?,
        target: r.get(10)?,
        plan: r.get(11)?,
        variable: r.get(12)?,
        cell_key: r.get(13)?,
        warmup: r.get(14)?,
        note: r.get(15)?,
        dbio_version: r.get(16)?,
        source: r.get(17)?,
        source_file: r.get(18)?,
        model: r.get(19)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        metrics: KeyMetrics {
            total_iops: m(0)?,
            total_mib_per_s: m(1)?,
            total_p99_us: m(2)?,
            read_iops: m(3)?,
            read_p99_us: m(4)?,
            write_iops: m(5)?,
            write_p99_us: m(6)?,
            sync_p99_us: m(7)?,
            cpu_us_per_io: m(8)?,
            db_physical_reads_per_s: m(9)?,
            db_physical_writes_per_s: m(10)?,
        },
    })
}

pub(crate) fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn run_exists(conn: &Connection, id: i64) -> SqlResult<bool> {
    conn.query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |_| Ok(()))
        .optional()
        .map(|r| r.is_some())
}

impl Store {
    /// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits it,
    /// retried while another process holds the store.
    pub(super) fn write<T>(
        &mut self,
        mut f: impl FnMut(&rusqlite::Transaction<'_>, &Path) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let path = self.path.clone();
        let conn = &mut self.conn;
        retry_busy(&path, || {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(|e| StoreError::sql(&path, e))?;
            let out = f(&tx, &path)?;
            tx.commit().map_err(|e| StoreError::sql(&path, e))?;
            Ok(out)
        })
    }

    /// Saves a run and everything measured with it in one transaction;
    /// returns its id.
    pub fn save_run(&mut self, run: &NewRun) -> Result<i64, StoreError> {
        self.save_run_at(run, now_unix_ms())
    }

    /// [`Store::save_run`] with the time the run counts as saved (a run
    /// kept in a side file keeps the time its first save was tried).
    pub(super) fn save_run_at(&mut self, run: &NewRun, saved: i64) -> Result<i64, StoreError> {
        let ex = extract(run.report).map_err(|what| StoreError::BadReport {
            path: self.path.clone(),
            what: what.to_string(),
        })?;
        for tag in run.tags {
            validate_tag(tag)?;
        }
        let report_json = run.report.to_string();
        let environment_json = run.environment.to_string();
        self.write(|tx, path| {
            let sql = |e| StoreError::sql(path, e);
            let c = &ex.columns;
            tx.execute(
                "INSERT INTO runs (started_unix_ms, ended_unix_ms, status, workload, pattern, \
                 sessions, block_size, engine, io_mode, target, plan, variable, cell_key, warmup, \
                 dbio_version, saved_unix_ms, report_json, report_text, environment_json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
                 ?17, ?18, ?19)",
                params![
                    c.started_unix_ms,
                    c.ended_unix_ms,
                    c.status,
                    c.workload,
                    c.pattern,
                    c.sessions,
                    c.block_size,
                    c.engine,
                    c.io_mode,
                    c.target,
                    run.plan,
                    run.variable,
                    run.cell_key,
                    run.warmup,
                    c.dbio_version,
                    saved,
                    report_json,
                    run.report_text,
                    environment_json,
                ],
            )
            .map_err(sql)?;
            let id = tx.last_insert_rowid();
            insert_children(tx, id, run, &ex).map_err(sql)?;
            Ok(id)
        })
    }

    /// The runs matching `f`, oldest first.
    pub fn list(&self, f: &RunFilter) -> Result<Vec<RunRow>, StoreError> {
        let mut conds = Vec::new();
        let mut args: Vec<SqlValue> = Vec::new();
        let mut arg = |cond: &str, v: SqlValue| {
            args.push(v);
            conds.push(cond.replace('?', &format!("?{}", args.len())));
        };
        if let Some(p) = &f.plan {
            arg("r.plan = ?", SqlValue::Text(p.clone()));
        }
        if let Some(v) = &f.variable {
            arg("r.variable = ?", SqlValue::Text(v.clone()));
        }
        if let Some(w) = &f.workload {
            arg(
                "(r.workload = ? OR (r.workload = 'raw' AND r.pattern = ?))",
                SqlValue::Text(w.clone()),
            );
        }
        if let Some(src) = &f.source {
            arg("r.source = ?", SqlValue::Text(src.clone()));
        }
        if let Some(since) = f.since_unix_ms {
            arg("r.started_unix_ms >= ?", SqlValue::Integer(since));
        }
        for tag in &f.tags {
            arg(
                "EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag = ?)",
                SqlValue::Text(tag.clone()),
            );
        }
        let mut sql = row_select();
        if !conds.is_empty() {
            sql += &format!(" WHERE {}", conds.join(" AND "));
        }
        let limit = f.limit.map_or(-1, |n| n.min(i64::MAX as usize) as i64);
        sql += &format!(" ORDER BY r.started_unix_ms DESC, r.id DESC LIMIT {limit}");
        let read = || -> SqlResult<Vec<RunRow>> {
            let mut stmt = self.conn.prepare(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(&args), run_row)?;
            rows.collect()
        };
        let mut rows = read().map_err(|e| self.sql(e))?;
        rows.reverse();
        Ok(rows)
    }

    /// Everything stored for run `id`.
    pub fn get(&self, id: i64) -> Result<StoredRun, StoreError> {
        let read = || -> SqlResult<Option<StoredRun>> {
            // One read transaction: a consistent snapshot of the run.
            let tx = self.conn.unchecked_transaction()?;
            let Some(row) = tx
                .query_row(&format!("{} WHERE r.id = ?1", row_select()), [id], run_row)
                .optional()?
            else {
                return Ok(None);
            };
            let (report, report_text, environment): (String, String, String) = tx.query_row(
                "SELECT report_json, report_text, environment_json FROM runs WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            let metrics = canonical(collect(
                &tx,
                "SELECT name, value FROM metrics WHERE run_id = ?1 ORDER BY name",
                id,
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?);
            let histograms = collect(
                &tx,
                "SELECT op, hdr_v2_deflate FROM histograms WHERE run_id = ?1 ORDER BY \
                 CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 WHEN 'sync' THEN 2 ELSE 3 END, op",
                id,
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let series = collect(
                &tx,
                "SELECT * FROM series WHERE run_id = ?1 ORDER BY t_s",
                id,
                |r| {
                    let kind = |i: usize| -> SqlResult<SeriesKind> {
                        Ok(SeriesKind {
                            ops: r.get(i)?,
                            bytes: r.get(i + 1)?,
                            lat_mean_us: r.get(i + 2)?,
                            lat_p99_us: r.get(i + 3)?,
                        })
                    };
                    Ok(SeriesRow {
                        t_s: r.get("t_s")?,
                        ramp: r.get("ramp")?,
                        read: kind(3)?,
                        write: kind(7)?,
                        sync: kind(11)?,
                    })
                },
            )?;
            let outliers = collect(
                &tx,
                "SELECT t_s, op, session, file, offset_bytes, len_bytes, latency_ms \
                 FROM outliers WHERE run_id = ?1 ORDER BY rowid",
                id,
                |r| {
                    Ok(OutlierRow {
                        t_s: r.get(0)?,
                        op: r.get(1)?,
                        session: r.get(2)?,
                        file: r.get(3)?,
                        offset_bytes: r.get(4)?,
                        len_bytes: r.get(5)?,
                        latency_ms: r.get(6)?,
                    })
                },
            )?;
            let json = |s: &str| serde_json::from_str(s).unwrap_or(serde_json::Value::Null);
            Ok(Some(StoredRun {
                row,
                report: without_model_pattern(crate::document::upgrade::upgrade(json(&report))),
                report_text,
                environment: json(&environment),
                metrics,
                histograms,
                series,
                outliers,
            }))
        };
        read()
            .map_err(|e| self.sql(e))?
            .ok_or(StoreError::NoSuchRun {
                path: self.path.clone(),
                id,
            })
    }

    /// A run's metrics alone (name, value), ordered by name: what tables and
    /// statistics over many runs read, without the report document, the
    /// series and the histograms that [`Store::get`] loads.
    pub fn metrics(&self, id: i64) -> Result<Vec<(String, f64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, value FROM metrics WHERE run_id = ?1 ORDER BY name")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
        rows.map(canonical).map_err(|e| self.sql(e))
    }

    /// Deletes runs with everything stored for them (one transaction);
    /// returns how many existed. Ids not in the store are skipped.
    pub fn delete(&mut self, ids: &[i64]) -> Result<usize, StoreError> {
        self.write(|tx, path| {
            let mut deleted = 0;
            for id in ids {
                deleted += tx
                    .execute("DELETE FROM runs WHERE id = ?1", [id])
                    .map_err(|e| StoreError::sql(path, e))?;
            }
            Ok(deleted)
        })
    }

    /// Adds tags to run `id` (tags it already has are kept once).
    pub fn add_tags(&mut self, id: i64, tags: &[String]) -> Result<(), StoreError> {
        for tag in tags {
            validate_tag(tag)?;
        }
        self.write(|tx, path| {
            let sql = |e| StoreError::sql(path, e);
            if !run_exists(tx, id).map_err(sql)? {
                return Err(StoreError::NoSuchRun {
                    path: path.to_path_buf(),
                    id,
                });
            }
            insert_tags_metrics_histograms(tx, id, tags, &[], &[]).map_err(sql)
        })
    }

    /// Sets the free-text note of run `id`; an empty (or blank) note clears it.
    pub fn set_note(&mut self, id: i64, note: &str) -> Result<(), StoreError> {
        let note = Some(note.trim()).filter(|n| !n.is_empty());
        let path = self.path.clone();
        let conn = &mut self.conn;
        let changed = retry_busy(&path, || {
            conn.execute("UPDATE runs SET note = ?1 WHERE id = ?2", params![note, id])
                .map_err(|e| StoreError::sql(&path, e))
        })?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun { path, id });
        }
        Ok(())
    }

    /// Whether run `id` is stored.
    pub fn contains(&self, id: i64) -> Result<bool, StoreError> {
        run_exists(&self.conn, id).map_err(|e| self.sql(e))
    }
}

/// A run's tags (kept once), metrics and latency histograms, saved and
/// imported runs alike.
pub(super) fn insert_tags_metrics_histograms(
    tx: &Connection,
    id: i64,
    tags: &[String],
    metrics: &[(String, f64)],
    histograms: &[(String, Vec<u8>)],
) -> SqlResult<()> {
    let mut stmt =
        tx.prepare_cached("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)")?;
    for tag in tags {
        stmt.execute(params![id, tag])?;
    }
    // A report never repeats a name; the last value would win if it did.
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO metrics (run_id, name, value) VALUES (?1, ?2, ?3)",
    )?;
    for (name, value) in metrics {
        stmt.execute(params![id, name, value])?;
    }
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO histograms (run_id, op, hdr_v2_deflate) VALUES (?1, ?2, ?3)",
    )?;
    for (op, bytes) in histograms {
        stmt.execute(params![id, op, bytes])?;
    }
    Ok(())
}

/// The tags, metrics, histograms, series and outliers of a new run.
pub(crate) fn insert_children(
    tx: &Connection,
    id: i64,
    run: &NewRun,
    ex: &super::extract::Extracted,
) -> SqlResult<()> {
    insert_tags_metrics_histograms(tx, id, run.tags, &ex.metrics, run.histograms)?;
    let mut stmt = tx.prepare_cached(
        "INSERT OR REPLACE INTO series VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
         ?12, ?13, ?14, ?15)",
    )?;
    for p in &ex.series {
        let (r, w, s) = (&p.read, &p.write, &p.sync);
        stmt.execute(params![
            id,
            p.t_s,
            p.ramp,
            r.ops,
            r.bytes,
            r.lat_mean_us,
            r.lat_p99_us,
            w.ops,
            w.bytes,
            w.lat_mean_us,
            w.lat_p99_us,
            s.ops,
            s.bytes,
            s.lat_mean_us,
            s.lat_p99_us,
        ])?;
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO outliers (run_id, t_s, op, session, file, offset_bytes, len_bytes, \
         latency_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for o in &ex.outliers {
        stmt.execute(params![
            id,
            o.t_s,
            o.op,
            o.session,
            o.file,
            o.offset_bytes,
            o.len_bytes,
            o.latency_ms
        ])?;
    }
    Ok(())
}

fn collect<T>(
    conn: &Connection,
    sql: &str,
    id: i64,
    f: impl FnMut(&Row) -> SqlResult<T>,
) -> SqlResult<Vec<T>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([id], f)?;
    rows.collect()
}
