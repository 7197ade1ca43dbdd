//! How long the runs still to make will take, printed before they start
//! (`--dry-run` too): each run is its ramp and window (95% of a run's wall
//! time here before restoring: docs/lab.md, "What a run costs") and a little between runs;
//! a window over whole checkpoint cycles ends at the last cycle's
//! checkpoint, not at `--time`; an engine's run first has its loaded data
//! restored; each arm's data is made once per command.

use std::collections::HashSet;

use crate::plan::{Plan, PlannedRun};
use crate::workload::db::cycle::CycleWindow;

/// Seconds between one run's window and the next run's start: the server
/// stopped and started, the sessions connected (0.3–5 s measured).
const BETWEEN_S: f64 = 2.0;
/// Seconds restoring an engine's loaded data before a run (about 600 MiB
/// for the default scale: 2.3–11.8 s measured at load average 100, less
/// on an idle host: an assumption).
const RESTORE_S: f64 = 4.0;
/// Seconds a checkpoint cycle of 16 MiB of WAL lasts with updates
/// (4–27 s for three measured at 25%, fewer at 50%).
const CYCLE_S_PER_16M: f64 = 6.0;
/// Seconds making an arm's data once per command (layout, initdb and the
/// load, the copy kept: 15–60 s measured).
const LOAD_S: f64 = 60.0;

/// The value after `flag` in a run's arguments.
fn arg<'a>(r: &'a PlannedRun, flag: &str) -> Option<&'a str> {
    let i = r.args.iter().position(|a| a == flag)?;
    r.args.get(i + 1).map(String::as_str)
}

fn seconds(r: &PlannedRun, flag: &str) -> f64 {
    arg(r, flag)
        .and_then(|v| crate::units::parse_seconds(v).ok())
        .unwrap_or(0.0)
}

/// A run's window: `--time`, or its cycles where updates make them.
fn window_s(r: &PlannedRun) -> (f64, bool) {
    let time = seconds(r, "--time");
    let updates = arg(r, "--update-pct").is_some_and(|u| u != "0");
    let cycles = arg(r, "--window")
        .and_then(|w| CycleWindow::parse(w).ok())
        .and_then(CycleWindow::cycles);
    let cycle_mib = arg(r, "--redo-file-size")
        .or_else(|| arg(r, "--pg-set").and_then(|s| s.strip_prefix("max_wal_size=")))
        .and_then(|v| crate::units::parse_size(v).ok())
        .map_or(16.0, |b| (b >> 20) as f64);
    // PostgreSQL's max_wal_size is about 1.9 cycles (plan's window.rs).
    let cycle_mib = match arg(r, "--pg-set") {
        Some(_) => (cycle_mib / 1.9).max(16.0),
        None => cycle_mib,
    };
    match cycles {
        Some(n) if updates => {
            let s = f64::from(n) * CYCLE_S_PER_16M * cycle_mib / 16.0;
            (s.min(time), true)
        }
        _ => (time, false),
    }
}

/// One line: the runs left and about how long they take.
pub fn line(plan: &Plan, done: &HashSet<String>, restores: &[String]) -> String {
    let todo: Vec<&PlannedRun> = plan
        .runs
        .iter()
        .filter(|r| !done.contains(&r.cell_key))
        .collect();
    if todo.is_empty() {
        return format!("dbio lab vs-engine: all {} runs are made", plan.runs.len());
    }
    let (mut total, mut timed, mut cycled, mut cycle_s) = (0.0, 0usize, 0usize, 0.0);
    let mut arms: Vec<&str> = Vec::new();
    for r in &todo {
        let (w, by_cycles) = window_s(r);
        match by_cycles {
            true => (cycled, cycle_s) = (cycled + 1, cycle_s + w),
            false => timed += 1,
        }
        total += seconds(r, "--ramp") + w + BETWEEN_S;
        if restores.contains(&r.variable) {
            total += RESTORE_S;
        }
        if !arms.contains(&r.variable.as_str()) {
            arms.push(&r.variable);
        }
    }
    total += LOAD_S * arms.len() as f64;
    let first = todo[0];
    let mut what = format!("{timed} windows of --time {} s", seconds(first, "--time"));
    if cycled > 0 {
        what.push_str(&format!(
            ", {cycled} over whole checkpoint cycles (about {:.0} s each: they end at the last cycle's checkpoint)",
            cycle_s / cycled as f64
        ));
    }
    format!(
        "dbio lab vs-engine: {} runs to make (of {}), about {} min: {what}; a {} s ramp and about {BETWEEN_S:.0} s between runs, {RESTORE_S:.0} s more restoring an engine's data; each arm's data made once (about {:.0} min an arm)",
        todo.len(),
        plan.runs.len(),
        (total / 60.0).round(),
        seconds(first, "--ramp"),
        LOAD_S / 60.0
    )
}
