//! The command line: clap's definition of `dbio` and its subcommands, each
//! subcommand's arguments in a file of its own (those of `dbio run`, which a
//! plan file shares, are `options`'), parsing, and clap's refusals as one
//! line.

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::options::{self, DEFAULT_TARGET, RunArgs, join_negative_values, negatives};

pub mod capture;
pub mod compare;
pub mod curve;
pub mod hints;
pub mod import;
pub mod lab;
pub mod manual;
pub mod metric_names;
pub mod plan;
pub mod report;
pub mod run_help;
pub mod runs;
pub mod trace;
pub mod verify;
pub mod vs_engine;

/// The clap command of `dbio`, with every option that takes a value
/// accepting a negative number as its value, so that `--size -1` reaches the
/// option's parser, which names the option and the value, instead of clap
/// taking `-1` for an unknown flag.
pub fn command() -> clap::Command {
    negatives(Cli::command())
        .mut_subcommand("run", run_help::arrange)
        .mut_subcommand("curve", curve::arrange)
}

/// Parses a full command line (`dbio ...`) as the binary does.
pub fn try_parse_from<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = command().try_get_matches_from(join_negative_values(argv))?;
    Cli::from_arg_matches(&matches)
}

/// Says what clap refused, or prints the help or version it was asked
/// for; true when that is the answer (a success), false for a usage error.
pub fn refused(e: &clap::Error) -> bool {
    use clap::error::ErrorKind::*;
    match e.kind() {
        DisplayHelp | DisplayVersion => {
            let _ = e.print();
            return true;
        }
        // `dbio runs` without a subcommand: the help, on stderr, is the answer, but not a success.
        DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{}", e.render());
            return false;
        }
        _ => {}
    }
    eprintln!("error: {}", error_line(e));
    false
}

/// clap's message on one line ([`options::error_line`]), with dbio's hints
/// from the whole command line.
pub fn error_line(e: &clap::Error) -> String {
    options::error_line(e, hints::hint(e, &command()))
}

#[derive(Parser, Debug)]
#[command(
    name = "dbio",
    version,
    subcommand_required = true,
    about = "A storage benchmark for databases",
    long_about = "dbio measures what storage does under database-shaped I/O: \
                  random and sequential patterns, O_DIRECT or buffered with \
                  fsync/fdatasync/O_DSYNC, psync or io_uring, reported as \
                  requests, blocks, latency percentiles and outliers beside \
                  the devices' and the host's own statistics. Every run is kept \
                  in a results store; plans run whole experiments."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a workload against a target and report what the storage did.
    Run(Box<RunArgs>),
    /// A latency-throughput curve: a maximum run, then open-loop runs at percentages of it (or the highest rate meeting --latency-target), stored as one set.
    Curve(Box<crate::cli::curve::CurveArgs>),
    /// Remove the data files dbio laid out in a directory (and nothing else).
    Clean(CleanArgs),
    /// Run an experiment plan (variables x sessions x repeats), resumable.
    Plan {
        #[command(subcommand)]
        command: crate::cli::plan::PlanCommand,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, global = true, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// The SLOB.R table of stored runs: variables x sessions, trimmed means of a metric.
    Report {
        #[command(flatten)]
        args: report::ReportArgs,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// Two runs or selections side by side: AWR's compare period report.
    Compare {
        #[command(flatten)]
        args: compare::CompareArgs,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// Import runs measured by other tools (SLOB awr_info.sh, fio JSON) into the store.
    Import {
        #[command(subcommand)]
        command: import::ImportCommand,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, global = true, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// Filesystem lab: build ext4/XFS/btrfs arms on loop or named devices, run a plan, tear down; TRIM tests.
    Lab {
        #[command(subcommand)]
        command: lab::LabCommand,
    },
    /// Read every block of a target back and name each damaged one (zeroed, checksum, misdirected, torn, lost).
    Verify(verify::VerifyArgs),
    /// List, show, export, tag or delete stored runs.
    Runs {
        #[command(subcommand)]
        command: runs::RunsCommand,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, global = true, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// List the metric names of the stored runs with their units and meaning (for report --metric, runs export --metrics).
    Metrics {
        #[command(flatten)]
        args: metric_names::MetricsArgs,
        /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
        #[arg(long, value_name = "PATH")]
        db: Option<PathBuf>,
    },
    /// Record every block request to devices (the kernel's block tracepoints) into a trace file.
    Capture(capture::CaptureArgs),
    /// Show or convert block I/O traces (dbio's, fio iolog v2/v3, blktrace's per-CPU files).
    Trace {
        #[command(subcommand)]
        command: trace::TraceCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(manual::CompletionsArgs),
    /// Print dbio's man page (roff) on stdout, or write every page with --dir.
    Man(manual::ManArgs),
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// Directory holding a dbio layout.
    #[arg(long, default_value = DEFAULT_TARGET)]
    pub target: PathBuf,

    /// Drop the schema dbio made on this existing server (--workload pg --pg-url) instead.
    #[arg(long, value_name = "URL")]
    pub pg_url: Option<String>,

    /// Drop the database dbio made on this existing server (--workload mysql --mysql-url) instead.
    #[arg(long, value_name = "URL", conflicts_with = "pg_url")]
    pub mysql_url: Option<String>,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::config::{EngineKind, Pattern, RunConfig, RunLength};
    use crate::options::Refused;

    /// `dbio run ARGS` validated into a config, or its one-line refusal.
    pub(crate) fn config(args: &[&str]) -> Result<RunConfig, Refused> {
        let mut argv = vec!["dbio", "run"];
        argv.extend_from_slice(args);
        let cli = try_parse_from(argv).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Run(r) => (*r).into_config(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn region_per_rank_needs_mpi() {
        let e = config(&["--region-per-rank", "--target", "/dev/sdx"]).unwrap_err();
        assert!(e.contains("add --mpi"), "{e}");
        assert!(config(&["--region-per-rank", "--mpi", "--target", "/dev/sdx"]).is_ok());
    }

    /// Every subcommand, argument and option of every command, with the
    /// path to it (`dbio runs tag <id>`) and whether it has help text.
    fn undocumented(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if matches!(id, "help" | "version") || a.is_hide_set() {
                continue;
            }
            if a.get_help().is_none() && a.get_long_help().is_none() {
                out.push(format!("{path} <{id}>"));
            }
        }
        for sub in cmd.get_subcommands() {
            let p = format!("{path} {}", sub.get_name());
            if sub.get_name() != "help" && sub.get_about().is_none() {
                out.push(p.clone());
            }
            undocumented(sub, &p, out);
        }
    }

    #[test]
    fn every_command_and_option_says_what_it_is_for() {
        let mut missing = Vec::new();
        undocumented(&command(), "dbio", &mut missing);
        assert!(missing.is_empty(), "no help text: {missing:?}");
    }

    #[test]
    fn dbwr_engine_help_speaks_of_db_writers_not_sessions() {
        let help = command()
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        let start = help.find("--dbwr-engine").unwrap();
        let end = start + help[start..].find("\n      --").unwrap();
        let text = &help[start..end];
        assert!(text.contains("DB writers"), "{text}");
        for session_words in ["session thread", "--iodepth"] {
            assert!(!text.contains(session_words), "{text}");
        }
    }

    #[test]
    fn lab_commands_offer_only_the_options_they_use() {
        // Only `lab run` stores anything; status and cleanup have no --db.
        for sub in ["status", "cleanup"] {
            let e = try_parse_from(["dbio", "lab", sub, "--db", "/tmp/x.sqlite"]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{sub}");
        }
        let cli =
            try_parse_from(["dbio", "lab", "run", "p.toml", "--db", "/tmp/x.sqlite"]).unwrap();
        assert!(matches!(
            cli.command,
            Command::Lab {
                command: lab::LabCommand::Run { db: Some(_), .. }
            }
        ));
    }

    #[test]
    fn defaults_are_a_short_mixed_run() {
        let c = config(&[]).unwrap();
        assert_eq!(c.block_size, 8192);
        assert_eq!(c.workload.raw().map(|r| r.pattern), Some(Pattern::Randrw));
        assert_eq!(c.workload.raw().map(|r| r.read_pct), Some(50));
        assert_eq!(
            c.length,
            RunLength::Time {
                time_s: 10.0,
                ramp_s: 0.0
            }
        );
        assert_eq!(c.target, PathBuf::from(DEFAULT_TARGET));
    }

    #[test]
    fn bad_values_are_refused_with_what_is_allowed() {
        let e = config(&["--bs", "3000"]).unwrap_err();
        assert!(e.contains("--bs") && e.contains("power of two"), "{e}");
        let e = config(&["--bs", "2M"]).unwrap_err();
        assert!(e.contains("512 to 1M"), "{e}");
        let e = config(&["--sessions", "0"]).unwrap_err();
        assert!(e.contains("--sessions"), "{e}");
        let e = config(&["--sessions", "4097"]).unwrap_err();
        assert!(e.contains("4097") && e.contains("1..=4096"), "{e}");
        let e = config(&["--read-pct", "101"]).unwrap_err();
        assert!(e.contains("--read-pct"), "{e}");
        let e = config(&["--pattern", "randread", "--read-pct", "30"]).unwrap_err();
        assert!(e.contains("randrw only"), "{e}");
        let e = config(&["--iodepth", "32"]).unwrap_err();
        assert!(e.contains("io_uring"), "{e}");
        let e = config(&["--time", "10", "--ops", "100"]).unwrap_err();
        assert!(e.contains("--ops") || e.contains("--time"), "{e}");
        let e = config(&["--ops", "2", "--sessions", "4"]).unwrap_err();
        assert!(e.contains("fewer than --sessions"), "{e}");
        let e = config(&["--dist", "zipf:x"]).unwrap_err();
        assert!(e.contains("--dist"), "{e}");
        let e = config(&["--pattern", "seqread", "--dist", "zipf:1.2"]).unwrap_err();
        assert!(e.contains("random patterns"), "{e}");
        let e = config(&["--size", "4k", "--files", "2"]).unwrap_err();
        assert!(e.contains("smaller than one block"), "{e}");
        let e = config(&["--hotspot-mb", "8"]).unwrap_err();
        assert!(e.contains("hotspot-frequency"), "{e}");
        let e = config(&["--outlier-ms", "0"]).unwrap_err();
        assert!(e.contains("--outlier-ms"), "{e}");
    }

    #[test]
    fn negative_and_overflowing_values_are_named() {
        let e = config(&["--size", "-1G"]).unwrap_err();
        assert!(e.contains("'-1G' for '--size"), "{e}");
        let e = config(&["--rate", "-10"]).unwrap_err();
        assert!(e.contains("'-10' for '--rate"), "{e}");
        let e = try_parse_from(["dbio", "run", "--rate", "-10"]).unwrap_err();
        assert!(error_line(&e).ends_with("not a whole number (digits only, e.g. 100)"));
        let e = config(&["--time", "99999999999"]).unwrap_err();
        assert!(
            e.contains("'99999999999' for '--time") && e.contains("a year"),
            "{e}"
        );
        let e = config(&["--ramp", "400d"]).unwrap_err();
        assert!(e.contains("--ramp"), "{e}");
        let e = config(&["--size", "12k", "--bs", "8k"]).unwrap_err();
        assert!(
            e.contains("--size 12 KiB is not a whole number of --bs 8 KiB"),
            "{e}"
        );
        assert_eq!(
            config(&["--size", "1.5G"]).unwrap().size_bytes,
            Some(3 << 29)
        );
        let e = config(&["--hotspot-mb", "10"]).unwrap_err();
        assert!(
            e.contains("--hotspot-mb 10 needs --hotspot-frequency"),
            "{e}"
        );
        let e =
            config(&["--hotspot-mb", "99999999999999", "--hotspot-frequency", "2"]).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = config(&["--workload", "slob", "--think-min", "1"]).unwrap_err();
        assert!(e.contains("--think-min 1 needs --think-frequency"), "{e}");
    }

    #[test]
    fn clap_errors_keep_their_list_on_the_line() {
        let e = try_parse_from(["dbio", "compare", "1"]).unwrap_err();
        assert_eq!(
            error_line(&e),
            "the following required arguments were not provided: <B>"
        );
        let e = try_parse_from(["dbio"]).unwrap_err();
        assert!(!error_line(&e).is_empty());
    }

    #[test]
    fn a_cache_larger_than_the_data_is_capped() {
        let c = config(&[
            "--workload",
            "slob",
            "--scale",
            "1024",
            "--sessions",
            "2",
            "--cache",
            "1G",
        ])
        .unwrap();
        let slob = c.workload.model().cloned().unwrap();
        assert_eq!(slob.cache_bytes, 4 * slob.tablespace_blocks() * 8192);
    }

    #[test]
    fn good_values_resolve() {
        let c = config(&[
            "--pattern",
            "randread",
            "--engine",
            "io_uring",
            "--iodepth",
            "32",
            "--io",
            "fsync",
            "--time",
            "2m",
            "--ramp",
            "5",
            "--dist",
            "zipf:1.2",
            "--hotspot-mb",
            "8",
            "--hotspot-frequency",
            "3",
            "--seed",
            "7",
        ])
        .unwrap();
        assert_eq!(c.workload.raw().map(|r| r.read_pct), Some(100));
        assert_eq!(c.engine, EngineKind::IoUring);
        assert_eq!(
            c.length,
            RunLength::Time {
                time_s: 120.0,
                ramp_s: 5.0
            }
        );
        assert_eq!(c.hotspot.unwrap().size_bytes, 8 << 20);
        assert_eq!(c.seed, 7);
    }
}
