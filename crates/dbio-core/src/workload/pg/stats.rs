//! The server's cumulative counters at one instant — `pg_stat_database`
//! (the workload's database), the checkpointer's and background writer's,
//! and `pg_stat_wal` — and their difference over the measured window, in
//! one query so both edges read the views together; plus `pg_stat_io` by
//! backend type where the server has it (16+).
//!
//! Where the counters live depends on the server's version, so the query is
//! chosen by `server_version_num` ([`Sql::new`]): up to 16 the checkpoint
//! counters are in `pg_stat_bgwriter`; 17 moved them to
//! `pg_stat_checkpointer` and dropped `buffers_backend`/`_fsync` (read from
//! `pg_stat_io`'s writes and fsyncs by every backend but the checkpointer
//! and the background writer); 18 moved `pg_stat_wal`'s write and sync
//! counts and times to `pg_stat_io` (`object = 'wal'`). The stored names
//! stay the 15 names whatever the server.

use serde::{Deserialize, Serialize};

use crate::workload::db::cycle::Position;
use crate::workload::live::{Activity, WriterIo};

/// The counters, by the (PostgreSQL 15) views' own column names.
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

/// pg_stat_io's counters summed per backend type over data files
/// (`object = 'relation'`), times in ms.
pub const IO_COLUMNS: [&str; 10] = [
    "reads",
    "read_time",
    "writes",
    "write_time",
    "writebacks",
    "extends",
    "hits",
    "evictions",
    "fsyncs",
    "fsync_time",
];

/// The first versions (`server_version_num`) with pg_stat_io,
/// pg_stat_checkpointer, and WAL I/O only in pg_stat_io.
pub(crate) const V16: i32 = 160_000;
pub(crate) const V17: i32 = 170_000;
pub(crate) const V18: i32 = 180_000;

/// A column's SQL on a server of `version`, or None where it is the
/// column of the same name.
fn moved(column: &str, version: i32) -> Option<&'static str> {
    let v17 = match column {
        "checkpoints_timed" => "c.num_timed",
        "checkpoints_req" => "c.num_requested",
        "checkpoint_write_time" => "c.write_time",
        "checkpoint_sync_time" => "c.sync_time",
        "buffers_checkpoint" => "c.buffers_written",
        "buffers_backend" => "io.writes",
        "buffers_backend_fsync" => "io.fsyncs",
        _ => "",
    };
    let v18 = match column {
        "wal_write" => "iw.writes",
        "wal_sync" => "iw.fsyncs",
        "wal_write_time" => "iw.write_time",
        "wal_sync_time" => "iw.fsync_time",
        _ => "",
    };
    if version >= V17 && !v17.is_empty() {
        Some(v17)
    } else if version >= V18 && !v18.is_empty() {
        Some(v18)
    } else {
        None
    }
}

/// The queries of a server version.
#[derive(Clone, Debug)]
pub struct Sql {
    /// Every [`COLUMNS`] counter as double precision, in one row.
    pub counters: String,
    /// [`IO_COLUMNS`] per backend type (16+).
    pub io: Option<String>,
    /// The database whose counters `counters` reads: its `$1`, bound as a
    /// parameter, never part of the query's text.
    pub database: String,
}

/// The last checkpoint as `pg_control_checkpoint()` records it, beside the
/// WAL's insert position and the next transaction id now: WAL bytes and
/// transaction ids since the checkpoint's start (its redo point, its
/// `next_xid` as `epoch:xid`), its age, and its LSN.
pub(crate) const POSITION: &str = "SELECT \
     pg_wal_lsn_diff(pg_current_wal_lsn(), c.redo_lsn)::float8, \
     (pg_snapshot_xmax(pg_current_snapshot())::text::numeric \
      - split_part(c.next_xid, ':', 1)::numeric * 4294967296 \
      - split_part(c.next_xid, ':', 2)::numeric)::float8, \
     extract(epoch FROM now() - c.checkpoint_time)::float8, \
     pg_wal_lsn_diff(c.checkpoint_lsn, '0/0')::float8 \
     FROM pg_control_checkpoint() c";

/// Where the server is in its checkpoint cycle ([`POSITION`]); an error
/// where the role may not read `pg_control_checkpoint()`.
pub fn position(client: &mut postgres::Client) -> Result<Position, postgres::Error> {
    let r = client.query_one(POSITION, &[])?;
    Ok(Position {
        log_bytes_since: r.get(0),
        transactions_since: Some(r.get(1)),
        seconds_since: Some(r.get(2)),
        checkpoint_lsn: r.get(3),
        checkpoints_seen: 0,
    })
}

impl Sql {
    /// The queries for `database` on a server whose `server_version_num` is
    /// `version`.
    pub fn new(database: &str, version: i32) -> Sql {
        let cols: Vec<String> = COLUMNS
            .iter()
            .map(|c| match moved(c, version) {
                Some(expr) => format!("{expr}::float8 AS {c}"),
                None => format!("{c}::float8 AS {c}"),
            })
            .collect();
        let mut from = vec![
            "pg_stat_database d".to_string(),
            "pg_stat_bgwriter b".into(),
            "pg_stat_wal w".into(),
        ];
        if version >= V17 {
            from.push("pg_stat_checkpointer c".into());
            from.push(
                "(SELECT coalesce(sum(writes), 0) AS writes, coalesce(sum(fsyncs), 0) AS fsyncs \
                 FROM pg_stat_io WHERE object = 'relation' \
                 AND backend_type NOT IN ('checkpointer', 'background writer')) io"
                    .into(),
            );
        }
        if version >= V18 {
            from.push(
                "(SELECT coalesce(sum(writes), 0) AS writes, coalesce(sum(fsyncs), 0) AS fsyncs, \
                 coalesce(sum(write_time), 0) AS write_time, coalesce(sum(fsync_time), 0) AS fsync_time \
                 FROM pg_stat_io WHERE object = 'wal') iw"
                    .into(),
            );
        }
        let counters = format!(
            "SELECT {} FROM {} WHERE d.datname = $1",
            cols.join(", "),
            from.join(", "),
        );
        let io = (version >= V16).then(|| {
            let sums: Vec<String> = IO_COLUMNS
                .iter()
                .map(|c| format!("coalesce(sum({c}), 0)::float8"))
                .collect();
            format!(
                "SELECT backend_type, {} FROM pg_stat_io WHERE object = 'relation' \
                 GROUP BY backend_type ORDER BY backend_type",
                sums.join(", ")
            )
        });
        Sql {
            counters,
            io,
            database: database.to_string(),
        }
    }
}

/// The server's `server_version_num` (150004 for 15.4).
pub(crate) fn server_version_num(client: &mut postgres::Client) -> Result<i32, postgres::Error> {
    let row = client.query_one("SELECT current_setting('server_version_num')::int", &[])?;
    Ok(row.get(0))
}

/// The counters at one instant, in [`COLUMNS`] order, pg_stat_io's per
/// backend type (empty before 16), and the checkpoint cycle's position
/// (None where the role may not read it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot(
    pub Vec<f64>,
    pub Vec<(String, Vec<f64>)>,
    pub Option<Position>,
);

impl Snapshot {
    pub fn read(client: &mut postgres::Client, sql: &Sql) -> Result<Snapshot, postgres::Error> {
        let row = client.query_one(sql.counters.as_str(), &[&sql.database])?;
        let counters = (0..COLUMNS.len()).map(|i| row.get(i)).collect();
        let mut io = Vec::new();
        if let Some(q) = &sql.io {
            for r in client.query(q.as_str(), &[])? {
                let v = (1..=IO_COLUMNS.len()).map(|i| r.get(i)).collect();
                io.push((r.get(0), v));
            }
        }
        Ok(Snapshot(counters, io, position(client).ok()))
    }
}

/// What changed between two snapshots (times in ms).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// pg_stat_io over data files by backend type (16+; absent before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io: Vec<IoLine>,
}

/// One backend type's I/O on data files over the window (pg_stat_io).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoLine {
    pub backend_type: String,
    pub reads: f64,
    pub read_time_ms: f64,
    pub writes: f64,
    pub write_time_ms: f64,
    pub writebacks: f64,
    pub extends: f64,
    pub hits: f64,
    pub evictions: f64,
    pub fsyncs: f64,
    pub fsync_time_ms: f64,
}

impl IoLine {
    fn between(name: &str, a: Option<&[f64]>, b: &[f64]) -> IoLine {
        let g =
            |i: usize| b.get(i).copied().unwrap_or(0.0) - a.and_then(|a| a.get(i)).unwrap_or(&0.0);
        IoLine {
            backend_type: name.to_string(),
            reads: g(0),
            read_time_ms: g(1),
            writes: g(2),
            write_time_ms: g(3),
            writebacks: g(4),
            extends: g(5),
            hits: g(6),
            evictions: g(7),
            fsyncs: g(8),
            fsync_time_ms: g(9),
        }
    }

    fn is_zero(&self) -> bool {
        [
            self.reads,
            self.writes,
            self.writebacks,
            self.extends,
            self.hits,
            self.evictions,
            self.fsyncs,
        ]
        .iter()
        .all(|v| *v == 0.0)
    }
}

impl Delta {
    pub fn between(a: &Snapshot, b: &Snapshot) -> Delta {
        let d: Vec<f64> = a.0.iter().zip(&b.0).map(|(x, y)| y - x).collect();
        let g = |i: usize| d.get(i).copied().unwrap_or(0.0);
        let io =
            b.1.iter()
                .map(|(name, v)| {
                    let before =
                        a.1.iter()
                            .find(|(n, _)| n == name)
                            .map(|(_, v)| v.as_slice());
                    IoLine::between(name, before, v)
                })
                .filter(|l| !l.is_zero())
                .collect();
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
            io,
        }
    }

    /// Reads of data files by every backend type (pg_stat_io), None before 16.
    pub fn io_reads(&self) -> Option<f64> {
        (!self.io.is_empty()).then(|| self.io.iter().map(|l| l.reads).sum())
    }

    /// Commits and writer I/O for a live view: the DB writer is the
    /// checkpointer and the background writer (a buffer a write of one
    /// page), the log writer WAL's writes and the WAL it generated.
    pub fn activity(&self) -> Activity {
        let buffers = self.buffers_checkpoint + self.buffers_clean;
        Activity {
            commits: Some(self.xact_commit),
            db_writer: WriterIo {
                writes: Some(buffers),
                bytes: Some(buffers * f64::from(super::PAGE)),
            },
            log_writer: WriterIo {
                writes: Some(self.wal_write),
                bytes: Some(self.wal_bytes),
            },
        }
    }
}

/// A sampled pg_stat_activity event's wait class: `IO` of `IO:DataFileRead`
/// and of a background process's `checkpointer IO:DataFileWrite`; `CPU`.
pub(crate) fn wait_class(event: &str) -> String {
    let last = event.rsplit(' ').next().unwrap_or(event);
    last.split_once(':')
        .map_or(last, |(class, _)| class)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_names_follow_the_columns() {
        let a = Snapshot(vec![0.0; COLUMNS.len()], Vec::new(), None);
        let b = Snapshot(
            (0..COLUMNS.len()).map(|i| i as f64).collect(),
            Vec::new(),
            None,
        );
        let d = Delta::between(&a, &b);
        assert_eq!(d.xact_commit, 0.0);
        assert_eq!(d.blks_read, 2.0);
        assert_eq!(d.buffers_checkpoint, 13.0);
        assert_eq!(d.wal_fpi, 19.0);
        assert_eq!(d.wal_sync_time_ms, 25.0);
        assert_eq!(d.io_reads(), None);
        // Live: commits, the checkpointer's and background writer's buffers, WAL.
        let a = d.activity();
        assert_eq!(a.commits, Some(0.0));
        assert_eq!(a.db_writer.writes, Some(13.0 + 14.0));
        assert_eq!(a.db_writer.bytes, Some(27.0 * 8192.0));
        assert_eq!(
            (a.log_writer.writes, a.log_writer.bytes),
            (Some(22.0), Some(20.0))
        );
        for (event, class) in [
            ("IO:DataFileRead", "IO"),
            ("checkpointer IO:DataFileWrite", "IO"),
            ("autovacuum worker LWLock:BufferContent", "LWLock"),
            ("CPU", "CPU"),
            ("walwriter CPU", "CPU"),
        ] {
            assert_eq!(wait_class(event), class, "{event}");
        }
        // Every column is selected once, by name; 15 reads the 15 views.
        let sql = Sql::new("dbio", 150_004);
        for c in COLUMNS {
            assert_eq!(
                sql.counters.matches(&format!("{c}::float8 AS {c}")).count(),
                1,
                "{c}"
            );
        }
        assert!(!sql.counters.contains("pg_stat_io") && sql.io.is_none());
        assert!(!sql.counters.contains("pg_stat_checkpointer"));
    }

    #[test]
    fn the_query_follows_the_server_version() {
        // 16: the 15 counters, and pg_stat_io beside them.
        let s16 = Sql::new("dbio", 160_004);
        assert!(
            s16.counters
                .contains("checkpoints_timed::float8 AS checkpoints_timed")
        );
        assert!(!s16.counters.contains("pg_stat_checkpointer"));
        let io = s16.io.as_deref().unwrap();
        for c in IO_COLUMNS {
            assert!(io.contains(&format!("sum({c})")), "{c}");
        }
        assert!(io.contains("GROUP BY backend_type"));
        // 17: checkpoints from pg_stat_checkpointer, backends' writes from pg_stat_io.
        let s17 = Sql::new("dbio", 170_002);
        for (col, expr) in [
            ("checkpoints_timed", "c.num_timed"),
            ("checkpoints_req", "c.num_requested"),
            ("checkpoint_write_time", "c.write_time"),
            ("checkpoint_sync_time", "c.sync_time"),
            ("buffers_checkpoint", "c.buffers_written"),
            ("buffers_backend", "io.writes"),
            ("buffers_backend_fsync", "io.fsyncs"),
        ] {
            assert!(
                s17.counters.contains(&format!("{expr}::float8 AS {col}")),
                "{col}"
            );
        }
        assert!(s17.counters.contains("pg_stat_checkpointer c"));
        assert!(s17.counters.contains("wal_sync::float8 AS wal_sync"));
        assert!(!s17.counters.contains(" iw"));
        // 18: WAL writes and syncs from pg_stat_io too.
        let s18 = Sql::new("dbio", 180_000);
        assert!(s18.counters.contains("iw.fsyncs::float8 AS wal_sync"));
        assert!(
            s18.counters
                .contains("c.num_timed::float8 AS checkpoints_timed")
        );
        assert!(s18.counters.contains("object = 'wal') iw"));
        // The database's name is bound, never written into the statement.
        let named = Sql::new("o'k", 150_000);
        assert!(named.counters.ends_with("WHERE d.datname = $1"));
        assert!(!named.counters.contains("o'k"));
    }

    #[test]
    fn io_lines_are_per_backend_type_differences() {
        let n = COLUMNS.len();
        let line = |v: f64| vec![v; IO_COLUMNS.len()];
        let a = Snapshot(
            vec![0.0; n],
            vec![
                ("checkpointer".into(), line(1.0)),
                ("walwriter".into(), line(0.0)),
            ],
            None,
        );
        let b = Snapshot(
            vec![0.0; n],
            vec![
                ("checkpointer".into(), line(4.0)),
                ("client backend".into(), line(2.0)),
                ("walwriter".into(), line(0.0)),
            ],
            None,
        );
        let d = Delta::between(&a, &b);
        let names: Vec<&str> = d.io.iter().map(|l| l.backend_type.as_str()).collect();
        assert_eq!(
            names,
            ["checkpointer", "client backend"],
            "unchanged lines left out"
        );
        assert_eq!((d.io[0].writes, d.io[0].fsync_time_ms), (3.0, 3.0));
        assert_eq!(d.io[1].reads, 2.0, "a backend type new in the window");
        assert_eq!(d.io_reads(), Some(5.0));
    }
}
