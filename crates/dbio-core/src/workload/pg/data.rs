//! SLOB's data as pgio builds it: `--schemas` tables `dbio_t<N>` of
//! `--scale` rows, one row per 8 KiB page (fillfactor 10 and a 500-byte
//! pad: a second row never fits), keys scattered over the pages (row `g`
//! holds key `g × P mod SCALE` for a prime P, so a work unit of adjacent
//! keys lands on pages far apart), a b-tree index on the key, vacuumed
//! (hint bits, visibility map) and checkpointed. The tables load in
//! parallel, a connection each; the shape is recorded in `dbio_meta` and
//! the tables are reused when it matches.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use postgres::CancelToken;

use super::endpoint::Endpoint;
use super::server::{DATABASE, ServerError};

pub use crate::workload::db::data::{LoadReport, MAX_SCALE, SCATTER};

/// Bytes of padding per row: with fillfactor 10, one row per page.
pub const PAD: u32 = 500;

/// Table `i`'s name.
pub fn table(i: u32) -> String {
    format!("dbio_t{i}")
}

fn shape(schemas: u32, scale: u64) -> String {
    format!("v1 schemas={schemas} scale={scale} pad={PAD} scatter={SCATTER}")
}

fn err(what: &str, e: postgres::Error) -> ServerError {
    let detail = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| e.to_string());
    ServerError::Failed(format!("{what}: {detail}"))
}

/// Makes the database and the tables unless they have this shape already.
/// Ctrl-C (`interrupt`) cancels the load; the shape is recorded only once
/// every table is complete, so the next run loads again.
pub fn ensure(
    server: &Endpoint,
    schemas: u32,
    scale: u64,
    interrupt: &AtomicBool,
) -> Result<LoadReport, ServerError> {
    if server.own {
        let mut admin = server.connect_monitor()?;
        let exists = admin
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .map_err(|e| err("look for the dbio database", e))?
            .is_some();
        if !exists {
            admin
                .batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .map_err(|e| err("create the dbio database", e))?;
        }
    } else {
        server.claim_schema()?;
    }
    let mut db = server.connect()?;
    db.batch_execute("CREATE TABLE IF NOT EXISTS dbio_meta (shape text NOT NULL)")
        .map_err(|e| err("create dbio_meta", e))?;
    let want = shape(schemas, scale);
    let have: Option<String> = db
        .query_opt("SELECT shape FROM dbio_meta", &[])
        .map_err(|e| err("read dbio_meta", e))?
        .map(|r| r.get(0));
    if have.as_deref() == Some(want.as_str()) {
        return Ok(LoadReport {
            reused: true,
            tables: schemas,
            rows_per_table: scale,
            bytes: total_bytes(&mut db)?,
            ..LoadReport::default()
        });
    }
    db.batch_execute("DELETE FROM dbio_meta")
        .map_err(|e| err("reset dbio_meta", e))?;
    let old: Vec<String> = db
        .query(
            "SELECT relname FROM pg_class WHERE relkind = 'r' AND relname ~ '^dbio_t[0-9]+$' \
             AND relnamespace = current_schema()::text::regnamespace",
            &[],
        )
        .map_err(|e| err("list old tables", e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for t in old {
        db.batch_execute(&format!("DROP TABLE {t}"))
            .map_err(|e| err("drop an old table", e))?;
    }
    let t0 = Instant::now();
    let tokens: Mutex<Vec<CancelToken>> = Mutex::new(Vec::new());
    let results: Vec<Result<(), ServerError>> = std::thread::scope(|s| {
        let tokens = &tokens;
        let handles: Vec<_> = (0..schemas)
            .map(|i| s.spawn(move || load_table(server, i, scale, tokens, interrupt)))
            .collect();
        let mut cancelled = false;
        while !handles.iter().all(|h| h.is_finished()) {
            if interrupt.load(Relaxed) && !cancelled {
                cancelled = true;
                for t in tokens.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    let _ = t.cancel_query(postgres::NoTls);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a loader thread panicked"))
            .collect()
    });
    if interrupt.load(Relaxed) {
        return Err(ServerError::Interrupted(
            "interrupted while loading the tables; the next run loads them again".into(),
        ));
    }
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    db.batch_execute("CHECKPOINT")
        .map_err(|e| err("checkpoint after loading", e))?;
    let seconds = t0.elapsed().as_secs_f64();
    db.execute("INSERT INTO dbio_meta VALUES ($1)", &[&want])
        .map_err(|e| err("record the shape", e))?;
    let bytes = total_bytes(&mut db)?;
    Ok(LoadReport {
        reused: false,
        tables: schemas,
        rows_per_table: scale,
        bytes,
        seconds,
        mib_per_s: bytes as f64 / (1 << 20) as f64 / seconds.max(1e-9),
    })
}

/// One table: create, fill with scattered keys, index, vacuum.
fn load_table(
    server: &Endpoint,
    i: u32,
    scale: u64,
    tokens: &Mutex<Vec<CancelToken>>,
    interrupt: &AtomicBool,
) -> Result<(), ServerError> {
    let mut c = server.connect()?;
    tokens
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(c.cancel_token());
    let t = table(i);
    let n = scale as i64;
    let sql = [
        format!(
            "CREATE TABLE {t} (mykey bigint NOT NULL, scratch bigint NOT NULL, pad text NOT NULL) \
             WITH (fillfactor = 10, autovacuum_enabled = false)"
        ),
        format!(
            "INSERT INTO {t} SELECT (g * {SCATTER}::bigint) % {n}, 0, repeat('x', {PAD}) \
             FROM generate_series(0::bigint, {}::bigint) g",
            n - 1
        ),
        format!("CREATE INDEX {t}_key ON {t} (mykey)"),
        format!("VACUUM ANALYZE {t}"),
    ];
    for q in sql {
        if interrupt.load(Relaxed) {
            return Ok(());
        }
        c.batch_execute(&q)
            .map_err(|e| err(&format!("load {t}"), e))?;
    }
    Ok(())
}

fn total_bytes(db: &mut postgres::Client) -> Result<u64, ServerError> {
    let v: i64 = db
        .query_one(
            "SELECT coalesce(sum(pg_total_relation_size(oid)), 0)::bigint FROM pg_class \
             WHERE relkind = 'r' AND relname ~ '^dbio_t[0-9]+$' \
             AND relnamespace = current_schema()::text::regnamespace",
            &[],
        )
        .map_err(|e| err("size the tables", e))?
        .get(0);
    Ok(v as u64)
}
