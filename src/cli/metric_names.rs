//! `dbio metrics`'s arguments (the metric names a report can show).

use clap::Args;

#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// Only names containing this text (e.g. latency, p99, dev., event.).
    #[arg(value_name = "TEXT")]
    pub filter: Option<String>,
}
