//! `dbio curve`: a driver above single runs. An uncontrolled maximum run
//! (closed loop, the settings as given), then open-loop runs at rates
//! derived from its throughput — fixed percentages of it (`--points`), or
//! the rates a latency-target search probes (`--latency-target`,
//! `curve_search.rs`) — each through `run::run` like a plan's cell, saved
//! as one set: a plan named by `--name` whose variable is the point
//! (`max`, `050%`, or the rate), so `dbio report --plan NAME` (its HTML
//! draws the hockey stick) and `dbio compare` work on it. Then the curve's
//! table on stdout.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use super::CommandError;
use super::curve_search::{Answer, Log, Sample, Search};
use super::run::{self, Output, RunMeta};
use crate::cli::curve::{CurveArgs, LatencyTarget, TargetOp};
use crate::config::{Arrival, Paced, RunConfig, WorkloadConfig};
use crate::document::Report;
use crate::harness::Status;
use crate::report::plan::curve::{CurvePoint, closed_rate, table};
use crate::samplers::progress::Progress;
use crate::store::{RunFilter, Store};

/// What a workload's rate (`RunConfig::rate_iops`) counts, and so what a
/// curve's points are timed on (`WorkloadConfig::paced`): a raw run's
/// requests (`total.due`, `total.latency`), the model's operations or a
/// server's transactions (`open_loop.operations`). Replay takes no rate:
/// refused in one line.
fn paced(w: &WorkloadConfig) -> Result<Paced, CommandError> {
    w.paced().ok_or_else(|| {
        CommandError::Usage(format!(
            "dbio curve paces its runs with --rate, which --workload {} does not take (it keeps its trace's own times); a curve runs --workload raw, slob, pg or mysql",
            w.name()
        ))
    })
}

/// A target on reads or writes refused up front when the run makes none
/// of them (`read.p99` with `--pattern randwrite`), or when its workload
/// paces whole operations or transactions, whose latency is one figure.
fn judgeable(target: &LatencyTarget, cfg: &RunConfig) -> Result<(), CommandError> {
    let WorkloadConfig::Raw(raw) = &cfg.workload else {
        if target.op == TargetOp::Total {
            return Ok(());
        }
        let unit = cfg.workload.paced().map_or("requests", Paced::name);
        return Err(CommandError::Usage(format!(
            "--latency-target names {} latency, but --workload {} paces {unit}, timed whole: name no kind (e.g. p99=1ms, service.p99=1ms)",
            target.op.name(),
            cfg.workload.name()
        )));
    };
    let none = match target.op {
        TargetOp::Read => raw.read_pct == 0,
        TargetOp::Write => raw.read_pct == 100,
        TargetOp::Total => false,
    };
    if none {
        return Err(CommandError::Usage(format!(
            "--latency-target names {} latency, but --pattern {} makes no {}s; target total (e.g. p99=1ms) or choose a pattern that does",
            target.op.name(),
            raw.pattern.name(),
            target.op.name()
        )));
    }
    Ok(())
}

/// The curve being made: its settings, the store, its points so far.
struct Curve<'a> {
    store: &'a mut Store,
    cfg: RunConfig,
    arrival: Arrival,
    name: String,
    tags: Vec<String>,
    progress: Progress,
    quiet: bool,
    interrupt: &'a AtomicBool,
    /// What the rate counts.
    unit: Paced,
    points: Vec<CurvePoint>,
}

impl Curve<'_> {
    /// One run of the set: closed loop (`rate` None) or at `rate`, saved
    /// with `variable` (its table label `label`); its point kept.
    fn run(
        &mut self,
        variable: &str,
        label: &str,
        rate: Option<u64>,
    ) -> Result<Report, CommandError> {
        let mut cfg = self.cfg.clone();
        cfg.rate_iops = rate;
        cfg.arrival = rate.map(|_| self.arrival);
        let rep = 1 + self.points.iter().filter(|p| p.label == label).count();
        // A probe's repeats draw other offsets and arrivals: independent
        // runs, not the same one again.
        cfg.seed = self.cfg.seed.wrapping_add(rep as u64 - 1);
        let cell_key = match rate {
            Some(r) => format!("{variable}|rate={r}|rep={rep}"),
            None => format!("{variable}|rep={rep}"),
        };
        if !self.quiet {
            let what = rate.map_or("closed loop, the maximum".to_string(), |r| {
                format!("{r}/s, {} arrivals", self.arrival.name())
            });
            eprintln!(
                "curve {}: run {} ({what})",
                self.name,
                self.points.len() + 1
            );
        }
        let meta = RunMeta {
            plan: Some(self.name.clone()),
            variable: Some(variable.to_string()),
            cell_key: Some(cell_key),
            tags: self.tags.clone(),
            ..Default::default()
        };
        let o = run::run(
            &cfg,
            (Output::Line, true),
            &self.progress,
            self.store,
            &meta,
            self.interrupt,
        )
        .map_err(|e| self.stopped(e))?;
        match o.status {
            Status::Completed => {}
            Status::Interrupted => {
                return Err(self.stopped(CommandError::Interrupted(format!(
                    "interrupted during run {}",
                    o.run_id
                ))));
            }
            Status::Failed => {
                return Err(self.stopped(CommandError::Failed(format!(
                    "run {} failed: {}",
                    o.run_id,
                    o.error.unwrap_or_default()
                ))));
            }
        }
        let stored = self.store.get(o.run_id).map_err(|e| {
            CommandError::Failed(format!("run {} was saved but not read back: {e}", o.run_id))
        })?;
        let doc = Report::from_stored(&stored.report)
            .map_err(|e| CommandError::Failed(format!("run {}'s stored document {e}", o.run_id)))?;
        self.points.push(CurvePoint::of(o.run_id, label, &doc));
        Ok(doc)
    }

    /// `e` with the set's name and how many of its runs are stored.
    fn stopped(&self, e: CommandError) -> CommandError {
        let say = |m: String| {
            format!(
                "curve {}: {m}; its {} completed runs are in the store (dbio report --plan {})",
                self.name,
                self.points.len(),
                self.name
            )
        };
        match e {
            CommandError::Usage(m) => CommandError::Usage(say(m)),
            CommandError::Failed(m) => CommandError::Failed(say(m)),
            CommandError::Interrupted(m) => CommandError::Interrupted(say(m)),
            CommandError::Closed => CommandError::Closed,
        }
    }

    /// The closed-loop maximum: its throughput, refused when it is zero.
    fn maximum(&mut self) -> Result<f64, CommandError> {
        let doc = self.run("max", "max", None)?;
        let max = closed_rate(&doc);
        if max < 1.0 {
            return Err(self.stopped(CommandError::Failed(format!(
                "the maximum run completed {max:.2} {} per second: no rate to derive from it",
                self.unit.name()
            ))));
        }
        Ok(max)
    }

    /// Runs at each percentage of `max` in `points`; a rate below one
    /// request (operation, transaction) per second per session is skipped,
    /// saying so.
    fn fixed(&mut self, max: f64, points: &[u8]) -> Result<(), CommandError> {
        for &pct in points {
            let rate = (max * f64::from(pct) / 100.0).round() as u64;
            if rate < u64::from(self.cfg.sessions) {
                eprintln!(
                    "curve {}: {pct}% of {max:.0} {}/s is below one per second per session (--sessions {}): left out",
                    self.name,
                    self.unit.name(),
                    self.cfg.sessions
                );
                continue;
            }
            self.run(&format!("{pct:03}%"), &format!("{pct}%"), Some(rate))?;
        }
        Ok(())
    }

    /// The latency-target search from `max`; its answer line.
    fn search(
        &mut self,
        max: f64,
        target: &LatencyTarget,
        precision: f64,
    ) -> Result<(Answer, Log), CommandError> {
        let search = Search {
            limit_us: target.limit_us,
            max: max.round() as u64,
            min: u64::from(self.cfg.sessions),
            precision,
        };
        let width = search.max.to_string().len();
        let mut log = Log::default();
        let answer = search.run(&mut log, |rate| {
            let v = format!("{rate:0width$}/s");
            let doc = self.run(&v, &format!("{rate}/s"), Some(rate))?;
            let s = Sample::of(target, &doc);
            if s.value_us.is_none() {
                return Err(self.stopped(CommandError::Failed(format!(
                    "run {} has no {} latency to judge --latency-target {target} by",
                    self.points.last().map_or(0, |p| p.run_id),
                    target.op.name()
                ))));
            }
            Ok(s)
        })?;
        Ok((answer, log))
    }
}

/// The answer in words: "368/s at total due-time p99 ≤ 100.00ms (±2.4%: met
/// at 359/s, missed at 377/s)".
fn answer_line(a: &Answer, target: &LatencyTarget, log: &Log) -> String {
    let runs = format!("{} probes, {} runs", log.probes.len(), log.runs);
    match *a {
        Answer::AtMaximum { rate } => format!(
            "{rate}/s at {target}: met at the measured maximum, the most this storage gave with these settings ({runs})"
        ),
        Answer::Between { met, missed } => {
            let (rate, pm) = a.rate().unwrap_or_default();
            format!(
                "{rate:.0}/s at {target} (±{:.1}%: met at {met}/s, missed at {missed}/s; {runs})",
                pm * 100.0
            )
        }
        Answer::NeverMet { lowest } => {
            format!("{target} was not met even at {lowest}/s, the lowest rate probed ({runs})")
        }
    }
}

/// A set name of the store's that holds no run yet: `given`, or
/// `PREFIX-DATE-TIME` (with `-2`, `-3`… when that is taken).
fn set_name(store: &Store, given: Option<String>, prefix: &str) -> Result<String, CommandError> {
    let taken = |name: &str| -> Result<bool, CommandError> {
        let filter = RunFilter {
            plan: Some(name.to_string()),
            ..Default::default()
        };
        let rows = store
            .list(&filter)
            .map_err(|e| CommandError::Failed(e.to_string()))?;
        Ok(!rows.is_empty())
    };
    if let Some(name) = given {
        if taken(&name)? {
            return Err(CommandError::Usage(format!(
                "--name {name}: the store already holds runs of a set or plan of that name; choose another"
            )));
        }
        return Ok(name);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let stamp: String = crate::store::fmt_utc(now)
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    let base = format!("{prefix}-{stamp}");
    let mut name = base.clone();
    let mut n = 1;
    while taken(&name)? {
        n += 1;
        name = format!("{base}-{n}");
    }
    Ok(name)
}

/// `dbio curve`: everything checked before anything is laid out, then the
/// maximum, the points or the search, and the table.
pub fn execute(
    args: CurveArgs,
    open_store: impl FnOnce(Option<std::path::PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<ExitCode> {
    let usage = |e: crate::options::Refused| CommandError::Usage(e.into());
    args.refuse_run_options().map_err(usage)?;
    let (points, target, precision) = (args.points(), args.latency_target, args.precision);
    let mut run_args = args.run;
    for t in &run_args.tags {
        crate::store::validate_tag(t).map_err(|e| CommandError::Usage(e.to_string()))?;
    }
    // The run's own parser refuses --arrival without --rate: the curve
    // sets the rate of each run itself.
    let arrival = run_args.arrival.take().unwrap_or(Arrival::Uniform);
    let (quiet, db, tags) = (run_args.quiet, run_args.db.clone(), run_args.tags.clone());
    let progress = run_args
        .progress
        .resolve(false, quiet)
        .map_err(|e| CommandError::Usage(e.into()))?;
    let cfg = run_args.into_config().map_err(usage)?;
    let unit = paced(&cfg.workload)?;
    if let Some(t) = &target {
        judgeable(t, &cfg)?;
    }
    crate::preflight::check(&cfg).map_err(|e| CommandError::Usage(e.to_string()))?;
    let mut store = open_store(db)?;
    store
        .ensure_writable()
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let prefix = if target.is_some() { "search" } else { "curve" };
    let name = set_name(&store, args.name, prefix)?;
    let interrupt = super::interrupt_flag();
    let mut curve = Curve {
        store: &mut store,
        cfg,
        arrival,
        name,
        tags,
        progress,
        quiet,
        interrupt: &interrupt,
        unit,
        points: Vec::new(),
    };
    let max = curve.maximum()?;
    let answer = match &target {
        None => {
            curve.fixed(max, &points)?;
            None
        }
        Some(t) => Some(curve.search(max, t, precision)?),
    };
    let mut out = format!(
        "\ncurve {}: {} runs stored as one set (dbio report --plan {} [--html FILE])\n",
        curve.name,
        curve.points.len(),
        curve.name
    );
    out += &table(&curve.points);
    let mut code = ExitCode::SUCCESS;
    if let (Some(t), Some((a, log))) = (&target, &answer) {
        out += &format!("\n{}\n", answer_line(a, t, log));
        if matches!(a, Answer::NeverMet { .. }) {
            code = ExitCode::from(super::EXIT_FAILED);
        }
    }
    super::output::print(&crate::terminal::text(&out))?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::curve::Basis;

    #[test]
    fn the_answer_line_states_rate_target_and_precision() {
        let t = LatencyTarget {
            op: TargetOp::Total,
            basis: Basis::Due,
            percentile: 99.0,
            limit_us: 100_000.0,
        };
        let log = Log {
            probes: Vec::new(),
            runs: 9,
        };
        let a = answer_line(
            &Answer::Between {
                met: 360,
                missed: 376,
            },
            &t,
            &log,
        );
        assert_eq!(
            a,
            "368/s at total due-time p99 ≤ 100.00ms (±2.2%: met at 360/s, missed at 376/s; 0 probes, 9 runs)"
        );
        let never = answer_line(&Answer::NeverMet { lowest: 4 }, &t, &log);
        assert!(never.contains("not met even at 4/s"), "{never}");
    }
}
