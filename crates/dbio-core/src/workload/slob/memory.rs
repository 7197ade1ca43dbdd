//! `--memory SIZE`: the model's process in a memory cgroup of that size for
//! the run, as `--pg-memory` puts PostgreSQL's (`db::cgroup` makes it), so
//! that its buffer cache and the page cache under its buffered datafiles
//! share one bound: the page cache absorbs what it would for PostgreSQL with
//! `shared_buffers` = `--cache` and the rest of the bound page cache. The
//! datafiles and redo logs are dropped from the page cache first (pages
//! cached before would stay charged elsewhere and hide reads from the
//! bound). The cgroup is named for the process (`dbio-model-PID`); the
//! process leaves it and it is removed when the run ends, whatever the
//! outcome (the guard's drop), and a later run removes one whose process
//! died without leaving it (kill -9).
//!
//! With `--flavor postgres` the process also holds, in the cgroup, what
//! PostgreSQL's backends hold of their own beside the shared buffers
//! ([`PG_BACKEND_PRIVATE_BYTES`] a session): at 64 sessions that is a
//! fifth of a 512 MiB bound the page cache does not have.

use std::fs;
use std::path::Path;

use crate::workload::db::cgroup::{self, MemCgroup};

/// The cgroups' name prefix.
const PREFIX: &str = "dbio-model-";

/// The least `--memory` beyond `--cache`: the model's own memory (threads,
/// histograms, the log buffer) must fit beside its cache, or the kernel's
/// OOM killer ends the run.
pub const MIN_ABOVE_CACHE: u64 = 64 << 20;

/// What a PostgreSQL 15 backend holds of its own (anonymous memory charged
/// to its cgroup: catalog and plan caches, its stack, its share of the page
/// tables) under SLOB's load, less what a session of the model holds of its
/// own (about 0.15 MiB). Measured: the `rss` of `--pg-memory`'s cgroup
/// (memory.stat) was 18.4 MB with 8 backends and 100 MB with 64 (XFS, 25%
/// updates, `--cache 64M --pg-memory 512M`), 1.46 MiB a backend.
pub(crate) const PG_BACKEND_PRIVATE_BYTES: u64 = 1300 << 10;

/// The memory `--memory` holds beside the cache for `sessions` sessions of
/// `flavor`: PostgreSQL's backends' own, or nothing.
pub fn held_for(flavor: super::flavor::Flavor, sessions: u32) -> u64 {
    use super::flavor::Flavor;
    match flavor {
        Flavor::Postgres => u64::from(sessions) * PG_BACKEND_PRIVATE_BYTES,
        Flavor::Oracle | Flavor::Innodb => 0,
    }
}

/// The process inside its memory cgroup until this drops.
pub struct MemoryBound {
    cgroup: MemCgroup,
    /// Memory held in the cgroup for the run ([`held_for`]), every page
    /// written so that it is charged.
    held: Vec<u8>,
}

/// Why the bound could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BoundError(String);

impl MemoryBound {
    /// Drops `dirs`' files from the page cache, makes this process's
    /// cgroup limited to `limit` bytes, moves the process into it and
    /// holds `held` bytes of memory there.
    pub fn enter(limit: u64, dirs: &[&Path], held: u64) -> Result<MemoryBound, BoundError> {
        let pid = std::process::id();
        let cg = MemCgroup::create(&format!("{PREFIX}{pid}"), limit, "--memory")
            .map_err(|e| BoundError(e.to_string()))?;
        if let Some(parent) = cg.path.parent() {
            remove_orphans(parent, pid);
        }
        let mut bound = MemoryBound {
            cgroup: cg,
            held: Vec::new(),
        };
        for d in dirs {
            cgroup::evict(d);
        }
        fs::write(bound.cgroup.path.join("cgroup.procs"), pid.to_string()).map_err(|e| {
            BoundError(format!(
                "--memory: cannot move dbio into the cgroup {}: {e}; drop --memory",
                bound.cgroup.path.display()
            ))
        })?;
        bound.held = vec![1u8; held as usize];
        Ok(bound)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.cgroup.path
    }
}

impl Drop for MemoryBound {
    /// Moves the process back to the cgroup it came from, then removes this one.
    fn drop(&mut self) {
        // Freed inside the cgroup: nothing stays charged to it.
        self.held = Vec::new();
        if let Some(parent) = self.cgroup.path.parent() {
            let _ = fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
        }
        cgroup::remove(&self.cgroup.path);
    }
}

/// Removes the `dbio-model-PID` cgroups under `parent` whose process is
/// gone (a run killed before it could remove its own).
fn remove_orphans(parent: &Path, own: u32) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != own && !Path::new("/proc").join(pid.to_string()).exists() {
            cgroup::remove(&e.path());
        }
    }
}
