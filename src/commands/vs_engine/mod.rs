//! `dbio lab vs-engine`: the model against its engines in one command.
//! The options become a plan (`plan::vs_engine`: a model and an engine arm
//! per paired flavor), run by the lab (a filesystem per arm over a
//! direct-io loop device) or, with `--target`, by the plan executor in a
//! directory; then the stored runs of the plan become the table
//! (`report::vs_engine`). Running it again resumes; `--report-only` makes
//! no run.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use toml::Value;

use super::CommandError;
use super::run::Output;
use crate::cli::vs_engine::{LayoutArg, TableFormat, VsEngineArgs};
use crate::document::Report;
use crate::plan::vs_engine::{Layout, Spec, Storage};
use crate::plan::{self, FsKind};
use crate::report::vs_engine::{
    self, MIN_RUNS, Measured, Pair, RunFacts, VsEngine, flavor_name, pair_of,
};
use crate::store::{RunFilter, Store};

mod estimate;
mod findings;
mod window;

use findings::{arm_options, command_line, write_findings};

/// Options the command sets itself, and the option to use instead.
const OWN: &[(&str, &str)] = &[
    ("workload", "the arms' workloads come from --flavor"),
    ("flavor", "use --flavor"),
    ("bs", "each pair uses its engine's page size"),
    ("target", "use --target or the lab's filesystems"),
    ("destroy_device", "the runs use filesystems"),
    ("schemas", "use --layout"),
    ("threads_per_schema", "use --sessions and --layout"),
    ("sessions", "use --sessions"),
    ("update_pct", "use --update-pct"),
    ("time", "use --time"),
    ("ramp", "use --ramp"),
    ("scale", "use --scale"),
    ("cache", "use --cache"),
    ("memory", "use --memory"),
    ("pg_memory", "use --memory"),
    ("mysql_memory", "use --memory"),
    ("window", "use --window"),
];

fn usage(msg: String) -> anyhow::Error {
    CommandError::Usage(msg).into()
}

/// The plan's name: it becomes a directory name under the image directory.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
        && !name.starts_with('.');
    if ok {
        return Ok(());
    }
    Err(usage(format!(
        "--name {}: use 1 to 64 letters, digits and _ . + - (not starting with .)",
        crate::terminal::quote(name)
    )))
}

/// `--set KEY=VALUE` as a plan's `[workload]` entry.
fn set_entry(kv: &str) -> anyhow::Result<(String, Value)> {
    let Some((key, value)) = kv.split_once('=') else {
        return Err(usage(format!(
            "--set {}: give KEY=VALUE, e.g. --set work_unit=64",
            crate::terminal::quote(kv)
        )));
    };
    let key = key.trim().replace('-', "_");
    if let Some((_, instead)) = OWN.iter().find(|(k, _)| *k == key) {
        return Err(usage(format!(
            "--set {key}: dbio lab vs-engine sets {key} itself ({instead})"
        )));
    }
    let value = match value {
        "true" => Value::Boolean(true),
        "false" => Value::Boolean(false),
        v => v
            .parse::<i64>()
            .map_or_else(|_| Value::String(v.to_string()), Value::Integer),
    };
    Ok((key, value))
}

/// `--arm-set ARM:KEY=VALUE` for one of the plan's arms.
fn arm_entry(s: &str, pairs: &[Pair]) -> anyhow::Result<(String, String, Value)> {
    let arms: Vec<String> = pairs
        .iter()
        .flat_map(|p| {
            [
                plan::vs_engine::model_arm(p),
                plan::vs_engine::engine_arm(p),
            ]
        })
        .collect();
    let Some((arm, kv)) = s.split_once(':') else {
        return Err(usage(format!(
            "--arm-set {}: give ARM:KEY=VALUE, ARM one of {}",
            crate::terminal::quote(s),
            arms.join(", ")
        )));
    };
    if !arms.iter().any(|a| a == arm) {
        return Err(usage(format!(
            "--arm-set {}: no arm {} in this plan (its arms: {})",
            crate::terminal::quote(s),
            crate::terminal::quote(arm),
            arms.join(", ")
        )));
    }
    let (key, value) = set_entry(kv)?;
    Ok((arm.to_string(), key, value))
}

/// The plan the options describe; every refusal one line.
fn spec(a: &VsEngineArgs) -> anyhow::Result<Spec> {
    check_name(&a.name)?;
    if (a.runs as usize) < MIN_RUNS {
        return Err(usage(format!(
            "--runs {}: the ratios' intervals need at least {MIN_RUNS} runs of each arm per cell; give --runs {MIN_RUNS} or more",
            a.runs
        )));
    }
    let flavors = if a.flavor.is_empty() {
        vs_engine::paired_flavors()
    } else {
        let mut out = Vec::new();
        for f in &a.flavor {
            let Some(p) = pair_of(*f) else {
                let with: Vec<&str> = vs_engine::paired_flavors()
                    .iter()
                    .map(|(_, p)| p.flavor)
                    .collect();
                return Err(usage(format!(
                    "--flavor {}: the model's {} flavor has no engine to be held against (flavors with one: {}); drop it",
                    flavor_name(*f),
                    flavor_name(*f),
                    with.join(", ")
                )));
            };
            if !out.iter().any(|(g, _)| g == f) {
                out.push((*f, p));
            }
        }
        out
    };
    let mut shared = vec![
        ("time".to_string(), Value::String(a.time.clone())),
        ("ramp".to_string(), Value::String(a.ramp.clone())),
        ("scale".to_string(), Value::String(a.scale.clone())),
        ("cache".to_string(), Value::String(a.cache.clone())),
    ];
    for kv in &a.set {
        shared.push(set_entry(kv)?);
    }
    let pairs: Vec<Pair> = flavors.into_iter().map(|(_, p)| p).collect();
    // The window's own settings first: an --arm-set of the same key wins.
    let mut per_arm = window::per_arm(a.window, a.cycle_wal, &pairs)?;
    for s in &a.arm_set {
        per_arm.push(arm_entry(s, &pairs)?);
    }
    let storage = match &a.target {
        Some(dir) => Storage::Dir(dir.clone()),
        None => Storage::Lab {
            fs: FsKind::parse(&a.fs).expect("clap checked the value"),
            image_dir: a.image_dir.clone(),
            image_size: a.image_size.clone(),
            mount_dir: a
                .mount_dir
                .clone()
                .unwrap_or_else(|| a.image_dir.join(format!("dbio-lab-{}", a.name))),
        },
    };
    Ok(Spec {
        name: a.name.clone(),
        storage,
        pairs,
        per_arm,
        sessions: a.sessions.clone(),
        update_pcts: a.update_pct.clone(),
        runs: a.runs,
        warmup: a.warmup,
        layout: match a.layout {
            LayoutArg::Shared => Layout::Shared,
            LayoutArg::PerSession => Layout::PerSession,
        },
        shared,
        memory: (a.memory != "none").then(|| a.memory.clone()),
        model_memory: crate::options::table::run_options()
            .iter()
            .any(|o| o.long == "memory"),
    })
}

/// A refusal of the generated plan, named by the option that gave the
/// value (its line in the generated TOML means nothing to the user).
fn plan_error(e: plan::PlanError) -> anyhow::Error {
    let plan::PlanError::Invalid { key, message, .. } = e else {
        return usage(format!("dbio lab vs-engine: {e}"));
    };
    let opt = key.rsplit(' ').next().unwrap_or_default().replace('-', "_");
    let flag = match opt.as_str() {
        "time" | "ramp" | "scale" | "cache" => format!("--{opt}"),
        "pg_memory" | "mysql_memory" | "memory" => "--memory".into(),
        "image_size" => "--image-size".into(),
        "image_dir" => "--image-dir".into(),
        "mount_dir" => "--mount-dir".into(),
        "" => "dbio lab vs-engine".into(),
        o => match arm_of(&key) {
            Some(arm) => format!("--arm-set {arm}:{o}"),
            None => format!("--set {o}"),
        },
    };
    usage(format!("{flag}: {message}"))
}

/// The arm a plan key's section names: `[variables.pg] x`, `[lab.arms.pg] x`.
fn arm_of(key: &str) -> Option<&str> {
    let section = key
        .split(' ')
        .next()?
        .strip_prefix('[')?
        .strip_suffix(']')?;
    section
        .strip_prefix("variables.")
        .or_else(|| section.strip_prefix("lab.arms."))
}

/// Runs `dbio lab vs-engine`.
pub fn execute(
    a: &VsEngineArgs,
    is_root: bool,
    open_store: impl Fn() -> anyhow::Result<Store>,
    interrupt: &AtomicBool,
) -> anyhow::Result<()> {
    let spec = spec(a)?;
    let text = plan::vs_engine::toml(&spec);
    if a.print_plan {
        return super::output::print(&text);
    }
    let label = format!("dbio lab vs-engine --name {}", a.name);
    let plan = plan::load_str(Path::new(&label), &text).map_err(plan_error)?;
    if !a.report_only {
        let done = super::plan::completed(&open_store()?, &plan.name)
            .map_err(|e| CommandError::Failed(e.0))?;
        let restores: Vec<String> = plan
            .lab
            .iter()
            .flat_map(|l| l.arms.iter().filter(|a| a.restore))
            .map(|a| a.name.clone())
            .collect();
        eprintln!("{}", estimate::line(&plan, &done, &restores));
        let wanted = crate::metrics::Wanted::default();
        if plan.lab.is_some() {
            super::lab_run::run_loaded(
                &plan,
                &label,
                (a.dry_run, &wanted, Output::LineOnStderr),
                is_root,
                &open_store,
                interrupt,
            )?;
        } else if a.dry_run {
            let done = super::plan::completed(&open_store()?, &plan.name)
                .map_err(|e| CommandError::Failed(e.0))?;
            return super::output::print(&crate::terminal::text(&plan::dry_run(&plan, &done)));
        } else {
            let how = (&wanted, Output::LineOnStderr);
            super::plan::run_loaded(&plan, &mut open_store()?, how, interrupt)?;
        }
        if a.dry_run {
            return Ok(());
        }
    }
    let (table, facts) = table(&open_store()?, &plan.name)?;
    if let Some(dir) = &a.findings {
        findings::check_runs_match(&spec, &facts)?;
        let cx = vs_engine::Context {
            command: command_line(a, &spec),
            arms: arm_options(&plan, spec.layout),
            runs: &facts,
            per_session: spec.layout == Layout::PerSession,
        };
        write_findings(dir, &vs_engine::findings(&table, &cx))?;
    }
    let out = match a.format {
        TableFormat::Text => vs_engine::text(&table),
        TableFormat::Markdown => vs_engine::markdown(&table),
        TableFormat::Json => vs_engine::json(&table),
    };
    super::output::print(&out)
}

/// The table of the plan's completed, counted runs, and their facts.
fn table(store: &Store, plan: &str) -> anyhow::Result<(VsEngine, Vec<RunFacts>)> {
    let filter = RunFilter {
        plan: Some(plan.to_string()),
        ..Default::default()
    };
    let rows = store
        .list(&filter)
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    let mut measured = Vec::new();
    let mut facts = Vec::new();
    let mut left_out = Vec::new();
    for row in rows.iter().filter(|r| r.status == "completed" && !r.warmup) {
        let run = store
            .get(row.id)
            .map_err(|e| CommandError::Failed(e.to_string()))?;
        let what = format!(
            "run {} ({})",
            row.id,
            row.variable.as_deref().unwrap_or("-")
        );
        match Report::from_stored(&run.report) {
            Ok(r) => match Measured::of(&r) {
                Ok(m) => {
                    let arm = row.variable.as_deref().unwrap_or("-");
                    facts
                        .push(RunFacts::of(row.id, arm, &r, &m).with_environment(&run.environment));
                    measured.push((what, m));
                }
                Err(why) => left_out.push(format!("{what}: {why}")),
            },
            Err(e) => left_out.push(format!("{what}: its document does not read: {e}")),
        }
    }
    Ok((VsEngine::build(plan, &measured, left_out), facts))
}
