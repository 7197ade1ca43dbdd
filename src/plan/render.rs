//! Text for people: `dbio plan run --dry-run` and `dbio plan status`.

use std::collections::HashSet;
use std::fmt::Write;

use super::exec::pending;
use super::{Plan, RUN_OVERHEAD_S};

/// `45s`, `12m05s`, `3h07m`.
pub fn fmt_duration(seconds: f64) -> String {
    let s = if seconds.is_finite() && seconds > 0.0 {
        seconds.round() as u64
    } else {
        0
    };
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        let m = (s + 30) / 60;
        format!("{}h{:02}m", m / 60, m % 60)
    }
}

/// An argument as a shell would need it.
fn quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c))
    {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn header(plan: &Plan, out: &mut String) {
    let _ = writeln!(out, "plan {} ({})", plan.name, plan.path.display());
    if let Some(d) = &plan.description {
        let _ = writeln!(out, "  {}", d.trim());
    }
    let counted = plan.counted();
    let mut shape = format!(
        "  {} arm(s) ({}) x {} cell(s) x {} repeat(s) = {counted} counted run(s)",
        plan.arms.len(),
        plan.arms.join(", "),
        plan.cells.len(),
        plan.repeats
    );
    if plan.warmup > 0 {
        let _ = write!(
            shape,
            " + {} warm-up(s) per arm = {} runs",
            plan.warmup,
            plan.runs.len()
        );
    }
    let _ = writeln!(out, "{shape}");
    let seed_note = if plan.seed_given {
        String::new()
    } else {
        format!(
            " (from the name; set seed = {} to keep this order if you rename the plan)",
            plan.seed
        )
    };
    let _ = writeln!(
        out,
        "  order {}, seed {}{seed_note}",
        plan.order.name(),
        plan.seed
    );
    for (when, cmds) in [
        ("before each arm", &plan.steps.before_arm),
        ("before each run", &plan.steps.before_run),
    ] {
        for c in cmds {
            let _ = writeln!(out, "  step {when}: {c}");
        }
    }
    for w in &plan.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
}

/// The run list with what is already done and the estimated duration.
pub fn dry_run(plan: &Plan, done: &HashSet<String>) -> String {
    let mut out = String::new();
    header(plan, &mut out);
    let width = plan
        .runs
        .iter()
        .map(|r| r.cell_key.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let _ = writeln!(
        out,
        "{:>5}  {:<7}  {:>6}  {:<width$}  command",
        "#", "kind", "est", "cell key"
    );
    for r in &plan.runs {
        let kind = if done.contains(&r.cell_key) {
            "done"
        } else if r.warmup {
            "warm-up"
        } else {
            "run"
        };
        let args: Vec<String> = r.args.iter().map(|a| quote(a)).collect();
        let _ = writeln!(
            out,
            "{:>5}  {kind:<7}  {:>6}  {:<width$}  dbio run {}",
            r.index + 1,
            fmt_duration(r.est_seconds),
            r.cell_key,
            args.join(" ")
        );
    }
    let left = pending(plan, done);
    let _ = writeln!(
        out,
        "{} of {} run(s) to make, {} already done; estimated {} (ramp + time + {RUN_OVERHEAD_S:.0} s per run, plus laying out new targets at an assumed 500 MiB/s)",
        left.len(),
        plan.runs.len(),
        plan.runs.len() - left.len(),
        fmt_duration(plan.remaining_seconds(done))
    );
    out
}

/// Completed repeats per cell and arm, and what is left.
pub fn status(plan: &Plan, done: &HashSet<String>) -> String {
    let mut out = String::new();
    header(plan, &mut out);
    let counted_done = plan
        .runs
        .iter()
        .filter(|r| !r.warmup && done.contains(&r.cell_key))
        .count();
    let warm_total = plan.runs.iter().filter(|r| r.warmup).count();
    let warm_done = plan
        .runs
        .iter()
        .filter(|r| r.warmup && done.contains(&r.cell_key))
        .count();
    let left = pending(plan, done).len();
    let _ = writeln!(
        out,
        "completed: {counted_done} of {} counted run(s), {warm_done} of {warm_total} warm-up(s); {left} run(s) left, estimated {}",
        plan.counted(),
        fmt_duration(plan.remaining_seconds(done))
    );
    let cell_w = plan.cells.iter().map(|c| c.len()).max().unwrap_or(4).max(4);
    let mut line = format!("{:<cell_w$}", "cell");
    let col_w: Vec<usize> = plan.arms.iter().map(|a| a.len().max(7)).collect();
    for (a, w) in plan.arms.iter().zip(&col_w) {
        let _ = write!(line, "  {a:>w$}");
    }
    let _ = writeln!(out, "{}", line.trim_end());
    for cell in &plan.cells {
        let label = if cell.is_empty() { "(all)" } else { cell };
        let mut line = format!("{label:<cell_w$}");
        for (arm, w) in plan.arms.iter().zip(&col_w) {
            let runs = plan
                .runs
                .iter()
                .filter(|r| !r.warmup && &r.variable == arm && &r.cell == cell);
            let (n, d) = runs.fold((0, 0), |(n, d), r| {
                (n + 1, d + usize::from(done.contains(&r.cell_key)))
            });
            let _ = write!(line, "  {:>w$}", format!("{d}/{n}"));
        }
        let _ = writeln!(out, "{line}");
    }
    let keys: HashSet<&str> = plan.runs.iter().map(|r| r.cell_key.as_str()).collect();
    let stale = done.iter().filter(|k| !keys.contains(k.as_str())).count();
    if stale > 0 {
        let _ = writeln!(
            out,
            "note: {stale} completed run(s) stored for plan {} are not in this plan any more (the file changed)",
            plan.name
        );
    }
    out
}
