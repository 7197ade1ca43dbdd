//! `dbio runs`'s subcommands and the run filter other commands share.

use crate::options::choice::choice;
use crate::report::export::runs::Format;
use crate::store::parse_since;

/// The `dbio runs` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum RunsCommand {
    /// List stored runs, oldest first.
    List {
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Print a stored run's report exactly as it was printed.
    Show {
        /// The run id (from `dbio runs list`).
        id: i64,
        /// Print the JSON report document (as `dbio run --json` did).
        #[arg(long, conflicts_with = "environment")]
        json: bool,
        /// Print the environment recorded with the run (JSON).
        #[arg(long)]
        environment: bool,
        /// Write the run as one self-contained HTML page (its per-second series beside its device and host telemetry) to FILE.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["json", "environment"])]
        html: Option<std::path::PathBuf>,
        /// Print the run in another tool's format: fio-json, fio 3's
        /// --output-format=json of a raw run (docs/import.md).
        #[arg(long, value_enum, conflicts_with_all = ["json", "environment", "html"])]
        format: Option<ShowFormat>,
    },
    /// Delete runs and everything stored with them.
    Delete {
        /// Run ids.
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Export runs, one row per run, on stdout.
    Export {
        /// csv (one row per run, for a spreadsheet), json (the same rows as
        /// objects) or markdown (a table for a document).
        #[arg(long, value_parser = choice::<Format>(), default_value = "csv")]
        format: Format,
        /// Add the stored metrics whose names match these globs, a column each
        /// (`*` any text, `?` one character): `--metrics 'db.*,event.*'`, `'*'` for all.
        #[arg(long, value_name = "PATTERN[,PATTERN]", value_delimiter = ',', value_parser = metric_pattern)]
        metrics: Vec<String>,
        /// One row per run and metric (run,metric,value) instead of one per run;
        /// every stored metric unless --metrics selects.
        #[arg(long)]
        long: bool,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Add tags to a run.
    Tag {
        /// The run id (from `dbio runs list`).
        id: i64,
        /// One word each: letters, digits, - _ . : = + /
        #[arg(required = true)]
        tags: Vec<String>,
    },
    /// Set the free-text note of a run ("" clears it).
    Note {
        /// The run id (from `dbio runs list`).
        id: i64,
        /// The note; several words are joined with spaces.
        #[arg(required = true)]
        text: Vec<String>,
    },
}

/// `dbio runs show --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    FioJson,
}

/// Filters shared by `list` and `export`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct FilterArgs {
    /// Runs of this plan.
    #[arg(long)]
    pub plan: Option<String>,
    /// Runs varying this plan variable.
    #[arg(long)]
    pub variable: Option<String>,
    /// Runs with this tag (repeat: all of them).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Runs of this workload (raw, slob) or raw pattern (randread, …).
    #[arg(long)]
    pub workload: Option<String>,
    /// Runs started since a UTC date/time (2026-11-22, 2026-11-22T10:00Z) or
    /// an age (90m, 12h, 7d, 2w).
    #[arg(long, value_name = "WHEN", value_parser = since_arg)]
    pub since: Option<i64>,
    /// Only the most recent N matching runs.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Runs from this source: dbio (measured by dbio), fio or awr-info (imported).
    #[arg(long, value_name = "SOURCE")]
    pub source: Option<String>,
}

/// A `--metrics` pattern that is not one.
#[derive(Debug, thiserror::Error)]
enum PatternError {
    #[error("an empty pattern; write e.g. --metrics 'db.*,event.*'")]
    Empty,
    #[error(
        "{0:?} has {1:?}; a metric pattern is a metric name with * (any text) and ? (one character), e.g. 'db.*'"
    )]
    BadChar(String, char),
}

fn metric_pattern(text: &str) -> Result<String, PatternError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(PatternError::Empty);
    }
    match t
        .chars()
        .find(|c| !(c.is_alphanumeric() || "._-:/*?".contains(*c)))
    {
        Some(c) => Err(PatternError::BadChar(t.to_string(), c)),
        None => Ok(t.to_string()),
    }
}

fn since_arg(text: &str) -> Result<i64, crate::store::NotATime> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    parse_since(text, now)
}
