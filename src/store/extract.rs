//! What a report document (docs/json.md) contributes to the store besides
//! its whole JSON: the `runs` columns, the `metrics` rows (every number under
//! read/write/sync/total/cpu, dotted, and the telemetry window as `host.*`,
//! `dev.*` and `dev.<device>.*`), the per-second `series` and the
//! `outliers`. The document is read into its types ([`Report::from_stored`]:
//! a v1 document upgraded, fields added since at their defaults, sections a
//! run did not have absent); one that does not read is refused, naming the
//! field, and kept by the caller in a side file.

use serde::Serialize;
use serde_json::Value;

use super::runs::{OutlierRow, SeriesKind, SeriesRow};
use crate::config::WorkloadConfig;
use crate::document::awr::SlobSummary;
use crate::document::db::DbOps;
use crate::document::mysql::MysqlSummary;
use crate::document::pg::PgSummary;
use crate::document::{ReadError, Report};
use crate::harness::rounds::SteadyState;
use crate::measure::stats::Outlier;
use crate::samplers::series::{KindPoint, SecondPoint};
use crate::samplers::telemetry::TelemetrySummary;

/// The `runs` columns taken from the report.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Columns {
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
    pub dbio_version: Option<String>,
}

/// Everything taken from one report.
#[derive(Debug, Default)]
pub(crate) struct Extracted {
    pub columns: Columns,
    pub metrics: Vec<(String, f64)>,
    pub series: Vec<SeriesRow>,
    pub outliers: Vec<OutlierRow>,
}

/// What a report to be saved lacks (the words follow "the report").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("is not a JSON object")]
    NotAnObject,
    #[error("has schema {0:?}, not dbio.run.*")]
    Schema(String),
    #[error("{0}")]
    Unreadable(String),
}

impl From<ReadError> for Unfit {
    fn from(e: ReadError) -> Unfit {
        match e {
            ReadError::NotAnObject => Unfit::NotAnObject,
            ReadError::Schema(s) => Unfit::Schema(s),
            shape @ ReadError::Shape(_) => Unfit::Unreadable(shape.to_string()),
        }
    }
}

/// Takes the report apart; `Err` says why it does not read.
pub(crate) fn extract(report: &Value) -> Result<Extracted, Unfit> {
    let r = Report::from_stored(report)?;
    let started = r.started_unix_ms as i64;
    let secs = r.ramp_s + r.measured_s;
    let c = &r.config;
    let columns = Columns {
        started_unix_ms: started,
        ended_unix_ms: Some(started + (secs * 1000.0).round() as i64),
        status: r.status.name().into(),
        workload: Some(c.workload.name().into()),
        pattern: c.workload.raw().map(|raw| raw.pattern.name().into()),
        sessions: Some(i64::from(c.sessions)),
        block_size: Some(i64::from(c.block_size)),
        engine: Some(c.engine.name().into()),
        io_mode: Some(c.io_mode.name().into()),
        target: Some(c.target.to_string_lossy().into_owned()),
        dbio_version: Some(r.dbio_version.clone()),
    };
    let mut metrics = Vec::new();
    let sections: [(&str, Option<Value>); 6] = [
        ("read", section(&r.read)),
        ("write", section(&r.write)),
        ("sync", section(&r.sync)),
        ("total", section(&r.total)),
        ("cpu", section(&r.cpu)),
        ("open_loop", section(&r.open_loop)),
    ];
    for (root, v) in &sections {
        if let Some(v) = v {
            flatten(root, v, &mut metrics);
        }
    }
    let o = &r.outliers;
    for (name, v) in [
        ("measured_s", r.measured_s),
        ("ramp_s", r.ramp_s),
        ("outliers.count", o.count as f64),
        ("outliers.unlisted", o.unlisted as f64),
        ("outliers.threshold_ms", o.threshold_ms),
    ] {
        metrics.push((name.to_string(), v));
    }
    if let Some(w) = &r.telemetry_window {
        telemetry_metrics(w, &mut metrics);
    }
    if let Some(s) = &r.slob {
        slob_metrics(&r, s, &mut metrics);
    }
    if let Some(p) = &r.pg {
        pg_metrics(&r, p, &mut metrics);
    }
    if let Some(m) = &r.mysql {
        mysql_metrics(&r, m, &mut metrics);
    }
    if let Some(s) = &r.steady_state {
        steady_metrics(s, &mut metrics);
    }
    Ok(Extracted {
        columns,
        metrics,
        series: r.series.iter().map(series_row).collect(),
        outliers: r.outliers.list.iter().map(outlier_row).collect(),
    })
}

/// A steady-state run's verdict and its window's figures: `steady.reached`
/// (1 or 0), `steady.reached_after_s`, `steady.rounds`, and
/// `steady.<read|write|total>.<field>` of the steady (or last) window.
fn steady_metrics(s: &SteadyState, out: &mut Vec<(String, f64)>) {
    out.push(("steady.reached".into(), if s.reached { 1.0 } else { 0.0 }));
    if let Some(t) = s.reached_after_s {
        out.push(("steady.reached_after_s".into(), f64::from(t)));
    }
    out.push(("steady.rounds".into(), s.rounds.len() as f64));
    if let Some(w) = &s.window {
        let kinds = [
            ("read", w.read.as_ref()),
            ("write", w.write.as_ref()),
            ("total", Some(&w.total)),
        ];
        for (kind, op) in kinds {
            if let Some(v) = op.and_then(section) {
                flatten(&format!("steady.{kind}"), &v, out);
            }
        }
    }
}

/// A section as the JSON it is stored as (null sections: none).
fn section<T: Serialize>(v: &T) -> Option<Value> {
    serde_json::to_value(v).ok().filter(|v| !v.is_null())
}

/// The telemetry window as metrics: `host.<field>`, `dev.<device>.<field>`
/// for every device of the chain, and `dev.<field>` for the first one (the
/// device directly under the target), so `dev.w_await_ms` names "the
/// device" whatever it is called.
fn telemetry_metrics(w: &TelemetrySummary, out: &mut Vec<(String, f64)>) {
    if let Some(h) = section(&w.host) {
        flatten("host", &h, out);
    }
    for (i, d) in w.devices.iter().enumerate() {
        let Some(rates) = d.rates.as_ref().and_then(section) else {
            continue;
        };
        flatten(&format!("dev.{}", d.name), &rates, out);
        if i == 0 {
            flatten("dev", &rates, out);
        }
    }
}

/// The database model's numbers (docs/store.md): `db.*` per second as
/// SLOB's awr_info reports them, and `event.<event>.*` for each wait event.
fn slob_metrics(r: &Report, s: &SlobSummary, out: &mut Vec<(String, f64)>) {
    let secs = r.measured_s;
    if secs <= 0.0 {
        return;
    }
    let c = &s.counters;
    let mib = 1024.0 * 1024.0;
    use crate::vocab as v;
    let per_s = [
        (v::PHYSICAL_READS_S, c.read_requests as f64),
        ("db.physical_read_blocks_per_s", c.physical_reads as f64),
        (v::PHYSICAL_WRITES_S, c.write_requests as f64),
        (v::LOGICAL_READS_S, c.logical_reads as f64),
        ("db.block_changes_per_s", c.block_changes as f64),
        (v::READ_MBS, c.read_bytes as f64 / mib),
        (v::WRITE_MBS, c.write_bytes as f64 / mib),
        (v::REDO_MBS, c.redo_bytes as f64 / mib),
        (v::REDO_BYTES_S, c.redo_bytes as f64),
        ("db.redo_writes_per_s", c.redo_writes as f64),
        (v::EXECUTES_S, c.executes as f64),
        ("db.transactions_per_s", c.transactions as f64),
        (v::DB_TIME_S, s.db_time_s),
        (v::DB_CPU_S, s.db_cpu_s),
    ];
    for (name, v) in per_s {
        out.push((name.to_string(), v / secs));
    }
    out.push(("db.cache_hit_pct".into(), s.cache_hit_pct));
    if let Some(c) = &s.checkpoint_cycle {
        cycle_metrics(c, "slob", out);
    }
    if c.redo_written_bytes > 0 {
        out.push((
            "db.redo_wastage_pct".into(),
            100.0 * c.redo_wastage_bytes as f64 / c.redo_written_bytes as f64,
        ));
    }
    if let Some(slob) = r.config.workload.model() {
        out.push((v::UPDATE_PCT.into(), f64::from(slob.update_pct)));
        out.push((v::BLOCK_SIZE.into(), f64::from(slob.block_size)));
    }
    for e in &s.events {
        let key = crate::vocab::event_key(&e.name);
        for (field, v) in [
            ("avg_ms", e.avg_ms),
            ("time_s", e.time_s),
            ("pct_db_time", e.pct_db_time),
            ("waits_per_s", e.waits as f64 / secs),
        ] {
            out.push((format!("event.{key}.{field}"), v));
        }
    }
}

/// A PostgreSQL run's numbers: the shared `db.*` names where the meaning is
/// the same as SLOB's (physical reads = blks_read, redo = WAL, executes =
/// statements dbio ran, commit latency as `log file sync`), and `pg.*` for
/// what only PostgreSQL has.
fn pg_metrics(r: &Report, p: &PgSummary, out: &mut Vec<(String, f64)>) {
    let secs = r.measured_s;
    if secs <= 0.0 {
        return;
    }
    let mib = 1024.0 * 1024.0;
    let page = 8192.0;
    db_ops_metrics(&p.ops, "pg", secs, out);
    use crate::vocab as v;
    if let Some(c) = &p.server {
        let writes = c.buffers_checkpoint + c.buffers_clean + c.buffers_backend;
        let per_s = [
            (v::PHYSICAL_READS_S, c.blks_read),
            ("db.physical_read_blocks_per_s", c.blks_read),
            (v::PHYSICAL_WRITES_S, writes),
            (v::LOGICAL_READS_S, c.blks_hit + c.blks_read),
            (v::READ_MBS, c.blks_read * page / mib),
            (v::WRITE_MBS, writes * page / mib),
            (v::REDO_MBS, c.wal_bytes / mib),
            (v::REDO_BYTES_S, c.wal_bytes),
            ("db.redo_writes_per_s", c.wal_write),
            ("db.transactions_per_s", c.xact_commit),
            ("pg.wal_records_per_s", c.wal_records),
            ("pg.wal_fpi_per_s", c.wal_fpi),
            ("pg.wal_syncs_per_s", c.wal_sync),
            (
                "pg.checkpoints_per_s",
                c.checkpoints_timed + c.checkpoints_req,
            ),
        ];
        for (name, val) in per_s {
            out.push((name.to_string(), val / secs));
        }
        let logical = c.blks_hit + c.blks_read;
        if logical > 0.0 {
            out.push(("db.cache_hit_pct".into(), 100.0 * c.blks_hit / logical));
        }
        if c.blks_read > 0.0 {
            out.push(("pg.read_avg_ms".into(), c.blk_read_time_ms / c.blks_read));
        }
        if c.xact_commit > 0.0 {
            out.push(("pg.wal_bytes_per_tx".into(), c.wal_bytes / c.xact_commit));
        }
    }
    let load = &p.setup.load;
    for (name, x) in [
        (
            "pg.device_reads_per_s",
            p.physical_reads.device.device_per_s,
        ),
        ("pg.absorbed_pct", p.physical_reads.absorbed_pct),
        ("pg.load_mib_per_s", Some(load.mib_per_s)),
        ("pg.load_bytes", Some(load.bytes as f64)),
        (
            "pg.client_cpu_us_per_execute",
            Some(p.ops.client_cpu_us_per_execute),
        ),
        (
            "pg.memory_limit_bytes",
            p.setup.memory_limit_bytes.map(|b| b as f64),
        ),
    ] {
        if let Some(x) = x {
            out.push((name.into(), x));
        }
    }
    if let WorkloadConfig::Pg(pg) = &r.config.workload {
        out.push((v::UPDATE_PCT.into(), f64::from(pg.slob.update_pct)));
    }
    if let Some(c) = &p.checkpoint_cycle {
        cycle_metrics(c, "pg", out);
    }
    out.push((v::BLOCK_SIZE.into(), f64::from(r.config.block_size)));
}

/// Where the window sat in the checkpoint cycle, as `PREFIX.cycle.*`: the
/// log bytes and write transactions since the last checkpoint at the
/// window's opening, checkpoints completed inside it, and full-page images
/// per updated row (each where the server said).
fn cycle_metrics(
    c: &crate::document::cycle::CheckpointCycle,
    prefix: &str,
    out: &mut Vec<(String, f64)>,
) {
    for (name, x) in [
        ("open_log_bytes_since", c.open_log_bytes_since),
        ("open_transactions_since", c.open_transactions_since),
        ("checkpoints_completed", c.checkpoints_completed),
        ("first_change_share", c.first_change_share),
    ] {
        if let Some(x) = x {
            out.push((format!("{prefix}.cycle.{name}"), x));
        }
    }
}

/// What every database server's section has: executes per second, the
/// commit's latency as `log file sync`'s, and each operation's latency as
/// `PREFIX.<kind>.latency.*`.
fn db_ops_metrics(p: &DbOps, prefix: &str, secs: f64, out: &mut Vec<(String, f64)>) {
    use crate::vocab as v;
    let ops = (p.selects + p.updates + p.scans) as f64;
    out.push((v::EXECUTES_S.into(), ops / secs));
    if let Some(c) = &p.commit {
        out.push((v::EVENT_LOG_FILE_SYNC.into(), c.latency.mean_us / 1e3));
    }
    for (kind, op) in [
        ("select", &p.select),
        ("update", &p.update),
        ("commit", &p.commit),
        ("scan", &p.scan),
    ] {
        if let Some(l) = op.as_ref().and_then(|o| section(&o.latency)) {
            flatten(&format!("{prefix}.{kind}.latency"), &l, out);
        }
    }
}

/// A MariaDB run's numbers: the shared `db.*` names where the meaning is
/// the same (physical reads = Innodb_data_reads, physical writes =
/// Innodb_pages_written as pg's buffers written, redo = Innodb_os_log_written,
/// transactions = Com_commit, commit latency as `log file sync`), and
/// `mysql.*` for what only InnoDB has.
fn mysql_metrics(r: &Report, p: &MysqlSummary, out: &mut Vec<(String, f64)>) {
    let secs = r.measured_s;
    if secs <= 0.0 {
        return;
    }
    let mib = 1024.0 * 1024.0;
    let page = f64::from(r.config.block_size);
    db_ops_metrics(&p.ops, "mysql", secs, out);
    use crate::vocab as v;
    if let WorkloadConfig::Mysql(mysql) = &r.config.workload {
        out.push((v::UPDATE_PCT.into(), f64::from(mysql.slob.update_pct)));
    }
    if let Some(c) = &p.checkpoint_cycle {
        cycle_metrics(c, "mysql", out);
    }
    out.push((v::BLOCK_SIZE.into(), page));
    if let Some(status) = &p.server {
        // SHOW GLOBAL STATUS is keyed by the server's own variable names.
        let c = |k: &str| status.get(k).copied().unwrap_or(0.0);
        let per_s = [
            (v::PHYSICAL_READS_S, c("Innodb_data_reads")),
            ("db.physical_read_blocks_per_s", c("Innodb_pages_read")),
            (v::PHYSICAL_WRITES_S, c("Innodb_pages_written")),
            (v::LOGICAL_READS_S, c("Innodb_buffer_pool_read_requests")),
            (v::READ_MBS, c("Innodb_data_read") / mib),
            (v::WRITE_MBS, c("Innodb_pages_written") * page / mib),
            (v::REDO_MBS, c("Innodb_os_log_written") / mib),
            (v::REDO_BYTES_S, c("Innodb_os_log_written")),
            ("db.transactions_per_s", c("Com_commit")),
            (
                "mysql.buffer_pool_reads_per_s",
                c("Innodb_buffer_pool_reads"),
            ),
            ("mysql.data_writes_per_s", c("Innodb_data_writes")),
            ("mysql.data_fsyncs_per_s", c("Innodb_data_fsyncs")),
            ("mysql.dblwr_pages_per_s", c("Innodb_dblwr_pages_written")),
            ("mysql.log_waits_per_s", c("Innodb_log_waits")),
            ("mysql.wait_free_per_s", c("Innodb_buffer_pool_wait_free")),
        ];
        for (name, val) in per_s {
            out.push((name.to_string(), val / secs));
        }
        let requests = c("Innodb_buffer_pool_read_requests");
        if requests > 0.0 {
            out.push((
                "db.cache_hit_pct".into(),
                100.0 * (1.0 - c("Innodb_buffer_pool_reads") / requests),
            ));
        }
        if c("Com_commit") > 0.0 {
            out.push((
                "mysql.redo_bytes_per_tx".into(),
                c("Innodb_os_log_written") / c("Com_commit"),
            ));
        }
    }
    for w in &p.ps_waits {
        let key = w.event.replace('/', "_");
        for (field, v) in [
            ("avg_ms", w.avg_us / 1e3),
            ("time_s", w.time_ms / 1e3),
            ("waits_per_s", w.waits / secs),
        ] {
            out.push((format!("mysql.{key}.{field}"), v));
        }
    }
    let load = &p.setup.load;
    for (name, x) in [
        (
            "mysql.device_reads_per_s",
            p.physical_reads.device.device_per_s,
        ),
        ("mysql.read_difference_pct", p.physical_reads.difference_pct),
        ("mysql.load_mib_per_s", Some(load.mib_per_s)),
        ("mysql.load_bytes", Some(load.bytes as f64)),
        (
            "mysql.client_cpu_us_per_execute",
            Some(p.ops.client_cpu_us_per_execute),
        ),
        (
            "mysql.memory_limit_bytes",
            p.setup.memory_limit_bytes.map(|b| b as f64),
        ),
    ] {
        if let Some(x) = x {
            out.push((name.into(), x));
        }
    }
}

/// Every number under `v`, named by its dotted path from `prefix`.
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                out.push((prefix.to_string(), f));
            }
        }
        Value::Object(map) => {
            for (k, child) in map {
                flatten(&format!("{prefix}.{k}"), child, out);
            }
        }
        _ => {}
    }
}

fn series_row(p: &SecondPoint) -> SeriesRow {
    let kind = |k: &KindPoint| SeriesKind {
        ops: k.ops as i64,
        bytes: k.bytes as i64,
        lat_mean_us: k.lat_mean_us,
        lat_p99_us: k.lat_p99_us,
    };
    SeriesRow {
        t_s: i64::from(p.t_s),
        ramp: p.ramp,
        read: kind(&p.read),
        write: kind(&p.write),
        sync: kind(&p.sync),
    }
}

fn outlier_row(o: &Outlier) -> OutlierRow {
    OutlierRow {
        t_s: o.t_s,
        op: o.op.name().into(),
        session: i64::from(o.session),
        file: i64::from(o.file),
        offset_bytes: o.offset_bytes as i64,
        len_bytes: i64::from(o.len_bytes),
        latency_ms: o.latency_ms,
    }
}
