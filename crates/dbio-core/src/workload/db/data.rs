//! SLOB's data on any server: keys scattered over the rows (row `g` holds
//! key `g × SCATTER mod SCALE`, a permutation since SCATTER is a prime
//! above any SCALE, so a work unit of adjacent keys lands on pages far
//! apart); the load every server's tables go through ([`ensure`]: reuse
//! when the shape recorded in `dbio_meta` matches, otherwise drop dbio's
//! old tables and load every table in parallel, a connection each,
//! cancelled by Ctrl-C, the shape recorded only once all are complete); and
//! what a load reports. The server's SQL is its [`Tables`].

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::ServerError;

/// The multiplier that scatters keys over pages (a prime above any SCALE
/// dbio allows, so it is coprime to it; g × P stays below 2^63).
pub const SCATTER: u64 = 2_654_435_761;
/// Largest SCALE (rows per table) the key formula handles.
pub const MAX_SCALE: u64 = 3_000_000_000;

/// How the data was made.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LoadReport {
    pub reused: bool,
    pub tables: u32,
    pub rows_per_table: u64,
    /// Table + index bytes over all tables.
    pub bytes: u64,
    pub seconds: f64,
    pub mib_per_s: f64,
}

/// A connection the loader drives. Errors are the server's words.
pub trait LoadConn {
    fn execute(&mut self, sql: &str) -> Result<(), super::Refused>;
    /// The first column of each row, as text.
    fn strings(&mut self, sql: &str) -> Result<Vec<String>, super::Refused>;
    /// The first column of the first row, a count.
    fn number(&mut self, sql: &str) -> Result<u64, super::Refused>;
    /// Cancels from another thread what runs on this connection (Ctrl-C
    /// during a long statement); None where the loader checks between
    /// statements only.
    fn canceller(&self) -> Option<Canceller> {
        None
    }
}

/// Cancels a connection's running statement.
pub(crate) type Canceller = Box<dyn Fn() + Send>;

/// A server's SLOB tables: its connections and its SQL.
pub trait Tables: Sync {
    type Conn: LoadConn;
    /// Makes (or checks) the database or schema dbio works in.
    fn claim(&self) -> Result<(), ServerError>;
    fn connect(&self) -> Result<Self::Conn, ServerError>;
    fn tables(&self) -> u32;
    fn rows(&self) -> u64;
    /// The shape recorded in `dbio_meta` (no quotes).
    fn shape(&self) -> String;
    /// `CREATE TABLE IF NOT EXISTS dbio_meta (shape ...)`.
    fn meta_sql(&self) -> &'static str;
    /// dbio's tables (`dbio_t<N>`) where dbio works.
    fn tables_sql(&self) -> String;
    /// Table and index bytes of dbio's tables.
    fn bytes_sql(&self) -> String;
    /// Table `i`'s statements in order, each with what it does (for errors).
    fn load_sql(&self, i: u32) -> Vec<(String, String)>;
    /// Once every table is loaded (what it does, SQL).
    fn after_load(&self) -> Option<(&'static str, &'static str)> {
        None
    }
}

/// `ServerError::Failed` naming what failed.
fn failed(what: &str) -> impl Fn(super::Refused) -> ServerError + '_ {
    move |e| ServerError::Failed(format!("{what}: {e}"))
}

/// Makes the tables unless they have this shape already. Ctrl-C
/// (`interrupt`) cancels the load; the shape is recorded only once every
/// table is complete, so the next run loads again.
pub fn ensure<T: Tables>(t: &T, interrupt: &AtomicBool) -> Result<LoadReport, ServerError> {
    t.claim()?;
    let mut db = t.connect()?;
    db.execute(t.meta_sql())
        .map_err(failed("create dbio_meta"))?;
    let want = t.shape();
    let have = db
        .strings("SELECT shape FROM dbio_meta")
        .map_err(failed("read dbio_meta"))?;
    let (tables, rows_per_table) = (t.tables(), t.rows());
    if have.first() == Some(&want) {
        return Ok(LoadReport {
            reused: true,
            tables,
            rows_per_table,
            bytes: db
                .number(&t.bytes_sql())
                .map_err(failed("size the tables"))?,
            ..LoadReport::default()
        });
    }
    db.execute("DELETE FROM dbio_meta")
        .map_err(failed("reset dbio_meta"))?;
    for old in db
        .strings(&t.tables_sql())
        .map_err(failed("list old tables"))?
    {
        db.execute(&format!("DROP TABLE {old}"))
            .map_err(failed("drop an old table"))?;
    }
    let t0 = Instant::now();
    let cancels: Mutex<Vec<Canceller>> = Mutex::new(Vec::new());
    let results: Vec<Result<(), ServerError>> = std::thread::scope(|s| {
        let cancels = &cancels;
        let handles: Vec<_> = (0..tables)
            .map(|i| s.spawn(move || load_table(t, i, cancels, interrupt)))
            .collect();
        let mut cancelled = false;
        while !handles.iter().all(|h| h.is_finished()) {
            if interrupt.load(Relaxed) && !cancelled {
                cancelled = true;
                for c in cancels.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                    c();
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
    if let Some((what, sql)) = t.after_load() {
        db.execute(sql).map_err(failed(what))?;
    }
    let seconds = t0.elapsed().as_secs_f64();
    db.execute(&format!("INSERT INTO dbio_meta VALUES ('{want}')"))
        .map_err(failed("record the shape"))?;
    let bytes = db
        .number(&t.bytes_sql())
        .map_err(failed("size the tables"))?;
    Ok(LoadReport {
        reused: false,
        tables,
        rows_per_table,
        bytes,
        seconds,
        mib_per_s: bytes as f64 / (1 << 20) as f64 / seconds.max(1e-9),
    })
}

/// One table, on a connection of its own; stops between statements at Ctrl-C.
fn load_table<T: Tables>(
    t: &T,
    i: u32,
    cancels: &Mutex<Vec<Canceller>>,
    interrupt: &AtomicBool,
) -> Result<(), ServerError> {
    let mut c = t.connect()?;
    if let Some(cancel) = c.canceller() {
        cancels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(cancel);
    }
    for (what, sql) in t.load_sql(i) {
        if interrupt.load(Relaxed) {
            return Ok(());
        }
        c.execute(&sql).map_err(failed(&what))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scattered_keys_are_a_permutation() {
        for scale in [1u64, 7, 300, 1000] {
            let mut seen = vec![false; scale as usize];
            for g in 0..scale {
                seen[(g * SCATTER % scale) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{scale}");
        }
        assert!(MAX_SCALE.checked_mul(SCATTER).is_some());
    }
}
