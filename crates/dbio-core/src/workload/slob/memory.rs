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
//! PostgreSQL holds there beside its shared buffers and the model does not:
//! its server processes' and backends' own memory, the rest of its shared
//! memory, and the kernel's memory for its processes (page tables mapping
//! the shared memory in every backend above all), less the model's own
//! ([`held_for`]): at 64 sessions a fifth of a 512 MiB bound the page cache
//! does not have. A thread of its own (`dbio-memory`) then settles it once
//! a second ([`HeldMemory::settle`]): from what the cgroup is charged, the
//! held memory is made what it takes for the cgroup to hold PostgreSQL's
//! footprint beside its page cache, whatever the model's own memory came
//! to be charged for.

use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::workload::db::cgroup::{self, MemCgroup};

/// The cgroups' name prefix.
const PREFIX: &str = "dbio-model-";

/// The least `--memory` beyond `--cache`: the model's own memory (threads,
/// histograms, the log buffer) must fit beside its cache, or the kernel's
/// OOM killer ends the run.
pub const MIN_ABOVE_CACHE: u64 = 64 << 20;

/// What PostgreSQL 15 charges to `--pg-memory`'s cgroup beside
/// `shared_buffers` for each backend, and for the server whatever the
/// backends: anonymous memory (memory.stat `rss`: catalog and plan caches,
/// stacks), shared memory beyond `shared_buffers` (`shmem`: buffer
/// descriptors, lock tables, WAL buffers, per-connection slots) and kernel
/// memory (`memory.kmem.usage_in_bytes`: each process's page tables, most of
/// them mapping the shared memory, its kernel stack and slab). Measured
/// under SLOB's load (XFS over a direct-io loop device, 25% updates,
/// `--cache 64M --pg-memory 512M`, one shared table of 65,536 pages): with
/// 8 backends (15 processes) `rss` 16.2 MiB, `shmem` 70.1, kernel 6.3; with
/// 64 (71 processes) 95.6, 71.8 and 27.2 (page tables 3.0 and 18.1 MiB of
/// it): 1.82 MiB a backend (anonymous 1.42, kernel 0.37, shared 0.03) and
/// 14.0 MiB for the server (its other processes' anonymous memory 4.9,
/// shared memory beyond `shared_buffers` 5.9, kernel 3.3).
pub(crate) const PG_BACKEND_BYTES: u64 = 1864 << 10;
/// See [`PG_BACKEND_BYTES`].
pub(crate) const PG_SERVER_BYTES: u64 = 14 << 20;

/// What the model's own process charges to its cgroup beside `--cache`
/// (anonymous and kernel memory, the held memory left out), measured as
/// PostgreSQL's was (`--flavor postgres`, a debug build): 8.9 MiB at 8
/// sessions, 22.6 MiB at 64: 0.24 MiB a session (its thread's stack,
/// histograms and counters) and 7.0 MiB for the rest.
pub(crate) const MODEL_SESSION_BYTES: u64 = 248 << 10;
/// See [`MODEL_SESSION_BYTES`].
pub(crate) const MODEL_FIXED_BYTES: u64 = 7 << 20;

/// The memory `--memory` holds beside the cache for `sessions` sessions of
/// `flavor`: with `--flavor postgres` what PostgreSQL's server and backends
/// hold beside `shared_buffers` less what the model holds beside its cache,
/// so that the page cache under the bound is what PostgreSQL's would be;
/// nothing with the other flavors.
pub fn held_for(flavor: super::flavor::Flavor, sessions: u32) -> u64 {
    use super::flavor::Flavor;
    let n = u64::from(sessions);
    match flavor {
        Flavor::Postgres => (PG_SERVER_BYTES + n * PG_BACKEND_BYTES)
            .saturating_sub(MODEL_FIXED_BYTES + n * MODEL_SESSION_BYTES),
        Flavor::Oracle | Flavor::Innodb => 0,
    }
}

/// What the cgroup of `sessions` sessions of `flavor` with a cache of
/// `cache_bytes` holds beside its page cache once settled
/// ([`MemoryBound::settle`]): with `--flavor postgres` PostgreSQL's
/// footprint beside its page cache (`shared_buffers` and the rest of its
/// cgroup: [`PG_SERVER_BYTES`], [`PG_BACKEND_BYTES`] a backend); None with
/// the other flavors, which hold nothing.
pub(crate) fn settled_beside(
    flavor: super::flavor::Flavor,
    sessions: u32,
    cache_bytes: u64,
) -> Option<u64> {
    use super::flavor::Flavor;
    match flavor {
        Flavor::Postgres => {
            Some(cache_bytes + PG_SERVER_BYTES + u64::from(sessions) * PG_BACKEND_BYTES)
        }
        Flavor::Oracle | Flavor::Innodb => None,
    }
}

/// A change of the held memory smaller than this is not made: the
/// cgroup's anonymous memory moves by pages as the sessions' statistics grow.
const SETTLE_SLACK: u64 = 1 << 20;

/// How often the held memory is settled.
const SETTLE_EVERY: Duration = Duration::from_secs(1);

/// The process inside its memory cgroup until this drops.
pub struct MemoryBound {
    held: Arc<HeldMemory>,
    /// The thread settling the held memory (`--flavor postgres`), and the
    /// sender whose drop stops it.
    settler: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

/// The cgroup and the memory held in it for the run.
struct HeldMemory {
    cgroup: MemCgroup,
    /// What the cgroup holds beside its page cache once settled
    /// ([`settled_beside`]); None: nothing is settled.
    beside: Option<u64>,
    /// [`held_for`] as the process enters, then what [`HeldMemory::settle`]
    /// adds or takes away.
    chunks: Mutex<Vec<Held>>,
}

/// Anonymous memory mapped and written inside the cgroup, so that every
/// page of it is charged there. A mapping of its own, not the allocator's:
/// memory the allocator hands out again (freed by an earlier run of the
/// same process, a lab's or a plan's next arm, once its mmap threshold has
/// grown past the size) was charged to the cgroup that first touched it,
/// and would not count in this one (a second run of 8 sessions in a lab
/// held 3 of its 20 MiB).
struct Held {
    ptr: *mut std::ffi::c_void,
    len: usize,
}

// SAFETY: the mapping is only unmapped, on drop; nothing reads it.
unsafe impl Send for Held {}
unsafe impl Sync for Held {}

impl Held {
    /// Gives back all but the first `keep` bytes (rounded up to a page).
    fn truncate(&mut self, keep: usize) {
        let keep = keep.next_multiple_of(4096);
        if keep >= self.len {
            return;
        }
        // SAFETY: the tail of the mapping made in `new`, never borrowed.
        let tail = unsafe { self.ptr.cast::<u8>().add(keep).cast() };
        if unsafe { rustix::mm::munmap(tail, self.len - keep) }.is_ok() {
            self.len = keep;
        }
    }

    fn new(len: usize) -> Result<Option<Held>, BoundError> {
        if len == 0 {
            return Ok(None);
        }
        use rustix::mm::{MapFlags, ProtFlags};
        // SAFETY: a fresh private anonymous mapping, unmapped on drop.
        let ptr = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )
        }
        .map_err(|e| {
            BoundError(format!(
                "--memory: cannot hold {len} bytes in the cgroup: {e}"
            ))
        })?;
        // A write every 4 KiB touches every page (pages are at least that).
        for at in (0..len).step_by(4096) {
            // SAFETY: inside the mapping just made, writable.
            unsafe { ptr.cast::<u8>().add(at).write_volatile(1) };
        }
        Ok(Some(Held { ptr, len }))
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.len == 0 {
            return; // `truncate` gave it all back
        }
        // SAFETY: the mapping made in `new`, never borrowed.
        let _ = unsafe { rustix::mm::munmap(self.ptr, self.len) };
    }
}

/// Why the bound could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BoundError(String);

impl MemoryBound {
    /// Drops `dirs`' files from the page cache, makes this process's
    /// cgroup limited to `limit` bytes, moves the process into it and
    /// holds `held` bytes of memory there; with `beside`, a thread then
    /// settles the held memory once a second so that the cgroup holds
    /// `beside` bytes beside its page cache ([`HeldMemory::settle`]).
    pub fn enter(
        limit: u64,
        dirs: &[&Path],
        held: u64,
        beside: Option<u64>,
    ) -> Result<MemoryBound, BoundError> {
        let pid = std::process::id();
        let cg = MemCgroup::create(&format!("{PREFIX}{pid}"), limit, "--memory")
            .map_err(|e| BoundError(e.to_string()))?;
        if let Some(parent) = cg.path.parent() {
            remove_orphans(parent, pid);
        }
        let mut bound = MemoryBound {
            held: Arc::new(HeldMemory {
                cgroup: cg,
                beside,
                chunks: Mutex::new(Vec::new()),
            }),
            settler: None,
        };
        for d in dirs {
            cgroup::evict(d);
        }
        let path = &bound.held.cgroup.path;
        fs::write(path.join("cgroup.procs"), pid.to_string()).map_err(|e| {
            BoundError(format!(
                "--memory: cannot move dbio into the cgroup {}: {e}; drop --memory",
                path.display()
            ))
        })?;
        let first = Held::new(held as usize)?;
        bound.held.chunks().extend(first);
        if beside.is_some() {
            bound.settler = Some(settler(Arc::clone(&bound.held))?);
        }
        Ok(bound)
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.held.cgroup.path
    }
}

/// Starts the thread that settles `held` every [`SETTLE_EVERY`] until the
/// returned sender drops. It runs in the cgroup (a thread of the process).
fn settler(held: Arc<HeldMemory>) -> Result<(mpsc::Sender<()>, JoinHandle<()>), BoundError> {
    let (stop, stopped) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("dbio-memory".into())
        .spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(SETTLE_EVERY) {
                held.settle();
            }
        })
        .map_err(|e| BoundError(format!("--memory: cannot start its thread: {e}")))?;
    Ok((stop, thread))
}

impl HeldMemory {
    fn chunks(&self) -> std::sync::MutexGuard<'_, Vec<Held>> {
        self.chunks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes the cgroup hold what it should beside its page cache
    /// ([`settled_beside`]), from what it is charged now: its anonymous
    /// and kernel memory, less what is held, is the model's own, and the
    /// held memory is grown or shrunk to make up the rest (by a MiB or
    /// more: the model's own memory moves by pages as its statistics
    /// grow). What [`held_for`] assumed of the
    /// model's own memory is not always so: a run in a process that ran
    /// before (a lab's or a plan's next run) reuses memory the earlier run
    /// freed, charged to that run's cgroup (in a lab at 64 sessions the
    /// later runs' cgroups held 13 MiB less than the first's, and had 329–330
    /// MiB of page cache where PostgreSQL's had 317–319: 0.89–0.93× its
    /// device reads per operation, the first run 1.00×), and a release
    /// build's own memory is not a debug build's. Returns the bytes held.
    fn settle(&self) -> u64 {
        let mut held = self.chunks();
        let now: u64 = held.iter().map(|h| h.len as u64).sum();
        let (Some(beside), Some(charged)) = (self.beside, charged_beside_page_cache(&self.cgroup))
        else {
            return now;
        };
        let want = beside.saturating_sub(charged.saturating_sub(now));
        if want.abs_diff(now) < SETTLE_SLACK {
            return now;
        }
        if want > now {
            if let Ok(Some(h)) = Held::new((want - now) as usize) {
                held.push(h);
            }
        } else {
            let mut keep = want as usize;
            for h in held.iter_mut() {
                h.truncate(keep);
                keep = keep.saturating_sub(h.len);
            }
            held.retain(|h| h.len > 0);
        }
        held.iter().map(|h| h.len as u64).sum()
    }
}

/// What `cg` is charged for beside its page cache: anonymous and kernel
/// memory (v1: memory.stat `rss` and `memory.kmem.usage_in_bytes`; v2:
/// memory.stat `anon` and `kernel`), bytes; None when it cannot be read.
fn charged_beside_page_cache(cg: &MemCgroup) -> Option<u64> {
    let stat = fs::read_to_string(cg.path.join("memory.stat")).ok()?;
    let field = |name: &str| {
        stat.lines().find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    match cg.version {
        "v1" => {
            let kmem = fs::read_to_string(cg.path.join("memory.kmem.usage_in_bytes")).ok()?;
            Some(field("rss")? + kmem.trim().parse::<u64>().ok()?)
        }
        _ => Some(field("anon")? + field("kernel").unwrap_or(0)),
    }
}

impl Drop for MemoryBound {
    /// Moves the process back to the cgroup it came from, then removes this one.
    fn drop(&mut self) {
        // The settler stops first: nothing is held again after this.
        if let Some((stop, thread)) = self.settler.take() {
            drop(stop);
            let _ = thread.join();
        }
        // Unmapped inside the cgroup: nothing stays charged to it.
        self.held.chunks().clear();
        let path = &self.held.cgroup.path;
        if let Some(parent) = path.parent() {
            let _ = fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
        }
        cgroup::remove(path);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::slob::flavor::Flavor;

    const MIB: f64 = (1 << 20) as f64;

    /// The model's own memory beside its cache as measured (8.9 MiB at 8
    /// sessions, 22.6 at 64) plus what it holds is PostgreSQL's footprint
    /// beside `shared_buffers` as measured (28.5 MiB at 8 backends,
    /// 130.6 at 64), within a MiB.
    #[test]
    fn the_model_and_what_it_holds_weigh_what_postgresql_does() {
        for (n, model_own, pg) in [(8, 8.9, 28.5), (64, 22.6, 130.6)] {
            let held = held_for(Flavor::Postgres, n) as f64 / MIB;
            assert!(
                (model_own + held - pg).abs() < 1.0,
                "{n} sessions: {model_own} + {held:.1} MiB against {pg}"
            );
        }
    }

    /// Settled, the cgroup holds beside its page cache the cache and
    /// PostgreSQL's footprint beside `shared_buffers`; what is held as the
    /// process enters is that less the model's own memory as measured.
    #[test]
    fn settled_the_cgroup_holds_postgresqls_footprint_beside_the_cache() {
        let cache = 64 << 20;
        for n in [8, 64] {
            let beside = settled_beside(Flavor::Postgres, n, cache).unwrap();
            let pg = PG_SERVER_BYTES + u64::from(n) * PG_BACKEND_BYTES;
            assert_eq!(beside, cache + pg);
            let own = MODEL_FIXED_BYTES + u64::from(n) * MODEL_SESSION_BYTES;
            assert_eq!(beside - cache - held_for(Flavor::Postgres, n), own);
        }
        assert_eq!(settled_beside(Flavor::Oracle, 64, cache), None);
        assert_eq!(settled_beside(Flavor::Innodb, 64, cache), None);
    }

    #[test]
    fn only_the_postgres_flavor_holds_memory() {
        assert_eq!(held_for(Flavor::Oracle, 64), 0);
        assert_eq!(held_for(Flavor::Innodb, 64), 0);
        let step = held_for(Flavor::Postgres, 9) - held_for(Flavor::Postgres, 8);
        assert_eq!(step, PG_BACKEND_BYTES - MODEL_SESSION_BYTES);
    }
}
