//! `dbio trace`'s subcommands and their arguments.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

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
    /// The trace: one file, blktrace's per-CPU files of one device, or the id of a run stored with `--capture`.
    #[arg(required = true, value_name = "FILE|RUN")]
    pub input: Vec<PathBuf>,
    /// The results store a RUN is read from [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// The file to write (never over an existing one).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The output's format.
    #[arg(long, value_enum, default_value_t = To::Native)]
    pub to: To,
}
