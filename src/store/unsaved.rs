//! A run the store could not take (locked for longer than the busy
//! timeout, read-only, full): the whole run — report, terminal text,
//! environment, histograms, where it belongs — written atomically to a side
//! file beside the store (`STORE.unsaved/<time>-<pid>.json`, else a
//! `dbio-unsaved` directory of the temporary directory), so a run measured
//! is never lost. `dbio import run FILE` reads it back ([`read`]) and saves
//! it as if the first save had worked ([`Store::save_unsaved`]).

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use super::{NewRun, Store, StoreError};

/// The `schema` of a side file.
pub const SCHEMA: &str = "dbio.unsaved.v1";

/// Why a side file could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum UnsavedError {
    #[error("cannot keep the run in {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not a directory of dbio's own (a symlink, or another user's); the run was not kept there",
        path.display()
    )]
    NotOurs { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not a run dbio kept when the store could not take it ({what}); `dbio import run` reads only the files named in such an error line",
        path.display()
    )]
    NotUnsaved { path: PathBuf, what: String },
}

/// One latency histogram, as `histograms` stores it, base64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Hist {
    op: String,
    hdr_v2_deflate_base64: String,
}

/// The side file: everything [`NewRun`] carries, and when and where the
/// save was tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unsaved {
    pub schema: String,
    /// The store the run was meant for.
    pub store: PathBuf,
    /// Why it was not saved there.
    pub error: String,
    /// When the save was tried (the run's `saved` time once imported).
    pub saved_unix_ms: i64,
    pub report: serde_json::Value,
    pub report_text: String,
    pub environment: serde_json::Value,
    histograms: Vec<Hist>,
    pub plan: Option<String>,
    pub variable: Option<String>,
    pub cell_key: Option<String>,
    pub warmup: bool,
    pub tags: Vec<String>,
}

impl Unsaved {
    /// The run the store at `store` could not take, and why.
    pub fn new(store: &Path, run: &NewRun, error: &StoreError) -> Unsaved {
        Unsaved {
            schema: SCHEMA.into(),
            store: store.to_path_buf(),
            error: error.to_string(),
            saved_unix_ms: super::runs::now_unix_ms(),
            report: run.report.clone(),
            report_text: run.report_text.into(),
            environment: run.environment.clone(),
            histograms: run
                .histograms
                .iter()
                .map(|(op, bytes)| Hist {
                    op: op.clone(),
                    hdr_v2_deflate_base64: BASE64.encode(bytes),
                })
                .collect(),
            plan: run.plan.map(String::from),
            variable: run.variable.map(String::from),
            cell_key: run.cell_key.map(String::from),
            warmup: run.warmup,
            tags: run.tags.to_vec(),
        }
    }

    /// The histograms as `NewRun` takes them.
    pub fn histograms(&self) -> Result<Vec<(String, Vec<u8>)>, String> {
        self.histograms
            .iter()
            .map(|h| {
                BASE64
                    .decode(&h.hdr_v2_deflate_base64)
                    .map(|b| (h.op.clone(), b))
                    .map_err(|e| format!("histogram {:?} is not base64: {e}", h.op))
            })
            .collect()
    }
}

/// The directory beside `store` that keeps its unsaved runs.
fn dir_beside(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_os_string();
    name.push(".unsaved");
    PathBuf::from(name)
}

/// The directory of a side file once its last run is back in a store: gone
/// when empty and one dbio makes (`STORE.unsaved`, `dbio-unsaved`), never
/// another directory that happens to be empty.
pub fn remove_dir_if_empty(file: &Path) {
    let Some(dir) = file.parent() else { return };
    let ours = dir.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.ends_with(".unsaved") || n == TMP_DIR
    });
    if ours {
        // Fails, and keeps it, when anything is left in it.
        let _ = fs::remove_dir(dir);
    }
}

/// The directory of the temporary directory kept runs go to.
const TMP_DIR: &str = "dbio-unsaved";

/// Writes `run` to a new side file: beside the store, else in the temporary
/// directory. The file's path, or why neither place took it.
pub fn keep(run: &Unsaved) -> Result<PathBuf, Vec<UnsavedError>> {
    // Absolute, so the error line names it wherever it is read.
    let store = std::path::absolute(&run.store).unwrap_or_else(|_| run.store.clone());
    let places = [dir_beside(&store), std::env::temp_dir().join(TMP_DIR)];
    let mut errors = Vec::new();
    for dir in places {
        match write_in(&dir, run) {
            Ok(path) => return Ok(path),
            Err(e) => errors.push(e),
        }
    }
    Err(errors)
}

/// The error of writing `path`.
fn err(path: &Path) -> impl FnOnce(std::io::Error) -> UnsavedError {
    let path = path.to_path_buf();
    move |source| UnsavedError::Write { path, source }
}

/// `dir` (made if missing: only its last component, mode 0700, never one
/// that is not this user's), then the file, written and synced under a
/// temporary name and renamed into place.
fn write_in(dir: &Path, run: &Unsaved) -> Result<PathBuf, UnsavedError> {
    let made = match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(err(dir)(e)),
    };
    let written = write_file(dir, run);
    if written.is_err() && made {
        let _ = fs::remove_dir(dir);
    }
    written
}

/// The file in `dir`, a directory that exists.
fn write_file(dir: &Path, run: &Unsaved) -> Result<PathBuf, UnsavedError> {
    let md = fs::symlink_metadata(dir).map_err(err(dir))?;
    if !md.is_dir() || md.uid() != rustix::process::geteuid().as_raw() {
        return Err(UnsavedError::NotOurs {
            path: dir.to_path_buf(),
        });
    }
    let stamp = super::fmt_utc(run.saved_unix_ms).replace(['-', ':'], "");
    let pid = std::process::id();
    let path = (0..)
        .map(|k| match k {
            0 => dir.join(format!("{stamp}-{pid}.json")),
            k => dir.join(format!("{stamp}-{pid}-{k}.json")),
        })
        .find(|p| p.symlink_metadata().is_err())
        .expect("an unused name");
    let tmp = dir.join(format!(".{stamp}-{pid}.json.tmp"));
    let text = serde_json::to_string_pretty(run).expect("a run serializes") + "\n";
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        });
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, &path)) {
        let _ = fs::remove_file(&tmp);
        return Err(err(&path)(e));
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(err(dir))?;
    Ok(path)
}

/// Reads a side file back.
pub fn read(path: &Path) -> Result<Unsaved, UnsavedError> {
    let text = fs::read_to_string(path).map_err(|source| UnsavedError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let not = |what: String| UnsavedError::NotUnsaved {
        path: path.to_path_buf(),
        what,
    };
    let run: Unsaved = serde_json::from_str(&text).map_err(|e| not(e.to_string()))?;
    if run.schema != SCHEMA {
        return Err(not(format!("schema {:?}, not {SCHEMA:?}", run.schema)));
    }
    run.histograms().map_err(not)?;
    Ok(run)
}

impl Store {
    /// Saves a run kept in a side file, as the first save would have: the
    /// same rows, with the time that save was tried. The id, or the id of
    /// the same run stored already.
    pub fn save_unsaved(&mut self, run: &Unsaved) -> Result<Saved, StoreError> {
        if let Some(id) = self.same_run(&run.report)? {
            return Ok(Saved::Already(id));
        }
        let histograms = run.histograms().map_err(|what| StoreError::BadReport {
            path: self.path.clone(),
            what,
        })?;
        let new = NewRun {
            report: &run.report,
            report_text: &run.report_text,
            environment: &run.environment,
            histograms: &histograms,
            plan: run.plan.as_deref(),
            variable: run.variable.as_deref(),
            cell_key: run.cell_key.as_deref(),
            warmup: run.warmup,
            tags: &run.tags,
        };
        self.save_run_at(&new, run.saved_unix_ms).map(Saved::New)
    }

    /// The id of a stored run whose report document is `report`.
    fn same_run(&self, report: &serde_json::Value) -> Result<Option<i64>, StoreError> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE report_json = ?1 ORDER BY id LIMIT 1",
                [report.to_string()],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))
    }
}

/// What [`Store::save_unsaved`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    New(i64),
    /// The run was stored already (imported before) under this id.
    Already(i64),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tests::{encoded, environment, fixture, report, report_text};

    /// A run kept in a side file and saved from it is the run a direct save
    /// stores: every row but the id, with the kept save time.
    #[test]
    fn a_kept_run_saves_as_the_direct_save_would() {
        let mut f = fixture();
        let (rep, env, hist) = (report(), environment(), encoded());
        let tags = vec!["xfs".to_string()];
        let new = NewRun {
            report: &rep,
            report_text: report_text(),
            environment: &env,
            histograms: &hist,
            plan: Some("p"),
            variable: Some("XFS"),
            cell_key: Some("bs=8k"),
            warmup: true,
            tags: &tags,
        };
        let direct = f.store.save_run(&new).unwrap();
        let busy = StoreError::Busy {
            path: f.path.clone(),
        };
        let kept = Unsaved::new(&f.path, &new, &busy);
        let file = keep(&kept).unwrap();
        assert_eq!(file.parent().unwrap(), dir_beside(&f.path));
        let back = read(&file).unwrap();
        assert_eq!(back, kept, "the file holds the run exactly");
        f.store.delete(&[direct]).unwrap();
        let id = match f.store.save_unsaved(&back).unwrap() {
            Saved::New(id) => id,
            other => panic!("{other:?}"),
        };
        let again = f.store.save_unsaved(&back).unwrap();
        assert_eq!(again, Saved::Already(id), "stored once");
        let got = f.store.get(id).unwrap();
        assert_eq!(got.report, rep);
        assert_eq!(got.report_text, report_text());
        assert_eq!(got.environment, env);
        assert_eq!(got.histograms, hist);
        assert!(!got.series.is_empty());
        let r = &got.row;
        assert_eq!(
            (
                r.plan.as_deref(),
                r.variable.as_deref(),
                r.cell_key.as_deref()
            ),
            (Some("p"), Some("XFS"), Some("bs=8k"))
        );
        assert!(r.warmup && r.tags == tags);
        let saved: i64 = f
            .store
            .conn
            .query_row("SELECT saved_unix_ms FROM runs WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(saved, kept.saved_unix_ms);
    }

    #[test]
    fn only_a_directory_dbio_makes_goes_with_its_last_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["s.sqlite.unsaved", TMP_DIR, "Downloads"] {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            remove_dir_if_empty(&d.join("x.json"));
            assert_eq!(d.exists(), name == "Downloads", "{name}");
        }
    }

    #[test]
    fn a_file_that_is_not_a_kept_run_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fio.json");
        std::fs::write(&file, "{\"fio version\": \"fio-3.33\"}").unwrap();
        let e = read(&file).unwrap_err();
        assert!(matches!(e, UnsavedError::NotUnsaved { .. }), "{e}");
        assert!(e.to_string().contains("dbio import run"), "{e}");
    }
}
