//! The results store: every `dbio run` saved whole in one SQLite file, so runs
//! can be listed, shown again, compared and exported later (docs/store.md).
//!
//! The file lives at `--db PATH`, else `$DBIO_DB`, else
//! `$XDG_DATA_HOME/dbio/dbio.sqlite`, else `~/.local/share/dbio/dbio.sqlite`.
//! It runs in WAL mode with `synchronous = FULL`; a run is written in one
//! `BEGIN IMMEDIATE` transaction, so a crash (even `kill -9`) loses at most
//! the run being saved, and several dbio processes can write one store at
//! once (they wait for each other up to [`BUSY_TIMEOUT`]).
//!
//! Files: [`schema`] (DDL, migrations), `runs` (save, list, get, delete,
//! tags, notes), `extract` (what a report contributes to columns and rows),
//! `time` (UTC timestamps), [`imports`] (runs other tools measured, saved per file
//! in one transaction), [`unsaved`] (a run the store could not take, kept
//! in a side file for `dbio import run`). `dbio runs` is `commands/runs.rs`;
//! its exports (CSV, JSON, Markdown, fio's JSON) are `report/export/`.

mod catalog;
mod extract;
pub mod imports;
mod runs;
pub mod schema;
mod time;
pub mod traces;
pub mod unsaved;

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_imports;

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use rusqlite::{Connection, ErrorCode, OpenFlags};

pub use imports::ImportedRun;
pub use runs::{KeyMetrics, OutlierRow, RunFilter, RunRow, SeriesKind, SeriesRow, StoredRun};
pub use time::{NotATime, fmt_utc, parse_since};

/// Environment variable naming the store file (`--db` wins over it).
pub const DB_ENV: &str = "DBIO_DB";

/// How long a writer waits for another process holding the store.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes every SQLite 3 database file starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

pub(crate) type SqlResult<T> = Result<T, rusqlite::Error>;

/// Everything that can go wrong with the store; each message is one line that
/// names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot create the store directory {}: {source}; pass --db PATH or set DBIO_DB to a writable place",
        dir.display()
    )]
    CreateDir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the directory {} does not exist; dbio creates only the store file --db names, not its directories (create the directory first, or check the path for a typo); nothing was created",
        dir.display()
    )]
    MissingDir { dir: PathBuf },
    #[error("cannot read {}: {source}; pass --db PATH or set DBIO_DB to another file", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not a SQLite database, so not a dbio store (left untouched); pass --db PATH or set DBIO_DB to another file",
        path.display()
    )]
    NotSqlite { path: PathBuf },
    #[error(
        "{} is a SQLite database of another program, not a dbio store (left untouched); pass --db PATH or set DBIO_DB to another file",
        path.display()
    )]
    NotDbio { path: PathBuf },
    #[error(
        "{} is a dbio store of schema version {found}, newer than this dbio reads ({supported}); upgrade dbio or pass --db PATH",
        path.display()
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error(
        "{}: {source}; check the file with: sqlite3 {} 'PRAGMA integrity_check'",
        path.display(),
        path.display()
    )]
    Sqlite {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "{} cannot be written (a read-only file, directory or filesystem); make it writable or pass --db PATH",
        path.display()
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "{}: the filesystem holding the store is full; free space there or pass --db PATH",
        path.display()
    )]
    Full { path: PathBuf },
    #[error(
        "{}: SQLite kept journal mode {mode}, not WAL (no shared memory on this filesystem?); pass --db PATH on a local filesystem",
        path.display()
    )]
    NoWal { path: PathBuf, mode: String },
    #[error(
        "{} stayed locked by another process for {} s; try again when it has finished (`fuser` names it)",
        path.display(),
        BUSY_TIMEOUT.as_secs()
    )]
    Busy { path: PathBuf },
    #[error("no run {id} in {}; `dbio runs list` shows the stored ids", path.display())]
    NoSuchRun { path: PathBuf, id: i64 },
    #[error("cannot save the run in {}: the report {what}; this is a dbio bug, please report it", path.display())]
    BadReport { path: PathBuf, what: String },
    #[error(
        "tag \"{}\" is not valid: a tag is 1 to 64 letters, digits or - _ . : = + / (no spaces or commas)",
        crate::terminal::quote(tag)
    )]
    BadTag { tag: String },
    #[error(
        "cannot decode a stored latency histogram: {msg}; the blob is not HDR V2+deflate (was it written by dbio?)"
    )]
    Histogram { msg: String },
    /// What a command was asked to select does not exist.
    #[error("{msg}")]
    Selection { msg: String },
    #[error("cannot write the output: {source}")]
    Output { source: std::io::Error },
}

impl StoreError {
    /// An SQLite error on the store at `path`; a read-only or full store
    /// says so (they are the user's to fix, not damage to check for).
    fn sql(path: &Path, source: rusqlite::Error) -> StoreError {
        let path = path.to_path_buf();
        match source.sqlite_error_code() {
            Some(ErrorCode::ReadOnly) => StoreError::ReadOnly { path },
            Some(ErrorCode::DiskFull) => StoreError::Full { path },
            _ => StoreError::Sqlite { path, source },
        }
    }

    /// True for SQLITE_BUSY / SQLITE_LOCKED: another connection holds the lock.
    fn is_busy(&self) -> bool {
        matches!(
            self,
            StoreError::Sqlite { source, .. }
                if matches!(
                    source.sqlite_error_code(),
                    Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                )
        )
    }
}

impl From<std::io::Error> for StoreError {
    fn from(source: std::io::Error) -> Self {
        StoreError::Output { source }
    }
}

/// An open results store.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// One finished run, as the run command hands it over to be saved.
pub struct NewRun<'a> {
    /// The Report as JSON (`serde_json::to_value(&report)`); stored whole,
    /// its summary metrics, series and outliers also as rows.
    pub report: &'a serde_json::Value,
    /// The terminal report exactly as printed.
    pub report_text: &'a str,
    /// Host, kernel, CPU, memory, device chain…, stored as JSON.
    pub environment: &'a serde_json::Value,
    /// (op kind "read"/"write"/"sync", [`encode_histogram`] bytes).
    pub histograms: &'a [(String, Vec<u8>)],
    pub plan: Option<&'a str>,
    pub variable: Option<&'a str>,
    pub cell_key: Option<&'a str>,
    pub warmup: bool,
    pub tags: &'a [String],
}

impl Store {
    /// `$DBIO_DB`, else `$XDG_DATA_HOME/dbio/dbio.sqlite`, else
    /// `$HOME/.local/share/dbio/dbio.sqlite` (`./dbio.sqlite` without a home).
    pub fn default_path() -> PathBuf {
        default_path_from(
            std::env::var_os(DB_ENV),
            std::env::var_os("XDG_DATA_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// Opens the store the user named with `--db`: like [`Store::open`],
    /// but only the file itself is created, never a missing directory (a
    /// typo in a path must not make a tree of directories).
    pub fn open_given(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && dir.symlink_metadata().is_err()
        {
            return Err(StoreError::MissingDir {
                dir: dir.to_path_buf(),
            });
        }
        Store::open(path)
    }

    /// Opens the store at `path`, creating it (and its parent directories:
    /// the default path's `~/.local/share/dbio`) if needed, in WAL mode, and migrating it to the current schema. A file
    /// that is not a dbio store is refused and left untouched.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                dir: dir.to_path_buf(),
                source,
            })?;
        }
        check_header(path)?;
        let sql = |e| StoreError::sql(path, e);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Judge the file before anything writes to it.
        let identity = retry_busy(path, || schema::identify(&conn).map_err(sql))?;
        match identity {
            schema::Identity::Foreign => {
                return Err(StoreError::NotDbio {
                    path: path.to_path_buf(),
                });
            }
            schema::Identity::Dbio { version } if version > schema::VERSION => {
                return Err(StoreError::TooNew {
                    path: path.to_path_buf(),
                    found: version,
                    supported: schema::VERSION,
                });
            }
            _ => {}
        }
        retry_busy(path, || {
            let mode: String = conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
                .map_err(sql)?;
            if mode.eq_ignore_ascii_case("wal") {
                Ok(())
            } else {
                Err(StoreError::NoWal {
                    path: path.to_path_buf(),
                    mode,
                })
            }
        })?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(sql)?;
        if identity
            != (schema::Identity::Dbio {
                version: schema::VERSION,
            })
        {
            retry_busy(path, || {
                schema::migrate(&mut conn, schema::MIGRATIONS, path)
            })?;
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Refuses a store SQLite could open only for reading (a read-only
    /// file or filesystem): a run must know it can be saved before it starts.
    pub fn ensure_writable(&self) -> Result<(), StoreError> {
        match self.conn.is_readonly(rusqlite::MAIN_DB) {
            Ok(false) => Ok(()),
            Ok(true) => Err(StoreError::ReadOnly {
                path: self.path.clone(),
            }),
            Err(e) => Err(self.sql(e)),
        }
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, e: rusqlite::Error) -> StoreError {
        StoreError::sql(&self.path, e)
    }
}

/// [`Store::default_path`] from explicit values (testable without touching
/// the process environment).
fn default_path_from(
    db: Option<OsString>,
    xdg_data_home: Option<OsString>,
    home: Option<OsString>,
) -> PathBuf {
    if let Some(db) = db.filter(|v| !v.is_empty()) {
        return PathBuf::from(db);
    }
    // The XDG spec ignores relative values.
    let data = xdg_data_home
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            home.filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        });
    match data {
        Some(d) => d.join("dbio").join("dbio.sqlite"),
        None => PathBuf::from("dbio.sqlite"),
    }
}

/// Refuses an existing, non-empty file that does not start like a SQLite
/// database, before SQLite gets to touch it.
fn check_header(path: &Path) -> Result<(), StoreError> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let mut head = Vec::with_capacity(SQLITE_MAGIC.len());
    (&mut file)
        .take(SQLITE_MAGIC.len() as u64)
        .read_to_end(&mut head)
        .map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    if head.is_empty() || head == SQLITE_MAGIC {
        Ok(())
    } else {
        Err(StoreError::NotSqlite {
            path: path.to_path_buf(),
        })
    }
}

/// Runs `f` again while it fails because another connection holds the lock
/// (SQLITE_BUSY comes back without waiting in a few cases, e.g. during WAL
/// recovery), for up to [`BUSY_TIMEOUT`]. `f` must be a whole transaction.
fn retry_busy<T>(
    path: &Path,
    mut f: impl FnMut() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match f() {
            Err(e) if e.is_busy() => {
                if start.elapsed() >= BUSY_TIMEOUT {
                    return Err(StoreError::Busy {
                        path: path.to_path_buf(),
                    });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// Serializes a latency histogram as HDR V2 + deflate (the `histograms`
/// table's `hdr_v2_deflate`; readable by every HdrHistogram implementation).
pub fn encode_histogram(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut out)
        .expect("an HDR histogram with counts below 2^63 serializes into memory");
    out
}

/// Reads a histogram written by [`encode_histogram`]; the result merges with
/// others (`Histogram::add`) in any order: a run's histograms cover only
/// the range it recorded, so the result grows to take a wider one.
pub fn decode_histogram(bytes: &[u8]) -> Result<Histogram<u64>, StoreError> {
    let mut h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| StoreError::Histogram {
            msg: format!("{e:?}"),
        })?;
    h.auto(true);
    Ok(h)
}

/// Checks a tag: 1 to 64 characters of letters, digits and `- _ . : = + /`.
pub fn validate_tag(tag: &str) -> Result<(), StoreError> {
    let ok = (1..=64).contains(&tag.chars().count())
        && tag
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.:=+/".contains(c));
    if ok {
        Ok(())
    } else {
        Err(StoreError::BadTag {
            tag: tag.to_string(),
        })
    }
}
