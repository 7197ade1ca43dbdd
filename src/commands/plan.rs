//! `dbio plan run|status`: a plan's runs made one after another through the
//! same path as `dbio run`, kept in the store with their plan, variable and
//! cell key so that running the plan again continues where it stopped.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use super::CommandError;
use super::run::{self, Output, RunMeta};
use crate::cli::Command;
use crate::cli::plan::PlanCommand;
use crate::harness::Status;
use crate::plan::{self, Executor, Plan, PlannedRun, RunStatus, Summary};
use crate::samplers::progress::Progress;
use crate::store::{RunFilter, Store};

/// Makes a plan's runs in this process and saves them in the store.
pub struct StoreExecutor<'a> {
    pub store: &'a mut Store,
    pub interrupt: &'a AtomicBool,
    /// Live metrics for the whole plan.
    pub live: Option<crate::metrics::Live>,
    /// Where each run's line goes.
    pub output: Output,
}

impl Executor for StoreExecutor<'_> {
    fn completed(&mut self, plan: &str) -> Result<HashSet<String>, crate::plan::ExecError> {
        completed(self.store, plan)
    }

    fn run(&mut self, r: &PlannedRun, plan: &Plan) -> Result<RunStatus, crate::plan::ExecError> {
        let meta = RunMeta {
            plan: Some(plan.name.clone()),
            variable: Some(r.variable.clone()),
            cell_key: Some(r.cell_key.clone()),
            warmup: r.warmup,
            live: self.live.clone(),
            ..Default::default()
        };
        run_args(self.store, self.interrupt, &r.args, (&meta, self.output))
    }

    fn progress(&mut self, plan: &Plan, done: usize, eta_s: f64) {
        if let Some(live) = &self.live {
            live.plan_progress(&plan.name, done, plan.runs.len(), eta_s);
        }
    }
}

/// Makes one run of a plan: `dbio run ARGS`, saved with `meta`.
pub fn run_args(
    store: &mut Store,
    interrupt: &AtomicBool,
    args: &[String],
    (meta, output): (&RunMeta, Output),
) -> Result<RunStatus, crate::plan::ExecError> {
    let mut argv = vec!["dbio".to_string(), "run".to_string()];
    argv.extend(args.iter().cloned());
    let cfg = match crate::cli::try_parse_from(&argv)
        .map_err(|e| crate::cli::error_line(&e))?
        .command
    {
        Command::Run(a) => (*a).into_config().map_err(String::from)?,
        _ => unreachable!("argv starts with run"),
    };
    // Refused before anything is written (a full filesystem, too little memory).
    if let Err(e) = crate::preflight::check(&cfg) {
        return Ok(RunStatus::Failed(e.to_string()));
    }
    match run::run(&cfg, (output, true), &Progress::Off, store, meta, interrupt) {
        Ok(o) => Ok(match o.status {
            Status::Completed => RunStatus::Completed,
            Status::Interrupted => RunStatus::Interrupted,
            Status::Failed => RunStatus::Failed(o.error.unwrap_or_default()),
        }),
        Err(CommandError::Interrupted(_)) => Ok(RunStatus::Interrupted),
        Err(e) => Ok(RunStatus::Failed(e.to_string())),
    }
}

/// Cell keys of the plan's runs the store holds as completed.
pub fn completed(store: &Store, plan: &str) -> Result<HashSet<String>, crate::plan::ExecError> {
    let filter = RunFilter {
        plan: Some(plan.to_string()),
        ..Default::default()
    };
    let rows = store.list(&filter).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .filter(|r| r.status == "completed")
        .filter_map(|r| r.cell_key)
        .collect())
}

/// Prints what a plan invocation did (`kind` is `plan` or `lab`, `note`
/// ends the line) and maps an interruption or failed runs to their error.
pub fn finish(kind: &str, summary: &Summary, note: &str) -> Result<(), CommandError> {
    eprintln!(
        "{kind} {}: {} runs completed now, {} already done, {} failed, {} left{note}",
        crate::terminal::field(&summary.plan),
        summary.completed,
        summary.skipped,
        summary.failed.len(),
        summary.remaining
    );
    if summary.interrupted {
        return Err(CommandError::Interrupted(format!(
            "{kind} {} interrupted; run it again to continue",
            summary.plan
        )));
    }
    if let Some((key, msg)) = summary.failed.first() {
        return Err(CommandError::Failed(format!(
            "{} run(s) failed, first: {key}: {msg}",
            summary.failed.len()
        )));
    }
    Ok(())
}

/// Makes the runs of a loaded plan without a `[lab]` that are not done yet.
pub fn run_loaded(
    plan: &Plan,
    store: &mut Store,
    (metrics, output): (&crate::metrics::Wanted, Output),
    interrupt: &AtomicBool,
) -> anyhow::Result<()> {
    store
        .ensure_writable()
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let wanted = metrics.clone().or(&plan.metrics);
    let live = run::start_metrics(&wanted, false)?;
    let mut exec = StoreExecutor {
        store,
        interrupt,
        live,
        output,
    };
    let summary = plan::execute(plan, &mut exec, interrupt).map_err(|e| match e {
        plan::PlanError::Invalid { .. } => CommandError::Usage(e.to_string()),
        e => CommandError::Failed(e.to_string()),
    })?;
    Ok(finish("plan", &summary, "")?)
}

/// Runs `dbio plan ...`.
pub fn execute(cmd: PlanCommand, store: &mut Store, interrupt: &AtomicBool) -> anyhow::Result<()> {
    match cmd {
        PlanCommand::Run {
            plan: path,
            dry_run,
            metrics,
            ..
        } => {
            let plan = plan::load(&path).map_err(|e| CommandError::Usage(e.to_string()))?;
            let done = completed(store, &plan.name).map_err(|e| CommandError::Failed(e.0))?;
            if dry_run {
                let text = plan::dry_run(&plan, &done);
                return super::output::print(&crate::terminal::text(&text));
            }
            if plan.lab.is_some() {
                anyhow::bail!(CommandError::Usage(format!(
                    "{} has a [lab] section: run it with dbio lab run {} (it builds the arms' filesystems first)",
                    path.display(),
                    path.display()
                )));
            }
            run_loaded(&plan, store, (&metrics.wanted(), Output::Line), interrupt)
        }
        PlanCommand::Status { plan: path } => {
            let plan = plan::load(&path).map_err(|e| CommandError::Usage(e.to_string()))?;
            let done = completed(store, &plan.name).map_err(|e| CommandError::Failed(e.0))?;
            super::output::print(&crate::terminal::text(&plan::status(&plan, &done)))
        }
    }
}
