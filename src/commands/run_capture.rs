//! `dbio run --capture`: the block requests to the device under the target
//! recorded while the run's threads run (the kernel's tracepoints in a
//! tracefs instance of dbio's own, `trace::capture`, on a thread of its
//! own, opened and closed by the harness as the run's [`Window`]: not the
//! layout, a server's start, load or stop), kept in the store with the
//! run, and how many events were lost said.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::CommandError;
use crate::harness::Window;
use crate::storage::chain::{self, Link};
use crate::store::Store;
use crate::store::traces::TraceRow;
use crate::trace::capture::{self, CaptureError, DEFAULT_BUFFER_KB, Options, Outcome, Target};

/// A capture running beside a run.
pub struct Capturing {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Outcome, CaptureError>>,
    file: PathBuf,
    device: PathBuf,
}

/// A capture stopped after its run.
pub struct Captured {
    outcome: Result<Outcome, CaptureError>,
    file: PathBuf,
    device: PathBuf,
}

/// `--capture` as the run's window: started when the run's threads are
/// ready, stopped when they have ended.
pub struct CaptureWindow<'a> {
    target: &'a Path,
    store_path: &'a Path,
    state: Mutex<Phase>,
}

/// Where a [`CaptureWindow`] is.
enum Phase {
    NotStarted,
    Running(Capturing),
    Stopped(Captured),
}

impl<'a> CaptureWindow<'a> {
    /// A capture of the device under `target`, into a file beside the store.
    pub fn new(target: &'a Path, store_path: &'a Path) -> Self {
        CaptureWindow {
            target,
            store_path,
            state: Mutex::new(Phase::NotStarted),
        }
    }

    /// What was captured, stopped now if the run did not stop it (a run
    /// that failed before its threads started has none).
    pub fn captured(self) -> Option<Captured> {
        match self.state.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Phase::NotStarted => None,
            Phase::Running(c) => Some(c.stop()),
            Phase::Stopped(c) => Some(c),
        }
    }
}

impl Window for CaptureWindow<'_> {
    fn open(&self) -> Result<(), String> {
        let c = start(self.target, self.store_path).map_err(|e| e.to_string())?;
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Phase::Running(c);
        Ok(())
    }

    fn close(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Phase::Running(c) = std::mem::replace(&mut *state, Phase::NotStarted) {
            *state = Phase::Stopped(c.stop());
        }
    }
}

/// The device under `target` (its filesystem's, or the device itself;
/// for a directory not made yet, its nearest existing parent's); a target
/// with none is a usage error.
pub fn device_under(target: &Path) -> Result<PathBuf, CommandError> {
    let existing = target
        .ancestors()
        .find(|p| p.exists())
        .unwrap_or(Path::new("/"));
    let c = chain::resolve(existing).map_err(|e| {
        CommandError::Usage(format!(
            "--capture: cannot find the device under {}: {e}",
            target.display()
        ))
    })?;
    c.links
        .iter()
        .find_map(|l| match l {
            Link::Device(d) => Some(Path::new("/dev").join(&d.name)),
            Link::Filesystem { .. } => None,
        })
        .ok_or_else(|| {
            CommandError::Usage(format!(
                "--capture: {} is on no block device ({}); capture traces block devices: give a target on one, or drop --capture",
                target.display(),
                c.describe()
            ))
        })
}

/// Starts capturing the device under `target` into a file beside the
/// store at `store_path`, once the tracepoints are on.
pub fn start(target: &Path, store_path: &Path) -> Result<Capturing, CommandError> {
    let device = device_under(target)?;
    let t = Target::resolve(&device).map_err(|e| CommandError::Usage(format!("--capture: {e}")))?;
    let dir = store_path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = dir.join(format!(".dbio-capture-{}.dbtrace", std::process::id()));
    let _ = std::fs::remove_file(&file); // a previous run's, killed before storing it
    let opts = Options {
        targets: vec![t],
        time: None,
        buffer_kb: DEFAULT_BUFFER_KB,
        output: file.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let s = stop.clone();
    let thread = std::thread::Builder::new()
        .name("dbio-capture".into())
        .spawn(move || {
            capture::capture(&opts, &s, move || {
                let _ = ready_tx.send(());
            })
        })
        .map_err(|e| CommandError::Failed(format!("--capture: cannot start its thread: {e}")))?;
    if ready.recv().is_err() {
        // The capture ended before it began: its error says why.
        let e = thread
            .join()
            .map_err(|_| CommandError::Failed("--capture: the capture thread panicked".into()))?;
        let _ = std::fs::remove_file(&file);
        return Err(CommandError::Failed(format!(
            "--capture on {}: {}",
            device.display(),
            e.err()
                .map_or("it stopped before it started".into(), |e| e.to_string())
        )));
    }
    Ok(Capturing {
        stop,
        thread,
        file,
        device,
    })
}

impl Capturing {
    /// Stops the capture (the run's window is over).
    pub fn stop(self) -> Captured {
        self.stop.store(true, Ordering::SeqCst);
        let outcome = self.thread.join().unwrap_or_else(|_| {
            Err(CaptureError::Device {
                path: self.device.clone(),
                what: "the capture thread panicked".into(),
            })
        });
        Captured {
            outcome,
            file: self.file,
            device: self.device,
        }
    }
}

impl Captured {
    /// The run was not saved: nothing to keep the trace with.
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.file);
    }

    /// Keeps the trace with run `run_id` and says what it holds; a capture
    /// that failed is said as a warning (the run stays saved).
    pub fn keep(self, store: &mut Store, run_id: i64) {
        let dev = self.device.display().to_string();
        let kept = match &self.outcome {
            Ok(out) => {
                let row = TraceRow {
                    requests: out.summary.requests,
                    lost_events: out.lost_events,
                    devices: dev.clone(),
                };
                store.save_trace(run_id, &self.file, &row).map(|()| out)
            }
            Err(e) => {
                eprintln!(
                    "warning: --capture on {dev} failed: {}",
                    crate::terminal::line(&e.to_string())
                );
                let _ = std::fs::remove_file(&self.file);
                return;
            }
        };
        let _ = std::fs::remove_file(&self.file);
        match kept {
            Ok(out) => eprintln!(
                "captured {} requests to {dev} ({} reads, {} writes, {} flushes), kept with run {run_id}; lost events: {}{}; the capture's reader used {:.3} s of CPU",
                out.summary.requests,
                out.summary.reads,
                out.summary.writes,
                out.summary.flushes,
                out.lost_events,
                if out.lost_events > 0 {
                    " (the trace is incomplete)"
                } else {
                    ""
                },
                out.reader_cpu_s,
            ),
            Err(e) => eprintln!(
                "warning: the captured trace was not kept: {}",
                crate::terminal::line(&e.to_string())
            ),
        }
    }
}
