//! The metric names of database-shaped runs, in one place, on neutral ground
//! below the workloads and the store: `--workload slob` runs and imported
//! SLOB (awr_info.sh) runs store these, and the SLOB.R models
//! (`analysis::models`) read them. docs/store.md lists
//! them with their units. Raw-I/O names (`read.iops`, `write.iops`,
//! `total.latency.p99_us`, …) come from the report (`store::extract`) and
//! fio imports use the same ones.

/// Logical reads (buffer gets) per second: awr_info `LIO`.
pub const LOGICAL_READS_S: &str = "db.logical_reads_s";
/// Physical read requests per second: awr_info `PREADS`.
pub const PHYSICAL_READS_S: &str = "db.physical_reads_s";
/// Physical write requests per second: awr_info `PWRITES`.
pub const PHYSICAL_WRITES_S: &str = "db.physical_writes_s";
/// MiB read per second: awr_info `READ_MBS`.
pub const READ_MBS: &str = "db.read_mbs";
/// MiB written per second: awr_info `WRITE_MBS`.
pub const WRITE_MBS: &str = "db.write_mbs";
/// Redo MiB per second: awr_info `REDO_MBS` (or the old `REDO` / 2^20).
pub const REDO_MBS: &str = "db.redo_mbs";
/// Redo bytes per second: the old awr_info `REDO` (or `REDO_MBS` × 2^20).
pub const REDO_BYTES_S: &str = "db.redo_bytes_s";
/// Executions per second: awr_info `EXECUTES`.
pub const EXECUTES_S: &str = "db.executes_s";
/// DB time per second of elapsed time (average active sessions): `DB Tm`.
pub const DB_TIME_S: &str = "db.db_time_s";
/// DB CPU seconds per second: `DB CPU`.
pub const DB_CPU_S: &str = "db.db_cpu_s";
/// SLOB reader sessions: the old awr_info `READERS`.
pub const READERS: &str = "db.readers";
/// SLOB writer sessions: the old awr_info `WRITERS`.
pub const WRITERS: &str = "db.writers";
/// Percentage of SLOB operations that update (dbio slob runs only).
pub const UPDATE_PCT: &str = "db.update_pct";
/// The database block size in bytes (the REDO model's ratio divides by it).
pub const BLOCK_SIZE: &str = "db.block_size";

/// Average wait of `db file sequential read`, ms: awr_info `DFSR_LAT`.
pub const EVENT_DB_FILE_SEQUENTIAL_READ: &str = "event.db_file_sequential_read.avg_ms";
/// `direct path read`, ms: awr_info `DPR_LAT`.
pub const EVENT_DIRECT_PATH_READ: &str = "event.direct_path_read.avg_ms";
/// `db file parallel read`, ms: awr_info `DFPR_LAT`.
pub const EVENT_DB_FILE_PARALLEL_READ: &str = "event.db_file_parallel_read.avg_ms";
/// `db file parallel write`, ms: awr_info `DFPW_LAT`.
pub const EVENT_DB_FILE_PARALLEL_WRITE: &str = "event.db_file_parallel_write.avg_ms";
/// `log file parallel write`, ms: awr_info `LFPW_LAT`.
pub const EVENT_LOG_FILE_PARALLEL_WRITE: &str = "event.log_file_parallel_write.avg_ms";
/// `log file sync`, ms.
pub const EVENT_LOG_FILE_SYNC: &str = "event.log_file_sync.avg_ms";

/// Raw-I/O names the models read (from dbio's report and fio imports).
pub const READ_IOPS: &str = "read.iops";
pub const WRITE_IOPS: &str = "write.iops";
pub const WRITE_REQUESTS: &str = "write.requests";

/// A metric as a user may name it — a stored name (`total.iops`), a short
/// name (`iops`, `read_iops`, `read_mbs`, `p99_read_ms`, `avg_write_ms`,
/// `log_file_sync_avg_ms`) or an awr_info column (`PREADS`, `REDO_MBS`,
/// `DFSR_LAT`) — as the stored name and the factor its values are
/// multiplied by (latencies are stored in µs and asked for in ms).
pub fn resolve_metric(name: &str) -> (String, f64) {
    let lower = name.trim().to_ascii_lowercase();
    let awr = match lower.as_str() {
        "preads" => Some(PHYSICAL_READS_S),
        "pwrites" => Some(PHYSICAL_WRITES_S),
        "lio" => Some(LOGICAL_READS_S),
        "redo_mbs" => Some(REDO_MBS),
        "executes" => Some(EXECUTES_S),
        "dfsr_lat" => Some(EVENT_DB_FILE_SEQUENTIAL_READ),
        "dpr_lat" => Some(EVENT_DIRECT_PATH_READ),
        "dfpr_lat" => Some(EVENT_DB_FILE_PARALLEL_READ),
        "dfpw_lat" => Some(EVENT_DB_FILE_PARALLEL_WRITE),
        "lfpw_lat" => Some(EVENT_LOG_FILE_PARALLEL_WRITE),
        "iops" => Some("total.iops"),
        "read_iops" | "reads_s" => Some(READ_IOPS),
        "write_iops" | "writes_s" => Some(WRITE_IOPS),
        "mbs" | "mib_per_s" => Some("total.mib_per_s"),
        "read_mbs" => Some("read.mib_per_s"),
        "write_mbs" => Some("write.mib_per_s"),
        _ => None,
    };
    if let Some(n) = awr {
        return (n.to_string(), 1.0);
    }
    // p99_read_ms, p99.9_write_ms, avg_read_ms, max_total_ms, …
    if let Some(rest) = lower.strip_suffix("_ms")
        && let Some((stat, kind)) = rest.split_once('_')
        && ["read", "write", "sync", "total"].contains(&kind)
    {
        let field = match stat {
            "avg" | "mean" => Some("mean_us".to_string()),
            "min" | "max" => Some(format!("{stat}_us")),
            p if p.starts_with('p') => Some(format!("{}_us", p.replace('.', "_"))),
            _ => None,
        };
        if let Some(f) = field {
            return (format!("{kind}.latency.{f}"), 1e-3);
        }
    }
    // log_file_sync_avg_ms → event.log_file_sync.avg_ms
    if !lower.contains('.')
        && let Some(event) = lower.strip_suffix("_avg_ms")
    {
        return (format!("event.{event}.avg_ms"), 1.0);
    }
    (name.to_string(), 1.0)
}

/// The value of metric `name` (any form [`resolve_metric`] accepts) among
/// a run's stored metrics.
pub fn lookup(metrics: &[(String, f64)], name: &str) -> Option<f64> {
    let find = |n: &str| metrics.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    find(name).or_else(|| {
        let (stored, scale) = resolve_metric(name);
        find(&stored).map(|v| v * scale)
    })
}

/// `event.<snake_case name>.avg_ms` for an Oracle wait event name:
/// `"log file sync"` → `event.log_file_sync.avg_ms`.
pub fn event_avg_ms(event: &str) -> String {
    format!("event.{}.avg_ms", event_key(event))
}

/// An event name in snake case, as metric names carry it:
/// `"log file switch (checkpoint incomplete)"` →
/// `log_file_switch_checkpoint_incomplete`.
pub fn event_key(event: &str) -> String {
    let mut snake = String::with_capacity(event.len());
    for c in event.trim().chars() {
        if c.is_ascii_alphanumeric() {
            snake.push(c.to_ascii_lowercase());
        } else if !snake.ends_with('_') && !snake.is_empty() {
            snake.push('_');
        }
    }
    snake.trim_end_matches('_').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_awr_info_names_resolve_to_stored_ones() {
        assert_eq!(resolve_metric("iops"), ("total.iops".into(), 1.0));
        assert_eq!(resolve_metric("PREADS"), (PHYSICAL_READS_S.into(), 1.0));
        assert_eq!(
            resolve_metric("DFSR_LAT"),
            (EVENT_DB_FILE_SEQUENTIAL_READ.into(), 1.0)
        );
        assert_eq!(
            resolve_metric("p99_read_ms"),
            ("read.latency.p99_us".into(), 1e-3)
        );
        assert_eq!(
            resolve_metric("p99.9_write_ms"),
            ("write.latency.p99_9_us".into(), 1e-3)
        );
        assert_eq!(
            resolve_metric("avg_total_ms"),
            ("total.latency.mean_us".into(), 1e-3)
        );
        assert_eq!(
            resolve_metric("log_file_sync_avg_ms"),
            (EVENT_LOG_FILE_SYNC.into(), 1.0)
        );
        assert_eq!(
            resolve_metric("dev.w_await_ms"),
            ("dev.w_await_ms".into(), 1.0)
        );
        let m = vec![
            ("read.latency.p99_us".to_string(), 1500.0),
            ("iops".to_string(), 7.0),
        ];
        assert_eq!(lookup(&m, "p99_read_ms"), Some(1.5));
        assert_eq!(lookup(&m, "iops"), Some(7.0), "a stored name wins");
        assert_eq!(lookup(&m, "write_iops"), None);
    }

    #[test]
    fn event_names_are_snake_case_like_the_constants() {
        assert_eq!(
            event_avg_ms("db file sequential read"),
            EVENT_DB_FILE_SEQUENTIAL_READ
        );
        assert_eq!(event_avg_ms(" log file sync "), EVENT_LOG_FILE_SYNC);
        assert_eq!(
            event_avg_ms("enq: TX - row lock contention"),
            "event.enq_tx_row_lock_contention.avg_ms"
        );
    }
}
