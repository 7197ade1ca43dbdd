//! `--progress` and `--progress-file`: how a run shows its progress, with
//! `auto` resolved against where stderr goes (the status line on a
//! terminal, plain lines in a log) into the core's [`Progress`].

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::Refused;
use crate::samplers::progress::{Progress, Sink};

/// The values of `--progress`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    /// The status line on a terminal, plain lines when stderr is a log or a pipe; nothing with --json or --quiet.
    Auto,
    /// The status line redrawn in place, even when stderr is not a terminal (as fio's --eta=always).
    Tty,
    /// A line per second of the run, and the layout's progress with an ETA every 5 s (as pgbench --progress).
    Plain,
    /// One JSON object per line: each second's series point, the layout's progress, the stored run id (docs/json.md).
    Jsonl,
    /// Nothing.
    None,
}

/// `--progress` and `--progress-file`, as `run` takes them.
#[derive(Args, Debug, Clone)]
pub struct ProgressArgs {
    /// How progress is shown on stderr.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = ProgressArg::Auto)]
    pub progress: ProgressArg,

    /// Append the plain or jsonl progress lines to FILE instead of stderr (--progress auto becomes jsonl).
    #[arg(long, value_name = "FILE")]
    pub progress_file: Option<PathBuf>,
}

impl ProgressArgs {
    /// How progress is shown: `quiet` and `json` turn `auto` off (stdout
    /// keeps the JSON document; stderr stays empty for scripts).
    pub fn resolve(&self, json: bool, quiet: bool) -> Result<Progress, Refused> {
        let tty = std::io::stderr().is_terminal();
        let how = match (self.progress, &self.progress_file) {
            (ProgressArg::Auto, Some(_)) => ProgressArg::Jsonl,
            (ProgressArg::Auto, None) if json || quiet => ProgressArg::None,
            (ProgressArg::Auto, None) if tty => ProgressArg::Tty,
            (ProgressArg::Auto, None) => ProgressArg::Plain,
            (how, _) => how,
        };
        let sink = || match &self.progress_file {
            None => Ok(Sink::stderr()),
            Some(path) => open(path),
        };
        Ok(match how {
            ProgressArg::Plain => Progress::Plain(sink()?),
            ProgressArg::Jsonl => Progress::Jsonl(sink()?),
            other if self.progress_file.is_some() => {
                return Err(format!(
                    "--progress-file takes plain or jsonl lines, not --progress {}; give --progress plain or --progress jsonl, or drop --progress-file",
                    name(other)
                )
                .into());
            }
            ProgressArg::Tty => Progress::Tty,
            ProgressArg::None | ProgressArg::Auto => Progress::Off,
        })
    }
}

/// The file progress lines are appended to.
fn open(path: &Path) -> Result<Sink, Refused> {
    if path.is_dir() {
        return Err(format!(
            "--progress-file {} is a directory; give a file to append progress lines to",
            path.display()
        )
        .into());
    }
    Sink::append(path).map_err(|e| {
        format!(
            "--progress-file {}: cannot open it for appending: {e}",
            path.display()
        )
        .into()
    })
}

/// A value's name as typed.
fn name(how: ProgressArg) -> String {
    how.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}
