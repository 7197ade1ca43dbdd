//! The `dbio` binary: parses the command line, runs the command, and maps the
//! outcome to an exit code (0 ok, 1 run failed, 2 usage or configuration
//! error, 130 interrupted).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dbio::cli::{Cli, Command};
use dbio::commands::run::{self, Output, RunMeta};
use dbio::commands::{
    self, CommandError, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, interrupt_flag,
};
use dbio::harness::Status;
use dbio::store::Store;
use dbio::target;

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
    match dispatch(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn open_store(db: Option<PathBuf>) -> Result<Store, CommandError> {
    let path = db.unwrap_or_else(Store::default_path);
    Store::open(&path)
        .map_err(|e| CommandError::Usage(format!("{e} (choose another store with --db PATH)")))
}

fn dispatch(command: Command) -> Result<ExitCode, CommandError> {
    match command {
        Command::Run(args) => {
            let args = *args;
            let output = if args.json {
                Output::Json
            } else {
                Output::Text
            };
            let (quiet, db) = (args.quiet, args.db.clone());
            let meta = RunMeta {
                tags: args.tags.clone(),
                ..Default::default()
            };
            for t in &meta.tags {
                dbio::store::validate_tag(t).map_err(|e| CommandError::Usage(e.to_string()))?;
            }
            let cfg = args.into_config().map_err(CommandError::Usage)?;
            let mut store = open_store(db)?;
            let interrupt = interrupt_flag();
            let outcome = run::run(&cfg, output, quiet, &mut store, &meta, &interrupt)?;
            Ok(match outcome.status {
                Status::Completed => ExitCode::SUCCESS,
                Status::Interrupted => ExitCode::from(EXIT_INTERRUPTED),
                Status::Failed => {
                    if output == Output::Json {
                        eprintln!(
                            "error: {}",
                            outcome.error.as_deref().unwrap_or("run failed")
                        );
                    }
                    ExitCode::from(EXIT_FAILED)
                }
            })
        }
        Command::Clean(args) => {
            if let Some(url) = &args.pg_url {
                use dbio::workload::pg::{endpoint, server::ServerError};
                let dropped = endpoint::clean(url).map_err(|e| match e {
                    ServerError::Usage(m) => CommandError::Usage(m),
                    e => CommandError::Failed(e.to_string()),
                })?;
                eprintln!(
                    "{}",
                    if dropped {
                        "dropped the schema dbio made on that server"
                    } else {
                        "no schema dbio there: nothing to drop"
                    }
                );
                return Ok(ExitCode::SUCCESS);
            }
            // A PostgreSQL cluster of --workload pg: stop a server left
            // running on it, remove it (and its WAL).
            let pg = dbio::workload::pg::server::clean(&args.target)
                .map_err(|e| CommandError::Failed(e.to_string()))?;
            if pg {
                eprintln!(
                    "removed the PostgreSQL cluster {} of --workload pg",
                    args.target
                        .join(dbio::workload::pg::server::CLUSTER_SUBDIR)
                        .display()
                );
                if !args.target.join("dbio-manifest.json").exists() {
                    let _ = std::fs::remove_dir(&args.target);
                    return Ok(ExitCode::SUCCESS);
                }
            }
            let removed =
                target::clean(&args.target).map_err(|e| CommandError::Usage(e.to_string()))?;
            eprintln!(
                "removed {} data file(s) and the manifest from {}",
                removed.len(),
                args.target.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan { command, db } => {
            let mut store = open_store(db)?;
            let interrupt = interrupt_flag();
            commands::plan::execute(command, &mut store, &interrupt)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Report { args, db } => {
            let store = open_store(db)?;
            commands::report::execute(&args, &store)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare { args, db } => {
            let store = open_store(db)?;
            commands::compare::execute(&args, &store)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Import { command, db } => {
            let mut store = open_store(db)?;
            let mut out = std::io::stdout().lock();
            commands::import::execute(command, &mut store, &mut out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Lab { command, db } => {
            let interrupt = interrupt_flag();
            dbio::lab::execute(command, || open_store(db), &interrupt)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Runs { command, db } => {
            let mut store = open_store(db)?;
            let mut out = std::io::stdout().lock();
            dbio::store::commands::execute(&mut store, command, &mut out)
                .map_err(|e| CommandError::Usage(e.to_string()))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
