//! What a MariaDB instance dbio starts writes on its filesystems, for the
//! free-space check before anything is made: SLOB's tables (two rows of
//! just under half a page per page, the secondary index, each data file's
//! extents allocated ahead), the system tablespace `ibdata1` (its 12 MiB,
//! the doublewrite buffer in it, and one `innodb_autoextend_increment` of
//! undo when the mix updates), the temporary tablespace `ibtmp1`, the
//! system tables, and the redo log (`innodb_log_file_size`, dbio's 128 MiB
//! or `--mysql-set`'s) in its own directory. What an existing instance
//! already holds is room it gets back (it is reused or replaced).

use super::MysqlConfig;
use super::data::pad;
use crate::units::parse_size;

/// dbio's `innodb_log_file_size` unless `--mysql-set` gives one.
pub(crate) const REDO_BYTES: u64 = 128 << 20;
/// `ibdata1` as the server makes it (`innodb_data_file_path`'s 12M).
const SYSTEM_TABLESPACE: u64 = 12 << 20;
/// `ibtmp1` (`innodb_temp_data_file_path`'s 12M).
const TEMP_TABLESPACE: u64 = 12 << 20;
/// The `mysql`, `sys` and `performance_schema` tables and Aria's log, measured
/// at about 5 MiB after a bootstrap of 10.11.
const SYSTEM_TABLES: u64 = 8 << 20;
/// `innodb_autoextend_increment`: `ibdata1` grows by this when undo fills it.
const AUTOEXTEND: u64 = 64 << 20;
/// A table's data file beside its rows.
const PER_FILE: u64 = 10 << 20;

/// What the server writes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Need {
    /// SLOB's tables (`--scale` x `--schemas`, `--files` each).
    pub tables: u64,
    /// The system and temporary tablespaces, undo and the system tables.
    pub system: u64,
    /// The redo log (`innodb_log_file_size`).
    pub redo: u64,
}

/// What an instance of `my` writes.
pub fn need(my: &MysqlConfig) -> Need {
    let undo = if my.slob.update_pct > 0 {
        AUTOEXTEND
    } else {
        0
    };
    Need {
        tables: tables(my.slob.scale_blocks, my.page_size, my.files)
            .saturating_mul(u64::from(my.slob.schemas)),
        system: SYSTEM_TABLESPACE + TEMP_TABLESPACE + SYSTEM_TABLES + undo,
        redo: redo_bytes(&my.server.set),
    }
}

/// One table of `rows` in pages of `page`, over `files` data files.
/// Measured on 10.11 (rows of just under half a page, loaded in key order,
/// then indexed): 0.51 pages per row with 16k pages, 0.68 with 4k; 8 to 9
/// MiB per data file beside its rows (the index, the extents allocated
/// ahead). Counted here: 0.7 pages per two-rows-a-page row, 10 MiB a file.
pub fn tables(rows: u64, page: u32, files: u32) -> u64 {
    let rows_per_page = (u64::from(page) / (u64::from(pad(page)) + 64)).max(1);
    let per_row = u64::from(page) * 14 / (10 * rows_per_page);
    let files = u64::from(files.max(1));
    files * (rows.div_ceil(files) * per_row + PER_FILE)
}

/// `innodb_log_file_size` as `--mysql-set` gives it (the last one), else dbio's.
fn redo_bytes(set: &[(String, String)]) -> u64 {
    set.iter()
        .rev()
        .find(|(n, _)| n == "innodb_log_file_size")
        .and_then(|(_, v)| parse_size(v).ok())
        .unwrap_or(REDO_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_no_smaller_than_measured() {
        // (rows, page, files, bytes of .ibd files after a load on 10.11)
        for (rows, page, files, measured) in [
            (200, 16384, 1, 10_551_296),
            (2000, 16384, 1, 25_231_360),
            (8000, 16384, 1, 75_563_008),
            (8000, 16384, 8, 134_283_264),
            (2000, 4096, 1, 12_599_296),
            (8000, 4096, 1, 29_376_512),
            (2000, 32768, 1, 50_462_720),
        ] {
            let t = tables(rows, page, files);
            assert!(
                t >= measured && t < measured * 3 / 2 + (4 << 20),
                "{rows} {page} {files}: {t}"
            );
        }
    }

    #[test]
    fn the_redo_is_mysql_sets_innodb_log_file_size_or_dbios() {
        assert_eq!(redo_bytes(&[]), REDO_BYTES);
        let set = [
            ("innodb_log_file_size".to_string(), "8M".to_string()),
            ("innodb_log_file_size".to_string(), "16M".to_string()),
        ];
        assert_eq!(redo_bytes(&set), 16 << 20);
    }
}
