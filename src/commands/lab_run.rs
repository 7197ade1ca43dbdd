//! `dbio lab run PLAN`: the arm loop. Only arms with runs left are built.
//! With `same_device`, arm after arm: make the filesystem, mount, run the
//! arm's runs (in the plan's order), unmount; otherwise every arm gets its
//! own device, all are built first and the plan runs in its own
//! (shuffled) order across them. A guard tears everything down on success,
//! error, panic and Ctrl-C; the state file covers kill -9.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::CommandError;
use super::lab_run_restore::Restorer;
use super::plan::{completed, finish, run_args};
use super::run::RunMeta;
use crate::lab::arm::{Built, build_arm, describe, make_backing, versions};
use crate::lab::cleanup::{self, Guard};
use crate::lab::fs::ToolVersion;
use crate::lab::state::{self, State};
use crate::lab::{LabError, prereq};
use crate::plan::lab::DEVICE_MARKER;
use crate::plan::{self, Executor, FsKind, LabArm, LabSpec, Plan, PlannedRun, RunStatus, Summary};
use crate::store::Store;

pub(super) fn run(
    path: &Path,
    (dry_run, metrics): (bool, &crate::metrics::Wanted),
    is_root: bool,
    open_store: impl FnOnce() -> anyhow::Result<Store>,
    interrupt: &AtomicBool,
) -> anyhow::Result<()> {
    let plan = plan::load(path)
        .map_err(LabError::Plan)
        .map_err(CommandError::from)?;
    if plan.lab.is_none() {
        anyhow::bail!(CommandError::Usage(format!(
            "{} has no [lab] section: run it with dbio plan run, or add [lab] (see docs/lab.md)",
            path.display()
        )));
    }
    let command = format!("lab run {}", path.display());
    let output = super::run::Output::Line;
    run_loaded(
        &plan,
        &command,
        (dry_run, metrics, output),
        is_root,
        open_store,
        interrupt,
    )
}

/// [`run`] with the plan loaded (it has a `[lab]`); `command` is what the
/// state file says made the lab.
pub(super) fn run_loaded(
    plan: &Plan,
    command: &str,
    (dry_run, metrics, output): (bool, &crate::metrics::Wanted, super::run::Output),
    is_root: bool,
    open_store: impl FnOnce() -> anyhow::Result<Store>,
    interrupt: &AtomicBool,
) -> anyhow::Result<()> {
    let Some(lab) = plan.lab.clone() else {
        anyhow::bail!(CommandError::Usage(format!(
            "plan {} has no [lab] section (a dbio bug)",
            plan.name
        )));
    };
    if !dry_run {
        prereq::check_root(is_root, "run").map_err(CommandError::from)?;
    }
    let mut store = open_store()?;
    let done = completed(&store, &plan.name).map_err(|e| CommandError::Failed(e.0))?;
    let arms = pending_arms(plan, &lab, &done);
    if dry_run {
        let text = describe(&lab, &arms) + &plan::dry_run(plan, &done);
        return crate::commands::output::print(&text);
    }
    if arms.is_empty() {
        eprintln!(
            "lab {}: all {} run(s) are complete; nothing to build",
            plan.name,
            plan.runs.len()
        );
        return Ok(());
    }
    prereq::check(plan, &lab, &arms, is_root).map_err(CommandError::from)?;
    // Bound (or refused) before any arm is built.
    let live = super::run::start_metrics(&metrics.clone().or(&plan.metrics), false)?;
    let versions = versions(&arms).map_err(CommandError::from)?;
    // A lab of this plan that died leaves its mounts where this one mounts.
    let dir = state::lab_dir();
    let c = cleanup::cleanup(&dir, Some(&plan.name), false, &mut std::io::stderr())
        .map_err(CommandError::from)?;
    if let Some(l) = c.left.first() {
        anyhow::bail!(CommandError::Usage(format!("lab {}: {l}", plan.name)));
    }
    let st = State::create(command, Some(&plan.name))
        .map_err(|e| LabError::io("create a state file in", &dir, e))
        .map_err(CommandError::from)?;
    eprintln!("lab {}: state file {}", plan.name, st.path().display());
    let mut guard = Guard::new(st);
    let mut exec = LabExecutor {
        store: &mut store,
        interrupt,
        built: HashMap::new(),
        live,
        done_before: 0,
        total: plan.runs.len(),
        output,
        kept: HashMap::new(),
    };
    let result = run_arms(plan, &lab, &arms, &versions, &mut guard, &mut exec);
    let mut summary = guard.finish(result).map_err(CommandError::from)?;
    // Counted from the store: arms that were complete were never built.
    let now = completed(&store, &plan.name).map_err(|e| CommandError::Failed(e.0))?;
    summary.skipped = plan
        .runs
        .iter()
        .filter(|r| done.contains(&r.cell_key))
        .count();
    summary.remaining = plan
        .runs
        .iter()
        .filter(|r| !now.contains(&r.cell_key))
        .count();
    summary.plan = plan.name.clone();
    Ok(finish(
        "lab",
        &summary,
        "; everything the lab made is removed",
    )?)
}

/// The arms with runs left, in the order their first run comes in the plan.
fn pending_arms<'a>(plan: &Plan, lab: &'a LabSpec, done: &HashSet<String>) -> Vec<&'a LabArm> {
    let mut out: Vec<&LabArm> = Vec::new();
    for r in plan.runs.iter().filter(|r| !done.contains(&r.cell_key)) {
        if !out.iter().any(|a| a.name == r.variable)
            && let Some(a) = lab.arms.iter().find(|a| a.name == r.variable)
        {
            out.push(a);
        }
    }
    out
}

fn run_arms(
    plan: &Plan,
    lab: &LabSpec,
    arms: &[&LabArm],
    versions: &HashMap<FsKind, ToolVersion>,
    guard: &mut Guard,
    exec: &mut LabExecutor,
) -> Result<Summary, LabError> {
    let interrupt = exec.interrupt;
    let mut total = Summary::default();
    if lab.same_device {
        let dev = make_backing(guard.state(), plan, lab, 0, "shared")?;
        for (i, arm) in arms.iter().enumerate() {
            if interrupt.load(Ordering::Relaxed) {
                total.interrupted = true;
                break;
            }
            let mark = guard.state().items().len();
            eprintln!(
                "lab {}: building arm {}",
                plan.name,
                crate::terminal::field(&arm.name)
            );
            // Every arm starts from the same state: the arm before wrote
            // this device (and a named device holds whatever it held).
            let discard = lab.discard && (i > 0 || dev.image.is_none());
            let built = build_arm(guard.state(), lab, arm, &dev, versions, discard)?;
            exec.built.insert(arm.name.clone(), built);
            let mut sub = plan.clone();
            sub.runs.retain(|r| r.variable == arm.name);
            // Progress is the whole plan's: every run of the arms not still
            // to come is done (earlier arms, arms complete before).
            let to_come = |r: &&PlannedRun| arms[i..].iter().any(|a| a.name == r.variable);
            exec.done_before = plan.runs.iter().filter(|r| !to_come(r)).count();
            let s = if interrupt.load(Ordering::Relaxed) {
                Summary {
                    interrupted: true,
                    ..Summary::default()
                }
            } else {
                plan::execute(&sub, exec, interrupt).map_err(|e| LabError::Failed(e.to_string()))?
            };
            cleanup::undo_to(guard.state(), mark, &mut std::io::stderr())?;
            add(&mut total, &s);
            if s.interrupted {
                break;
            }
        }
        return Ok(total);
    }
    for arm in arms {
        if interrupt.load(Ordering::Relaxed) {
            return Ok(Summary {
                interrupted: true,
                remaining: plan.runs.len(),
                ..Summary::default()
            });
        }
        let index = lab
            .arms
            .iter()
            .position(|a| a.name == arm.name)
            .unwrap_or(0);
        eprintln!(
            "lab {}: building arm {}",
            plan.name,
            crate::terminal::field(&arm.name)
        );
        let dev = make_backing(guard.state(), plan, lab, index, &arm.name)?;
        let discard = lab.discard && dev.image.is_none();
        let built = build_arm(guard.state(), lab, arm, &dev, versions, discard)?;
        exec.built.insert(arm.name.clone(), built);
    }
    plan::execute(plan, exec, interrupt).map_err(|e| LabError::Failed(e.to_string()))
}

fn add(total: &mut Summary, s: &Summary) {
    total.completed += s.completed;
    total.skipped += s.skipped;
    total.failed.extend(s.failed.iter().cloned());
    total.interrupted |= s.interrupted;
}

/// Makes the plan's runs on the arms the lab built.
struct LabExecutor<'a> {
    store: &'a mut Store,
    interrupt: &'a AtomicBool,
    built: HashMap<String, Built>,
    /// Live metrics for the whole lab (`--metrics-listen`, `--metrics-textfile`).
    live: Option<crate::metrics::Live>,
    /// Runs of the whole plan done before the (one arm's) plan now executed.
    done_before: usize,
    /// The whole plan's runs (an arm's plan holds only its own).
    total: usize,
    /// Where each run's line goes.
    output: super::run::Output,
    /// The loaded state kept for each target of a `restore` arm.
    kept: HashMap<std::path::PathBuf, crate::lab::snapshot::Fingerprint>,
}

impl Executor for LabExecutor<'_> {
    fn completed(&mut self, plan: &str) -> Result<HashSet<String>, crate::plan::ExecError> {
        completed(self.store, plan)
    }

    fn run(&mut self, r: &PlannedRun, plan: &Plan) -> Result<RunStatus, crate::plan::ExecError> {
        let Some(built) = self.built.get(&r.variable) else {
            return Err(format!("arm {} was not built (a dbio bug)", r.variable).into());
        };
        let marker = format!("{DEVICE_MARKER}{}", r.variable);
        let device = built.device.display().to_string();
        let args: Vec<String> = r
            .args
            .iter()
            .map(|a| {
                if *a == marker {
                    device.clone()
                } else {
                    a.clone()
                }
            })
            .collect();
        let (tags, mut info) = (built.tags.clone(), built.info.clone());
        let arm = plan
            .lab
            .as_ref()
            .and_then(|l| l.arms.iter().find(|a| a.name == r.variable));
        if let Some(arm) = arm.filter(|a| a.restore) {
            let mut restorer = Restorer {
                store: self.store,
                interrupt: self.interrupt,
                output: self.output,
                kept: &mut self.kept,
            };
            let how = (args.as_slice(), arm.mountpoint.as_path());
            if let Err(status) = restorer.before_run(r, &plan.name, how, &mut info)? {
                return Ok(status);
            }
        }
        let meta = RunMeta {
            plan: Some(plan.name.clone()),
            variable: Some(r.variable.clone()),
            cell_key: Some(r.cell_key.clone()),
            warmup: r.warmup,
            tags,
            lab: Some(info),
            live: self.live.clone(),
            capture: false,
        };
        run_args(self.store, self.interrupt, &args, (&meta, self.output))
    }

    fn progress(&mut self, plan: &Plan, done: usize, eta_s: f64) {
        let Some(live) = &self.live else { return };
        let done_all = self.done_before + done;
        // The arm's ETA, scaled to the runs left in the whole plan.
        let left = plan.runs.len().saturating_sub(done);
        let left_all = self.total.saturating_sub(done_all);
        let eta_all = match left {
            0 => 0.0,
            n => eta_s * left_all as f64 / n as f64,
        };
        live.plan_progress(&plan.name, done_all, self.total, eta_all);
    }
}
