//! `dbio report`: the SLOB.R table over stored runs — variables by session
//! counts, each cell the trimmed mean of one metric over its repeats.

use clap::{Args, ValueEnum};

use super::CommandError;
use crate::report::table::{self, Point};
use crate::store::Store;
use crate::store::commands::FilterArgs;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The stored metric in the cells (see docs/store.md: total.iops, read.latency.p99_us, dev.w_await_ms, …).
    #[arg(long, default_value = "total.iops")]
    pub metric: String,
    /// Divide every cell by this variable's cell (e.g. RAW = 1).
    #[arg(long, value_name = "VARIABLE")]
    pub relative_to: Option<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write one self-contained HTML page (tables, charts, environment, plan) to FILE instead (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// The plan file the runs came from: the page shows its seed, order and repeats (and selects its runs when --plan is not given).
    #[arg(long, value_name = "PLAN.toml")]
    pub plan_file: Option<std::path::PathBuf>,
}

/// Builds and prints the table for the completed, counted runs selected.
pub fn execute(args: &ReportArgs, store: &Store) -> Result<(), CommandError> {
    if let Some(path) = &args.html {
        return super::report_html::execute(args, path, store);
    }
    if args.plan_file.is_some() {
        return Err(CommandError::Usage(
            "--plan-file is for the HTML report: add --html FILE".into(),
        ));
    }
    let failed = |e: crate::store::StoreError| CommandError::Failed(e.to_string());
    let rows = store.list(&args.filter.to_filter()).map_err(failed)?;
    let mut points = Vec::new();
    let mut missing = 0;
    for r in rows.iter().filter(|r| r.status == "completed" && !r.warmup) {
        let run = store.get(r.id).map_err(failed)?;
        match run.metrics.iter().find(|(n, _)| *n == args.metric) {
            Some((_, v)) => points.push(Point {
                variable: r.variable.clone().unwrap_or_else(|| "-".into()),
                sessions: r.sessions.unwrap_or(0) as u32,
                value: *v,
            }),
            None => missing += 1,
        }
    }
    if points.is_empty() {
        return Err(CommandError::Usage(format!(
            "no completed run of the selection has the metric {:?} ({} runs selected); see docs/store.md for metric names",
            args.metric,
            rows.len()
        )));
    }
    let t = table::build(&args.metric, &points, args.relative_to.as_deref())
        .map_err(CommandError::Usage)?;
    let out = match args.format {
        Format::Text => table::text(&t),
        Format::Markdown => table::markdown(&t),
        Format::Csv => table::csv(&t),
        Format::Json => serde_json::to_string_pretty(&t).expect("table serializes") + "\n",
    };
    print!("{out}");
    if missing > 0 {
        eprintln!(
            "note: {missing} selected run(s) have no {} and were left out",
            args.metric
        );
    }
    Ok(())
}
