//! `dbio trace`: reads a trace in any format dbio knows (its own, fio
//! iolog v2/v3, blktrace's per-CPU files) as a stream — `show` counts it,
//! `convert` writes it as a dbio trace or a fio iolog v3. A truncated or
//! garbled file is one line naming the file, where, and what (exit 2), and
//! a half-written output is removed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use super::CommandError;
use crate::trace::{self, Entry, Summary, TraceError, iolog, native};

#[derive(Subcommand, Debug)]
pub enum TraceCommand {
    /// Count a trace's requests by operation (reads it whole, as a stream).
    Show(ShowArgs),
    /// Write a trace (dbio's, fio iolog v2/v3, blktrace's per-CPU files) as a dbio trace or a fio iolog v3.
    Convert(ConvertArgs),
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// The trace: one file, or blktrace's per-CPU files of one device (DEV.blktrace.0 DEV.blktrace.1 ...).
    #[arg(required = true, value_name = "FILE")]
    pub input: Vec<PathBuf>,
    /// The counts as JSON on stdout (schema `dbio.trace.v1`).
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum To {
    /// dbio's own compressed format.
    Native,
    /// fio's iolog version 3 (`fio --read_iolog`).
    Iolog,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The trace: one file, or blktrace's per-CPU files of one device.
    #[arg(required = true, value_name = "FILE")]
    pub input: Vec<PathBuf>,
    /// The file to write (never over an existing one).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The output's format.
    #[arg(long, value_enum, default_value_t = To::Native)]
    pub to: To,
}

pub fn execute(command: TraceCommand) -> anyhow::Result<ExitCode> {
    match command {
        TraceCommand::Show(a) => show(&a),
        TraceCommand::Convert(a) => convert(&a),
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
