//! The options every workload on a real server refuses or resolves alike:
//! the raw patterns' and the SLOB model's own machinery mean nothing to a
//! server that does its own I/O (one line each, with what to use instead),
//! and the run's length from `--work-loop` or `--time`.

use crate::cli::RunArgs;
use crate::config::RunLength;
use crate::workload::dist::Distribution;

/// The server's own words for what the model's options would set.
pub struct Instead {
    /// `--workload NAME`.
    pub workload: &'static str,
    /// Why `--files` does not apply (None: the workload takes `--files`).
    pub files: Option<&'static str>,
    /// The server's redo/WAL, as "the server writes its own WAL".
    pub redo: &'static str,
    /// What to use instead of `--redo-files`, `--redo-file-size`,
    /// `--redo-block`, `--redo-sync`, `--log-buffer`.
    pub redo_files: &'static str,
    pub redo_file_size: &'static str,
    pub redo_block: &'static str,
    pub redo_sync: &'static str,
    pub log_buffer: &'static str,
}

/// Refuses the first option that does not apply to a server workload.
pub fn refuse_model_options(a: &RunArgs, i: &Instead) -> Result<(), String> {
    let s = &a.slob;
    let not_here = [
        (a.pattern.is_some(), "--pattern", "the mix is --update-pct"),
        (a.read_pct.is_some(), "--read-pct", "use --update-pct"),
        (
            a.dist != Distribution::Uniform,
            "--dist",
            "keys are uniform",
        ),
        (a.rate.is_some(), "--rate", "sessions run flat out"),
        (a.iodepth != 1, "--iodepth", "the server issues the I/O"),
        (
            a.size.is_some(),
            "--size",
            "the data size is --scale per schema",
        ),
        (a.ops.is_some(), "--ops", "use --work-loop"),
        (
            a.files != 1 && i.files.is_some(),
            "--files",
            i.files.unwrap_or_default(),
        ),
        (
            a.load_parallel.is_some(),
            "--load-parallel",
            "the tables are loaded through the server's connections",
        ),
        (s.redo_stress.is_some(), "--redo-stress", i.redo),
        (
            s.db_writers.is_some(),
            "--db-writers",
            "the server has its own writers",
        ),
        (
            s.dbwr_batch.is_some(),
            "--dbwr-batch",
            "the server has its own writers",
        ),
        (
            s.dbwr_engine.is_some(),
            "--dbwr-engine",
            "the server has its own writers",
        ),
        (
            s.dbwr_nice.is_some(),
            "--dbwr-nice",
            "the server has its own writers",
        ),
        (s.redo_files.is_some(), "--redo-files", i.redo_files),
        (
            s.redo_file_size.is_some(),
            "--redo-file-size",
            i.redo_file_size,
        ),
        (s.redo_block.is_some(), "--redo-block", i.redo_block),
        (s.redo_sync.is_some(), "--redo-sync", i.redo_sync),
        (s.log_buffer.is_some(), "--log-buffer", i.log_buffer),
    ];
    match not_here.iter().find(|(given, ..)| *given) {
        Some((_, opt, instead)) => Err(format!(
            "{opt} does not apply to --workload {}; {instead}",
            i.workload
        )),
        None => Ok(()),
    }
}

/// `--work-loop` operations per session, or `--time` after `--ramp`.
pub fn length(
    work_loop: Option<u64>,
    sessions: u32,
    time: Option<f64>,
    ramp: Option<f64>,
) -> Result<RunLength, String> {
    Ok(match work_loop {
        Some(w) => RunLength::Ops {
            ops: w.checked_mul(u64::from(sessions)).ok_or_else(|| {
                format!("--work-loop {w} x {sessions} sessions is too many operations")
            })?,
        },
        None => RunLength::Time {
            time_s: time.unwrap_or(10.0),
            ramp_s: ramp.unwrap_or(0.0),
        },
    })
}
