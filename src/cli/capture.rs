//! `dbio capture`'s arguments: the device, the length, the buffer and where the trace goes.

use std::path::PathBuf;

use clap::Args;

use crate::trace::capture::DEFAULT_BUFFER_KB;

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// A block device to trace (a partition is traced through its disk); repeat for more.
    #[arg(long = "device", value_name = "DEV", required = true)]
    pub devices: Vec<PathBuf>,
    /// Stop after this many seconds [default: at Ctrl-C or SIGTERM].
    #[arg(long, value_name = "S")]
    pub time: Option<f64>,
    /// The trace file to write (dbio's format; `dbio trace convert` makes a fio iolog). Never overwritten.
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The kernel's trace buffer per CPU, in KiB.
    #[arg(long, value_name = "KIB", default_value_t = DEFAULT_BUFFER_KB)]
    pub buffer_kb: u32,
    /// What was captured as JSON on stdout (schema `dbio.capture.v1`).
    #[arg(long)]
    pub json: bool,
}
