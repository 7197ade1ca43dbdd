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

use std::fs;
use std::path::Path;

use crate::workload::db::cgroup::{self, MemCgroup};

/// The cgroups' name prefix.
const PREFIX: &str = "dbio-model-";

/// The least `--memory` beyond `--cache`: the model's own memory (threads,
/// histograms, the log buffer) must fit beside its cache, or the kernel's
/// OOM killer ends the run.
pub const MIN_ABOVE_CACHE: u64 = 64 << 20;

/// The process inside its memory cgroup until this drops.
pub struct MemoryBound {
    cgroup: MemCgroup,
}

/// Why the bound could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BoundError(String);

impl MemoryBound {
    /// Drops `dirs`' files from the page cache, makes this process's
    /// cgroup limited to `limit` bytes and moves the process into it.
    pub fn enter(limit: u64, dirs: &[&Path]) -> Result<MemoryBound, BoundError> {
        let pid = std::process::id();
        let cg = MemCgroup::create(&format!("{PREFIX}{pid}"), limit, "--memory")
            .map_err(|e| BoundError(e.to_string()))?;
        if let Some(parent) = cg.path.parent() {
            remove_orphans(parent, pid);
        }
        let bound = MemoryBound { cgroup: cg };
        for d in dirs {
            cgroup::evict(d);
        }
        fs::write(bound.cgroup.path.join("cgroup.procs"), pid.to_string()).map_err(|e| {
            BoundError(format!(
                "--memory: cannot move dbio into the cgroup {}: {e}; drop --memory",
                bound.cgroup.path.display()
            ))
        })?;
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
