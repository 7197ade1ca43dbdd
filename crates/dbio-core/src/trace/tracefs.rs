//! The kernel's tracefs, as dbio uses it: mounted at /sys/kernel/tracing
//! if it is not (and unmounted again only then), and an instance of dbio's
//! own under `instances/` — never the global buffer another tool may be
//! using — removed when the [`Instance`] is dropped, on every exit path.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const ROOT: &str = "/sys/kernel/tracing";

/// Why tracing cannot be set up here, in one line.
#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    #[error("this kernel has no block tracing ({0}): it needs CONFIG_BLK_DEV_IO_TRACE and tracefs")]
    Unsupported(String),
    #[error("cannot mount tracefs at {ROOT}: {0} (capturing needs root)")]
    Mount(std::io::Error),
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        doing: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(doing: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> TracefsError {
    let path = path.to_path_buf();
    move |source| TracefsError::Io {
        doing,
        path,
        source,
    }
}

/// Whether tracefs is mounted at `ROOT` (from /proc/self/mounts).
fn mounted() -> bool {
    fs::read_to_string("/proc/self/mounts").is_ok_and(|m| {
        m.lines().any(|l| {
            let mut f = l.split_whitespace();
            let (_, dir, kind) = (f.next(), f.next(), f.next());
            dir == Some(ROOT) && kind == Some("tracefs")
        })
    })
}

/// A tracefs instance of dbio's own (and tracefs, if dbio mounted it).
pub(crate) struct Instance {
    pub dir: PathBuf,
    we_mounted: bool,
}

impl Instance {
    /// Mounts tracefs if needed and makes `instances/NAME`.
    pub fn create(name: &str) -> Result<Instance, TracefsError> {
        let root = Path::new(ROOT);
        let we_mounted = !mounted();
        if we_mounted {
            rustix::mount::mount(
                "none",
                root,
                "tracefs",
                rustix::mount::MountFlags::empty(),
                None,
            )
            .map_err(|e| TracefsError::Mount(e.into()))?;
        }
        let unmount = |e| {
            if we_mounted {
                let _ = rustix::mount::unmount(root, rustix::mount::UnmountFlags::empty());
            }
            e
        };
        for needed in [
            "instances",
            "events/block/block_rq_issue",
            "events/block/block_rq_complete",
        ] {
            if !root.join(needed).exists() {
                return Err(unmount(TracefsError::Unsupported(format!(
                    "no {ROOT}/{needed}"
                ))));
            }
        }
        remove_orphans(&root.join("instances"));
        let dir = root.join("instances").join(name);
        fs::create_dir(&dir).map_err(|e| unmount(io("make the tracing instance", &dir)(e)))?;
        Ok(Instance { dir, we_mounted })
    }

    /// Writes `value` to the instance's file `rel`.
    pub fn set(&self, rel: &str, value: &str) -> Result<(), TracefsError> {
        let p = self.dir.join(rel);
        fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&p)
            .and_then(|mut f| f.write_all(value.as_bytes()))
            .map_err(io("write", &p))
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Events the ring buffer lost: the sum of every CPU's `overrun` and
    /// `dropped events` in `per_cpu/cpuN/stats`.
    pub fn lost_events(&self) -> Result<u64, TracefsError> {
        let per_cpu = self.dir.join("per_cpu");
        let mut lost = 0;
        for e in fs::read_dir(&per_cpu)
            .map_err(io("read", &per_cpu))?
            .flatten()
        {
            let p = e.path().join("stats");
            let text = fs::read_to_string(&p).map_err(io("read", &p))?;
            lost += lost_in_stats(&text);
        }
        Ok(lost)
    }
}

/// The prefix of dbio's instance names; the pid of the capture follows.
pub(crate) const PREFIX: &str = "dbio-capture-";

/// Removes the instances of captures that were killed (`kill -9` leaves
/// theirs): named by dbio, for a pid that no longer runs.
fn remove_orphans(instances: &Path) {
    let Ok(dir) = fs::read_dir(instances) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        let alive = pid
            .parse::<u32>()
            .is_ok_and(|p| Path::new("/proc").join(p.to_string()).exists());
        if !alive && fs::remove_dir(e.path()).is_ok() {
            eprintln!(
                "removed the tracing instance {} of a capture that was killed",
                e.path().display()
            );
        }
    }
}

/// The events a `per_cpu/cpuN/stats` text says were lost.
pub(crate) fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events")
                .then(|| v.trim().parse::<u64>().ok())?
        })
        .sum()
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Events off first (an instance with events on can be busy).
        let _ = self.set("events/enable", "0");
        let _ = self.set("tracing_on", "0");
        for _ in 0..50 {
            match fs::remove_dir(&self.dir) {
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => {
                    eprintln!(
                        "warning: cannot remove the tracing instance {}: {e}",
                        self.dir.display()
                    );
                    break;
                }
                Ok(()) => break,
            }
        }
        // Unmounted only if dbio mounted it and nobody made an instance since.
        let others = fs::read_dir(Path::new(ROOT).join("instances"))
            .map(|d| d.count())
            .unwrap_or(0);
        if self.we_mounted && others == 0 {
            let _ = rustix::mount::unmount(ROOT, rustix::mount::UnmountFlags::empty());
        }
    }
}
