//! `dbio report`: the SLOB.R table over stored runs — variables by session
//! counts, each cell the trimmed mean of one metric over its repeats; with
//! `--model`, SLOB.R's READS, REDO, WRITES or READWRITE table
//! (`analysis::models`). `--stats` adds n, mean, CV, 95% CI and outlier runs
//! per cell and Welch's test against a baseline; `--scaling` the peak,
//! knee, collapse and USL fit per variable (`report::stats`).

use crate::cli::report::{Format, ReportArgs};

use super::CommandError;
use crate::analysis::models::Model;
use crate::report::export::{Csv, Exporter, Json, Markdown, Text};
use crate::report::plan::PlanReport;
use crate::report::plan::select::{Measure, Pick};
use crate::report::plan::stats::{self, RunValue};
use crate::report::plan::table::{self, Point};
use crate::store::Store;

pub use crate::report::plan::select::MODEL_METRIC;

/// Runs outside a plan (no variable) are one row of the table: refused
/// when the runs it counts (`counted`: those with a value) are of
/// different kinds (a raw pattern, a model, a server), naming each kind
/// with its `--workload` choice and its number of runs.
pub fn one_kind(rows: &[crate::store::RunRow], counted: &[i64]) -> Result<(), CommandError> {
    let mut kinds: std::collections::BTreeMap<String, usize> = Default::default();
    for r in rows
        .iter()
        .filter(|r| r.variable.is_none() && counted.contains(&r.id))
    {
        let kind = match (r.workload.as_deref(), r.pattern.as_deref()) {
            (Some("raw") | None, Some(p)) => p,
            (Some(w), _) => w,
            (None, None) => "-",
        };
        *kinds.entry(kind.to_string()).or_default() += 1;
    }
    if kinds.len() < 2 {
        return Ok(());
    }
    let choices: Vec<String> = kinds
        .iter()
        .map(|(k, n)| format!("--workload {k} ({n} run{})", if *n == 1 { "" } else { "s" }))
        .collect();
    Err(CommandError::Usage(format!(
        "the selected runs outside a plan are of {} kinds, which one row would pool: choose one with {} (or --plan NAME, --tag TAG)",
        kinds.len(),
        choices.join(", ")
    )))
}

impl ReportArgs {
    /// What the cells show.
    pub fn measure(&self) -> Measure<'_> {
        Measure {
            metric: &self.metric,
            model: self.model,
        }
    }
}

/// Builds and prints the table for the completed, counted runs selected.
pub fn execute(args: &ReportArgs, store: &Store) -> anyhow::Result<()> {
    if let Some(path) = &args.html {
        return super::report_html::execute(args, path, store);
    }
    let measure = args.measure();
    check(args, &measure)?;
    let rows = store.list(&args.filter.to_filter())?;
    let picked = Picked::from_runs(&rows, store, &measure)?;
    if args.model.is_none() {
        let ids: Vec<i64> = picked.runs.iter().map(|r| r.id).collect();
        one_kind(&rows, &ids)?;
    }
    let label = measure.label();
    if picked.points.is_empty() {
        return Err(nothing_to_show(
            args,
            store,
            &rows,
            &label,
            picked.other_model,
        ));
    }
    let mut t = match args.model {
        Some(Model::Readwrite) => table::build_readwrite(
            &label,
            &picked.points,
            &picked.writes,
            args.relative_to.as_deref(),
        ),
        _ => table::build(&label, &picked.points, args.relative_to.as_deref()),
    }
    .map_err(|e| CommandError::Usage(e.to_string()))?;
    t.digits = args.digits;
    let summary = args
        .stats
        .then(|| stats::summary(&label, &picked.runs, args.relative_to.as_deref()));
    let scaling = args.scaling.then(|| stats::scaling(&picked.runs));
    let report = PlanReport {
        table: &t,
        stats: summary.as_ref(),
        scaling: scaling.as_deref(),
    };
    print(args.format, &report)?;
    if picked.missing > 0 {
        eprintln!(
            "note: {} selected run(s) have no {label} and were left out",
            picked.missing
        );
    }
    Ok(())
}

/// Options that do not go together, or a metric `--scaling` cannot fit: a
/// usage error.
fn check(args: &ReportArgs, measure: &Measure) -> anyhow::Result<()> {
    if args.plan_file.is_some() {
        anyhow::bail!(CommandError::Usage(
            "--plan-file is for the HTML report: add --html FILE".into(),
        ));
    }
    measure
        .check()
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    if args.format == Format::Csv && args.stats && args.scaling {
        anyhow::bail!(CommandError::Usage(
            "--format csv writes one table: ask for --stats or --scaling, not both (or use --format json)".into(),
        ));
    }
    if args.scaling && !measure.is_throughput() {
        anyhow::bail!(CommandError::Usage(format!(
            "--scaling fits throughput over sessions; {} is not a throughput metric (…iops, …mib_per_s, db.physical_reads_per_s, …)",
            args.metric
        )));
    }
    Ok(())
}

/// The values of the completed, counted runs: the table's points, the
/// statistics' runs, READWRITE's writes, and the runs left out.
#[derive(Default)]
struct Picked {
    points: Vec<Point>,
    runs: Vec<RunValue>,
    writes: Vec<f64>,
    missing: usize,
    other_model: usize,
}

impl Picked {
    fn from_runs(
        rows: &[crate::store::RunRow],
        store: &Store,
        measure: &Measure,
    ) -> anyhow::Result<Picked> {
        let mut p = Picked::default();
        for r in rows.iter().filter(|r| r.status == "completed" && !r.warmup) {
            // The metrics alone: the report documents stay on disk.
            let metrics = store.metrics(r.id)?;
            let run_value = |value| RunValue {
                id: r.id,
                variable: r.variable.clone().unwrap_or_else(|| "-".into()),
                sessions: r.sessions.unwrap_or(0) as u32,
                value,
            };
            match measure.pick(r.model.as_deref(), &metrics) {
                Pick::OtherModel => p.other_model += 1,
                Pick::Missing => p.missing += 1,
                // READWRITE: the table trims reads and writes apart; the
                // statistics are over each run's reads + writes.
                Pick::Value {
                    value,
                    split: Some((rd, wr)),
                } => {
                    p.writes.push(wr);
                    p.points.push(Point::from(&run_value(rd)));
                    p.runs.push(run_value(value));
                }
                Pick::Value { value, split: None } => {
                    let rv = run_value(value);
                    p.points.push(Point::from(&rv));
                    p.runs.push(rv);
                }
            }
        }
        Ok(p)
    }
}

/// No completed run of the selection has the metric: a usage error with a
/// hint (imported AWR rates, the nearest stored names).
fn nothing_to_show(
    args: &ReportArgs,
    store: &Store,
    rows: &[crate::store::RunRow],
    label: &str,
    other_model: usize,
) -> anyhow::Error {
    let awr = rows.iter().filter(|r| r.source == "awr-info").count();
    let hint = if awr > 0 && args.model.is_none() {
        format!(
            "; {awr} of them imported from awr_info.sh, which has AWR's rates, not dbio's I/O metrics: pass --model reads|redo|writes|readwrite (SLOB.R's tables) or --metric db.physical_reads_per_s"
        )
    } else if args.model.is_none() {
        super::metrics::hint(store, args.metric.as_str())
    } else {
        "; dbio metrics lists the stored names".to_string()
    };
    anyhow::Error::new(CommandError::Usage(format!(
        "no completed run of the selection has {label} ({} runs selected{}){hint}",
        rows.len(),
        if other_model > 0 {
            format!(", {other_model} of another model")
        } else {
            String::new()
        }
    )))
}

/// The report in the format asked, on stdout.
fn print(format: Format, report: &PlanReport) -> anyhow::Result<()> {
    let mut out = Vec::new();
    match format {
        Format::Text => Text.write(report, &mut out)?,
        Format::Markdown => Markdown.write(report, &mut out)?,
        Format::Csv => Csv.write(report, &mut out)?,
        Format::Json => Json.write(report, &mut out)?,
    }
    let out = String::from_utf8_lossy(&out);
    match format {
        Format::Text => super::output::print_text(&out)?,
        Format::Markdown | Format::Csv | Format::Json => super::output::print(&out)?,
    }
    Ok(())
}
