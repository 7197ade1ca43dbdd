//! What `dbio run`'s arms for real database servers (`run_pg.rs`,
//! `run_mysql.rs`) share: the target as a locked directory, the server's
//! errors as exit codes, the load's progress line, and the harness's
//! outcome as a report with the client-side latency histograms to store.

use super::CommandError;
use crate::config::RunConfig;
use crate::environment::Environment;
use crate::harness::{Outcome, Status};
use crate::measure::stats::OpStats;
use crate::report::Report;
use crate::samplers::telemetry::TelemetrySummary;
use crate::storage::{Target, TargetError, TargetKind};
use crate::store::encode_histogram;
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
    let own_server = cfg.mysql.as_ref().is_some_and(|m| m.server.url.is_none())
        || cfg.pg.as_ref().is_some_and(|p| p.server.url.is_none());
    let mut locks = Vec::new();
    if own_server {
        crate::storage::place::check_directory(&cfg.target, cfg.allow_root_fs)?;
        let created = crate::storage::layout::create_last(&cfg.target)?;
        match crate::storage::lock::TargetLock::directory(&cfg.target) {
            Ok(l) => locks.push(l),
            Err(e) => {
                if created {
                    let _ = std::fs::remove_dir(&cfg.target);
                }
                return Err(e);
            }
        }
        if announce {
            crate::storage::place::announce(&cfg.target);
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

/// "loading N table(s) of M rows ... (or reusing them)" on stderr, with progress.
pub fn announce_load(progress: bool, tables: u32, rows: u64, detail: &str) {
    if progress {
        eprintln!("loading {tables} table(s) of {rows} rows{detail} (or reusing them)");
    }
}

/// The harness's outcome as a run's report and the histograms to store
/// (named `prefix.kind`): `summary` makes the server's section from the
/// threads' parts, the measured seconds, dbio's CPU seconds and the
/// telemetry window; `died` (the server's own words) fails a run whose
/// server died under it.
pub fn report<P, S>(
    cfg: &RunConfig,
    target: &Target,
    out: Outcome<DbPart<P>>,
    prefix: &str,
    died: Option<&str>,
    summary: impl FnOnce(&[DbPart<P>], f64, f64, Option<&TelemetrySummary>) -> S,
) -> (Report, S, Histograms) {
    let s = summary(
        &out.parts,
        out.result.measured_s,
        out.result.cpu.total_s(),
        out.result.window.as_ref(),
    );
    let histograms = histograms(prefix, &out.parts);
    let mut result = out.result;
    if let Some(why) = died
        && result.status != Status::Failed
    {
        result.status = Status::Failed;
        result.error = Some(why.into());
    }
    let report = Report::new(cfg, target, result, Environment::capture());
    (report, s, histograms)
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
