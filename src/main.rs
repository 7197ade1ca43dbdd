//! The `dbio` binary: parses the command line, runs the command, and maps the
//! outcome to an exit code (0 ok, 1 run failed, 2 usage or configuration
//! error, 130 interrupted).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Parser;
use dbio::cli::{Cli, Command, RunArgs};
use dbio::config::RunLength;
use dbio::environment::Environment;
use dbio::report::{Report, text};
use dbio::runner::{self, RunError, Status};
use dbio::samplers::status::StatusLine;
use dbio::target::{self, Target, TargetError};

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_INTERRUPTED: u8 = 130;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind::*;
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // One line: clap's first line names the option, the value and what is allowed.
            let rendered = e.render().to_string();
            let mut line = rendered
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments")
                .to_string();
            if let Some(values) = rendered
                .lines()
                .find_map(|l| l.trim().strip_prefix("[possible values: "))
            {
                line = format!("{line} (possible values: {})", values.trim_end_matches(']'));
            }
            eprintln!("{line}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match cli.command {
        Command::Run(args) => run(*args),
        Command::Clean(args) => match target::clean(&args.target) {
            Ok(removed) => {
                eprintln!(
                    "removed {} data file(s) and the manifest from {}",
                    removed.len(),
                    args.target.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(EXIT_USAGE, &e.to_string()),
        },
    }
}

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(code)
}

fn run(args: RunArgs) -> ExitCode {
    let json = args.json;
    let quiet = args.quiet;
    let cfg = match args.into_config() {
        Ok(c) => c,
        Err(e) => return fail(EXIT_USAGE, &e),
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second Ctrl-C exits at once; the first stops the run cleanly.
        let _ = signal_hook::flag::register_conditional_shutdown(
            sig,
            EXIT_INTERRUPTED as i32,
            Arc::clone(&interrupt),
        );
        let _ = signal_hook::flag::register(sig, Arc::clone(&interrupt));
    }
    let show_progress = !json && !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let target = match Target::prepare(&cfg, show_progress, &interrupt) {
        Ok(t) => t,
        Err(TargetError::Interrupted) => {
            return fail(
                EXIT_INTERRUPTED,
                "interrupted while laying out; the partial layout was removed",
            );
        }
        Err(
            e @ (TargetError::Io { .. } | TargetError::Layout { .. } | TargetError::NoSpace { .. }),
        ) => return fail(EXIT_FAILED, &e.to_string()),
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    let (total_s, ramp_s) = match cfg.length {
        RunLength::Time { time_s, ramp_s } => (Some(time_s + ramp_s), ramp_s),
        RunLength::Ops { .. } => (None, 0.0),
    };
    let status = StatusLine::for_stderr(!json && !quiet, total_s, ramp_s);
    let result = match runner::run(&cfg, &target, &interrupt, status) {
        Ok(r) => r,
        Err(RunError::Target(e)) => return fail(EXIT_FAILED, &e.to_string()),
        Err(e) => return fail(EXIT_USAGE, &e.to_string()),
    };
    let report = Report::new(&cfg, &target, result, Environment::capture());
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serializes")
        );
    } else {
        print!("{}", text::render(&report));
    }
    match report.status {
        Status::Completed => ExitCode::SUCCESS,
        Status::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
        Status::Failed => {
            if json {
                eprintln!("error: {}", report.error.as_deref().unwrap_or("run failed"));
            }
            ExitCode::from(EXIT_FAILED)
        }
    }
}
