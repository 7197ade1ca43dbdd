//! `--flavor postgres`: what PostgreSQL 15's checkpointer writes and fsyncs
//! once a checkpoint's buffers are written, beside the table's own file
//! (`CheckPointGuts` and `CreateCheckPoint`'s end, seen with strace on the
//! server `--workload pg` runs): the commit log page (`pg_xact/0000`), the
//! table's visibility map fork, the replication origin checkpoint — written
//! to a temporary file, fsynced, renamed over the old one, fsynced again and
//! its directory fsynced (`durable_rename`) — and the control file
//! (`pg_control`, 8 KiB). Each is a real write and fsync on small files in
//! the redo log directory, so the filesystem answers them as it answers
//! PostgreSQL's (on XFS about a dozen device flushes per checkpoint,
//! docs/slob.md); the model's datafiles are fsynced by the pass itself
//! (`dbwr`). These fsyncs are not counted as WAL syncs: PostgreSQL counts its
//! checkpointer's nowhere (`wal_sync` counts the WAL's only).
//!
//! The files are made when the run starts and removed when it ends; `dbio
//! clean` removes any a killed run left ([`crate::storage::PG_CHECKPOINT_FILES`]).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::storage::PG_CHECKPOINT_FILES;

/// Bytes each file gets per checkpoint: a page (`pg_control` is 8 KiB too).
const PAGE: usize = 8192;

/// The files of one run, open, in the redo log directory.
pub(crate) struct CheckpointEnd {
    dir: PathBuf,
    /// The commit log page, the visibility map, the control file.
    files: [File; 3],
    page: Vec<u8>,
    /// Checkpoints whose end was written.
    pub ended: u32,
}

/// The path of file `i` of [`PG_CHECKPOINT_FILES`] in `dir`.
fn path(dir: &Path, i: usize) -> PathBuf {
    dir.join(PG_CHECKPOINT_FILES[i])
}

impl CheckpointEnd {
    /// Makes the files in `dir` (the redo log directory dbio made).
    pub fn create(dir: &Path) -> std::io::Result<CheckpointEnd> {
        let open = |i: usize| {
            File::options()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(path(dir, i))
        };
        let end = CheckpointEnd {
            dir: dir.to_path_buf(),
            files: [open(0)?, open(1)?, open(2)?],
            page: vec![0x5a; PAGE],
            ended: 0,
        };
        for f in &end.files {
            f.write_all_at(&end.page, 0)?;
        }
        Ok(end)
    }

    /// One checkpoint's end, as PostgreSQL's checkpointer makes it: the
    /// commit log page and the visibility map written and fsynced, the
    /// replication origin checkpoint renamed into place durably, the
    /// control file written and fsynced. What failed, and on which file.
    pub fn write(&mut self) -> Result<(), String> {
        let at = |i: usize, e: std::io::Error| format!("{}: {e}", path(&self.dir, i).display());
        self.page[..4].copy_from_slice(&self.ended.to_le_bytes());
        for i in [0, 1] {
            let f = &self.files[i];
            f.write_all_at(&self.page, 0).map_err(|e| at(i, e))?;
            f.sync_all().map_err(|e| at(i, e))?;
        }
        self.durable_rename().map_err(|e| at(4, e))?;
        let control = &self.files[2];
        control.write_all_at(&self.page, 0).map_err(|e| at(2, e))?;
        control.sync_all().map_err(|e| at(2, e))?;
        self.ended += 1;
        Ok(())
    }

    /// The replication origin checkpoint: a new file written and fsynced,
    /// renamed over the old one, fsynced again, and the directory fsynced
    /// (PostgreSQL's `durable_rename`).
    fn durable_rename(&self) -> std::io::Result<()> {
        let (tmp, done) = (path(&self.dir, 4), path(&self.dir, 3));
        let f = File::create(&tmp)?;
        f.write_all_at(&self.page, 0)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &done)?;
        File::open(&done)?.sync_all()?;
        File::open(&self.dir)?.sync_all()
    }
}

impl Drop for CheckpointEnd {
    /// Removes the files the run made (and a temporary one a failed rename left).
    fn drop(&mut self) {
        for i in 0..PG_CHECKPOINT_FILES.len() {
            let _ = std::fs::remove_file(path(&self.dir, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_end_rewrites_the_files_and_the_run_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut end = CheckpointEnd::create(dir.path()).unwrap();
        end.write().unwrap();
        end.write().unwrap();
        assert_eq!(end.ended, 2);
        for name in &PG_CHECKPOINT_FILES[..4] {
            let len = std::fs::metadata(dir.path().join(name)).unwrap().len();
            assert_eq!(len, PAGE as u64, "{name}");
        }
        assert!(!dir.path().join(PG_CHECKPOINT_FILES[4]).exists(), "renamed");
        drop(end);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_failure_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut end = CheckpointEnd::create(dir.path()).unwrap();
        end.dir = dir.path().join("missing");
        let e = end.write().unwrap_err();
        assert!(e.contains(PG_CHECKPOINT_FILES[4]), "{e}");
    }
}
