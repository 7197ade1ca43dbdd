//! `dbio report`'s arguments: which runs, which metric, which format.

use clap::{Args, ValueEnum};

use crate::analysis::models::Model;
use crate::cli::runs::FilterArgs;
use crate::options::choice::choice;
use crate::report::plan::select::MODEL_METRIC;

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
    /// The stored metric in the cells (`dbio metrics` lists them: total.iops, read.latency.p99_us, dev.w_await_ms, …) [default: total.iops, or the model's].
    #[arg(
        long,
        default_value = "total.iops",
        default_value_if("model", clap::builder::ArgPredicate::IsPresent, MODEL_METRIC),
        hide_default_value = true
    )]
    pub metric: String,
    /// A SLOB.R model: only its runs, and its metric unless --metric names another (docs/import.md).
    #[arg(long, value_parser = choice::<Model>())]
    pub model: Option<Model>,
    /// Print N significant digits per cell, column by column as R prints SLOB.R's tables (7 there).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=15))]
    pub digits: Option<u8>,
    /// Divide every cell by this variable's cell (e.g. RAW = 1).
    #[arg(long, value_name = "VARIABLE")]
    pub relative_to: Option<String>,
    /// text (aligned for a terminal), markdown, csv or json (the table's
    /// cells with their n, CI and runs).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also per cell: n, mean, CV, 95% CI and the outlier runs; and each variable against the baseline (--relative-to, else the first) with Welch's t-test.
    #[arg(long)]
    pub stats: bool,
    /// Also per variable: peak throughput and its sessions, the knee, a collapse after the peak, and the Universal Scalability Law fit.
    #[arg(long)]
    pub scaling: bool,
    /// Write one self-contained HTML page (tables, charts, environment, plan) to FILE instead (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Write the table to FILE instead of stdout; FILE is replaced only once the table is made.
    #[arg(long, value_name = "FILE", conflicts_with = "html")]
    pub output: Option<std::path::PathBuf>,
    /// The plan file the runs came from: the page shows its seed, order and repeats (and selects its runs when --plan is not given).
    #[arg(long, value_name = "PLAN.toml")]
    pub plan_file: Option<std::path::PathBuf>,
}
