//! `dbio clean`: removes what dbio laid out in a target directory — its
//! data files, manifest and redo logs, the PostgreSQL cluster of
//! `--workload pg` and the MariaDB instance of `--workload mysql`
//! (stopping a server left running on them) — or, with
//! `--pg-url` (`--mysql-url`), drops the schema (database) dbio made on an
//! existing server. Nothing
//! dbio did not create is touched, and a target in use by another dbio
//! command is refused. A directory holding only `dbio.lock` (a run that
//! failed before making anything) is removed.

use std::process::ExitCode;

use super::CommandError;
use crate::cli::CleanArgs;
use crate::storage::{self, lock::TargetLock};
use crate::workload::mysql::server as mysql;
use crate::workload::pg::{endpoint, server};

pub fn execute(args: &CleanArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.mysql_url {
        let dropped = crate::workload::mysql::endpoint::clean(url).map_err(CommandError::from)?;
        eprintln!(
            "{}",
            if dropped {
                "dropped the database dbio made on that server"
            } else {
                "no database dbio there: nothing to drop"
            }
        );
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(url) = &args.pg_url {
        let dropped = endpoint::clean(url).map_err(CommandError::from)?;
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
    if only_lock_left(&args.target) {
        // A run that failed before making anything (a server whose initdb
        // or start failed removes its files): the lock file and the
        // directory it made, unless another dbio command holds it.
        let _lock =
            TargetLock::directory(&args.target).map_err(|e| CommandError::Usage(e.to_string()))?;
        let _ = std::fs::remove_file(args.target.join(storage::lock::LOCK_NAME));
        let _ = std::fs::remove_dir(&args.target);
        eprintln!(
            "removed {}: it held only the lock file of a run that failed before making anything",
            crate::terminal::path(&args.target)
        );
        return Ok(ExitCode::SUCCESS);
    }
    // A PostgreSQL cluster of --workload pg: stop a server left running on
    // it (never one a running benchmark holds: the target's lock says so),
    // remove it and its WAL.
    let has_server = args.target.join(server::CLUSTER_SUBDIR).is_dir()
        || args.target.join(mysql::INSTANCE_SUBDIR).is_dir();
    let (pg, my) = {
        let _lock = if has_server {
            Some(
                TargetLock::directory(&args.target)
                    .map_err(|e| CommandError::Usage(e.to_string()))?,
            )
        } else {
            None
        };
        (
            server::clean(&args.target)?,
            crate::workload::mysql::lifecycle::clean(&args.target),
        )
    };
    if pg {
        eprintln!(
            "removed the PostgreSQL cluster {} of --workload pg",
            crate::terminal::path(&args.target.join(server::CLUSTER_SUBDIR))
        );
    }
    if my {
        eprintln!(
            "removed the MariaDB instance {} of --workload mysql",
            crate::terminal::path(&args.target.join(mysql::INSTANCE_SUBDIR))
        );
    }
    if (pg || my) && !args.target.join("dbio-manifest.json").exists() {
        let _ = std::fs::remove_file(args.target.join("dbio.lock"));
        let _ = std::fs::remove_dir(&args.target);
        return Ok(ExitCode::SUCCESS);
    }
    let removed = storage::clean(&args.target).map_err(|e| CommandError::Usage(e.to_string()))?;
    eprintln!(
        "removed {} data file(s) and the manifest from {}",
        removed.len(),
        crate::terminal::path(&args.target)
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether `dir` is a directory holding nothing but dbio's lock file.
fn only_lock_left(dir: &std::path::Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let names: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
    names.len() == 1 && names[0] == storage::lock::LOCK_NAME
}
