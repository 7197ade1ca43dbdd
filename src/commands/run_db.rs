//! What `dbio run`'s arms for real database servers (`run_pg.rs`,
//! `run_mysql.rs`) share: the target as a locked directory, the server's
//! errors as exit codes, and the client-side latency histograms to store.

use super::CommandError;
use crate::config::RunConfig;
use crate::measure::stats::OpStats;
use crate::store::encode_histogram;
use crate::target::{Target, TargetError, TargetKind};
use crate::workload::db::{DbPart, ServerError};

/// Latency histograms to store, by name.
pub type Histograms = Vec<(String, Vec<u8>)>;

pub fn command_error(e: ServerError) -> CommandError {
    match e {
        ServerError::Usage(m) => CommandError::Usage(m),
        ServerError::Failed(m) => CommandError::Failed(m),
        ServerError::Interrupted(m) => CommandError::Interrupted(m),
    }
}

/// The target of a database run as the report shows it: the directory, no
/// files of dbio's own (the server lays out its own). For a server dbio
/// starts, the directory passes the same checks as any target (not a
/// mistyped path, not an unmounted mount point; at most its last component
/// created) and is locked for the run.
pub fn target(cfg: &RunConfig, announce: bool) -> Result<Target, TargetError> {
    let own_server = cfg.mysql.as_ref().is_some_and(|m| m.url.is_none())
        || cfg.pg.as_ref().is_some_and(|p| p.url.is_none());
    let mut locks = Vec::new();
    if own_server {
        crate::target::place::check_directory(&cfg.target, cfg.allow_root_fs)?;
        let created = crate::target::layout::create_last(&cfg.target)?;
        match crate::target::lock::TargetLock::directory(&cfg.target) {
            Ok(l) => locks.push(l),
            Err(e) => {
                if created {
                    let _ = std::fs::remove_dir(&cfg.target);
                }
                return Err(e);
            }
        }
        if announce {
            crate::target::place::announce(&cfg.target);
        }
    }
    Ok(Target {
        kind: TargetKind::Directory,
        path: cfg.target.clone(),
        files: Vec::new(),
        block_size: cfg.block_size,
        blocks_per_file: 0,
        id: 0,
        logical_sector: None,
        layout: None,
        region: None,
        locks: std::sync::Arc::new(locks),
    })
}

/// The sessions' latency histograms merged per kind, named `PREFIX.kind`.
pub fn histograms<S>(prefix: &str, parts: &[DbPart<S>]) -> Histograms {
    let mut out = Vec::new();
    for name in ["select", "update", "commit", "scan"] {
        let mut merged = OpStats::default();
        for p in parts {
            merged.merge(match name {
                "select" => &p.select,
                "update" => &p.update,
                "commit" => &p.commit,
                _ => &p.scan,
            });
        }
        if merged.count > 0 {
            out.push((format!("{prefix}.{name}"), encode_histogram(&merged.hist)));
        }
    }
    out
}
