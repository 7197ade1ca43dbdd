//! `--metrics-textfile DIR`: the exposition (text format 0.0.4) written to
//! `DIR/dbio.prom` whenever the live view changes (each second and each
//! telemetry interval), for node_exporter's textfile collector: written to
//! a hidden temporary file in DIR, then renamed over `dbio.prom`, so the
//! collector never reads half a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::expo::Format;
use super::{Live, MetricsError};

/// The file written in DIR.
pub const FILE: &str = "dbio.prom";
/// The first line of every file dbio writes: a `dbio.prom` without it is not dbio's.
pub const HEADER: &str = "# dbio live metrics (--metrics-textfile); replaced every interval\n";

fn refuse(dir: &Path, why: impl Into<String>) -> MetricsError {
    MetricsError::Textfile {
        path: dir.to_path_buf(),
        why: why.into(),
    }
}

/// Checks that `dir` is a directory dbio can write `dbio.prom` in, and that
/// a `dbio.prom` already there is one dbio wrote (never someone else's).
pub fn check(dir: &Path) -> Result<PathBuf, MetricsError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(refuse(
                dir,
                "is not a directory; give the directory node_exporter's --collector.textfile.directory reads",
            ));
        }
        Err(e) => {
            return Err(refuse(
                dir,
                format!(
                    "{e}; give an existing directory (node_exporter's --collector.textfile.directory)"
                ),
            ));
        }
    }
    let file = dir.join(FILE);
    if let Ok(old) = std::fs::read(&file)
        && !old.starts_with(HEADER.as_bytes())
    {
        return Err(refuse(
            dir,
            format!(
                "{FILE} there was not written by dbio; it is left alone: move it or choose another directory"
            ),
        ));
    }
    write(dir, HEADER).map_err(|e| refuse(dir, format!("cannot write {FILE} there: {e}")))?;
    Ok(dir.to_path_buf())
}

/// Writes `body` to `dir/dbio.prom` through a temporary file and a rename.
fn write(dir: &Path, body: &str) -> std::io::Result<()> {
    // A name per write: the writer thread and the final write may overlap.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{FILE}.{}.{n}.tmp", std::process::id()));
    let done = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(body.as_bytes())?;
        f.sync_data()?;
        std::fs::rename(&tmp, dir.join(FILE))
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Writes the exposition now (a failure is a warning, once per process).
pub fn write_now(dir: &Path, live: &Live) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let body = format!("{HEADER}{}", live.exposition(Format::Prometheus));
    if let Err(e) = write(dir, &body)
        && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        eprintln!(
            "warning: --metrics-textfile: cannot write {}: {e}",
            crate::terminal::field(&dir.join(FILE).display().to_string())
        );
    }
}

/// Writes the exposition on every change, from a background thread.
pub fn spawn(dir: PathBuf, live: Live) {
    let spawned = std::thread::Builder::new()
        .name("dbio-textfile".into())
        .spawn(move || {
            let mut seen = 0;
            loop {
                let now = live.wait_change(seen, Duration::from_secs(5));
                if now == seen {
                    continue;
                }
                seen = now;
                write_now(&dir, &live);
            }
        });
    if let Err(e) = spawned {
        eprintln!("warning: --metrics-textfile is not written: cannot start its thread: {e}");
    }
}
