//! SLOB's data in InnoDB: `--schemas` tables `dbio_t<N>` of `--scale` rows
//! with a primary key in load order, keys scattered over the rows (row `g`
//! holds key `g × P mod SCALE`, as pg's), a secondary index on the key, and
//! a pad that makes a row just under half an InnoDB page. InnoDB keeps at
//! least two rows in a page, so SLOB's one row per block is two here (four
//! with 64k pages, whose rows are capped at 16 KiB): a work unit of
//! adjacent keys still lands on pages far apart. Loaded in parallel (a
//! connection per table, in transactions of 20,000 rows from MariaDB's
//! sequence engine), checked for Ctrl-C between them; the shape is recorded
//! in `dbio_meta` and the tables are reused when it matches.
//!
//! `--files N` makes each table N data files: `PARTITION BY HASH (id)
//! PARTITIONS N`, with innodb_file_per_table an .ibd file per partition
//! (`dbio_t0#P#p0.ibd` …). Row `g` is in partition `g mod N`, so the rows
//! spread evenly and every file is as hot as the others: seed 001's one hot
//! data file against the same table over several. Each partition has its
//! own B-trees, so a statement on a range of keys descends N secondary
//! indexes (the key does not say which partition holds the row).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

use mysql::prelude::Queryable;

use super::endpoint::Endpoint;
use super::server::DATABASE;
use crate::workload::db::ServerError;
use crate::workload::db::data::{LoadReport, SCATTER};

/// Rows per load transaction.
const CHUNK: u64 = 20_000;

/// Table `i`'s name.
pub fn table(i: u32) -> String {
    format!("dbio_t{i}")
}

/// Bytes of padding per row for `page`: just under half a page (InnoDB's
/// largest row), at most 15,000.
pub fn pad(page: u32) -> u32 {
    (page * 2 / 5).min(15_000)
}

/// What the tables look like: their count, rows, page and data files.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub schemas: u32,
    pub scale: u64,
    pub page: u32,
    /// Data files (HASH partitions) per table; 1: no partitions.
    pub files: u32,
}

impl Shape {
    fn recorded(&self) -> String {
        format!(
            "v1 schemas={} scale={} pad={} scatter={SCATTER} files={}",
            self.schemas,
            self.scale,
            pad(self.page),
            self.files
        )
    }

    /// The clause that splits a table into its data files.
    fn partitions(&self) -> String {
        match self.files {
            1 => String::new(),
            n => format!(" PARTITION BY HASH (id) PARTITIONS {n}"),
        }
    }
}

fn err(what: &str, e: mysql::Error) -> ServerError {
    ServerError::Failed(format!("{what}: {e}"))
}

/// Makes the database and the tables unless they have this shape already.
pub fn ensure(
    server: &Endpoint,
    shape: Shape,
    interrupt: &AtomicBool,
) -> Result<LoadReport, ServerError> {
    let Shape { schemas, scale, .. } = shape;
    server.claim_database()?;
    let mut db = server.connect()?;
    db.query_drop("CREATE TABLE IF NOT EXISTS dbio_meta (shape varchar(200) NOT NULL)")
        .map_err(|e| err("create dbio_meta", e))?;
    let want = shape.recorded();
    let have: Option<String> = db
        .query_first("SELECT shape FROM dbio_meta")
        .map_err(|e| err("read dbio_meta", e))?;
    if have.as_deref() == Some(want.as_str()) {
        return Ok(LoadReport {
            reused: true,
            tables: schemas,
            rows_per_table: scale,
            bytes: total_bytes(&mut db)?,
            ..LoadReport::default()
        });
    }
    db.query_drop("DELETE FROM dbio_meta")
        .map_err(|e| err("reset dbio_meta", e))?;
    let old: Vec<String> = db
        .query(format!(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = '{DATABASE}' \
             AND table_name REGEXP '^dbio_t[0-9]+$'"
        ))
        .map_err(|e| err("list old tables", e))?;
    for t in old {
        db.query_drop(format!("DROP TABLE {t}"))
            .map_err(|e| err("drop an old table", e))?;
    }
    let t0 = Instant::now();
    let results: Vec<Result<(), ServerError>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..schemas)
            .map(|i| s.spawn(move || load_table(server, i, shape, interrupt)))
            .collect();
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
    let seconds = t0.elapsed().as_secs_f64();
    db.exec_drop("INSERT INTO dbio_meta VALUES (?)", (want,))
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

/// One table: create, fill in chunks with scattered keys, index.
fn load_table(
    server: &Endpoint,
    i: u32,
    shape: Shape,
    interrupt: &AtomicBool,
) -> Result<(), ServerError> {
    let mut c = server.connect()?;
    let t = table(i);
    let (scale, pad, partitions) = (shape.scale, pad(shape.page), shape.partitions());
    c.query_drop(format!(
        "CREATE TABLE {t} (id bigint NOT NULL PRIMARY KEY, mykey bigint NOT NULL, \
         scratch bigint NOT NULL, pad varchar({pad}) NOT NULL) \
         ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=latin1{partitions}"
    ))
    .map_err(|e| err(&format!("create {t}"), e))?;
    let mut from = 0;
    while from < scale {
        if interrupt.load(Relaxed) {
            return Ok(());
        }
        let to = (from + CHUNK).min(scale) - 1;
        c.query_drop(format!(
            "INSERT INTO {t} SELECT seq, (seq * {SCATTER}) % {scale}, 0, repeat('x', {pad}) \
             FROM seq_{from}_to_{to}"
        ))
        .map_err(|e| err(&format!("load {t}"), e))?;
        from = to + 1;
    }
    if interrupt.load(Relaxed) {
        return Ok(());
    }
    c.query_drop(format!("ALTER TABLE {t} ADD INDEX {t}_key (mykey)"))
        .map_err(|e| err(&format!("index {t}"), e))?;
    c.query_drop(format!("ANALYZE TABLE {t}"))
        .map_err(|e| err(&format!("analyze {t}"), e))
}

fn total_bytes(db: &mut mysql::Conn) -> Result<u64, ServerError> {
    let v: Option<u64> = db
        .query_first(format!(
            "SELECT CAST(coalesce(sum(data_length + index_length), 0) AS UNSIGNED) \
             FROM information_schema.tables WHERE table_schema = '{DATABASE}' \
             AND table_name REGEXP '^dbio_t[0-9]+$'"
        ))
        .map_err(|e| err("size the tables", e))?;
    Ok(v.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_just_under_half_a_page() {
        for page in [4096, 8192, 16384, 32768] {
            assert!(pad(page) * 2 < page && pad(page) * 3 > page, "{page}");
        }
        assert_eq!(pad(65536), 15_000);
    }

    #[test]
    fn files_are_hash_partitions_and_part_of_the_shape() {
        let one = Shape {
            schemas: 2,
            scale: 1000,
            page: 16384,
            files: 1,
        };
        let four = Shape { files: 4, ..one };
        assert_eq!(one.partitions(), "");
        assert_eq!(four.partitions(), " PARTITION BY HASH (id) PARTITIONS 4");
        assert_ne!(
            one.recorded(),
            four.recorded(),
            "another layout is reloaded"
        );
    }
}
