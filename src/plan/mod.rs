//! Experiment plans: a TOML file that describes arms (named variables) ×
//! cells (the cross product of swept options) × repeats, plus warm-up runs
//! and shell steps. [`load`] parses, validates, expands and orders it into
//! [`PlannedRun`]s, each the argument list of one `dbio run`; [`execute`]
//! runs them through an [`Executor`] callback so that this module depends on
//! neither the store nor the runner. The format is documented in
//! docs/plans.md.
//!
//! * Plan keys under `[workload]`, `[sweep]` and `[variables.*]` are the long
//!   options of `dbio run` (`_` or `-`), read from the clap definition, and
//!   every run's argument list is validated with the real parser and
//!   [`RunArgs::into_config`](crate::options::RunArgs::into_config) before
//!   anything runs. Every bad input is one line: `FILE:LINE: [section] key: message`.
//! * Each run has a stable `cell_key` (`XFS|bs=8k|sessions=16|rep=2`,
//!   warm-ups `XFS|warmup=1`); the plan's `name` is its id. Resuming skips
//!   every key the executor reports as completed for the plan.

mod exec;
mod expand;
pub mod lab;
mod lab_arm;
mod lab_parse;
#[cfg(test)]
mod lab_tests;
mod parse;
mod render;
#[cfg(test)]
mod tests;
pub mod vs_engine;

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

pub use exec::{StepRecord, StepWhen, Summary, execute, execute_with};
pub use lab::{Backing, FsKind, LabArm, LabSpec};
pub use render::{dry_run, fmt_duration, status};

/// Seconds added to every run's estimate: process start, opening files,
/// starting sessions, writing the report.
pub const RUN_OVERHEAD_S: f64 = 3.0;
/// The request rate assumed per session to estimate an `--ops` run without
/// `--rate` (a guess: a psync session on an SSD).
pub const ASSUMED_IOPS_PER_SESSION: f64 = 1000.0;
/// The write speed assumed to estimate laying out a directory target the
/// first time the plan uses it with a given shape.
pub const ASSUMED_LAYOUT_BYTES_PER_S: f64 = 500.0 * 1024.0 * 1024.0;
/// The size `dbio run` lays out in a directory when `size` is not set.
pub use crate::storage::DEFAULT_DIR_SIZE;

/// One run of the plan: the arguments of one `dbio run`.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedRun {
    /// Position in the execution order (0-based).
    pub index: usize,
    /// The arm (the name under `[variables]`).
    pub variable: String,
    /// The swept values of the cell, `bs=8k|sessions=16` (empty when nothing
    /// is swept); for a warm-up, the cell it runs.
    pub cell: String,
    /// The stable key the store saves: `XFS|bs=8k|sessions=16|rep=2`, or
    /// `XFS|warmup=1` for a warm-up.
    pub cell_key: String,
    /// A warm-up: run but not counted.
    pub warmup: bool,
    /// The repeat number (1-based), or the warm-up number for a warm-up.
    pub repeat: u32,
    /// The number of sessions the run resolves to.
    pub sessions: Option<u32>,
    /// The arguments after `dbio run` (without `--json` / `--quiet`).
    pub args: Vec<String>,
    /// Estimated wall time: ramp + time + [`RUN_OVERHEAD_S`], plus a layout
    /// guess for the first run on a directory target shape.
    pub est_seconds: f64,
}

/// In which order runs are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Warm-ups first (arms in random order), then round after round (one
    /// repeat of every arm × cell), each round in random order.
    Shuffled,
    /// Like shuffled but each round in a fixed order: cell by cell, arms
    /// alternating (forward in odd rounds, backward in even ones).
    Interleaved,
    /// Arm by arm, cell by cell, repeats back to back.
    Sequential,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Shuffled => "shuffled",
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }
}

/// What a failed run does to the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    /// Stop the plan (the failed run is made again on the next invocation).
    Stop,
    /// Record the failure and go on; the run is retried on the next invocation.
    Continue,
}

/// Shell commands run through `sh -c`, output and exit status recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Steps {
    /// Before the first run of an arm and whenever the arm changes.
    pub before_arm: Vec<String>,
    /// Before every run.
    pub before_run: Vec<String>,
}

/// A loaded, validated and expanded plan.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The plan's id in the store (the required `name` key).
    pub name: String,
    pub description: Option<String>,
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The seed of the shuffle: the `seed` key, or derived from the name.
    pub seed: u64,
    /// True when `seed` was given in the file.
    pub seed_given: bool,
    pub order: Order,
    pub repeats: u32,
    /// Warm-up runs per arm.
    pub warmup: u32,
    pub on_failure: OnFailure,
    /// Live metrics for the whole plan (`metrics_listen`, `metrics_textfile`).
    pub metrics: crate::metrics::Wanted,
    /// Arm names, in file order.
    pub arms: Vec<String>,
    /// Cell labels in sweep order (one empty label when nothing is swept).
    pub cells: Vec<String>,
    /// Every run, in execution order.
    pub runs: Vec<PlannedRun>,
    pub steps: Steps,
    /// Things worth knowing that do not stop the plan (shown by dry-run).
    pub warnings: Vec<String>,
    /// The `[lab]` section: storage `dbio lab run` builds for the arms.
    pub lab: Option<lab::LabSpec>,
}

impl Plan {
    /// What a report page says of this plan.
    pub fn file_facts(&self) -> crate::report::html::PlanFile {
        crate::report::html::PlanFile {
            name: self.name.clone(),
            description: self.description.clone(),
            path: self.path.display().to_string(),
            seed: self.seed,
            seed_given: self.seed_given,
            order: self.order.name(),
            repeats: self.repeats,
            warmup: self.warmup,
            arms: self.arms.clone(),
            cells: self.cells.clone(),
        }
    }
}

impl Plan {
    /// Counted (non-warm-up) runs.
    pub fn counted(&self) -> usize {
        self.runs.iter().filter(|r| !r.warmup).count()
    }
    /// Estimated seconds of the runs not in `done`.
    pub fn remaining_seconds(&self, done: &HashSet<String>) -> f64 {
        self.runs
            .iter()
            .filter(|r| !done.contains(&r.cell_key))
            .map(|r| r.est_seconds)
            .sum()
    }
}

/// Why an executor could not do its part (a whole line: the store is
/// unreadable, a run's arguments do not parse, an arm was not built).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ExecError(pub String);

impl From<String> for ExecError {
    fn from(s: String) -> ExecError {
        ExecError(s)
    }
}

/// The callback seam: the store says what is done, the runner makes runs.
pub trait Executor {
    /// The cell keys of every run the store holds as completed for this plan.
    fn completed(&mut self, plan: &str) -> Result<HashSet<String>, ExecError>;
    /// Makes one run (`dbio run` with `run.args`) and stores it with
    /// plan.name, run.variable, run.cell_key and run.warmup.
    fn run(&mut self, run: &PlannedRun, plan: &Plan) -> Result<RunStatus, ExecError>;
    /// Records a step that ran (whether it succeeded or not).
    fn step(&mut self, _record: &StepRecord, _plan: &Plan) -> Result<(), ExecError> {
        Ok(())
    }
    /// Where the plan is: `done` of `total` runs done (or failed), about
    /// `eta_s` seconds left; told before each run and at the end.
    fn progress(&mut self, _plan: &Plan, _done: usize, _eta_s: f64) {}
}

/// How one run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunStatus {
    /// Stored as completed: never run again for this plan.
    Completed,
    /// Stopped by Ctrl-C: the plan stops; the run is made again on resume.
    Interrupted,
    /// Failed (I/O error, no space...): see `on_failure`.
    Failed(String),
}

/// Why a plan could not be loaded or did not finish.
#[derive(Debug)]
pub enum PlanError {
    /// The file could not be read.
    Read {
        path: String,
        source: std::io::Error,
    },
    /// Bad input, located: `FILE:LINE: KEY: MESSAGE` on one line.
    Invalid {
        file: String,
        line: usize,
        /// `[workload] bs`, `[variables.XFS] target`, `repeats`; empty for
        /// TOML syntax errors.
        key: String,
        message: String,
    },
    /// A step exited non-zero (or could not start): the plan stopped.
    Step {
        record: Box<StepRecord>,
        /// The run the step was for.
        before: String,
    },
    /// A run failed and `on_failure` is `stop`.
    RunFailed { cell_key: String, message: String },
    /// The executor could not do its part (e.g. the store is unreadable).
    Executor(String),
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::Read { path, source } => write!(f, "cannot read {path}: {source}"),
            PlanError::Invalid {
                file,
                line,
                key,
                message,
            } => {
                if key.is_empty() {
                    write!(f, "{file}:{line}: {message}")
                } else {
                    write!(f, "{file}:{line}: {key}: {message}")
                }
            }
            PlanError::Step { record, before } => {
                write!(
                    f,
                    "step {} `{}` {} before run {before}; the plan stopped (run it again to continue from there)",
                    record.when.key(),
                    record.command,
                    record.outcome()
                )?;
                let output = record.output_tail(20);
                if !output.is_empty() {
                    write!(f, "\n{output}")?;
                }
                Ok(())
            }
            PlanError::RunFailed { cell_key, message } => write!(
                f,
                "run {cell_key} failed: {message}; the plan stopped (run it again to retry, or set on_failure = \"continue\")"
            ),
            PlanError::Executor(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for PlanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlanError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads, validates, expands and orders a plan file. Nothing runs.
pub fn load(path: &Path) -> Result<Plan, PlanError> {
    let text = std::fs::read_to_string(path).map_err(|source| PlanError::Read {
        path: path.display().to_string(),
        source,
    })?;
    load_str(path, &text)
}

/// [`load`] with the text already read (`path` names it in messages).
pub fn load_str(path: &Path, text: &str) -> Result<Plan, PlanError> {
    let src = parse::Src {
        file: path.display().to_string(),
        text,
    };
    let raw = parse::parse(&src)?;
    expand::expand(&src, raw, path)
}
