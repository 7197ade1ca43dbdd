//! The server's cumulative counters at one instant — `pg_stat_database`
//! (the workload's database), `pg_stat_bgwriter` and `pg_stat_wal` — and
//! their difference over the measured window, in one query so both edges
//! read the three views together.

use serde::Serialize;

/// The counters, by the views' own column names.
pub const COLUMNS: [&str; 26] = [
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "blk_read_time",
    "blk_write_time",
    "tup_returned",
    "tup_fetched",
    "tup_updated",
    "checkpoints_timed",
    "checkpoints_req",
    "checkpoint_write_time",
    "checkpoint_sync_time",
    "buffers_checkpoint",
    "buffers_clean",
    "buffers_backend",
    "buffers_backend_fsync",
    "buffers_alloc",
    "wal_records",
    "wal_fpi",
    "wal_bytes",
    "wal_buffers_full",
    "wal_write",
    "wal_sync",
    "wal_write_time",
    "wal_sync_time",
];

/// One query reading every counter as double precision (times in ms).
pub fn snapshot_sql(database: &str) -> String {
    let cols: Vec<String> = COLUMNS
        .iter()
        .map(|c| format!("{c}::float8 AS {c}"))
        .collect();
    format!(
        "SELECT {} FROM pg_stat_database d, pg_stat_bgwriter b, pg_stat_wal w WHERE d.datname = '{}'",
        cols.join(", "),
        database.replace('\'', "''")
    )
}

/// The counters at one instant, in [`COLUMNS`] order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot(pub Vec<f64>);

impl Snapshot {
    pub fn read(client: &mut postgres::Client, sql: &str) -> Result<Snapshot, postgres::Error> {
        let row = client.query_one(sql, &[])?;
        Ok(Snapshot((0..COLUMNS.len()).map(|i| row.get(i)).collect()))
    }
}

/// What changed between two snapshots (times in ms).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Delta {
    pub xact_commit: f64,
    pub xact_rollback: f64,
    pub blks_read: f64,
    pub blks_hit: f64,
    pub blk_read_time_ms: f64,
    pub blk_write_time_ms: f64,
    pub tup_returned: f64,
    pub tup_fetched: f64,
    pub tup_updated: f64,
    pub checkpoints_timed: f64,
    pub checkpoints_req: f64,
    pub checkpoint_write_time_ms: f64,
    pub checkpoint_sync_time_ms: f64,
    pub buffers_checkpoint: f64,
    pub buffers_clean: f64,
    pub buffers_backend: f64,
    pub buffers_backend_fsync: f64,
    pub buffers_alloc: f64,
    pub wal_records: f64,
    pub wal_fpi: f64,
    pub wal_bytes: f64,
    pub wal_buffers_full: f64,
    pub wal_write: f64,
    pub wal_sync: f64,
    pub wal_write_time_ms: f64,
    pub wal_sync_time_ms: f64,
}

impl Delta {
    pub fn between(a: &Snapshot, b: &Snapshot) -> Delta {
        let d: Vec<f64> = a.0.iter().zip(&b.0).map(|(x, y)| y - x).collect();
        let g = |i: usize| d.get(i).copied().unwrap_or(0.0);
        Delta {
            xact_commit: g(0),
            xact_rollback: g(1),
            blks_read: g(2),
            blks_hit: g(3),
            blk_read_time_ms: g(4),
            blk_write_time_ms: g(5),
            tup_returned: g(6),
            tup_fetched: g(7),
            tup_updated: g(8),
            checkpoints_timed: g(9),
            checkpoints_req: g(10),
            checkpoint_write_time_ms: g(11),
            checkpoint_sync_time_ms: g(12),
            buffers_checkpoint: g(13),
            buffers_clean: g(14),
            buffers_backend: g(15),
            buffers_backend_fsync: g(16),
            buffers_alloc: g(17),
            wal_records: g(18),
            wal_fpi: g(19),
            wal_bytes: g(20),
            wal_buffers_full: g(21),
            wal_write: g(22),
            wal_sync: g(23),
            wal_write_time_ms: g(24),
            wal_sync_time_ms: g(25),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_names_follow_the_columns() {
        let a = Snapshot(vec![0.0; COLUMNS.len()]);
        let b = Snapshot((0..COLUMNS.len()).map(|i| i as f64).collect());
        let d = Delta::between(&a, &b);
        assert_eq!(d.xact_commit, 0.0);
        assert_eq!(d.blks_read, 2.0);
        assert_eq!(d.buffers_checkpoint, 13.0);
        assert_eq!(d.wal_fpi, 19.0);
        assert_eq!(d.wal_sync_time_ms, 25.0);
        // Every column is selected once, by name.
        let sql = snapshot_sql("dbio");
        for c in COLUMNS {
            assert_eq!(
                sql.matches(&format!("{c}::float8 AS {c}")).count(),
                1,
                "{c}"
            );
        }
    }
}
