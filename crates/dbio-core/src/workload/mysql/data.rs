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

use std::sync::atomic::AtomicBool;

use mysql::prelude::Queryable;

use super::endpoint::Endpoint;
use crate::workload::db::data::{self, LoadConn, LoadReport, SCATTER, Tables};
use crate::workload::db::{Refused, ServerError};

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

/// dbio's tables in its database.
const DBIO_TABLES: &str = "FROM information_schema.tables WHERE table_schema = 'dbio' \
     AND table_name REGEXP '^dbio_t[0-9]+$'";

/// Makes the database and the tables unless they have this shape already.
pub fn ensure(
    server: &Endpoint,
    shape: Shape,
    interrupt: &AtomicBool,
) -> Result<LoadReport, ServerError> {
    data::ensure(&InnodbTables { server, shape }, interrupt)
}

/// SLOB's tables in InnoDB.
struct InnodbTables<'a> {
    server: &'a Endpoint,
    shape: Shape,
}

impl LoadConn for mysql::Conn {
    fn execute(&mut self, sql: &str) -> Result<(), Refused> {
        self.query_drop(sql).map_err(|e| Refused(e.to_string()))
    }

    fn strings(&mut self, sql: &str) -> Result<Vec<String>, Refused> {
        self.query(sql).map_err(|e| Refused(e.to_string()))
    }

    fn number(&mut self, sql: &str) -> Result<u64, Refused> {
        let v: Option<u64> = self.query_first(sql).map_err(|e| e.to_string())?;
        Ok(v.unwrap_or(0))
    }
}

impl Tables for InnodbTables<'_> {
    type Conn = mysql::Conn;

    fn claim(&self) -> Result<(), ServerError> {
        self.server.claim_database()
    }

    fn connect(&self) -> Result<mysql::Conn, ServerError> {
        self.server.connect()
    }

    fn tables(&self) -> u32 {
        self.shape.schemas
    }

    fn rows(&self) -> u64 {
        self.shape.scale
    }

    fn shape(&self) -> String {
        self.shape.recorded()
    }

    fn meta_sql(&self) -> &'static str {
        "CREATE TABLE IF NOT EXISTS dbio_meta (shape varchar(200) NOT NULL)"
    }

    fn tables_sql(&self) -> String {
        format!("SELECT table_name {DBIO_TABLES}")
    }

    fn bytes_sql(&self) -> String {
        format!(
            "SELECT CAST(coalesce(sum(data_length + index_length), 0) AS UNSIGNED) {DBIO_TABLES}"
        )
    }

    /// Create, fill in chunks with scattered keys, index.
    fn load_sql(&self, i: u32) -> Vec<(String, String)> {
        let t = table(i);
        let shape = self.shape;
        let (scale, pad, partitions) = (shape.scale, pad(shape.page), shape.partitions());
        let mut sql = vec![(
            format!("create {t}"),
            format!(
                "CREATE TABLE {t} (id bigint NOT NULL PRIMARY KEY, mykey bigint NOT NULL, \
                 scratch bigint NOT NULL, pad varchar({pad}) NOT NULL) \
                 ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=latin1{partitions}"
            ),
        )];
        let mut from = 0;
        while from < scale {
            let to = (from + CHUNK).min(scale) - 1;
            sql.push((
                format!("load {t}"),
                format!(
                    "INSERT INTO {t} SELECT seq, (seq * {SCATTER}) % {scale}, 0, repeat('x', {pad}) \
                     FROM seq_{from}_to_{to}"
                ),
            ));
            from = to + 1;
        }
        sql.push((
            format!("index {t}"),
            format!("ALTER TABLE {t} ADD INDEX {t}_key (mykey)"),
        ));
        sql.push((format!("analyze {t}"), format!("ANALYZE TABLE {t}")));
        sql
    }
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
    fn dbio_tables_are_in_dbio_s_database() {
        assert!(DBIO_TABLES.contains(&format!(
            "table_schema = '{}'",
            super::super::server::DATABASE
        )));
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
