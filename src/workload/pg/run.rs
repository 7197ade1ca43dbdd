//! The pg workload's threads. Sessions: a connection each, opened with its
//! prepared statements in `prepare` (before the start barrier), running
//! SLOB's exact mix — a select of WORK_UNIT adjacent keys (scattered pages),
//! BEGIN + an update of them + COMMIT, or a scan of `--scan-size`
//! physically contiguous pages (a TID range scan) — with SLOB's hot spot,
//! hot schema and think time, timed from the client per operation kind
//! (select, update, commit, scan). One background thread, the
//! sampler, reads the server's counters at the window's start and once the
//! sessions have disconnected (their backends flush their statistics when
//! they exit, so the end snapshot holds every operation), and samples
//! pg_stat_activity 10 times a second in between: the active-session
//! history of wait events.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::time::{Duration, Instant};

use postgres::{Client, Statement};

use super::endpoint::Endpoint;
use super::stats::{Snapshot, snapshot_sql};
use super::{PgConfig, data};
use crate::config::RunConfig;
use crate::measure::clock::now_ns;
use crate::measure::stats::{Kind, OpStats};
use crate::rng::Rng;
use crate::samplers::series::{SeriesWriter, SessionSeries};
use crate::workload::slob::keys::{KeyPicker, OpMix, OpType};
use crate::workload::{SetupError, Shared, ThreadEnd, Threads, Workload};

/// dbio's sessions in pg_stat_activity ($1 = database, $2 = application
/// name), the sampler excluded.
const SESSIONS: &str = "datname = $1 AND application_name = $2 \
     AND backend_type = 'client backend' AND pid <> pg_backend_pid()";

/// Samples of pg_stat_activity per second.
pub const ASH_HZ: u64 = 10;

/// What a thread of a pg run counted.
#[derive(Default)]
pub struct PgPart {
    /// Client-side latency of each kind (HDR histograms), in the window.
    pub select: OpStats,
    pub update: OpStats,
    pub commit: OpStats,
    pub scan: OpStats,
    /// Rows the operations in the window asked for.
    pub rows: u64,
    /// The sampler's: wait events of active sessions, per `type:event`
    /// (`CPU` when not waiting), and the number of samples taken.
    pub waits: BTreeMap<String, u64>,
    pub samples: u64,
    /// The sampler's: the server's counters at the window's two edges, and
    /// the seconds between them.
    pub edges: Option<(Snapshot, Snapshot, f64)>,
    /// The sampler's error, if it could not read the server.
    pub error: Option<String>,
}

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
        }
    }

    fn setup(&self, t: u32) -> Result<Conn, String> {
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
                    "SELECT coalesce(wait_event_type, ''), coalesce(wait_event, '') FROM pg_stat_activity \
                     WHERE {SESSIONS} AND state = 'active'"
                ))
                .map_err(|e| e.to_string())?;
            Ok(Conn::Sampler {
                client: Box::new(client),
                ash,
            })
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
        self.setup(t).map_err(|e| {
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
                session(self, t, *client, &own, hot.as_ref(), slot)
            }
            Conn::Sampler { client, ash } => ThreadEnd {
                part: sampler(self, *client, &ash),
                ..ThreadEnd::default()
            },
        }
    }

    fn sessions_ended(&self) {
        self.sessions_done.store(true, SeqCst);
    }
}

fn session(
    w: &Pg,
    id: u32,
    mut client: Client,
    own: &Stmts,
    hot: Option<&Stmts>,
    slot: &SessionSeries,
) -> ThreadEnd<PgPart> {
    let slob = &w.pg.slob;
    let shared = w.shared;
    let schema = id / slob.threads_per_schema;
    let mut picker = KeyPicker::new(
        slob,
        schema,
        w.cfg.seed ^ u64::from(schema).wrapping_mul(0x9E37_79B9),
    );
    let mut mix = OpMix::new(slob.update_pct, slob.scan_pct);
    let scale = slob.scale_blocks;
    let mut rng = Rng::for_stream(w.cfg.seed, u64::from(id));
    let mut series = SeriesWriter::new(slot);
    let mut part = PgPart::default();
    let start = shared.start_ns.load(SeqCst);
    let ramp_end = start + shared.ramp_ns;
    let mut ops = 0u64;
    let mut last_ns = 0;
    loop {
        if shared.stop.load(Relaxed)
            || now_ns() >= shared.end_ns.load(Relaxed)
            || slob.work_loop.is_some_and(|n| ops >= n)
        {
            break;
        }
        let op = mix.next_op();
        // Keys lo..=hi, or for a scan pages lo..hi (one row each).
        let (schema, lo, hi, n) = match op {
            OpType::Scan => {
                let b = picker.scan(&mut rng);
                let n = u64::from(slob.scan_blocks).min(scale);
                let first = b % scale;
                (b / scale, first as i64, (first + n) as i64, n)
            }
            _ => {
                let (s, key, n) = picker.key_range(&mut rng);
                (s, key as i64, (key + n - 1) as i64, n)
            }
        };
        let st = match hot {
            Some(h) if schema != u64::from(schema_of(id, slob.threads_per_schema)) => h,
            _ => own,
        };
        let t0 = now_ns();
        let done = match op {
            OpType::Update => (|| {
                let mut tx = client.transaction()?;
                tx.execute(&st.update, &[&lo, &hi])?;
                let t1 = now_ns();
                tx.commit()?;
                Ok::<_, postgres::Error>(Some(t1))
            })(),
            OpType::Scan => client.query_one(&st.scan, &[&lo, &hi]).map(|_| None),
            OpType::Select => client.query_one(&st.select, &[&lo, &hi]).map(|_| None),
        };
        let t2 = now_ns();
        let commit_at = match done {
            Ok(c) => c,
            Err(e) => {
                if !shared.stop.load(Relaxed) {
                    shared.fail(format!("session {id}: {}", db_message(&e)));
                }
                break;
            }
        };
        ops += 1;
        last_ns = t2 - start;
        let (kind, stats) = match op {
            OpType::Update => (Kind::Write, &mut part.update),
            OpType::Scan => (Kind::Read, &mut part.scan),
            OpType::Select => (Kind::Read, &mut part.select),
        };
        series.record(kind, t2 - start, t2 - t0, n * u64::from(super::PAGE));
        if t0 >= ramp_end {
            let end = commit_at.unwrap_or(t2);
            stats.record(end - t0, n * u64::from(super::PAGE));
            if let Some(t1) = commit_at {
                part.commit.record(t2 - t1, 0);
            }
            part.rows += n;
        }
        if let Some(t) = slob.think
            && ops.is_multiple_of(u64::from(t.every))
        {
            think(shared, t.min_s + (t.max_s - t.min_s) * rng.next_f64());
        }
    }
    // Disconnect now: the backend flushes its statistics as it exits.
    drop(client);
    ThreadEnd {
        last_ns,
        issued: ops,
        part,
        ..ThreadEnd::default()
    }
}

fn schema_of(session: u32, threads_per_schema: u32) -> u32 {
    session / threads_per_schema
}

/// SLOB's think time: idle (not an operation), cut short by the end of the
/// window or a stop.
fn think(shared: &Shared, secs: f64) {
    let until = now_ns() + (secs * 1e9) as u64;
    loop {
        let now = now_ns();
        if now >= until || shared.stop.load(Relaxed) || now >= shared.end_ns.load(Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_nanos((until - now).min(10_000_000)));
    }
}

/// The server's message for a database error, the client's otherwise.
pub fn db_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => e.to_string(),
    }
}

fn sampler(w: &Pg, mut client: Client, ash: &Statement) -> PgPart {
    let shared = w.shared;
    let mut part = PgPart::default();
    let snap_sql = snapshot_sql(&w.endpoint.database);
    let db = w.endpoint.database.as_str();
    let app = w.endpoint.work.get_application_name().unwrap_or("dbio");
    let start = shared.start_ns.load(SeqCst);
    let ramp_end = start + shared.ramp_ns;
    let done = || w.sessions_done.load(SeqCst);
    while now_ns() < ramp_end && !done() && !shared.stop.load(Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let first = match Snapshot::read(&mut client, &snap_sql) {
        Ok(s) => s,
        Err(e) => {
            part.error = Some(format!(
                "reading the server's statistics: {}",
                db_message(&e)
            ));
            return part;
        }
    };
    let t_first = Instant::now();
    let tick = Duration::from_nanos(1_000_000_000 / ASH_HZ);
    let mut next = Instant::now();
    while !done() {
        if now_ns() < shared.end_ns.load(Relaxed) {
            match client.query(ash, &[&db, &app]) {
                Ok(rows) => {
                    part.samples += 1;
                    for r in rows {
                        let (ty, ev): (&str, &str) = (r.get(0), r.get(1));
                        let key = if ty.is_empty() {
                            "CPU".to_string()
                        } else {
                            format!("{ty}:{ev}")
                        };
                        *part.waits.entry(key).or_default() += 1;
                    }
                }
                Err(e) => {
                    part.error = Some(format!("sampling pg_stat_activity: {}", db_message(&e)));
                    return part;
                }
            }
        }
        next += tick;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        } else {
            next = now;
        }
    }
    // The sessions have disconnected; wait for their backends to exit (and
    // flush their counters) before the last snapshot.
    let t0 = Instant::now();
    let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE {SESSIONS}");
    while t0.elapsed() < Duration::from_secs(10) {
        match client.query_one(gone.as_str(), &[&db, &app]) {
            Ok(r) if r.get::<_, i64>(0) == 0 => break,
            Ok(_) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break,
        }
    }
    match Snapshot::read(&mut client, &snap_sql) {
        Ok(last) => part.edges = Some((first, last, t_first.elapsed().as_secs_f64())),
        Err(e) => {
            part.error = Some(format!(
                "reading the server's statistics: {}",
                db_message(&e)
            ))
        }
    }
    part
}
