//! `dbio trace`: reads a trace in any format dbio knows (its own, fio
//! iolog v2/v3, blktrace's per-CPU files) as a stream — `show` counts it,
//! `convert` writes it as a dbio trace or a fio iolog v3. A truncated or
//! garbled file is one line naming the file, where, and what (exit 2), and
//! a half-written output is removed.

use crate::cli::trace::{ConvertArgs, ShowArgs, To, TraceCommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::CommandError;
use crate::trace::{self, Entry, Summary, TraceError, iolog, native};

pub fn execute(
    command: TraceCommand,
    open_store: impl FnOnce(Option<PathBuf>) -> anyhow::Result<crate::store::Store>,
) -> anyhow::Result<ExitCode> {
    match command {
        TraceCommand::Show(a) => show(&a),
        TraceCommand::Convert(mut a) => {
            let Some(id) = run_id_of(&a.input) else {
                return convert(&a);
            };
            check_new_output(&a.output)?;
            let store = open_store(a.db.take())?;
            let stored = StoredTrace::write(&store, id)?;
            a.input = vec![stored.path.clone()];
            convert(&a)
        }
    }
}

/// The run id `inputs` names: one argument of digits that is not a file.
pub(crate) fn run_id_of(inputs: &[PathBuf]) -> Option<i64> {
    match inputs {
        [one] if one.symlink_metadata().is_err() => one.to_str()?.parse().ok(),
        _ => None,
    }
}

/// A stored run's trace written out to a file beside the store for as long
/// as this lives.
pub(crate) struct StoredTrace {
    pub path: PathBuf,
}

impl StoredTrace {
    /// Run `id`'s trace; a run without one, or no such run, is a usage error.
    pub(crate) fn write(store: &crate::store::Store, id: i64) -> Result<StoredTrace, CommandError> {
        let Some((_, data)) = store
            .load_trace(id)
            .map_err(|e| CommandError::Usage(e.to_string()))?
        else {
            return Err(CommandError::Usage(format!(
                "run {id} has no trace: capture one with `dbio run --capture`"
            )));
        };
        let dir = store
            .path()
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let path = dir.join(format!(
            ".dbio-trace-run-{id}-{}.dbtrace",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        std::fs::write(&path, data).map_err(|e| {
            CommandError::Failed(format!(
                "cannot write run {id}'s trace to {}: {e}",
                path.display()
            ))
        })?;
        Ok(StoredTrace { path })
    }
}

impl Drop for StoredTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A trace that cannot be read is the input's fault (exit 2); one that
/// cannot be written is a failure.
fn read_error(e: TraceError) -> anyhow::Error {
    match e {
        TraceError::Io {
            doing: "write" | "create",
            ..
        } => e.into(),
        e => CommandError::Usage(e.to_string()).into(),
    }
}

fn show(a: &ShowArgs) -> anyhow::Result<ExitCode> {
    let mut summary = Summary::default();
    for e in trace::open(&a.input).map_err(read_error)? {
        summary.add(&e.map_err(read_error)?);
    }
    if a.json {
        let doc = serde_json::json!({ "schema": "dbio.trace.v1", "trace": summary });
        super::output::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        super::output::print(&format!(
            "{} requests: {} reads ({} bytes), {} writes ({} bytes), {} flushes, {} discards; {} without completion; devices: {}\n",
            summary.requests,
            summary.reads,
            summary.read_bytes,
            summary.writes,
            summary.write_bytes,
            summary.flushes,
            summary.discards,
            summary.incomplete,
            summary.devices.join(", ")
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Where converted entries go.
enum Sink {
    Native(native::Writer),
    Iolog(iolog::Writer),
}

impl Sink {
    fn write(&mut self, e: &Entry) -> Result<(), TraceError> {
        match self {
            Sink::Native(w) => w.write(e),
            Sink::Iolog(w) => w.write(e),
        }
    }

    fn finish(self) -> Result<(), TraceError> {
        match self {
            Sink::Native(w) => w.finish().map(drop),
            Sink::Iolog(w) => w.finish(),
        }
    }
}

/// Refuses an `--output` that exists or whose directory does not (exit 2).
pub(crate) fn check_new_output(output: &Path) -> Result<(), CommandError> {
    if output.symlink_metadata().is_ok() {
        return Err(CommandError::Usage(format!(
            "--output {} exists: dbio never overwrites a file; give a new name",
            output.display()
        )));
    }
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(CommandError::Usage(format!(
            "--output {}: the directory {} does not exist",
            output.display(),
            dir.display()
        )));
    }
    Ok(())
}

fn convert(a: &ConvertArgs) -> anyhow::Result<ExitCode> {
    check_new_output(&a.output)?;
    let entries = trace::open(&a.input).map_err(read_error)?;
    let sink = match a.to {
        To::Native => Sink::Native(native::Writer::create(&a.output)?),
        To::Iolog => Sink::Iolog(iolog::Writer::create(&a.output)?),
    };
    let mut summary = Summary::default();
    let written = copy(entries, sink, &mut summary);
    if let Err(e) = written {
        remove(&a.output);
        return Err(e);
    }
    eprintln!(
        "wrote {} requests to {}",
        summary.requests,
        a.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn copy(entries: trace::Entries, mut sink: Sink, summary: &mut Summary) -> anyhow::Result<()> {
    for e in entries {
        let e = e.map_err(read_error)?;
        summary.add(&e);
        sink.write(&e).map_err(read_error)?;
    }
    sink.finish().map_err(read_error)
}

/// Removes an output this command created and could not finish.
fn remove(p: &Path) {
    let _ = std::fs::remove_file(p);
}
