//! What `dbio run`'s arms for real database servers (`run_pg.rs`,
//! `run_mysql.rs`) share: the target as a locked directory, the flow of a
//! server run ([`run`]: an existing server or one dbio starts, the server's
//! errors as exit codes, the load's progress line, the harness's outcome as
//! a report with the client-side latency histograms to store). Each arm is
//! what its server does differently: find, start, load, ask the server.

use super::CommandError;
use crate::config::RunConfig;
use crate::environment::Environment;
use crate::harness::{Options, Outcome, StartSync, Status};
use crate::measure::stats::OpStats;
use crate::report::Report;
use crate::samplers::telemetry::TelemetrySummary;
use crate::storage::{Target, TargetError, TargetKind};
use crate::store::encode_histogram;
use crate::workload::Shared;
use crate::workload::db::{DbPart, ServerConfig, ServerError};

/// Latency histograms to store, by name.
pub type Histograms = Vec<(String, Vec<u8>)>;

/// The target of a database run as the report shows it: the directory, no
/// files of dbio's own (the server lays out its own). For a server dbio
/// starts, the directory passes the same checks as any target (not a
/// mistyped path, not an unmounted mount point; at most its last component
/// created) and is locked for the run.
pub fn target(
    cfg: &RunConfig,
    server: &ServerConfig,
    announce: bool,
) -> Result<Target, TargetError> {
    let mut locks = Vec::new();
    if server.url.is_none() {
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

/// What a server run hands its arm: the run's settings, what its threads
/// share, the harness's options and start, and whether to show progress.
pub struct Ctx<'a> {
    pub cfg: &'a RunConfig,
    pub shared: &'a Shared,
    pub opts: Options<'a>,
    /// Who the sessions start with (`None`: this process alone).
    pub sync: Option<&'a dyn StartSync>,
    pub progress: bool,
}

impl Ctx<'_> {
    /// "loading N table(s) of M rows ... (or reusing them)" on stderr, with progress.
    pub fn announce_load(&self, tables: u32, rows: u64, detail: &str) {
        if self.progress {
            eprintln!("loading {tables} table(s) of {rows} rows{detail} (or reusing them)");
        }
    }
}

/// What a server arm measured: the facts for its report section, the
/// harness's outcome, and, when the server died under the run, why (in
/// the server's own words: it fails the run; what was measured is kept).
pub struct Ran<F, P> {
    pub facts: F,
    pub out: Outcome<DbPart<P>>,
    pub died: Option<&'static str>,
}

/// A database server's part of a run: how it runs on an existing server
/// and on one dbio starts, and its section of the report.
pub trait Arm {
    /// The server's facts (version, directories, settings, the load).
    type Facts;
    /// What the sampler reads of the server's statistics.
    type Stats;
    /// The report's section of the server.
    type Summary;
    /// `--workload NAME`, the histograms' prefix.
    const NAME: &'static str;
    /// The existing server to use (`--X-url`), if one was given.
    fn url(&self) -> Option<&str>;
    /// The run on the existing server at `url`: nothing started.
    fn existing(&self, url: &str, ctx: Ctx) -> Result<Ran<Self::Facts, Self::Stats>, ServerError>;
    /// The run on the server dbio makes or reuses on the target, started
    /// for the run and stopped after it.
    fn own(&self, ctx: Ctx) -> Result<Ran<Self::Facts, Self::Stats>, ServerError>;
    /// The report's section from the facts, the threads' parts, the
    /// measured seconds, dbio's CPU seconds and the telemetry window.
    fn summary(
        facts: Self::Facts,
        parts: &[DbPart<Self::Stats>],
        secs: f64,
        cpu_s: f64,
        window: Option<&TelemetrySummary>,
    ) -> Self::Summary;
    /// Puts the section in the report.
    fn put(report: &mut Report, summary: Self::Summary);
}

/// A run on a database server through its arm, on the existing server
/// (`--X-url`) or on one dbio starts; the server's errors as exit codes.
/// Returns the run's report and the histograms to store (`NAME.kind`).
pub fn run<A: Arm>(
    arm: &A,
    target: &Target,
    ctx: Ctx,
) -> Result<(Report, Histograms), CommandError> {
    let cfg = ctx.cfg;
    let ran = match arm.url() {
        Some(url) => arm.existing(url, ctx),
        None => arm.own(ctx),
    }
    .map_err(CommandError::from)?;
    let out = ran.out;
    let summary = A::summary(
        ran.facts,
        &out.parts,
        out.result.measured_s,
        out.result.cpu.total_s(),
        out.result.window.as_ref(),
    );
    let histograms = histograms(A::NAME, &out.parts);
    let mut result = out.result;
    if let Some(why) = ran.died
        && result.status != Status::Failed
    {
        result.status = Status::Failed;
        result.error = Some(why.into());
    }
    let mut report = Report::new(cfg, target, result, Environment::capture());
    A::put(&mut report, summary);
    Ok((report, histograms))
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
