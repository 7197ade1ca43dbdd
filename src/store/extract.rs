//! What a report document (docs/json.md) contributes to the store besides
//! its whole JSON: the `runs` columns, the `metrics` rows (every number under
//! read/write/sync/total/cpu, dotted, and the telemetry window as `host.*`,
//! `dev.*` and `dev.<device>.*`), the per-second `series` and the
//! `outliers`. Lenient on purpose: a field that is missing becomes NULL (or
//! is skipped) rather than losing the run; only the identity of the document
//! (schema, status, start time) is required.

use serde_json::Value;

use super::runs::{OutlierRow, SeriesKind, SeriesRow};

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

/// Top-level objects whose numbers all become metrics.
const METRIC_ROOTS: [&str; 6] = ["read", "write", "sync", "total", "cpu", "open_loop"];
/// Other numbers worth a metric row.
const METRIC_EXTRAS: [&str; 5] = [
    "measured_s",
    "ramp_s",
    "outliers.count",
    "outliers.unlisted",
    "outliers.threshold_ms",
];

/// What a report to be saved lacks (the words follow "the report").
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("is not a JSON object")]
    NotAnObject,
    #[error("has schema {0:?}, not dbio.run.*")]
    Schema(String),
    #[error("has no {0}")]
    Missing(&'static str),
}

/// Takes the report apart; `Err` says what is missing from it.
pub(crate) fn extract(report: &Value) -> Result<Extracted, Unfit> {
    if !report.is_object() {
        return Err(Unfit::NotAnObject);
    }
    let schema = text(report, "schema").unwrap_or_default();
    if !schema.starts_with("dbio.run.") {
        return Err(Unfit::Schema(schema));
    }
    // A document of an earlier schema is read under this one's names.
    let upgraded = crate::report::upgrade::upgrade(report.clone());
    let report = &upgraded;
    let started = int(report, "started_unix_ms").ok_or(Unfit::Missing("started_unix_ms"))?;
    let status = text(report, "status").ok_or(Unfit::Missing("status"))?;
    let ended = int(report, "ended_unix_ms").or_else(|| {
        let secs = num(report, "ramp_s").unwrap_or(0.0) + num(report, "measured_s")?;
        Some(started + (secs * 1000.0).round() as i64)
    });
    let columns = Columns {
        started_unix_ms: started,
        ended_unix_ms: ended,
        status,
        workload: text(report, "config.workload"),
        pattern: text(report, "config.pattern"),
        sessions: int(report, "config.sessions"),
        block_size: int(report, "config.block_size_bytes")
            .or_else(|| int(report, "target.block_size_bytes")),
        engine: text(report, "config.engine"),
        io_mode: text(report, "config.io_mode"),
        target: text(report, "config.target").or_else(|| text(report, "target.path")),
        dbio_version: text(report, "dbio_version"),
    };
    let mut metrics = Vec::new();
    for root in METRIC_ROOTS {
        if let Some(v) = report.get(root) {
            flatten(root, v, &mut metrics);
        }
    }
    for name in METRIC_EXTRAS {
        if let Some(v) = num(report, name) {
            metrics.push((name.to_string(), v));
        }
    }
    telemetry_metrics(report, &mut metrics);
    slob_metrics(report, &mut metrics);
    pg_metrics(report, &mut metrics);
    mysql_metrics(report, &mut metrics);
    let series = report
        .get("series")
        .and_then(Value::as_array)
        .map(|points| points.iter().filter_map(series_row).collect())
        .unwrap_or_default();
    let outliers = at(report, "outliers.list")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(outlier_row).collect())
        .unwrap_or_default();
    Ok(Extracted {
        columns,
        metrics,
        series,
        outliers,
    })
}

/// The telemetry window as metrics: `host.<field>`, `dev.<device>.<field>`
/// for every device of the chain, and `dev.<field>` for the first one (the
/// device directly under the target), so `dev.w_await_ms` names "the
/// device" whatever it is called.
fn telemetry_metrics(report: &Value, out: &mut Vec<(String, f64)>) {
    let Some(w) = report.get("telemetry_window").filter(|w| w.is_object()) else {
        return;
    };
    if let Some(h) = w.get("host") {
        flatten("host", h, out);
    }
    let devices = w
        .get("devices")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, d) in devices.iter().enumerate() {
        let (Some(name), Some(rates)) = (d.get("name").and_then(Value::as_str), d.get("rates"))
        else {
            continue;
        };
        flatten(&format!("dev.{name}"), rates, out);
        if i == 0 {
            flatten("dev", rates, out);
        }
    }
}

/// The database model's numbers (docs/store.md): `db.*` per second as
/// SLOB's awr_info reports them, and `event.<event>.*` for each wait event.
fn slob_metrics(report: &Value, out: &mut Vec<(String, f64)>) {
    let Some(s) = report.get("slob").filter(|s| s.is_object()) else {
        return;
    };
    let secs = num(report, "measured_s").unwrap_or(0.0);
    if secs <= 0.0 {
        return;
    }
    let c = |k: &str| num(s, &format!("counters.{k}")).unwrap_or(0.0);
    let mib = 1024.0 * 1024.0;
    use crate::vocab as v;
    let per_s = [
        (v::PHYSICAL_READS_S, c("read_requests")),
        ("db.physical_read_blocks_per_s", c("physical_reads")),
        (v::PHYSICAL_WRITES_S, c("write_requests")),
        (v::LOGICAL_READS_S, c("logical_reads")),
        ("db.block_changes_per_s", c("block_changes")),
        (v::READ_MBS, c("read_bytes") / mib),
        (v::WRITE_MBS, c("write_bytes") / mib),
        (v::REDO_MBS, c("redo_bytes") / mib),
        (v::REDO_BYTES_S, c("redo_bytes")),
        ("db.redo_writes_per_s", c("redo_writes")),
        (v::EXECUTES_S, c("executes")),
        ("db.transactions_per_s", c("transactions")),
        (v::DB_TIME_S, num(s, "db_time_s").unwrap_or(0.0)),
        (v::DB_CPU_S, num(s, "db_cpu_s").unwrap_or(0.0)),
    ];
    for (name, v) in per_s {
        out.push((name.to_string(), v / secs));
    }
    if let Some(v) = num(s, "cache_hit_pct") {
        out.push(("db.cache_hit_pct".into(), v));
    }
    if c("redo_written_bytes") > 0.0 {
        out.push((
            "db.redo_wastage_pct".into(),
            100.0 * c("redo_wastage_bytes") / c("redo_written_bytes"),
        ));
    }
    for (name, path) in [
        (v::UPDATE_PCT, "config.slob.update_pct"),
        (v::BLOCK_SIZE, "config.slob.block_size_bytes"),
    ] {
        if let Some(v) = num(report, path) {
            out.push((name.into(), v));
        }
    }
    let events = s.get("events").and_then(Value::as_array).map(Vec::as_slice);
    for e in events.unwrap_or_default() {
        let Some(name) = e.get("name").and_then(Value::as_str) else {
            continue;
        };
        let key = crate::vocab::event_key(name);
        for (field, v) in [
            ("avg_ms", num(e, "avg_ms")),
            ("time_s", num(e, "time_s")),
            ("pct_db_time", num(e, "pct_db_time")),
            ("waits_per_s", num(e, "waits").map(|w| w / secs)),
        ] {
            if let Some(v) = v {
                out.push((format!("event.{key}.{field}"), v));
            }
        }
    }
}

/// A PostgreSQL run's numbers: the shared `db.*` names where the meaning is
/// the same as SLOB's (physical reads = blks_read, redo = WAL, executes =
/// statements dbio ran, commit latency as `log file sync`), and `pg.*` for
/// what only PostgreSQL has.
fn pg_metrics(report: &Value, out: &mut Vec<(String, f64)>) {
    let Some(p) = report.get("pg").filter(|s| s.is_object()) else {
        return;
    };
    let secs = num(report, "measured_s").unwrap_or(0.0);
    if secs <= 0.0 {
        return;
    }
    let mib = 1024.0 * 1024.0;
    let page = 8192.0;
    db_ops_metrics(p, "pg", secs, out);
    use crate::vocab as v;
    if let Some(s) = p.get("server").filter(|s| s.is_object()) {
        let c = |k: &str| num(s, k).unwrap_or(0.0);
        let writes = c("buffers_checkpoint") + c("buffers_clean") + c("buffers_backend");
        let per_s = [
            (v::PHYSICAL_READS_S, c("blks_read")),
            ("db.physical_read_blocks_per_s", c("blks_read")),
            (v::PHYSICAL_WRITES_S, writes),
            (v::LOGICAL_READS_S, c("blks_hit") + c("blks_read")),
            (v::READ_MBS, c("blks_read") * page / mib),
            (v::WRITE_MBS, writes * page / mib),
            (v::REDO_MBS, c("wal_bytes") / mib),
            (v::REDO_BYTES_S, c("wal_bytes")),
            ("db.redo_writes_per_s", c("wal_write")),
            ("db.transactions_per_s", c("xact_commit")),
            ("pg.wal_records_per_s", c("wal_records")),
            ("pg.wal_fpi_per_s", c("wal_fpi")),
            ("pg.wal_syncs_per_s", c("wal_sync")),
            (
                "pg.checkpoints_per_s",
                c("checkpoints_timed") + c("checkpoints_req"),
            ),
        ];
        for (name, val) in per_s {
            out.push((name.to_string(), val / secs));
        }
        let logical = c("blks_hit") + c("blks_read");
        if logical > 0.0 {
            out.push(("db.cache_hit_pct".into(), 100.0 * c("blks_hit") / logical));
        }
        if c("blks_read") > 0.0 {
            out.push((
                "pg.read_avg_ms".into(),
                c("blk_read_time_ms") / c("blks_read"),
            ));
        }
        if c("xact_commit") > 0.0 {
            out.push((
                "pg.wal_bytes_per_tx".into(),
                c("wal_bytes") / c("xact_commit"),
            ));
        }
    }
    for (name, path) in [
        ("pg.device_reads_per_s", "physical_reads.device_per_s"),
        ("pg.absorbed_pct", "physical_reads.absorbed_pct"),
        ("pg.load_mib_per_s", "load.mib_per_s"),
        ("pg.load_bytes", "load.bytes"),
        ("pg.client_cpu_us_per_execute", "client_cpu_us_per_execute"),
        ("pg.memory_limit_bytes", "memory_limit_bytes"),
    ] {
        if let Some(x) = num(p, path) {
            out.push((name.into(), x));
        }
    }
    for (name, path) in [
        (v::UPDATE_PCT, "config.pg.slob.update_pct"),
        (v::BLOCK_SIZE, "config.block_size_bytes"),
    ] {
        if let Some(x) = num(report, path) {
            out.push((name.into(), x));
        }
    }
}

/// What every database server's section has: executes per second, the
/// commit's latency as `log file sync`'s, and each operation's latency as
/// `PREFIX.<kind>.latency.*`.
fn db_ops_metrics(p: &Value, prefix: &str, secs: f64, out: &mut Vec<(String, f64)>) {
    use crate::vocab as v;
    let ops = ["selects", "updates", "scans"]
        .iter()
        .map(|k| num(p, k).unwrap_or(0.0))
        .sum::<f64>();
    out.push((v::EXECUTES_S.into(), ops / secs));
    if let Some(us) = num(p, "commit.latency.mean_us") {
        out.push((v::EVENT_LOG_FILE_SYNC.into(), us / 1e3));
    }
    for kind in ["select", "update", "commit", "scan"] {
        if let Some(l) = at(p, &format!("{kind}.latency")) {
            flatten(&format!("{prefix}.{kind}.latency"), l, out);
        }
    }
}

/// A MariaDB run's numbers: the shared `db.*` names where the meaning is
/// the same (physical reads = Innodb_data_reads, physical writes =
/// Innodb_pages_written as pg's buffers written, redo = Innodb_os_log_written,
/// transactions = Com_commit, commit latency as `log file sync`), and
/// `mysql.*` for what only InnoDB has.
fn mysql_metrics(report: &Value, out: &mut Vec<(String, f64)>) {
    let Some(p) = report.get("mysql").filter(|s| s.is_object()) else {
        return;
    };
    let secs = num(report, "measured_s").unwrap_or(0.0);
    if secs <= 0.0 {
        return;
    }
    let mib = 1024.0 * 1024.0;
    let page = num(report, "config.block_size_bytes").unwrap_or(16384.0);
    db_ops_metrics(p, "mysql", secs, out);
    for (name, path) in [
        (crate::vocab::UPDATE_PCT, "config.mysql.slob.update_pct"),
        (crate::vocab::BLOCK_SIZE, "config.block_size_bytes"),
    ] {
        if let Some(x) = num(report, path) {
            out.push((name.into(), x));
        }
    }
    use crate::vocab as v;
    if let Some(s) = p.get("server").filter(|s| s.is_object()) {
        let c = |k: &str| num(s, k).unwrap_or(0.0);
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
    let waits = p.get("ps_waits").and_then(Value::as_array);
    for w in waits.map(Vec::as_slice).unwrap_or_default() {
        let Some(event) = w.get("event").and_then(Value::as_str) else {
            continue;
        };
        let key = event.replace('/', "_");
        for (field, v) in [
            ("avg_ms", num(w, "avg_us").map(|us| us / 1e3)),
            ("time_s", num(w, "time_ms").map(|ms| ms / 1e3)),
            ("waits_per_s", num(w, "waits").map(|n| n / secs)),
        ] {
            if let Some(v) = v {
                out.push((format!("mysql.{key}.{field}"), v));
            }
        }
    }
    for (name, path) in [
        ("mysql.device_reads_per_s", "physical_reads.device_per_s"),
        ("mysql.read_difference_pct", "physical_reads.difference_pct"),
        ("mysql.load_mib_per_s", "load.mib_per_s"),
        ("mysql.load_bytes", "load.bytes"),
        (
            "mysql.client_cpu_us_per_execute",
            "client_cpu_us_per_execute",
        ),
        ("mysql.memory_limit_bytes", "memory_limit_bytes"),
    ] {
        if let Some(x) = num(p, path) {
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

fn series_row(p: &Value) -> Option<SeriesRow> {
    let kind = |name: &str| {
        let k = p.get(name);
        SeriesKind {
            ops: k.and_then(|k| int(k, "ops")).unwrap_or(0),
            bytes: k.and_then(|k| int(k, "bytes")).unwrap_or(0),
            lat_mean_us: k.and_then(|k| num(k, "lat_mean_us")).unwrap_or(0.0),
            lat_p99_us: k.and_then(|k| num(k, "lat_p99_us")).unwrap_or(0.0),
        }
    };
    Some(SeriesRow {
        t_s: int(p, "t_s")?,
        ramp: p.get("ramp").and_then(Value::as_bool).unwrap_or(false),
        read: kind("read"),
        write: kind("write"),
        sync: kind("sync"),
    })
}

fn outlier_row(o: &Value) -> Option<OutlierRow> {
    Some(OutlierRow {
        t_s: num(o, "t_s")?,
        op: text(o, "op")?,
        session: int(o, "session")?,
        file: int(o, "file")?,
        offset_bytes: int(o, "offset_bytes")?,
        len_bytes: int(o, "len_bytes")?,
        latency_ms: num(o, "latency_ms")?,
    })
}

/// The value at a dotted path (`config.workload`).
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, key| v.get(key))
}

fn text(v: &Value, path: &str) -> Option<String> {
    at(v, path).and_then(Value::as_str).map(str::to_string)
}

fn int(v: &Value, path: &str) -> Option<i64> {
    let v = at(v, path)?;
    v.as_i64().or_else(|| v.as_f64().map(|f| f as i64))
}

fn num(v: &Value, path: &str) -> Option<f64> {
    at(v, path).and_then(Value::as_f64)
}
