//! `--metrics-textfile DIR`: the exposition (text format 0.0.4) written to
//! `DIR/dbio.prom` (an MPI rank's to `DIR/dbio-rank-N.prom`) whenever the
//! live view changes (each second and each telemetry interval), for
//! node_exporter's textfile collector: written to a hidden temporary file in
//! DIR, then renamed over the file, so the collector never reads half a file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Live, MetricsError};

/// The file written in DIR.
pub const FILE: &str = "dbio.prom";

/// The file written in DIR: `dbio.prom`, or MPI rank N's `dbio-rank-N.prom`
/// (ranks sharing a host share its directory).
pub fn file_name(rank: Option<u32>) -> String {
    match rank {
        None => FILE.to_string(),
        Some(r) => format!("dbio-rank-{r}.prom"),
    }
}
/// The first line of every file dbio writes: a `dbio.prom` without it is not dbio's.
pub const HEADER: &str = "# dbio live metrics (--metrics-textfile); replaced every interval\n";

fn refuse(dir: &Path, why: impl Into<String>) -> MetricsError {
    MetricsError::Textfile {
        path: dir.to_path_buf(),
        why: why.into(),
    }
}

/// Checks that `dir` is a directory dbio can write `name` in, and that a
/// `name` already there is one dbio wrote (never someone else's); the file's path.
pub fn check(dir: &Path, name: &str) -> Result<PathBuf, MetricsError> {
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
    let file = dir.join(name);
    if let Ok(old) = std::fs::read(&file)
        && !old.starts_with(HEADER.as_bytes())
    {
        return Err(refuse(
            dir,
            format!(
                "{name} there was not written by dbio; it is left alone: move it or choose another directory"
            ),
        ));
    }
    write(&file, HEADER).map_err(|e| refuse(dir, format!("cannot write {name} there: {e}")))?;
    Ok(file)
}

/// Writes `body` to `file` through a temporary file beside it and a rename.
fn write(file: &Path, body: &str) -> std::io::Result<()> {
    // A name per write: the writer thread and the final write may overlap.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let tmp = file.with_file_name(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let done = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(body.as_bytes())?;
        f.sync_data()?;
        std::fs::rename(&tmp, file)
    })();
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// Writes the exposition to `file` now (a failure is a warning, once per process).
pub fn write_now(file: &Path, live: &Live) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let mut written = live.inner.written.lock().unwrap_or_else(|p| p.into_inner());
    let (generation, text) = live.generation_text();
    if *written == generation && generation > 0 {
        return; // that state is in the file already
    }
    *written = generation;
    let body = format!("{HEADER}{text}");
    if let Err(e) = write(file, &body)
        && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed)
    {
        eprintln!(
            "warning: --metrics-textfile: cannot write {}: {e}",
            crate::terminal::field(&file.display().to_string())
        );
    }
}

/// Writes the exposition to `file` on every change, from a background thread.
pub fn spawn(file: PathBuf, live: Live) {
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
                write_now(&file, &live);
            }
        });
    if let Err(e) = spawned {
        eprintln!("warning: --metrics-textfile is not written: cannot start its thread: {e}");
    }
}
