//! One run measured, whoever asks for it: `dbio run` on this host, a plan's
//! cell, a lab's arm and one rank of an MPI job all call [`measure`]. It
//! prepares the target, builds the workload the run's [`WorkloadConfig`]
//! names, and runs it through the harness. What differs between this host
//! alone and a rank of an MPI job is a [`Peers`]: how the data files are laid
//! out, whether each step before the start is agreed with other processes,
//! and who the sessions start with (a `StartSync`). What becomes of the
//! result — shown and saved here, or sent to rank 0 and merged — is the
//! caller's ([`Ran::report`] for a run on its own).

use std::sync::atomic::AtomicBool;

use super::CommandError;
use super::run::{histograms, layout_error, slob_ended, slob_report};
use super::run_db;
pub use super::run_db::Histograms;
use crate::config::{RunConfig, WorkloadConfig};
use crate::document::steady::Preconditioned;
use crate::environment::Environment;
use crate::harness::{self, RunResult, StartSync};
use crate::report::Report;
use crate::samplers::progress::Progress;
use crate::samplers::status::StatusLine;
use crate::storage::Target;
use crate::workload::db::ServerConfig;
use crate::workload::raw::Raw;
use crate::workload::slob::SlobConfig;
use crate::workload::slob::run::{self as slob_run, Slob, SlobRun};
use crate::workload::{SetupError, Shared, Workload};

/// What a run on this host alone and a rank of an MPI job do differently
/// before the start.
pub trait Peers {
    /// The data files laid out for `cfg` (or its device checked).
    fn target(&self, cfg: &RunConfig, how: &How) -> Result<Target, CommandError>;
    /// A step's outcome, agreed: an error on any process is every one's.
    fn agree<T>(&self, step: Result<T, CommandError>) -> Result<T, CommandError>;
    /// A long step before the start (`doing`, e.g. "laying out its redo
    /// logs"), given a flag to stop early on.
    fn busy<T: Send>(
        &self,
        doing: &'static str,
        interrupt: &AtomicBool,
        step: impl FnOnce(&AtomicBool) -> Result<T, CommandError> + Send,
    ) -> Result<T, CommandError>;
    /// Who the sessions start with (`None`: this process alone).
    fn start_sync(&self) -> Option<&dyn StartSync>;
}

/// A run on this host alone: nothing to agree, nobody to wait for.
pub struct Alone;

impl Peers for Alone {
    fn target(&self, cfg: &RunConfig, how: &How) -> Result<Target, CommandError> {
        Target::prepare(cfg, how.progress, how.announce, how.interrupt).map_err(layout_error)
    }

    fn agree<T>(&self, step: Result<T, CommandError>) -> Result<T, CommandError> {
        step
    }

    fn busy<T: Send>(
        &self,
        _: &'static str,
        interrupt: &AtomicBool,
        step: impl FnOnce(&AtomicBool) -> Result<T, CommandError> + Send,
    ) -> Result<T, CommandError> {
        step(interrupt)
    }

    fn start_sync(&self) -> Option<&dyn StartSync> {
        None
    }
}

/// How a run shows itself while it runs.
pub struct How<'a> {
    /// The layout's and the run's progress (the status line).
    pub progress: &'a Progress,
    /// Say which target the run uses (plans say it once per target).
    pub announce: bool,
    /// Say what happened after the window (the lost-write map saved).
    pub notes: bool,
    /// Ctrl-C / SIGTERM.
    pub interrupt: &'a AtomicBool,
    /// Who else watches each second (live metrics), if anyone.
    pub observer: Option<&'a dyn harness::Observer>,
    /// What records only while the run's threads run (`--capture`): not
    /// the layout, a server's start and load before them, nor its stop.
    pub window: Option<&'a dyn harness::Window>,
}

/// What a run measured, by workload.
pub enum Ran<'a> {
    /// The raw workload: the result, its thread count, and the
    /// preconditioning before it (`--precondition`).
    Raw {
        result: RunResult,
        threads: u32,
        pre: Option<Preconditioned>,
    },
    /// The SLOB model: the result, the model's tallies, its thread count.
    Slob {
        slob: &'a SlobConfig,
        result: RunResult,
        run: Box<SlobRun>,
        threads: u32,
    },
    /// A database server's run, reported by its arm (`run_db::Arm`).
    Server {
        report: Box<Report>,
        histograms: Histograms,
    },
}

/// A measured run and the target it ran on.
pub struct Measured<'a> {
    pub target: Target,
    pub ran: Ran<'a>,
}

/// Runs `cfg` among `peers`: the target, the workload, the harness.
pub fn measure<'a, P: Peers>(
    cfg: &'a RunConfig,
    how: &How,
    peers: &P,
) -> Result<Measured<'a>, CommandError> {
    let target = target(cfg, how, peers)?;
    let shared = Shared::new(cfg.ramp_s());
    let opts = harness::Options {
        time_s: cfg.time_s(),
        interval_s: cfg.interval_s,
        interrupt: how.interrupt,
        status: StatusLine::new(how.progress.clone(), cfg.total_s(), cfg.ramp_s()),
        observer: how.observer,
        steady: cfg.steady.map(|s| s.rules),
        window: how.window,
    };
    let sync = peers.start_sync();
    let ctx = |opts| run_db::Ctx {
        cfg,
        shared: &shared,
        opts,
        sync,
        progress: matches!(how.progress, Progress::Tty),
    };
    let ran = match &cfg.workload {
        WorkloadConfig::Raw(raw) => {
            let pre = match cfg.steady {
                Some(s) if s.precondition => {
                    Some(super::precondition::fill(cfg, raw, &target, how)?)
                }
                _ => None,
            };
            let work = Raw::new(cfg, raw, &target, &shared).map_err(setup_error);
            raw_run(peers.agree(work)?, &shared, opts, how, sync, pre)
        }
        WorkloadConfig::Slob(slob) => slob_run(cfg, slob, &target, &shared, opts, how, peers)?,
        WorkloadConfig::Pg(pg) => reported(run_db::run(pg, &target, ctx(opts))?),
        WorkloadConfig::Mysql(my) => reported(run_db::run(my, &target, ctx(opts))?),
        WorkloadConfig::Replay(rc) => reported(super::run_replay::run(
            cfg, rc, &target, &shared, opts, peers,
        )?),
    };
    Ok(Measured { target, ran })
}

impl Ran<'_> {
    /// The report of a run on its own (not merged with other ranks') and
    /// the latency histograms to store.
    pub fn report(
        self,
        cfg: &RunConfig,
        target: &Target,
        env: Environment,
    ) -> (Report, Histograms) {
        match self {
            Ran::Raw { result, pre, .. } => {
                let histograms = histograms(&result);
                let mut report = Report::new(cfg, target, result, env);
                report.precondition = pre;
                (report, histograms)
            }
            Ran::Slob {
                slob, result, run, ..
            } => {
                let threads = [slob.sessions(), slob.db_writers];
                slob_report(cfg, slob, target, result, &run, threads, env)
            }
            Ran::Server { report, histograms } => (*report, histograms),
        }
    }
}

/// The workload's refusal of its setup, as a command error.
pub(super) fn setup_error(e: SetupError) -> CommandError {
    match e {
        SetupError::Target(e) => CommandError::Failed(e.to_string()),
        e => CommandError::Usage(e.to_string()),
    }
}

/// The run's target: the data files dbio lays out (as `peers` do), or a
/// server's directory, checked and locked for a server dbio starts (after
/// finding MariaDB: no target is made without it).
fn target<P: Peers>(cfg: &RunConfig, how: &How, peers: &P) -> Result<Target, CommandError> {
    let server = |s: &ServerConfig| run_db::target(cfg, s, how.announce).map_err(layout_error);
    match &cfg.workload {
        WorkloadConfig::Raw(_) | WorkloadConfig::Slob(_) | WorkloadConfig::Replay(_) => {
            peers.target(cfg, how)
        }
        WorkloadConfig::Pg(pg) => server(&pg.server),
        WorkloadConfig::Mysql(my) => {
            if my.server.url.is_none() {
                crate::workload::mysql::server::Binaries::find(my.server.bin.as_deref())
                    .map_err(CommandError::from)?;
            }
            server(&my.server)
        }
    }
}

/// A server arm's report as what it ran.
fn reported<'a>((report, histograms): (Report, Histograms)) -> Ran<'a> {
    Ran::Server {
        report: Box::new(report),
        histograms,
    }
}

/// The raw workload through the harness; its lost-write map saved after.
fn raw_run<'a>(
    mut work: Raw,
    shared: &Shared,
    opts: harness::Options,
    how: &How,
    sync: Option<&dyn StartSync>,
    pre: Option<Preconditioned>,
) -> Ran<'a> {
    let result = harness::run_synced(&work, shared, opts, sync).result;
    let threads = work.threads().total();
    match work.finish() {
        Ok(Some((n, secs))) if how.notes => eprintln!(
            "lost-write map saved at sync point {n} ({:.1} ms: data files fsynced, map written)",
            secs * 1e3
        ),
        Ok(_) => {}
        Err(e) => eprintln!(
            "warning: the lost-write map was not saved: {}",
            crate::terminal::line(&e.to_string())
        ),
    }
    Ran::Raw {
        result,
        threads,
        pre,
    }
}

/// The SLOB model: its redo logs laid out, then the harness.
fn slob_run<'a, P: Peers>(
    cfg: &RunConfig,
    slob: &'a SlobConfig,
    target: &Target,
    shared: &Shared,
    opts: harness::Options,
    how: &How,
    peers: &P,
) -> Result<Ran<'a>, CommandError> {
    let redo = peers.busy("laying out its redo logs", how.interrupt, |stop| {
        slob_run::prepare_redo(slob, cfg.seed, how.progress, stop).map_err(layout_error)
    });
    let redo = peers.agree(redo)?;
    let work = Slob::new(cfg, slob, target, redo, shared).map_err(setup_error);
    let work = peers.agree(work)?;
    let out = harness::run_synced(&work, shared, opts, peers.start_sync());
    let run = work.finish(&out.parts);
    let threads = work.threads().total();
    slob_ended(work);
    Ok(Ran::Slob {
        slob,
        result: out.result,
        run: Box::new(run),
        threads,
    })
}
