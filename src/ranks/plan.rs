//! `dbio plan run PLAN --mpi`: every rank walks the same plan in the same
//! order and each of its runs is a run under MPI (`command::run_rank`: one
//! barrier start, rank 0 merges and stores). Only rank 0 touches the store:
//! it decides which runs are done (resume) and tells every rank, and after
//! each run every rank takes rank 0's word for how it ended, so that a run
//! failed on any rank is failed everywhere and every rank goes on (or
//! stops) together.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use super::command::run_rank;
use super::world::{World, abort_on_panic};
use crate::cli::Command;
use crate::commands::CommandError;
use crate::commands::run::{Output, RunMeta};
use crate::environment::Environment;
use crate::harness::Status;
use crate::metrics::{Live, Wanted};
use crate::plan::{self, Executor, Plan, PlannedRun, RunStatus};
use crate::store::Store;

/// Runs the plan at `path` as this rank; rank 0 prints and stores.
pub fn execute(
    path: &Path,
    (db, metrics): (Option<PathBuf>, Wanted),
    open_store: impl FnOnce(Option<PathBuf>) -> Result<Store, CommandError>,
) -> Result<ExitCode, CommandError> {
    let env = Environment::capture();
    let world = World::init(&env.hostname)?;
    abort_on_panic(world.rank, env.hostname.clone());
    let root = world.rank == 0;
    // As for one run (`command::execute`): the error and exit code are
    // rank 0's, the others end with 0 so mpirun does not cut rank 0 short.
    match walk(&world, (path, metrics), env, || open_store(db)) {
        Err(_) if !root => Ok(ExitCode::SUCCESS),
        out => out.map(|()| ExitCode::SUCCESS),
    }
}

fn walk(
    world: &World,
    (path, metrics): (&Path, Wanted),
    env: Environment,
    open: impl FnOnce() -> Result<Store, CommandError>,
) -> Result<(), CommandError> {
    let root = world.rank == 0;
    let plan = world.agree(plan::load(path).map_err(|e| CommandError::Usage(e.to_string())))?;
    world.agree(match plan.lab {
        Some(_) => Err(CommandError::Usage(format!(
            "{}: a plan with a [lab] section does not run under MPI (each host would build its own filesystems); drop --mpi and use dbio lab run",
            path.display()
        ))),
        None => Ok(()),
    })?;
    let live = super::live::start(world, &metrics.or(&plan.metrics))?;
    let store = world.agree(if root { open().map(Some) } else { Ok(None) })?;
    let interrupt = crate::commands::interrupt_flag();
    // The plan stops when the ranks agree that one was interrupted (after
    // each run), never on one rank's own signal: a rank that left the plan
    // alone would leave the others waiting in the next run's first step.
    let stop = AtomicBool::new(false);
    let mut exec = RankExecutor {
        world,
        env,
        store,
        interrupt: &interrupt,
        stop: &stop,
        live,
    };
    let mut stderr = std::io::stderr();
    let progress: Option<&mut dyn std::io::Write> = root.then_some(&mut stderr as _);
    let summary = plan::execute_with(&plan, &mut exec, &stop, progress).map_err(|e| match e {
        plan::PlanError::Invalid { .. } => CommandError::Usage(e.to_string()),
        e => CommandError::Failed(e.to_string()),
    })?;
    if root {
        crate::commands::plan::finish("plan", &summary, "")?;
    }
    Ok(())
}

/// Makes each run of the plan as one rank of an MPI run.
struct RankExecutor<'a> {
    world: &'a World,
    env: Environment,
    /// Rank 0's; `None` on the others.
    store: Option<Store>,
    /// This rank's Ctrl-C / SIGTERM.
    interrupt: &'a AtomicBool,
    /// Set on every rank at once when any rank was interrupted.
    stop: &'a AtomicBool,
    /// This rank's live metrics for the whole plan.
    live: Option<Live>,
}

impl Executor for RankExecutor<'_> {
    fn completed(&mut self, plan: &str) -> Result<HashSet<String>, crate::plan::ExecError> {
        let local = match &self.store {
            Some(s) => {
                crate::commands::plan::completed(s, plan).map_err(|e| CommandError::Failed(e.0))
            }
            None => Ok(HashSet::new()),
        };
        let done = self.world.agree(local).map_err(|e| e.to_string())?;
        let mut keys: Vec<String> = done.into_iter().collect();
        keys.sort();
        let from_root = self.world.root_says(keys.join("\n").as_bytes());
        Ok(String::from_utf8_lossy(&from_root)
            .lines()
            .map(str::to_string)
            .collect())
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
        let mine = match parse(&r.args) {
            Err(e) => RunStatus::Failed(e.to_string()),
            Ok(args) => {
                let out = run_rank(
                    self.world,
                    args,
                    self.env.clone(),
                    &mut self.store,
                    || Err(CommandError::Failed("rank 0 has no store".into())),
                    &meta,
                    Output::Line,
                );
                match out {
                    Ok(None) => RunStatus::Completed,
                    Ok(Some(o)) => match o.status {
                        Status::Completed => RunStatus::Completed,
                        Status::Interrupted => RunStatus::Interrupted,
                        Status::Failed => RunStatus::Failed(o.error.unwrap_or_default()),
                    },
                    Err(CommandError::Interrupted(_)) => RunStatus::Interrupted,
                    Err(e) => RunStatus::Failed(e.to_string()),
                }
            }
        };
        // Rank 0 saw the merged run: its word is every rank's.
        let status = decode(&self.world.root_says(&encode(&mine)));
        let signalled = [u8::from(self.interrupt.load(Ordering::Relaxed))];
        if self.world.all_gather(&signalled).iter().any(|s| s == &[1]) {
            self.stop.store(true, Ordering::Relaxed);
        }
        Ok(status)
    }

    fn progress(&mut self, plan: &Plan, done: usize, eta_s: f64) {
        if let Some(live) = &self.live {
            live.plan_progress(&plan.name, done, plan.runs.len(), eta_s);
        }
    }
}

/// A run of the plan whose options do not parse: clap's one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct BadRunArgs(String);

/// `dbio run ARGS` parsed; every run of a plan is quiet, one line each.
fn parse(args: &[String]) -> Result<crate::options::RunArgs, BadRunArgs> {
    let mut argv = vec!["dbio".to_string(), "run".to_string()];
    argv.extend(args.iter().cloned());
    match crate::cli::try_parse_from(&argv)
        .map_err(|e| BadRunArgs(crate::cli::error_line(&e)))?
        .command
    {
        Command::Run(mut a) => {
            a.quiet = true;
            a.mpi = true;
            Ok(*a)
        }
        _ => unreachable!("argv starts with run"),
    }
}

/// A run's status as bytes sent from rank 0, and back.
fn encode(s: &RunStatus) -> Vec<u8> {
    match s {
        RunStatus::Completed => b"c".to_vec(),
        RunStatus::Interrupted => b"i".to_vec(),
        RunStatus::Failed(m) => [b"f", m.as_bytes()].concat(),
    }
}

fn decode(b: &[u8]) -> RunStatus {
    match b.split_first() {
        Some((b'c', _)) => RunStatus::Completed,
        Some((b'i', _)) => RunStatus::Interrupted,
        Some((_, m)) => RunStatus::Failed(String::from_utf8_lossy(m).into_owned()),
        None => RunStatus::Failed("no word from rank 0".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_survives_the_trip_from_rank_0() {
        for s in [
            RunStatus::Completed,
            RunStatus::Interrupted,
            RunStatus::Failed("rank 1 (vm): disk full".into()),
            RunStatus::Failed(String::new()),
        ] {
            assert_eq!(decode(&encode(&s)), s);
        }
    }
}
