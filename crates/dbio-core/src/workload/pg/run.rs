//! The pg workload's threads. Sessions: a connection each, opened with its
//! prepared statements in `prepare` (before the start barrier), running
//! SLOB's mix through `db::session` — a select of WORK_UNIT adjacent keys,
//! BEGIN + an update of them + COMMIT, or a scan of `--scan-size`
//! physically contiguous pages (a TID range scan). One background thread,
//! the sampler (`db::sampler`), reads the server's counters at the window's
//! start (without a ramp: in `prepare`, once every session has connected,
//! so none of their statements can come before it; after a ramp, once
//! every session has sent its backend's pending statistics with
//! `pg_stat_force_next_flush()` as the window opened — a backend otherwise
//! sends them up to a second late, into the window — and before any of
//! them can send again, which a backend does at most once a second) and
//! once the sessions have disconnected and, on this host, their backends
//! have exited (a backend flushes its statistics as it exits, after it has
//! left pg_stat_activity), so the end snapshot holds every operation; and samples
//! pg_stat_activity 10 times a second in between: the active-session
//! history of wait events, and the server's own processes' (checkpointer,
//! background writer, WAL writer, autovacuum) when they are not idle: the
//! background wait events.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::time::{Duration, Instant};

use postgres::{Client, Statement};

use super::endpoint::Endpoint;
use super::stats::{COLUMNS, Snapshot, Sql, server_version_num};
use super::{PgConfig, data};
use crate::config::RunConfig;
use crate::measure::clock::now_ns;
use crate::samplers::series::SessionSeries;
use crate::workload::db::cycle::{Follower, Position};
use crate::workload::db::procs;
use crate::workload::db::sampler::{self, Monitor, Waits};
use crate::workload::db::session::{self, SlobClient};
use crate::workload::db::{DbPart, Refused};
use crate::workload::live::Activity;
use crate::workload::{SetupError, Shared, ThreadEnd, Threads, Workload};

/// dbio's sessions in pg_stat_activity ($1 = database, $2 = application
/// name), the sampler excluded.
const SESSIONS: &str = "datname = $1 AND application_name = $2 \
     AND backend_type = 'client backend' AND pid <> pg_backend_pid()";

/// The server's own processes in pg_stat_activity (checkpointer,
/// background writer, WAL writer, autovacuum …) when not idle in their main
/// loop: AWR's background wait events.
const BACKGROUND: &str = "backend_type <> 'client backend' \
     AND coalesce(wait_event_type, '') <> 'Activity'";

/// Samples of pg_stat_activity per second.
pub const ASH_HZ: u64 = 10;

/// What a thread of a pg run counted: a session's operations, or the
/// sampler's wait events (`type:event`) and pg_stat_* snapshots.
pub type PgPart = DbPart<Snapshot>;

/// A session's prepared statements on one table.
pub struct Stmts {
    select: Statement,
    update: Statement,
    scan: Statement,
}

impl Stmts {
    fn prepare(client: &mut Client, table: &str) -> Result<Stmts, postgres::Error> {
        let rows = format!("SELECT count(*), coalesce(sum(scratch), 0)::bigint FROM {table}");
        Ok(Stmts {
            select: client.prepare(&format!("{rows} WHERE mykey BETWEEN $1 AND $2"))?,
            update: client.prepare(&format!(
                "UPDATE {table} SET scratch = scratch + 1 WHERE mykey BETWEEN $1 AND $2"
            ))?,
            // Pages $1 .. $2 - 1: one row each, physically contiguous.
            scan: client.prepare(&format!(
                "{rows} WHERE ctid >= ('(' || $1::bigint || ',0)')::tid AND ctid < ('(' || $2::bigint || ',0)')::tid"
            ))?,
        })
    }
}

/// A thread's connection.
pub enum Conn {
    Session {
        client: Box<Client>,
        /// Statements on the session's own table, and on the first table
        /// for SLOB's hot schema.
        own: Stmts,
        hot: Option<Stmts>,
    },
    Sampler {
        client: Box<Client>,
        ash: Statement,
        /// The counters' queries for this server's version.
        sql: Sql,
        /// The window's first edge when there is no ramp (see `setup`).
        before: Option<Snapshot>,
    },
}

/// The pg workload over a started server with loaded tables.
pub struct Pg<'a> {
    cfg: &'a RunConfig,
    pg: &'a PgConfig,
    endpoint: &'a Endpoint,
    /// The server's data and WAL directories, when on this host.
    storage: Vec<PathBuf>,
    shared: &'a Shared,
    sessions_done: AtomicBool,
    /// Sessions whose `prepare` has returned (connected and flushed, or failed).
    prepared: AtomicU32,
    /// Sessions that have flushed their statistics as the window opened
    /// (after a ramp).
    flushed_at_edge: AtomicU32,
    /// The sessions' backend processes, when the server is on this host
    /// (`storage` found its directories): the last snapshot waits for them
    /// to exit (see `PgMonitor::settle`).
    backends: Mutex<Vec<u32>>,
}

impl<'a> Pg<'a> {
    pub fn new(
        cfg: &'a RunConfig,
        pg: &'a PgConfig,
        endpoint: &'a Endpoint,
        storage: Vec<PathBuf>,
        shared: &'a Shared,
    ) -> Self {
        Pg {
            cfg,
            pg,
            endpoint,
            storage,
            shared,
            sessions_done: AtomicBool::new(false),
            prepared: AtomicU32::new(0),
            flushed_at_edge: AtomicU32::new(0),
            backends: Mutex::new(Vec::new()),
        }
    }

    fn setup(&self, t: u32) -> Result<Conn, Refused> {
        let sessions = self.pg.slob.sessions();
        if t < sessions {
            let mut client = self.endpoint.connect().map_err(|e| e.to_string())?;
            let schema = t / self.pg.slob.threads_per_schema;
            let own =
                Stmts::prepare(&mut client, &data::table(schema)).map_err(|e| e.to_string())?;
            let hot = match self.pg.slob.hot_schema_every {
                Some(_) if schema != 0 => {
                    Some(Stmts::prepare(&mut client, &data::table(0)).map_err(|e| e.to_string())?)
                }
                _ => None,
            };
            if !self.storage.is_empty() {
                let pid: i32 = client
                    .query_one("SELECT pg_backend_pid()", &[])
                    .map_err(|e| db_message(&e))?
                    .get(0);
                let mut backends = self.backends.lock().unwrap_or_else(|p| p.into_inner());
                backends.extend(u32::try_from(pid).ok());
            }
            // What connecting and preparing counted reaches the server's
            // statistics now, before the window's first snapshot.
            client
                .batch_execute("SELECT pg_stat_force_next_flush()")
                .map_err(|e| e.to_string())?;
            Ok(Conn::Session {
                client: Box::new(client),
                own,
                hot,
            })
        } else {
            let mut client = self.endpoint.connect_monitor().map_err(|e| e.to_string())?;
            let ash = client
                .prepare(&format!(
                    "SELECT backend_type, coalesce(wait_event_type, ''), coalesce(wait_event, '') \
                     FROM pg_stat_activity WHERE ({SESSIONS} AND state = 'active') OR ({BACKGROUND})"
                ))
                .map_err(|e| e.to_string())?;
            let version = server_version_num(&mut client).map_err(|e| db_message(&e))?;
            let sql = Sql::new(&self.endpoint.database, version);
            // Without a ramp the window opens with the sessions' first
            // statements, and a sampler thread scheduled late would read
            // its first snapshot after some of them (a session's backend
            // flushes at once when it exits). So read it here, before the
            // start, once every session has connected and flushed what
            // connecting and preparing counted.
            let before = if self.shared.ramp_ns == 0 {
                self.wait_for_sessions_prepared(sessions);
                Some(if self.pg.server.window.starts_at_checkpoint() {
                    open_at_checkpoint(&mut client, &sql)?
                } else {
                    Snapshot::read(&mut client, &sql).map_err(|e| db_message(&e))?
                })
            } else {
                None
            };
            Ok(Conn::Sampler {
                client: Box::new(client),
                ash,
                sql,
                before,
            })
        }
    }
}

impl Pg<'_> {
    /// Waits until every session's `prepare` has returned (they run on
    /// their own threads at the same time as the sampler's), or a minute.
    fn wait_for_sessions_prepared(&self, sessions: u32) {
        let t0 = Instant::now();
        while self.prepared.load(SeqCst) < sessions
            && t0.elapsed() < Duration::from_secs(60)
            && !self.shared.stop.load(Relaxed)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Workload for Pg<'_> {
    type Thread = Conn;
    type Part = PgPart;

    fn threads(&self) -> Threads {
        Threads {
            sessions: self.pg.slob.sessions(),
            background: vec!["dbio-pg-ash".into()],
        }
    }

    fn storage(&self) -> Vec<PathBuf> {
        self.storage.clone()
    }

    fn prepare(&self, t: u32) -> Result<Conn, SetupError> {
        let conn = self.setup(t);
        if t < self.pg.slob.sessions() {
            self.prepared.fetch_add(1, SeqCst);
        }
        conn.map_err(|e| {
            let who = if t < self.pg.slob.sessions() {
                format!("session {t}")
            } else {
                "the wait-event sampler".into()
            };
            SetupError::Invalid(format!("{who}: {e}"))
        })
    }

    fn run(&self, t: u32, conn: Conn, slot: &SessionSeries) -> ThreadEnd<PgPart> {
        match conn {
            Conn::Session { client, own, hot } => {
                let slob = &self.pg.slob;
                let mut c = PgClient {
                    client: *client,
                    own_table: t / slob.threads_per_schema,
                    own: &own,
                    hot: hot.as_ref(),
                    flushed_at_edge: &self.flushed_at_edge,
                };
                let end = session::run(&mut c, t, slob, self.cfg, super::PAGE, self.shared, slot);
                // Disconnect now: the backend flushes its statistics as it exits.
                drop(c);
                end
            }
            Conn::Sampler {
                client,
                ash,
                sql,
                before,
            } => {
                let mut m = PgMonitor {
                    client: *client,
                    ash: &ash,
                    sql,
                    db: &self.endpoint.database,
                    app: self.endpoint.work.get_application_name().unwrap_or("dbio"),
                    flushed_at_edge: &self.flushed_at_edge,
                    backends: &self.backends,
                    sessions: self.pg.slob.sessions(),
                    cycle: Follower::new(
                        self.pg.server.window,
                        self.shared,
                        before.as_ref().and_then(|b| b.2.as_ref()),
                    ),
                    opened: None,
                };
                ThreadEnd {
                    part: sampler::run(&mut m, self.shared, &self.sessions_done, ASH_HZ, before),
                    ..ThreadEnd::default()
                }
            }
        }
    }

    fn sessions_ended(&self) {
        self.sessions_done.store(true, SeqCst);
    }
}

/// A pg session as the SLOB loop drives it.
struct PgClient<'a> {
    client: Client,
    own_table: u32,
    own: &'a Stmts,
    hot: Option<&'a Stmts>,
    flushed_at_edge: &'a AtomicU32,
}

impl<'a> PgClient<'a> {
    fn stmts(&self, table: u32) -> &'a Stmts {
        match self.hot {
            Some(h) if table != self.own_table => h,
            _ => self.own,
        }
    }
}

impl SlobClient for PgClient<'_> {
    fn select(&mut self, table: u32, lo: i64, hi: i64) -> Result<(), Refused> {
        let st = &self.stmts(table).select;
        self.client
            .query_one(st, &[&lo, &hi])
            .map(|_| ())
            .map_err(|e| Refused(db_message(&e)))
    }

    fn update(&mut self, table: u32, lo: i64, hi: i64) -> Result<u64, Refused> {
        let st = &self.stmts(table).update;
        (|| {
            let mut tx = self.client.transaction()?;
            tx.execute(st, &[&lo, &hi])?;
            let t1 = now_ns();
            tx.commit()?;
            Ok::<_, postgres::Error>(t1)
        })()
        .map_err(|e| Refused(db_message(&e)))
    }

    fn scan(&mut self, table: u32, first: i64, end: i64) -> Result<(), Refused> {
        let st = &self.stmts(table).scan;
        self.client
            .query_one(st, &[&first, &end])
            .map(|_| ())
            .map_err(|e| Refused(db_message(&e)))
    }

    /// The backend sends what the ramp counted before answering (it
    /// reports statistics before it says it is ready for the next query).
    fn window_opens(&mut self) -> Result<(), Refused> {
        self.client
            .batch_execute("SELECT pg_stat_force_next_flush()")
            .map_err(|e| Refused(db_message(&e)))?;
        self.flushed_at_edge.fetch_add(1, SeqCst);
        Ok(())
    }
}

/// The server's message for a database error, the client's otherwise.
pub(crate) fn db_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => e.to_string(),
    }
}

/// The sampler's view of PostgreSQL: the counters of pg_stat_database,
/// pg_stat_bgwriter and pg_stat_wal, and dbio's sessions in pg_stat_activity.
struct PgMonitor<'a> {
    client: Client,
    ash: &'a Statement,
    sql: Sql,
    db: &'a str,
    app: &'a str,
    flushed_at_edge: &'a AtomicU32,
    backends: &'a Mutex<Vec<u32>>,
    sessions: u32,
    cycle: Follower<'a>,
    /// The window's first snapshot when it opens at dbio's `CHECKPOINT`
    /// (read just before it: [`open_at_checkpoint`]).
    opened: Option<Snapshot>,
}

/// The last checkpoint's LSN, as a number.
const CHECKPOINT_LSN: &str =
    "SELECT pg_wal_lsn_diff(checkpoint_lsn, '0/0')::float8 FROM pg_control_checkpoint()";

/// Asks the server for a checkpoint and waits for it to complete
/// (`--window after-checkpoint`, `cycles:N`), so the window opens at the
/// start of a cycle.
fn checkpoint(client: &mut Client) -> Result<(), Refused> {
    let requested = |c: &mut Client| -> Option<i64> {
        c.query_one(CHECKPOINTS_REQUESTED, &[])
            .ok()
            .map(|r| r.get(0))
    };
    let before = requested(client);
    client
        .batch_execute("CHECKPOINT")
        .map_err(|e| Refused(format!("CHECKPOINT before the window: {}", db_message(&e))))?;
    // The checkpointer counts it just after waking dbio: wait for that, so
    // that the window's first snapshot holds it (a second at most).
    let t0 = Instant::now();
    while before.is_some() && requested(client) <= before && t0.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Checkpoints requested so far (15's and 16's view; 17 moved it to
/// pg_stat_checkpointer, where this reads nothing and dbio does not wait).
const CHECKPOINTS_REQUESTED: &str = "SELECT checkpoints_req FROM pg_stat_bgwriter";

/// The WAL's insert position, the next transaction id and the time, as text
/// (where the window's first snapshot was read).
const HERE: &str = "SELECT pg_current_wal_lsn()::text, \
     pg_snapshot_xmax(pg_current_snapshot())::text, clock_timestamp()::text";

/// [`HERE`] ($1, $2, $3) against the last checkpoint: WAL bytes, transaction
/// ids and seconds from its start to there (negative: before it began), and
/// its LSN.
const HERE_SINCE_CHECKPOINT: &str = "SELECT \
     pg_wal_lsn_diff($1::text::pg_lsn, c.redo_lsn)::float8, \
     ($2::text::numeric - split_part(c.next_xid, ':', 1)::numeric * 4294967296 \
      - split_part(c.next_xid, ':', 2)::numeric)::float8, \
     extract(epoch FROM $3::text::timestamptz - c.checkpoint_time)::float8, \
     pg_wal_lsn_diff(c.checkpoint_lsn, '0/0')::float8 \
     FROM pg_control_checkpoint() c";

/// `--window after-checkpoint` and `cycles:N`: the window opens at the
/// redo point of a checkpoint dbio asks for, as the model's does. The
/// counters are read just before `CHECKPOINT` (so what its writes, the
/// background writer's and the backends' meanwhile cost is inside the
/// window, as the model's are, and as the sessions' operations and the
/// device's counts are: they count from the ramp's end); its position in
/// the cycle is then where that read was against the checkpoint dbio
/// asked for (0, or the few bytes of WAL, transactions and the part of a
/// second between the read and the checkpoint's start, when another
/// checkpoint began between them), and dbio's checkpoint is not counted as
/// begun inside the window (the model does not count its own either).
fn open_at_checkpoint(client: &mut Client, sql: &Sql) -> Result<Snapshot, Refused> {
    let e = |e: postgres::Error| Refused(db_message(&e));
    let mut snap = Snapshot::read(client, sql).map_err(e)?;
    let here = client.query_one(HERE, &[]).map_err(e)?;
    let here: [String; 3] = [here.get(0), here.get(1), here.get(2)];
    checkpoint(client)?;
    if snap.2.is_some() {
        let r = client
            .query_one(HERE_SINCE_CHECKPOINT, &[&here[0], &here[1], &here[2]])
            .map_err(e)?;
        // Read before the checkpoint's redo point (by WAL): 0 since it in
        // every unit (its start time has whole seconds only).
        let before = r.get::<_, f64>(0) <= 0.0;
        let at = |i: usize| {
            if before {
                0.0
            } else {
                r.get::<_, f64>(i).max(0.0)
            }
        };
        snap.2 = Some(Position {
            log_bytes_since: at(0),
            transactions_since: Some(at(1)),
            seconds_since: Some(at(2)),
            checkpoint_lsn: r.get(3),
            checkpoints_seen: 0,
        });
    }
    let column = COLUMNS.iter().position(|c| *c == "checkpoints_req");
    let requested = client.query_one(CHECKPOINTS_REQUESTED, &[]).ok();
    if let (Some(i), Some(r)) = (column, requested) {
        snap.0[i] = r.get::<_, i64>(0) as f64;
    }
    Ok(snap)
}

/// How long the sampler waits at the window's edge for the sessions'
/// flushes: past a second the first to flush may send again.
const EDGE_WAIT: Duration = Duration::from_secs(1);
/// How long the last snapshot waits for the sessions' backends to end.
const SETTLE_WAIT: Duration = Duration::from_secs(10);

impl Monitor for PgMonitor<'_> {
    type Snapshot = Snapshot;

    fn snapshot(&mut self) -> Result<Snapshot, Refused> {
        if let Some(mut snap) = self.opened.take() {
            self.cycle.note(snap.2.as_mut());
            return Ok(snap);
        }
        let mut snap = Snapshot::read(&mut self.client, &self.sql).map_err(|e| {
            Refused(format!(
                "reading the server's statistics: {}",
                db_message(&e)
            ))
        })?;
        self.cycle.note(snap.2.as_mut());
        Ok(snap)
    }

    fn sample(&mut self, waits: &mut Waits) -> Result<(), Refused> {
        if self.cycle.readable() {
            let lsn = self.client.query_one(CHECKPOINT_LSN, &[]);
            self.cycle.follow(lsn.ok().map(|r| r.get(0)));
        }
        let rows = self
            .client
            .query(self.ash, &[&self.db, &self.app])
            .map_err(|e| format!("sampling pg_stat_activity: {}", db_message(&e)))?;
        for r in rows {
            let (who, ty, ev): (&str, &str, &str) = (r.get(0), r.get(1), r.get(2));
            let event = if ty.is_empty() {
                "CPU".to_string()
            } else {
                format!("{ty}:{ev}")
            };
            match who {
                "client backend" => *waits.sessions.entry(event).or_default() += 1,
                _ => {
                    *waits
                        .background
                        .entry(format!("{who} {event}"))
                        .or_default() += 1
                }
            }
        }
        Ok(())
    }

    fn class_of(&self, event: &str) -> String {
        super::stats::wait_class(event)
    }

    fn activity(&self, first: &Snapshot, now: &Snapshot) -> Activity {
        super::stats::Delta::between(first, now).activity()
    }

    /// Every session has flushed what the ramp counted (or a second has
    /// passed: a session still in a long operation at the edge).
    fn window_opens(&mut self, give_up: &dyn Fn() -> bool) {
        let t0 = Instant::now();
        while self.flushed_at_edge.load(SeqCst) < self.sessions
            && t0.elapsed() < EDGE_WAIT
            && !give_up()
        {
            std::thread::sleep(Duration::from_micros(200));
        }
        if self.cycle.window.starts_at_checkpoint() {
            match open_at_checkpoint(&mut self.client, &self.sql) {
                Ok(snap) => self.opened = Some(snap),
                Err(e) => self.cycle.fail(e.0),
            }
        }
    }

    /// The sessions have disconnected; wait for their backends to exit (and
    /// flush their counters) before the last snapshot. A backend leaves
    /// pg_stat_activity before it flushes: PostgreSQL runs the statistics'
    /// exit hook last, after the one that clears its activity entry. So on
    /// this host the wait is for the processes themselves to end; on
    /// another host, for their entries to go (a loaded server can then
    /// still be flushing).
    fn settle(&mut self) {
        let t0 = Instant::now();
        let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE {SESSIONS}");
        while t0.elapsed() < SETTLE_WAIT {
            match self.client.query_one(gone.as_str(), &[&self.db, &self.app]) {
                Ok(r) if r.get::<_, i64>(0) == 0 => break,
                Ok(_) => std::thread::sleep(Duration::from_millis(10)),
                Err(_) => break,
            }
        }
        let backends = self.backends.lock().unwrap_or_else(|p| p.into_inner());
        while backends.iter().any(|&pid| procs::live(pid, "postgres")) && t0.elapsed() < SETTLE_WAIT
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}
