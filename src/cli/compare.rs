//! `dbio compare`'s arguments: the two sides, the metrics and the format.

use clap::{Args, ValueEnum};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The 1st side: a run id, ids separated by commas, or a variable name.
    #[arg(value_name = "A")]
    pub a: String,
    /// The 2nd side, the same way.
    #[arg(value_name = "B")]
    pub b: String,
    /// Take variables from this plan.
    #[arg(long)]
    pub plan: Option<String>,
    /// Only runs with this many sessions (for variables).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub sessions: Option<u32>,
    /// text (side by side, as AWR's compare period report) or json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the comparison to FILE instead of stdout; FILE is replaced only once it is made.
    #[arg(long, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Write the comparison as one self-contained HTML page to FILE (the sides, the settings that differ, the load profile with Welch's verdicts, each line's change drawn).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["output", "format"])]
    pub html: Option<std::path::PathBuf>,
}
