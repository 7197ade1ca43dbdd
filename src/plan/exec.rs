//! Executing a plan: skip what the store has, run the steps, hand each run to
//! the [`Executor`], stop on Ctrl-C, a failed step or (by default) a failed
//! run, and show progress with an ETA.

use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::render::fmt_duration;
use super::{Executor, OnFailure, Plan, PlanError, PlannedRun, RunStatus};

/// When a step runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepWhen {
    BeforeArm,
    BeforeRun,
}

impl StepWhen {
    /// The plan key (`before_run`).
    pub fn key(self) -> &'static str {
        match self {
            StepWhen::BeforeArm => "before_arm",
            StepWhen::BeforeRun => "before_run",
        }
    }
}

/// A step that ran: what, for which run, and how it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRecord {
    pub when: StepWhen,
    pub command: String,
    /// The cell key of the run it preceded.
    pub before: String,
    pub variable: String,
    /// The exit code; None when killed by a signal or not started.
    pub exit_code: Option<i32>,
    /// The signal that killed it.
    pub signal: Option<i32>,
    /// Why it could not start (sh missing...).
    pub spawn_error: Option<String>,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

impl StepRecord {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// `exited with status 0`, `failed with exit status 3`, `was killed by signal 9`.
    pub fn outcome(&self) -> String {
        match (&self.spawn_error, self.exit_code, self.signal) {
            (Some(e), _, _) => format!("could not start: {e}"),
            (None, Some(0), _) => "exited with status 0".into(),
            (None, Some(c), _) => format!("failed with exit status {c}"),
            (None, None, Some(s)) => format!("was killed by signal {s}"),
            (None, None, None) => "ended without a status".into(),
        }
    }

    /// The last `max` lines of what it printed (stdout then stderr), indented.
    pub fn output_tail(&self, max: usize) -> String {
        let mut lines: Vec<&str> = self
            .stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|l| !l.trim().is_empty())
            .collect();
        let cut = lines.len().saturating_sub(max);
        let mut out = String::new();
        if cut > 0 {
            out.push_str(&format!("  ... ({cut} earlier lines)\n"));
        }
        lines.drain(..cut);
        out.push_str(
            &lines
                .iter()
                .map(|l| format!("  | {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        out
    }
}

/// What an invocation of [`execute`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub plan: String,
    pub seed: u64,
    /// Runs in the plan (counted and warm-up).
    pub total: usize,
    /// Runs skipped because the store had them completed.
    pub skipped: usize,
    /// Runs completed by this invocation.
    pub completed: usize,
    /// Runs that failed (cell key, message); they run again next time.
    pub failed: Vec<(String, String)>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Runs still to do (not completed) when it returned.
    pub remaining: usize,
    /// Every step that ran, in order.
    pub steps: Vec<StepRecord>,
    pub seconds: f64,
}

/// Executes a plan, with one plain progress line per run on stderr: on a
/// terminal and just as well in a log or CI, where the run count, the
/// elapsed time and the ETA matter most.
pub fn execute(
    plan: &Plan,
    exec: &mut dyn Executor,
    interrupt: &AtomicBool,
) -> Result<Summary, PlanError> {
    execute_with(plan, exec, interrupt, Some(&mut std::io::stderr()))
}

/// [`execute`] with progress lines written to `progress` (None: silent).
pub fn execute_with(
    plan: &Plan,
    exec: &mut dyn Executor,
    interrupt: &AtomicBool,
    mut progress: Option<&mut dyn Write>,
) -> Result<Summary, PlanError> {
    let started = Instant::now();
    let done = exec
        .completed(&plan.name)
        .map_err(|e| PlanError::Executor(e.0))?;
    let todo: Vec<&PlannedRun> = plan
        .runs
        .iter()
        .filter(|r| !done.contains(&r.cell_key))
        .collect();
    let mut summary = Summary {
        plan: plan.name.clone(),
        seed: plan.seed,
        total: plan.runs.len(),
        skipped: plan.runs.len() - todo.len(),
        remaining: todo.len(),
        ..Summary::default()
    };
    let mut eta = Eta::new(todo.iter().map(|r| r.est_seconds).sum());
    let mut prev_arm: Option<&str> = None;
    for run in todo {
        if interrupt.load(Ordering::Relaxed) {
            summary.interrupted = true;
            break;
        }
        let new_arm = prev_arm != Some(run.variable.as_str());
        run_steps(plan, run, new_arm, exec, &mut summary, interrupt)?;
        if summary.interrupted || interrupt.load(Ordering::Relaxed) {
            summary.interrupted = true;
            break;
        }
        if let Some(out) = progress.as_mut() {
            progress_line(out, plan, run, &summary, started, &eta);
        }
        let done = summary.skipped + summary.completed + summary.failed.len();
        exec.progress(plan, done, eta.remaining());
        let t = Instant::now();
        let status = exec.run(run, plan).map_err(|e| PlanError::Executor(e.0))?;
        eta.ran(run.est_seconds, t.elapsed().as_secs_f64());
        prev_arm = Some(run.variable.as_str());
        match status {
            RunStatus::Completed => {
                summary.completed += 1;
                summary.remaining -= 1;
            }
            RunStatus::Interrupted => {
                summary.interrupted = true;
                break;
            }
            RunStatus::Failed(message) => {
                summary.failed.push((run.cell_key.clone(), message.clone()));
                if plan.on_failure == OnFailure::Stop {
                    return Err(PlanError::RunFailed {
                        cell_key: run.cell_key.clone(),
                        message,
                    });
                }
            }
        }
    }
    summary.seconds = started.elapsed().as_secs_f64();
    let done = summary.skipped + summary.completed + summary.failed.len();
    exec.progress(plan, done, eta.remaining());
    if let Some(out) = progress.as_mut() {
        let _ = writeln!(out, "dbio plan {}: {}", plan.name, summary_line(&summary));
    }
    Ok(summary)
}

/// The plan's steps before `run` (`before_arm` too when it starts a new
/// arm), each recorded; a failed step stops the plan, unless Ctrl-C reached
/// it too (then the summary says interrupted).
fn run_steps(
    plan: &Plan,
    run: &PlannedRun,
    new_arm: bool,
    exec: &mut dyn Executor,
    summary: &mut Summary,
    interrupt: &AtomicBool,
) -> Result<(), PlanError> {
    let mut steps: Vec<(StepWhen, &String)> = Vec::new();
    if new_arm {
        steps.extend(
            plan.steps
                .before_arm
                .iter()
                .map(|c| (StepWhen::BeforeArm, c)),
        );
    }
    steps.extend(
        plan.steps
            .before_run
            .iter()
            .map(|c| (StepWhen::BeforeRun, c)),
    );
    for (when, command) in steps {
        let record = run_step(plan, run, when, command);
        exec.step(&record, plan)
            .map_err(|e| PlanError::Executor(e.0))?;
        summary.steps.push(record.clone());
        if !record.success() {
            if interrupt.load(Ordering::Relaxed) {
                // Ctrl-C reached the step too: an interruption, not a failure.
                summary.interrupted = true;
                return Ok(());
            }
            return Err(PlanError::Step {
                record: Box::new(record),
                before: run.cell_key.clone(),
            });
        }
    }
    Ok(())
}

/// `dbio plan NAME: run 3/12 CELL (2 done, elapsed 1m, ETA 9m)`.
fn progress_line(
    out: &mut dyn Write,
    plan: &Plan,
    run: &PlannedRun,
    summary: &Summary,
    started: Instant,
    eta: &Eta,
) {
    let n = summary.skipped + summary.completed + summary.failed.len() + 1;
    let _ = writeln!(
        out,
        "dbio plan {}: run {n}/{} {}{} ({} done, elapsed {}, ETA {})",
        plan.name,
        plan.runs.len(),
        run.cell_key,
        if run.warmup { " (warm-up)" } else { "" },
        summary.skipped + summary.completed,
        fmt_duration(started.elapsed().as_secs_f64()),
        fmt_duration(eta.remaining())
    );
}

/// `12 runs completed, 1 failed, 30 left (interrupted)`.
pub(crate) fn summary_line(s: &Summary) -> String {
    let mut line = format!(
        "{} run(s) completed now, {} earlier, {} left",
        s.completed, s.skipped, s.remaining
    );
    if !s.failed.is_empty() {
        line.push_str(&format!(", {} failed", s.failed.len()));
    }
    if s.interrupted {
        line.push_str(" (interrupted: run the plan again to continue)");
    }
    line
}

/// The remaining estimate, scaled by how long runs really took against
/// their estimates so far.
struct Eta {
    left_est: f64,
    est_done: f64,
    actual_done: f64,
}

impl Eta {
    fn new(total_est: f64) -> Self {
        Eta {
            left_est: total_est,
            est_done: 0.0,
            actual_done: 0.0,
        }
    }
    fn ran(&mut self, est: f64, actual: f64) {
        self.left_est = (self.left_est - est).max(0.0);
        self.est_done += est;
        self.actual_done += actual;
    }
    fn remaining(&self) -> f64 {
        let ratio = if self.est_done > 0.0 && self.actual_done > 0.0 {
            (self.actual_done / self.est_done).clamp(0.25, 4.0)
        } else {
            1.0
        };
        self.left_est * ratio
    }
}

/// Runs one step through `sh -c`, stdin closed, output captured, with the
/// run it precedes in the environment.
fn run_step(plan: &Plan, run: &PlannedRun, when: StepWhen, command: &str) -> StepRecord {
    let t = Instant::now();
    let target = target_of(&run.args).unwrap_or_default();
    let result = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .env("DBIO_PLAN", &plan.name)
        .env("DBIO_VARIABLE", &run.variable)
        .env("DBIO_CELL", &run.cell)
        .env("DBIO_CELL_KEY", &run.cell_key)
        .env("DBIO_WARMUP", if run.warmup { "1" } else { "0" })
        .env("DBIO_TARGET", target)
        .env("DBIO_RUN_INDEX", (run.index + 1).to_string())
        .output();
    let mut record = StepRecord {
        when,
        command: command.to_string(),
        before: run.cell_key.clone(),
        variable: run.variable.clone(),
        exit_code: None,
        signal: None,
        spawn_error: None,
        stdout: String::new(),
        stderr: String::new(),
        seconds: 0.0,
    };
    match result {
        Ok(out) => {
            use std::os::unix::process::ExitStatusExt;
            record.exit_code = out.status.code();
            record.signal = out.status.signal();
            record.stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            record.stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        }
        Err(e) => record.spawn_error = Some(format!("sh: {e}")),
    }
    record.seconds = t.elapsed().as_secs_f64();
    record
}

/// The value of `--target` in an argument list (the default when absent).
pub(crate) fn target_of(args: &[String]) -> Option<String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--target" {
            return it.next().cloned();
        }
        if let Some(v) = a.strip_prefix("--target=") {
            return Some(v.to_string());
        }
    }
    Some(crate::options::DEFAULT_TARGET.to_string())
}

/// The runs of a plan not in `done`, for callers that want them.
pub(crate) fn pending<'a>(plan: &'a Plan, done: &HashSet<String>) -> Vec<&'a PlannedRun> {
    plan.runs
        .iter()
        .filter(|r| !done.contains(&r.cell_key))
        .collect()
}
