//! The mysql workload's threads. Sessions: a connection each over the
//! private socket, opened with its prepared statements in `prepare` (before
//! the start barrier), running SLOB's mix through `db::session` — a select
//! of WORK_UNIT adjacent keys through the key's index, START TRANSACTION +
//! an update of them + COMMIT, or a scan of `--scan-size` rows in primary
//! key order (contiguous pages). One background thread, the sampler
//! (`db::sampler`), reads `SHOW GLOBAL STATUS` at the window's edges (with
//! no ramp, the first edge is read before the start: the server's
//! counters move at once) and samples the sessions' states in
//! `information_schema.PROCESSLIST` 10 times a second in between.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, Statement};

use super::MysqlConfig;
use super::data;
use super::stats::Snapshot;
use crate::config::RunConfig;
use crate::measure::clock::now_ns;
use crate::samplers::series::SessionSeries;
use crate::workload::db::cycle::Follower;
use crate::workload::db::sampler::{self, Monitor, Waits};
use crate::workload::db::session::{self, SlobClient};
use crate::workload::db::{DbPart, Refused};
use crate::workload::live::{Activity, LiveWait};
use crate::workload::{SetupError, Shared, ThreadEnd, Threads, Workload};

/// Samples of the process list per second.
pub const ASH_HZ: u64 = 10;

/// What a thread of a mysql run counted: a session's operations, or the
/// sampler's session states and SHOW GLOBAL STATUS snapshots.
pub type MysqlPart = DbPart<Snapshot>;

/// dbio's sessions in the process list (the sampler excluded).
const SESSIONS: &str = "FROM information_schema.PROCESSLIST WHERE DB = 'dbio' \
     AND COMMAND IN ('Query', 'Execute') AND ID <> CONNECTION_ID()";

/// ER_LOCK_DEADLOCK: InnoDB chose this transaction as a deadlock's victim.
const DEADLOCK: u16 = 1213;

/// A session's prepared statements on one table.
pub struct Stmts {
    select: Statement,
    update: Statement,
    scan: Statement,
}

impl Stmts {
    fn prepare(c: &mut Conn, table: &str) -> Result<Stmts, mysql::Error> {
        let rows = format!("SELECT count(*), coalesce(sum(scratch), 0) FROM {table}");
        Ok(Stmts {
            select: c.prep(format!("{rows} WHERE mykey BETWEEN ? AND ?"))?,
            update: c.prep(format!(
                "UPDATE {table} SET scratch = scratch + 1 WHERE mykey BETWEEN ? AND ?"
            ))?,
            scan: c.prep(format!("{rows} WHERE id >= ? AND id < ?"))?,
        })
    }
}

/// A thread's connection.
pub enum Thread {
    Session {
        conn: Box<Conn>,
        own: Stmts,
        hot: Option<Stmts>,
    },
    Sampler {
        conn: Box<Conn>,
        before: Option<Snapshot>,
    },
}

/// The mysql workload over a started server with loaded tables.
pub struct Mysql<'a> {
    cfg: &'a RunConfig,
    my: &'a MysqlConfig,
    /// The server's page size (bytes per row in the series).
    page: u32,
    /// Connection options: the sessions' (database dbio) and the sampler's.
    work: Opts,
    monitor: Opts,
    storage: Vec<PathBuf>,
    shared: &'a Shared,
    sessions_done: AtomicBool,
}

impl<'a> Mysql<'a> {
    pub fn new(
        cfg: &'a RunConfig,
        my: &'a MysqlConfig,
        page: u32,
        work: Opts,
        monitor: Opts,
        storage: Vec<PathBuf>,
        shared: &'a Shared,
    ) -> Self {
        Mysql {
            cfg,
            my,
            page,
            work,
            monitor,
            storage,
            shared,
            sessions_done: AtomicBool::new(false),
        }
    }

    fn setup(&self, t: u32) -> Result<Thread, String> {
        let e = |e: mysql::Error| e.to_string();
        let slob = &self.my.slob;
        if t < slob.sessions() {
            let mut conn = Conn::new(self.work.clone()).map_err(e)?;
            let schema = t / slob.threads_per_schema;
            let own = Stmts::prepare(&mut conn, &data::table(schema)).map_err(e)?;
            let hot = match slob.hot_schema_every {
                Some(_) if schema != 0 => {
                    Some(Stmts::prepare(&mut conn, &data::table(0)).map_err(e)?)
                }
                _ => None,
            };
            Ok(Thread::Session {
                conn: Box::new(conn),
                own,
                hot,
            })
        } else {
            let mut conn = Conn::new(self.monitor.clone()).map_err(e)?;
            let before = match self.shared.ramp_ns {
                0 => {
                    if self.my.server.window.starts_at_checkpoint() {
                        let stop = || self.shared.stop.load(Relaxed);
                        wait_for_checkpoint(&mut conn, self.my.server.url.is_none(), &stop)
                            .map_err(|r| r.0)?;
                    }
                    Some(Snapshot::read(&mut conn).map_err(e)?)
                }
                _ => None,
            };
            Ok(Thread::Sampler {
                conn: Box::new(conn),
                before,
            })
        }
    }
}

impl Workload for Mysql<'_> {
    type Thread = Thread;
    type Part = MysqlPart;

    fn threads(&self) -> Threads {
        Threads {
            sessions: self.my.slob.sessions(),
            background: vec!["dbio-mysql-ash".into()],
        }
    }

    fn storage(&self) -> Vec<PathBuf> {
        self.storage.clone()
    }

    fn prepare(&self, t: u32) -> Result<Thread, SetupError> {
        self.setup(t).map_err(|e| {
            let who = if t < self.my.slob.sessions() {
                format!("session {t}")
            } else {
                "the sampler".into()
            };
            SetupError::Invalid(format!("{who}: {e}"))
        })
    }

    fn run(&self, t: u32, thread: Thread, slot: &SessionSeries) -> ThreadEnd<MysqlPart> {
        match thread {
            Thread::Session { conn, own, hot } => {
                let slob = &self.my.slob;
                let mut c = MysqlClient {
                    conn: *conn,
                    own_table: t / slob.threads_per_schema,
                    own: &own,
                    hot: hot.as_ref(),
                };
                session::run(&mut c, t, slob, self.cfg, self.page, self.shared, slot)
            }
            Thread::Sampler { conn, before } => {
                let cycle = Follower::new(
                    self.my.server.window,
                    self.shared,
                    before.as_ref().and_then(|b| b.position.as_ref()),
                );
                let mut m = MysqlMonitor {
                    conn: *conn,
                    page: self.page,
                    cycle,
                    own: self.my.server.url.is_none(),
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

/// A mysql session as the SLOB loop drives it.
struct MysqlClient<'a> {
    conn: Conn,
    own_table: u32,
    own: &'a Stmts,
    hot: Option<&'a Stmts>,
}

impl<'a> MysqlClient<'a> {
    fn stmts(&self, table: u32) -> &'a Stmts {
        match self.hot {
            Some(h) if table != self.own_table => h,
            _ => self.own,
        }
    }
}

impl SlobClient for MysqlClient<'_> {
    fn select(&mut self, table: u32, lo: i64, hi: i64) -> Result<(), Refused> {
        let st = &self.stmts(table).select;
        self.conn
            .exec_drop(st, (lo, hi))
            .map_err(|e| Refused(e.to_string()))
    }

    fn update(&mut self, table: u32, lo: i64, hi: i64) -> Result<u64, Refused> {
        let st = &self.stmts(table).update;
        loop {
            let attempt = (|| {
                self.conn.query_drop("START TRANSACTION")?;
                self.conn.exec_drop(st, (lo, hi))?;
                let t1 = now_ns();
                self.conn.query_drop("COMMIT")?;
                Ok::<_, mysql::Error>(t1)
            })();
            match attempt {
                // Sessions sharing a table (--threads-per-schema) deadlock
                // on overlapping key ranges; InnoDB rolled the transaction
                // back: say so (Com_rollback counts them) and run it again,
                // as an application would.
                Err(mysql::Error::MySqlError(e)) if e.code == DEADLOCK => {
                    self.conn
                        .query_drop("ROLLBACK")
                        .map_err(|e| e.to_string())?;
                }
                other => return other.map_err(|e| Refused(e.to_string())),
            }
        }
    }

    fn scan(&mut self, table: u32, first: i64, end: i64) -> Result<(), Refused> {
        let st = &self.stmts(table).scan;
        self.conn
            .exec_drop(st, (first, end))
            .map_err(|e| Refused(e.to_string()))
    }
}

/// The sampler's view of MariaDB.
struct MysqlMonitor<'a> {
    conn: Conn,
    /// The server's page size, bytes.
    page: u32,
    cycle: Follower<'a>,
    /// dbio started the server (its settings are dbio's to change).
    own: bool,
}

/// How long dbio waits for InnoDB's next checkpoint before the window
/// (`--window after-checkpoint`, `cycles:N`).
const CHECKPOINT_WAIT: Duration = Duration::from_secs(60);

/// A checkpoint age this small is a checkpoint just made: its own record.
const JUST_CHECKPOINTED: f64 = 512.0;

/// Waits until InnoDB completes its next checkpoint or has nothing left to
/// checkpoint. MariaDB has no statement for a checkpoint: on dbio's own
/// server (`own`) the page cleaner is asked to flush every dirty page
/// (`innodb_max_dirty_pages_pct` 0, then back to its value), after which
/// InnoDB checkpoints; on an existing server dbio only waits.
fn wait_for_checkpoint(c: &mut Conn, own: bool, give_up: &dyn Fn() -> bool) -> Result<(), Refused> {
    let restore: Option<f64> = match own {
        true => c
            .query_first("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")
            .ok()
            .flatten(),
        false => None,
    };
    if restore.is_some() {
        c.query_drop("SET GLOBAL innodb_max_dirty_pages_pct = 0")
            .map_err(|e| Refused(format!("asking InnoDB to flush before the window: {e}")))?;
    }
    let waited = checkpoint_seen(c, restore.is_some(), give_up);
    if let Some(pct) = restore {
        c.query_drop(format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))
            .map_err(|e| Refused(format!("restoring innodb_max_dirty_pages_pct: {e}")))?;
    }
    waited
}

/// Polls until the checkpoint's age is a checkpoint's own, or (`flushed`
/// false: dbio could not ask for a flush) the checkpoint's LSN has moved.
fn checkpoint_seen(c: &mut Conn, flushed: bool, give_up: &dyn Fn() -> bool) -> Result<(), Refused> {
    let read = |c: &mut Conn| {
        Snapshot::read(c)
            .ok()
            .and_then(|s| s.position)
            .ok_or_else(|| Refused("the window opens after a checkpoint, but the server shows no Innodb_lsn_last_checkpoint in SHOW GLOBAL STATUS; use --window any".into()))
    };
    let first = read(c)?;
    let t0 = Instant::now();
    loop {
        let now = read(c)?;
        let moved = !flushed && now.checkpoint_lsn != first.checkpoint_lsn;
        if moved || now.log_bytes_since <= JUST_CHECKPOINTED {
            return Ok(());
        }
        if t0.elapsed() > CHECKPOINT_WAIT || give_up() {
            return Err(Refused(format!(
                "InnoDB made no checkpoint in {} s before the window (checkpoint age {} bytes); use --window any",
                CHECKPOINT_WAIT.as_secs(),
                now.log_bytes_since
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Monitor for MysqlMonitor<'_> {
    type Snapshot = Snapshot;

    fn snapshot(&mut self) -> Result<Snapshot, Refused> {
        let mut snap = Snapshot::read(&mut self.conn)
            .map_err(|e| Refused(format!("reading SHOW GLOBAL STATUS: {e}")))?;
        self.cycle.note(snap.position.as_mut());
        Ok(snap)
    }

    /// After a ramp, a window placed in the cycle waits for a checkpoint.
    fn window_opens(&mut self, give_up: &dyn Fn() -> bool) {
        if self.cycle.window.starts_at_checkpoint()
            && let Err(e) = wait_for_checkpoint(&mut self.conn, self.own, give_up)
        {
            self.cycle.fail(e.0);
        }
    }

    fn activity(&self, first: &Snapshot, now: &Snapshot) -> Activity {
        super::stats::activity(first, now, self.page)
    }

    fn counted_waits(&self, first: &Snapshot, now: &Snapshot) -> Vec<LiveWait> {
        super::stats::live_waits(first, now)
    }

    fn sample(&mut self, waits: &mut Waits) -> Result<(), Refused> {
        if self.cycle.readable() {
            let lsn = super::stats::checkpoint_lsn(&mut self.conn);
            self.cycle.follow(lsn);
        }
        let states: Vec<Option<String>> = self
            .conn
            .query(format!("SELECT STATE {SESSIONS}"))
            .map_err(|e| format!("sampling the process list: {e}"))?;
        for s in states {
            let key = match s.as_deref().map(str::trim) {
                None | Some("") => "CPU".to_string(),
                Some(s) => s.to_string(),
            };
            *waits.sessions.entry(key).or_default() += 1;
        }
        Ok(())
    }
}
