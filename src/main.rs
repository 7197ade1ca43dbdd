//! The `dbio` binary: parses the command line, runs the command, and maps the
//! outcome to an exit code (0 ok, 1 run failed, 2 usage or configuration
//! error, 130 interrupted).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use dbio::cli::Command;
use dbio::cli::plan::PlanCommand;
use dbio::commands::{self, CommandError, EXIT_USAGE, interrupt_flag};
use dbio::store::Store;

fn main() -> ExitCode {
    quiet_panics();
    let cli = match dbio::cli::try_parse_from(std::env::args_os()) {
        Ok(c) => c,
        Err(e) if dbio::cli::refused(&e) => return ExitCode::SUCCESS,
        Err(_) => return ExitCode::from(EXIT_USAGE),
    };
    let fresh = FreshStore::note(store_path(&cli.command));
    let output =
        match output_path(&cli.command).map(|p| commands::output_file::OutputFile::redirect(&p)) {
            Some(Err(e)) => {
                eprintln!("error: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
            Some(Ok(o)) => Some(o),
            None => None,
        };
    let outcome = dispatch(cli.command);
    let outcome = match (outcome, output.map(|o| o.finish())) {
        (Ok(_), Some(Err(e))) => Err(e.into()),
        (outcome, _) => outcome,
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            let code = commands::exit_code(&e);
            if let (EXIT_USAGE, Some(fresh)) = (code, fresh) {
                fresh.undo();
            }
            // A closed stdout (`| head`) is a normal end: nothing to say.
            if code != 0 {
                eprintln!("error: {}", commands::error_line(&e));
            }
            ExitCode::from(code)
        }
    }
}

/// The store a command opens, if it opens one.
fn store_path(command: &Command) -> Option<PathBuf> {
    let db = match command {
        Command::Run(a) => &a.db,
        Command::Curve(a) => &a.run.db,
        Command::Verify(a) => &a.db,
        Command::Clean(_)
        | Command::Capture(_)
        | Command::Trace { .. }
        | Command::Completions(_)
        | Command::Man(_) => return None,
        Command::Lab {
            command: dbio::cli::lab::LabCommand::Run { db, .. },
        } => db,
        Command::Lab {
            command: dbio::cli::lab::LabCommand::VsEngine(a),
        } => &a.db,
        Command::Lab { .. } => return None,
        Command::Plan { db, .. }
        | Command::Report { db, .. }
        | Command::Compare { db, .. }
        | Command::Metrics { db, .. }
        | Command::Import { db, .. }
        | Command::Runs { db, .. } => db,
    };
    Some(db.clone().unwrap_or_else(Store::default_path))
}

/// The file a command's stdout goes to (`--output`), if it was given one.
fn output_path(command: &Command) -> Option<PathBuf> {
    match command {
        Command::Run(a) => a.output.clone(),
        Command::Report { args, .. } => args.output.clone(),
        Command::Compare { args, .. } => args.output.clone(),
        _ => None,
    }
}

/// A store that did not exist before the command: a refused command must
/// not leave one behind (nor the directories made for it).
struct FreshStore {
    path: PathBuf,
    /// Directories that did not exist, deepest first.
    dirs: Vec<PathBuf>,
}

impl FreshStore {
    fn note(path: Option<PathBuf>) -> Option<FreshStore> {
        let path = path?;
        if path.symlink_metadata().is_ok() {
            return None;
        }
        let dirs = path
            .ancestors()
            .skip(1)
            .filter(|d| !d.as_os_str().is_empty())
            .take_while(|d| d.symlink_metadata().is_err())
            .map(PathBuf::from)
            .collect();
        Some(FreshStore { path, dirs })
    }

    /// Removes the store the command created, if it holds no run.
    fn undo(self) {
        if !self.path.exists() {
            return;
        }
        let empty = Store::open(&self.path)
            .and_then(|s| s.list(&Default::default()))
            .is_ok_and(|rows| rows.is_empty());
        if !empty {
            return;
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = self.path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(p));
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Opens the results store (`--db`, else the default): a store that cannot
/// be opened is a usage error (nothing was run), said in one line. Only the
/// default path gets its missing directories made; `--db` names a file in a
/// directory that exists.
fn open_store(db: Option<PathBuf>) -> anyhow::Result<Store> {
    let (path, opened) = match db {
        Some(path) => {
            let opened = Store::open_given(&path);
            (path, opened)
        }
        None => {
            let path = Store::default_path();
            let opened = Store::open(&path);
            (path, opened)
        }
    };
    opened
        .map_err(|e| CommandError::Usage(format!("{e} (choose another store with --db PATH)")))
        .with_context(|| format!("opening the store at {}", path.display()))
}

fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Run(args) if args.mpi => dbio::ranks::run(*args, open_store),
        Command::Run(args) => commands::run::execute(*args, open_store),
        Command::Curve(args) => commands::curve::execute(*args, open_store),
        Command::Clean(args) => commands::clean::execute(&args),
        Command::Capture(args) => commands::capture::execute(&args),
        Command::Trace { command } => commands::trace::execute(command, open_store),
        Command::Completions(args) => {
            commands::manual::completions(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man(args) => {
            commands::manual::man(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify(args) => commands::verify::execute(&args, open_store),
        Command::Plan {
            command:
                PlanCommand::Run {
                    plan,
                    dry_run: false,
                    mpi: true,
                    metrics,
                },
            db,
        } => dbio::ranks::plan(&plan, (db, metrics.wanted()), open_store),
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
        Command::Metrics { args, db } => {
            let store = open_store(db)?;
            commands::metrics::execute(&args, &store)?;
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
        Command::Lab { command } => {
            let db = match &command {
                dbio::cli::lab::LabCommand::Run { db, .. } => db.clone(),
                dbio::cli::lab::LabCommand::VsEngine(a) => a.db.clone(),
                _ => None,
            };
            let interrupt = interrupt_flag();
            commands::lab::execute(command, || open_store(db.clone()), &interrupt)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Runs { command, db } => {
            let mut store = open_store(db)?;
            let mut out = std::io::stdout().lock();
            commands::runs::execute(&mut store, command, &mut out).map_err(|e| match e {
                dbio::store::StoreError::Output { source } => commands::output::write_error(source),
                e => CommandError::Usage(e.to_string()),
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A closed stdout or stderr (`dbio ... 2>&1 | head`) ends dbio quietly
/// with exit 0, like ripgrep; any other panic is one line (a dbio bug) unless
/// RUST_BACKTRACE asks for the backtrace.
fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if msg.starts_with("failed printing to std") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            return default(info);
        }
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("error: internal error (a dbio bug, please report it): {msg}{at}");
    }));
}
