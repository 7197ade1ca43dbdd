//! Block traces kept with their run (`dbio run --capture`): dbio's own
//! trace file (already zlib-compressed) in the `traces` table, one per run,
//! written out again to a file for `dbio trace convert RUN` and
//! `--workload replay --trace RUN`.

use std::path::Path;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Store, StoreError, retry_busy};

/// What is kept of a captured trace besides its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    pub requests: u64,
    pub lost_events: u64,
    /// The devices captured, space-separated.
    pub devices: String,
}

impl Store {
    /// Keeps the dbio trace in `file` with run `run_id`.
    pub fn save_trace(
        &mut self,
        run_id: i64,
        file: &Path,
        row: &TraceRow,
    ) -> Result<(), StoreError> {
        let data = std::fs::read(file).map_err(|source| StoreError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        let path = self.path.clone();
        let sql = |e| StoreError::sql(&path, e);
        retry_busy(&path, || {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql)?;
            tx.execute(
                "INSERT INTO traces (run_id, format, requests, lost_events, devices, data) \
                 VALUES (?1, 'dbtrace', ?2, ?3, ?4, ?5)",
                params![
                    run_id,
                    row.requests as i64,
                    row.lost_events as i64,
                    row.devices,
                    data
                ],
            )
            .map_err(sql)?;
            tx.commit().map_err(sql)
        })
    }

    /// Run `run_id`'s trace file: what is kept of it and its bytes; None
    /// when the run has no trace, an error when there is no such run.
    pub fn load_trace(&self, run_id: i64) -> Result<Option<(TraceRow, Vec<u8>)>, StoreError> {
        let sql = |e| StoreError::sql(&self.path, e);
        let found = self
            .conn
            .query_row(
                "SELECT requests, lost_events, devices, data FROM traces WHERE run_id = ?1",
                [run_id],
                |r| {
                    let row = TraceRow {
                        requests: r.get::<_, i64>(0)? as u64,
                        lost_events: r.get::<_, i64>(1)? as u64,
                        devices: r.get(2)?,
                    };
                    Ok((row, r.get::<_, Vec<u8>>(3)?))
                },
            )
            .optional()
            .map_err(sql)?;
        if found.is_none() {
            self.get(run_id)?; // no such run: its own error
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace saved with a run comes back byte for byte, goes with its
    /// run, and a run without one says so.
    #[test]
    fn a_trace_is_kept_with_its_run_and_goes_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        let id =
            super::super::tests::save(&mut store, &super::super::tests::report(), None, None, &[]);
        let file = dir.path().join("t.dbtrace");
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&file, &bytes).unwrap();
        let row = TraceRow {
            requests: 12,
            lost_events: 0,
            devices: "/dev/loop0".into(),
        };
        assert_eq!(store.load_trace(id).unwrap(), None);
        store.save_trace(id, &file, &row).unwrap();
        assert_eq!(store.load_trace(id).unwrap(), Some((row, bytes)));
        assert!(matches!(
            store.load_trace(id + 100),
            Err(StoreError::NoSuchRun { .. })
        ));
        store.delete(&[id]).unwrap();
        let n: i64 = store
            .conn
            .query_row("SELECT count(*) FROM traces", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0, "deleted with its run");
    }
}
