//! One stored run's per-operation quantities for the model-against-engine
//! table, read from the typed run document (`document::Report`): the
//! model's counters (`slob`), the server's over the window (`pg.server`,
//! `mysql.server`), and the telemetry of the device under the target.
//!
//! Per operation means per statement run (select, update or scan): the
//! model's `executes`, the servers' `DbOps::executes`. Commits are the
//! updates' commits (a select runs alone, and the servers count its
//! autocommit as a transaction too; the model does not).

use crate::config::WorkloadConfig;
use crate::document::Report;
use crate::document::awr::SlobSummary;
use crate::document::mysql::MysqlSummary;
use crate::document::pg::PgSummary;
use crate::workload::slob::flavor::Flavor;

/// What the table compares, per run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Quantity {
    /// Statements per second.
    OpsPerS,
    /// Blocks the database read (model: physical reads; PostgreSQL:
    /// blks_read; InnoDB: Innodb_pages_read), per operation.
    Reads,
    /// Blocks the database wrote from its buffer cache (model: DB writers'
    /// physical writes; PostgreSQL: buffers written by the checkpointer,
    /// the background writer and backends; InnoDB: Innodb_pages_written).
    BufferWrites,
    /// Redo / WAL bytes generated (model: redo size; PostgreSQL: wal_bytes;
    /// InnoDB: Innodb_os_log_written).
    RedoBytes,
    /// Read requests the device under the target completed.
    DeviceReads,
    /// Write requests the device completed.
    DeviceWrites,
    /// Bytes the device read and wrote.
    DeviceBytes,
    /// Log syncs per commit (model: `redo_syncs`, each redo write written
    /// O_DSYNC or followed by fdatasync, or the fdatasyncs of `--flavor
    /// postgres`, and with `--flavor innodb` the fsyncs after flush
    /// batches; PostgreSQL: pg_stat_wal's
    /// wal_sync plus backends' fsyncs; InnoDB: Innodb_data_fsyncs, every
    /// fsync it made).
    FsyncsPerCommit,
    /// Flush requests the device completed per commit (each fsync or
    /// O_DSYNC write that reaches it as a cache flush).
    DeviceFlushesPerCommit,
}

impl Quantity {
    /// Every quantity, in the table's column order.
    pub const ALL: [Quantity; 9] = [
        Quantity::OpsPerS,
        Quantity::Reads,
        Quantity::BufferWrites,
        Quantity::RedoBytes,
        Quantity::DeviceReads,
        Quantity::DeviceWrites,
        Quantity::DeviceBytes,
        Quantity::FsyncsPerCommit,
        Quantity::DeviceFlushesPerCommit,
    ];

    /// The column's name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::OpsPerS => "ops_per_s",
            Quantity::Reads => "reads_per_op",
            Quantity::BufferWrites => "buffer_writes_per_op",
            Quantity::RedoBytes => "redo_bytes_per_op",
            Quantity::DeviceReads => "device_reads_per_op",
            Quantity::DeviceWrites => "device_writes_per_op",
            Quantity::DeviceBytes => "device_bytes_per_op",
            Quantity::FsyncsPerCommit => "fsyncs_per_commit",
            Quantity::DeviceFlushesPerCommit => "device_flushes_per_commit",
        }
    }

    /// A short header for the text and Markdown tables.
    pub fn header(self) -> &'static str {
        match self {
            Quantity::OpsPerS => "ops/s",
            Quantity::Reads => "reads/op",
            Quantity::BufferWrites => "buf writes/op",
            Quantity::RedoBytes => "redo B/op",
            Quantity::DeviceReads => "dev reads/op",
            Quantity::DeviceWrites => "dev writes/op",
            Quantity::DeviceBytes => "dev bytes/op",
            Quantity::FsyncsPerCommit => "fsyncs/commit",
            Quantity::DeviceFlushesPerCommit => "dev flushes/commit",
        }
    }
}

/// The database servers the model is held against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// `--workload pg`: PostgreSQL.
    Pg,
    /// `--workload mysql`: MariaDB / InnoDB.
    Mysql,
}

impl Engine {
    /// Its `--workload` value.
    pub fn workload(self) -> &'static str {
        match self {
            Engine::Pg => "pg",
            Engine::Mysql => "mysql",
        }
    }

    /// `dbio run`'s option bounding the server's memory (a cgroup).
    pub fn memory_option(self) -> &'static str {
        match self {
            Engine::Pg => "pg_memory",
            Engine::Mysql => "mysql_memory",
        }
    }
}

/// What a stored run is in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `--workload slob` with this flavor.
    Model(Flavor),
    /// A real server.
    Engine(Engine),
}

/// The cell a run belongs to: its session count and update percentage.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    pub update_pct: u8,
    pub sessions: u32,
}

/// One run's values, in [`Quantity::ALL`]'s order (`None`: not known).
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub side: Side,
    pub cell: Cell,
    pub values: [Option<f64>; 9],
}

impl Measured {
    /// The run's quantities, or why it has none.
    pub fn of(r: &Report) -> Result<Measured, &'static str> {
        let shape = r
            .config
            .workload
            .shape()
            .ok_or("neither the model nor a server")?;
        let cell = Cell {
            update_pct: shape.update_pct,
            sessions: shape.sessions(),
        };
        let no_counters = "no server counters (the sampler could not read them)";
        let (side, db) = match &r.config.workload {
            WorkloadConfig::Slob(s) => (
                Side::Model(s.flavor),
                model(r.slob.as_ref().ok_or("no slob section")?),
            ),
            WorkloadConfig::Pg(_) => (
                Side::Engine(Engine::Pg),
                r.pg.as_ref().and_then(pg).ok_or(no_counters)?,
            ),
            WorkloadConfig::Mysql(_) => (
                Side::Engine(Engine::Mysql),
                r.mysql.as_ref().and_then(mysql).ok_or(no_counters)?,
            ),
            WorkloadConfig::Raw(_) | WorkloadConfig::Replay(_) => {
                return Err("neither the model nor a server");
            }
        };
        let secs = r.measured_s;
        if db.executes <= 0.0 || secs <= 0.0 {
            return Err("no statement completed in the measured window");
        }
        let per_op = |x: f64| Some(x / db.executes);
        let per_commit = |x: f64| (db.commits > 0.0).then(|| x / db.commits);
        let ops_s = db.executes / secs;
        // The device's rates over the window, per operation.
        let dev = device(r).map(|d| (d.r_per_s, d.w_per_s, d.rkib_per_s + d.wkib_per_s, d.f_per_s));
        let values = [
            Some(ops_s),
            per_op(db.reads),
            per_op(db.writes),
            per_op(db.redo),
            dev.map(|d| d.0 / ops_s),
            dev.map(|d| d.1 / ops_s),
            dev.map(|d| d.2 * 1024.0 / ops_s),
            per_commit(db.fsyncs),
            dev.and_then(|d| per_commit(d.3 * secs)),
        ];
        Ok(Measured { side, cell, values })
    }

    pub fn value(&self, q: Quantity) -> Option<f64> {
        let i = Quantity::ALL.iter().position(|x| *x == q)?;
        self.values[i]
    }
}

/// The device directly under the target, over the window.
fn device(r: &Report) -> Option<&crate::samplers::diskstats::DeviceRates> {
    r.telemetry_window.as_ref()?.devices.first()?.rates.as_ref()
}

/// A database's own counts over the window.
struct Db {
    executes: f64,
    commits: f64,
    reads: f64,
    writes: f64,
    redo: f64,
    fsyncs: f64,
}

fn model(s: &SlobSummary) -> Db {
    let c = &s.counters;
    Db {
        executes: c.executes as f64,
        commits: c.transactions as f64,
        reads: c.physical_reads as f64,
        writes: c.physical_writes as f64,
        redo: c.redo_bytes as f64,
        // Runs stored before redo_syncs was counted synced every write.
        // `--flavor innodb` also fsyncs the doublewrite file and the data
        // files after each flush batch, as Innodb_data_fsyncs counts (0
        // with the other flavors).
        fsyncs: (if c.redo_syncs == 0 {
            c.redo_writes
        } else {
            c.redo_syncs
        } + c.datafile_syncs) as f64,
    }
}

fn pg(p: &PgSummary) -> Option<Db> {
    let c = p.server.as_ref()?;
    Some(Db {
        executes: p.ops.executes() as f64,
        commits: p.ops.updates as f64,
        reads: c.blks_read,
        writes: c.buffers_checkpoint + c.buffers_clean + c.buffers_backend,
        redo: c.wal_bytes,
        fsyncs: c.wal_sync + c.buffers_backend_fsync,
    })
}

fn mysql(p: &MysqlSummary) -> Option<Db> {
    // SHOW GLOBAL STATUS, keyed by the server's own names.
    let status = p.server.as_ref()?;
    let c = |k: &str| status.get(k).copied().unwrap_or(0.0);
    Some(Db {
        executes: p.ops.executes() as f64,
        commits: p.ops.updates as f64,
        reads: c("Innodb_pages_read"),
        writes: c("Innodb_pages_written"),
        redo: c("Innodb_os_log_written"),
        fsyncs: c("Innodb_data_fsyncs"),
    })
}
