//! The metric names of database-shaped runs, in one place, on neutral ground
//! below the workloads and the store: `--workload slob` runs and imported
//! SLOB (awr_info.sh) runs store these, and the SLOB.R models
//! (`analysis::models`) read them. docs/store.md lists
//! them with their units. Raw-I/O names (`read.iops`, `write.iops`,
//! `total.latency.p99_us`, …) come from the report (`store::extract`) and
//! fio imports use the same ones.

/// Logical reads (buffer gets) per second: awr_info `LIO`.
pub const LOGICAL_READS_S: &str = "db.logical_reads_per_s";
/// Physical read requests per second: awr_info `PREADS`.
pub const PHYSICAL_READS_S: &str = "db.physical_reads_per_s";
/// Physical write requests per second: awr_info `PWRITES`.
pub const PHYSICAL_WRITES_S: &str = "db.physical_writes_per_s";
/// MiB read per second: awr_info `READ_MBS`.
pub const READ_MBS: &str = "db.read_mib_per_s";
/// MiB written per second: awr_info `WRITE_MBS`.
pub const WRITE_MBS: &str = "db.write_mib_per_s";
/// Redo MiB per second: awr_info `REDO_MBS` (or the old `REDO` / 2^20).
pub const REDO_MBS: &str = "db.redo_mib_per_s";
/// Redo bytes per second: the old awr_info `REDO` (or `REDO_MBS` × 2^20).
pub const REDO_BYTES_S: &str = "db.redo_bytes_per_s";
/// Executions per second: awr_info `EXECUTES`.
pub const EXECUTES_S: &str = "db.executes_per_s";
/// DB time per second of elapsed time (average active sessions): `DB Tm`.
pub const DB_TIME_S: &str = "db.db_time_per_s";
/// DB CPU seconds per second: `DB CPU`.
pub const DB_CPU_S: &str = "db.db_cpu_per_s";
/// SLOB reader sessions: the old awr_info `READERS`.
pub const READERS: &str = "db.readers";
/// SLOB writer sessions: the old awr_info `WRITERS`.
pub const WRITERS: &str = "db.writers";
/// Percentage of SLOB operations that update (dbio slob runs only).
pub const UPDATE_PCT: &str = "db.update_pct";
/// The database block size in bytes (the REDO model's ratio divides by it).
pub const BLOCK_SIZE: &str = "db.block_size_bytes";

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

/// Stored names of earlier builds (old → new): per-second rates ended in
/// `_s`, which elsewhere means seconds, MiB/s in `_mbs`/`_mib_s`, and the
/// block size had no unit. Runs
/// stored before the rename keep their rows; the store reads them under the
/// new names ([`canonical_metric`]) and a user may still type the old ones.
/// `event.<event>.waits_s` → `event.<event>.waits_per_s` (and the same for
/// `mysql.<event>.waits_s`) is a rule, not a row.
pub(crate) const RENAMED_METRICS: &[(&str, &str)] = &[
    ("db.logical_reads_s", LOGICAL_READS_S),
    ("db.physical_reads_s", PHYSICAL_READS_S),
    ("db.physical_read_blocks_s", "db.physical_read_blocks_per_s"),
    ("db.physical_writes_s", PHYSICAL_WRITES_S),
    ("db.block_changes_s", "db.block_changes_per_s"),
    ("db.read_mbs", READ_MBS),
    ("db.write_mbs", WRITE_MBS),
    ("db.redo_mbs", REDO_MBS),
    ("db.redo_bytes_s", REDO_BYTES_S),
    ("db.redo_writes_s", "db.redo_writes_per_s"),
    ("db.executes_s", EXECUTES_S),
    ("db.transactions_s", "db.transactions_per_s"),
    ("db.db_time_s", DB_TIME_S),
    ("db.db_cpu_s", DB_CPU_S),
    ("pg.wal_records_s", "pg.wal_records_per_s"),
    ("pg.wal_fpi_s", "pg.wal_fpi_per_s"),
    ("pg.wal_syncs_s", "pg.wal_syncs_per_s"),
    ("pg.checkpoints_s", "pg.checkpoints_per_s"),
    ("pg.device_reads_s", "pg.device_reads_per_s"),
    ("pg.load_mib_s", "pg.load_mib_per_s"),
    ("mysql.buffer_pool_reads_s", "mysql.buffer_pool_reads_per_s"),
    ("mysql.data_writes_s", "mysql.data_writes_per_s"),
    ("mysql.data_fsyncs_s", "mysql.data_fsyncs_per_s"),
    ("mysql.dblwr_pages_s", "mysql.dblwr_pages_per_s"),
    ("mysql.log_waits_s", "mysql.log_waits_per_s"),
    ("mysql.wait_free_s", "mysql.wait_free_per_s"),
    ("mysql.device_reads_s", "mysql.device_reads_per_s"),
    ("mysql.load_mib_s", "mysql.load_mib_per_s"),
    ("db.block_size", BLOCK_SIZE),
];

/// Telemetry fields `dbio.run.v1` named with `_s` for "per second" and
/// `kb` for KiB (old → new): the host's (`telemetry_window.host.*`, stored
/// as `host.<field>`). `report::upgrade` renames them in v1 documents;
/// [`canonical_metric`] in stored metric names.
pub const RENAMED_HOST_FIELDS: &[(&str, &str)] = &[
    ("ctxt_s", "ctxt_per_s"),
    ("intr_s", "intr_per_s"),
    ("dirty_kb", "dirty_kib"),
    ("writeback_kb", "writeback_kib"),
];

/// The same for a device's iostat -x fields (`telemetry_window.devices[].
/// rates.*`, stored as `dev.<field>` and `dev.<device>.<field>`): iostat's
/// `/s` is `_per_s`, its kB (1024 bytes) `kib`.
pub const RENAMED_DEVICE_FIELDS: &[(&str, &str)] = &[
    ("r_s", "r_per_s"),
    ("w_s", "w_per_s"),
    ("d_s", "d_per_s"),
    ("f_s", "f_per_s"),
    ("rkb_s", "rkib_per_s"),
    ("wkb_s", "wkib_per_s"),
    ("dkb_s", "dkib_per_s"),
    ("rrqm_s", "rrqm_per_s"),
    ("wrqm_s", "wrqm_per_s"),
    ("rareq_sz_kb", "rareq_sz_kib"),
    ("wareq_sz_kb", "wareq_sz_kib"),
];

/// The new name of an old field in `table` (old → new pairs), if renamed.
pub fn renamed<'a>(table: &'a [(&str, &str)], field: &str) -> Option<&'a str> {
    table
        .iter()
        .find(|(old, _)| *old == field)
        .map(|(_, new)| *new)
}

/// A stored metric name as this build names it: an earlier build's name
/// ([`RENAMED_METRICS`], `event.*.waits_s`, `mysql.*.waits_s`, telemetry's
/// `host.ctxt_s` and `dev.[<device>.]r_s`: [`RENAMED_HOST_FIELDS`],
/// [`RENAMED_DEVICE_FIELDS`]) becomes the new one; any other name is
/// returned as it is.
pub fn canonical_metric(name: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if let Some((_, new)) = RENAMED_METRICS.iter().find(|(old, _)| *old == name) {
        return Cow::Borrowed(new);
    }
    for prefix in ["event.", "mysql."] {
        match name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".waits_s"))
        {
            Some(event) if !event.is_empty() => {
                return Cow::Owned(format!("{prefix}{event}.waits_per_s"));
            }
            _ => {}
        }
    }
    if let Some(field) = name.strip_prefix("host.")
        && let Some(new) = renamed(RENAMED_HOST_FIELDS, field)
    {
        return Cow::Owned(format!("host.{new}"));
    }
    if name.starts_with("dev.")
        && let Some((head, field)) = name.rsplit_once('.')
        && let Some(new) = renamed(RENAMED_DEVICE_FIELDS, field)
    {
        return Cow::Owned(format!("{head}.{new}"));
    }
    Cow::Borrowed(name)
}

/// Every name a metric may be stored under: its own and, for a renamed
/// one, the earlier build's (for SQL that selects by name).
pub fn stored_names(name: &str) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let mut names = vec![Cow::Borrowed(name)];
    names.extend(
        RENAMED_METRICS
            .iter()
            .filter(|(_, new)| *new == name)
            .map(|(old, _)| Cow::Borrowed(*old)),
    );
    if let Some(field) = name.strip_prefix("host.")
        && let Some((old, _)) = RENAMED_HOST_FIELDS.iter().find(|(_, new)| *new == field)
    {
        names.push(Cow::Owned(format!("host.{old}")));
    }
    if name.starts_with("dev.")
        && let Some((head, field)) = name.rsplit_once('.')
        && let Some((old, _)) = RENAMED_DEVICE_FIELDS.iter().find(|(_, new)| *new == field)
    {
        names.push(Cow::Owned(format!("{head}.{old}")));
    }
    names
}

/// A metric as a user may name it — a stored name (`total.iops`), a short
/// name (`iops`, `read_iops`, `read_mbs`, `p99_read_ms`, `avg_write_ms`,
/// `log_file_sync_avg_ms`) or an awr_info column (`PREADS`, `REDO_MBS`,
/// `DFSR_LAT`), or an earlier build's stored name (`db.physical_reads_s`,
/// [`RENAMED_METRICS`]) — as the stored name and the factor its values are
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
    (canonical_metric(name).into_owned(), 1.0)
}

/// The value of metric `name` (any form [`resolve_metric`] accepts) among
/// a run's stored metrics, stored under this build's name or an earlier
/// one's.
pub fn lookup(metrics: &[(String, f64)], name: &str) -> Option<f64> {
    let find = |n: &str| metrics.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
    find(name).or_else(|| {
        let (stored, scale) = resolve_metric(name);
        stored_names(&stored)
            .iter()
            .find_map(|n| find(n))
            .map(|v| v * scale)
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
    fn earlier_builds_names_read_as_the_new_ones() {
        assert_eq!(canonical_metric("db.physical_reads_s"), PHYSICAL_READS_S);
        assert_eq!(PHYSICAL_READS_S, "db.physical_reads_per_s");
        assert_eq!(canonical_metric("db.redo_mbs"), "db.redo_mib_per_s");
        assert_eq!(
            canonical_metric("event.log_file_sync.waits_s"),
            "event.log_file_sync.waits_per_s"
        );
        // Seconds stay seconds; new and unknown names pass through.
        assert_eq!(
            canonical_metric("event.log_file_sync.time_s"),
            "event.log_file_sync.time_s"
        );
        assert_eq!(canonical_metric("measured_s"), "measured_s");
        assert_eq!(
            canonical_metric("mysql.wait_io_file_innodb_innodb_data_file.waits_s"),
            "mysql.wait_io_file_innodb_innodb_data_file.waits_per_s"
        );
        assert_eq!(canonical_metric(PHYSICAL_READS_S), PHYSICAL_READS_S);
        assert_eq!(canonical_metric("event..waits_s"), "event..waits_s");
        // A user's old name resolves, and finds the value stored either way.
        assert_eq!(
            resolve_metric("db.executes_s"),
            (EXECUTES_S.to_string(), 1.0)
        );
        let m = vec![(EXECUTES_S.to_string(), 42.0)];
        assert_eq!(lookup(&m, "db.executes_s"), Some(42.0));
        let old = vec![("db.executes_s".to_string(), 42.0)];
        assert_eq!(lookup(&old, EXECUTES_S), Some(42.0));
        assert_eq!(lookup(&old, "EXECUTES"), Some(42.0));
        assert_eq!(
            stored_names(PHYSICAL_READS_S),
            vec![PHYSICAL_READS_S, "db.physical_reads_s"]
        );
        assert_eq!(stored_names("total.iops"), vec!["total.iops"]);
        // Telemetry: dbio.run.v1's `_s` rates and kB read as `_per_s`, KiB.
        assert_eq!(canonical_metric("host.ctxt_s"), "host.ctxt_per_s");
        assert_eq!(canonical_metric("dev.r_s"), "dev.r_per_s");
        assert_eq!(canonical_metric("dev.vdb.rkb_s"), "dev.vdb.rkib_per_s");
        assert_eq!(canonical_metric("dev.vdb.r_await_ms"), "dev.vdb.r_await_ms");
        assert_eq!(canonical_metric("host.r_s"), "host.r_s");
        assert_eq!(
            stored_names("dev.loop0.w_per_s"),
            vec!["dev.loop0.w_per_s", "dev.loop0.w_s"]
        );
        assert_eq!(resolve_metric("dev.w_s"), ("dev.w_per_s".into(), 1.0));
        let old = vec![("host.intr_s".to_string(), 9.0)];
        assert_eq!(lookup(&old, "host.intr_per_s"), Some(9.0));
        // Every new name has its unit (a rate, MiB/s, bytes) by its
        // suffix, and no old name is also a new one.
        assert_eq!(canonical_metric("db.block_size"), "db.block_size_bytes");
        for (old, new) in RENAMED_METRICS {
            assert!(new.ends_with("_per_s") || new.ends_with("_bytes"), "{new}");
            assert!(RENAMED_METRICS.iter().all(|(_, n)| n != old), "{old}");
        }
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
