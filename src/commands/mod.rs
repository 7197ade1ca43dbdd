//! The commands behind the CLI: what `dbio run`, `dbio plan`, `dbio import` and `dbio runs`
//! do once their arguments are parsed, and how their outcomes map to exit
//! codes (0 ok, 1 run failed, 2 usage or configuration error, 130
//! interrupted).

pub mod capture;
pub mod clean;
pub mod compare;
pub mod curve;
mod curve_search;
pub mod import;
pub mod lab;
mod lab_run;
mod lab_run_restore;
mod man_page;
pub mod manual;
pub mod measure;
pub mod metrics;
pub mod output;
pub mod output_file;
pub mod plan;
mod precondition;
pub mod report;
pub mod report_html;
pub mod run;
pub mod run_capture;
mod run_db;
mod run_mysql;
pub mod run_pg;
pub mod run_replay;
pub mod runs;
pub mod trace;
pub mod verify;
pub mod vs_engine;

pub use crate::interrupt::{interrupt_cause, interrupt_flag};

pub const EXIT_FAILED: u8 = 1;
pub const EXIT_USAGE: u8 = 2;
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a command that did not succeed, with its line. Commands
/// return `anyhow::Result`: library errors with `.context()` saying what was
/// being done, and where the exit code is not 1 (a failed run), this thin
/// type somewhere in the error's chain. `main` prints the chain as one line
/// ([`error_line`]) and exits with [`exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Bad arguments or configuration: nothing was run (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The run (or the store) failed (exit 1).
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C (exit 130).
    #[error("{0}")]
    Interrupted(String),
    /// The reader closed stdout (`| head`): a normal end, nothing to say (exit 0).
    #[error("the output was closed")]
    Closed,
}

/// A database server's error keeps its kind: the core's `ServerError` has
/// the same three outcomes because the core cannot name this crate's type
/// (and has no closed stdout to report).
impl From<crate::workload::db::ServerError> for CommandError {
    fn from(e: crate::workload::db::ServerError) -> CommandError {
        use crate::workload::db::ServerError;
        match e {
            ServerError::Usage(m) => CommandError::Usage(m),
            ServerError::Failed(m) => CommandError::Failed(m),
            ServerError::Interrupted(m) => CommandError::Interrupted(m),
        }
    }
}

impl CommandError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::Usage(_) => EXIT_USAGE,
            CommandError::Failed(_) => EXIT_FAILED,
            CommandError::Interrupted(_) => EXIT_INTERRUPTED,
            CommandError::Closed => 0,
        }
    }
}

/// The exit code a command's error ends dbio with: that of the first
/// [`CommandError`] in its chain, else 1 (the command failed).
pub fn exit_code(e: &anyhow::Error) -> u8 {
    e.chain()
        .find_map(|c| c.downcast_ref::<CommandError>())
        .map_or(EXIT_FAILED, CommandError::exit_code)
}

/// A command's error as the one line dbio prints after `error: `: what was
/// being done, then why, joined by `: ` (a line break inside one becomes a
/// space). A library error's message names its cause already (thiserror's
/// one line, `{source}` in it): the chain ends there, nothing said twice.
/// Control characters are escaped and values longer than
/// `terminal::QUOTE_MAX` cut (`terminal::line`): a value quoted into an
/// error reaches the terminal as text, and never whole when huge.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !line.is_empty() && line.contains(&text) {
            break;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    let line = line.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    crate::terminal::line(&line)
}

/// A command's error as the exit-code type, for the MPI ranks, which agree
/// on an exit code and a line across processes.
impl From<anyhow::Error> for CommandError {
    fn from(e: anyhow::Error) -> CommandError {
        // Without context, the error is its own line (and keeps `Closed`).
        let e = match e.chain().count() {
            1 => match e.downcast::<CommandError>() {
                Ok(c) => return c,
                Err(e) => e,
            },
            _ => e,
        };
        let line = error_line(&e);
        match exit_code(&e) {
            EXIT_USAGE => CommandError::Usage(line),
            EXIT_INTERRUPTED => CommandError::Interrupted(line),
            0 => CommandError::Closed,
            _ => CommandError::Failed(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exit_code_is_the_first_command_error_in_the_chain() {
        let usage: anyhow::Error =
            CommandError::Usage("--bs 3000 is not a block size".into()).into();
        assert_eq!(exit_code(&usage), EXIT_USAGE);
        let e = usage.context("opening the store at /x");
        assert_eq!(exit_code(&e), EXIT_USAGE, "context keeps the code");
        assert_eq!(
            error_line(&e),
            "opening the store at /x: --bs 3000 is not a block size"
        );
        let e = anyhow::Error::from(CommandError::Interrupted("interrupted".into())).context("a");
        assert_eq!(exit_code(&e), EXIT_INTERRUPTED);
        let e = anyhow::Error::from(CommandError::Closed).context("printing the report");
        assert_eq!(exit_code(&e), 0);
    }

    #[test]
    fn an_error_without_a_code_is_a_failure_on_one_line() {
        let io = std::io::Error::other("disk on fire\nreally");
        let e = anyhow::Error::from(io).context("writing /x/report.html");
        assert_eq!(exit_code(&e), EXIT_FAILED);
        assert_eq!(
            error_line(&e),
            "writing /x/report.html: disk on fire really"
        );
    }

    /// A library error in the house style: its message names its source.
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read {path}: {source}; pass --db PATH")]
    struct Read {
        path: &'static str,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_the_message_names_is_not_said_twice() {
        let read = Read {
            path: "/x/db",
            source: std::io::Error::other("Is a directory"),
        };
        let e = anyhow::Error::from(read);
        assert_eq!(e.chain().count(), 2);
        assert_eq!(
            error_line(&e),
            "cannot read /x/db: Is a directory; pass --db PATH"
        );
        let e = e.context("opening the store at /x/db");
        assert_eq!(
            error_line(&e),
            "opening the store at /x/db: cannot read /x/db: Is a directory; pass --db PATH"
        );
        assert_eq!(exit_code(&e), EXIT_FAILED);
    }

    #[test]
    fn the_ranks_get_the_code_and_the_line_back() {
        let e = anyhow::Error::from(CommandError::Usage("bad".into())).context("checking");
        match CommandError::from(e) {
            CommandError::Usage(l) => assert_eq!(l, "checking: bad"),
            other => panic!("{other:?}"),
        }
        let e = anyhow::Error::from(CommandError::Interrupted("stopped".into()));
        assert!(matches!(CommandError::from(e), CommandError::Interrupted(l) if l == "stopped"));
        let e = anyhow::anyhow!("no space");
        assert!(matches!(CommandError::from(e), CommandError::Failed(l) if l == "no space"));
    }
}
