//! Saving runs that other tools measured (fio, SLOB's awr_info.sh): the
//! importers build [`ImportedRun`]s, and [`Store::save_imports`] writes all
//! the runs of one file in one transaction, so a file is imported whole or
//! not at all.

use rusqlite::params;

use super::runs::{insert_tags_metrics_histograms, now_unix_ms};
use super::{RunRow, Store, StoreError, validate_tag};

/// One run read from another tool's output, ready to be stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportedRun {
    /// Its `runs` columns, as `dbio runs list` reads them back: times,
    /// status, workload (`raw` for fio, `slob` for awr_info), pattern,
    /// sessions, block size, engine, io mode, target, plan, variable, tags,
    /// source (`fio`, `awr-info`), source file (absolute path) and the
    /// SLOB.R model the user gave. `id`, `warmup` and `metrics` are unused.
    pub row: RunRow,
    /// Metric rows, names from `crate::vocab` and docs/store.md.
    pub metrics: Vec<(String, f64)>,
    /// (op, [`super::encode_histogram`] bytes).
    pub histograms: Vec<(String, Vec<u8>)>,
    /// What `dbio runs show ID --json` prints: the tool's own numbers for
    /// this run, with the import's settings.
    pub report: serde_json::Value,
    /// What `dbio runs show ID` prints.
    pub report_text: String,
    pub environment: serde_json::Value,
}

impl Store {
    /// Saves the runs of one imported file in one transaction; returns their
    /// ids in order. Nothing is saved when anything fails.
    pub fn save_imports(&mut self, runs: &[ImportedRun]) -> Result<Vec<i64>, StoreError> {
        self.save_imports_at(runs, now_unix_ms())
    }

    /// [`Store::save_imports`] with the time the runs count as saved (a run
    /// kept in a side file keeps the time its first save was tried).
    pub(super) fn save_imports_at(
        &mut self,
        runs: &[ImportedRun],
        saved: i64,
    ) -> Result<Vec<i64>, StoreError> {
        for run in runs {
            for tag in &run.row.tags {
                validate_tag(tag)?;
            }
        }
        self.write(|tx, path| {
            let sql = |e| StoreError::sql(path, e);
            let mut ids = Vec::with_capacity(runs.len());
            for run in runs {
                let r = &run.row;
                tx.execute(
                    "INSERT INTO runs (started_unix_ms, ended_unix_ms, status, workload, pattern, \
                     sessions, block_size, engine, io_mode, target, plan, variable, warmup, \
                     saved_unix_ms, report_json, report_text, environment_json, source, \
                     source_file, model) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, ?14, ?15, \
                     ?16, ?17, ?18, ?19)",
                    params![
                        r.started_unix_ms,
                        r.ended_unix_ms,
                        r.status,
                        r.workload,
                        r.pattern,
                        r.sessions,
                        r.block_size,
                        r.engine,
                        r.io_mode,
                        r.target,
                        r.plan,
                        r.variable,
                        saved,
                        run.report.to_string(),
                        run.report_text,
                        run.environment.to_string(),
                        r.source,
                        r.source_file,
                        r.model,
                    ],
                )
                .map_err(sql)?;
                let id = tx.last_insert_rowid();
                insert_tags_metrics_histograms(tx, id, &r.tags, &run.metrics, &run.histograms)
                    .map_err(sql)?;
                ids.push(id);
            }
            Ok(ids)
        })
    }

    /// Ids of the runs already imported from `source_file` by `source`.
    pub fn imported_from(&self, source: &str, source_file: &str) -> Result<Vec<i64>, StoreError> {
        let read = || -> rusqlite::Result<Vec<i64>> {
            let mut stmt = self.conn.prepare_cached(
                "SELECT id FROM runs WHERE source = ?1 AND source_file = ?2 ORDER BY id",
            )?;
            let rows = stmt.query_map(params![source, source_file], |r| r.get(0))?;
            rows.collect()
        };
        read().map_err(|e| self.sql(e))
    }
}
