//! `dbio run --mpi`: this process is one rank of an MPI job. Every rank
//! checks its options and lays out its own target (`{rank}`, `{host}` in
//! `--target`), the ranks agree that all are ready, start together behind
//! one barrier, run, and send what they measured to rank 0, which merges
//! it into one run, shows it and saves it. A rank that fails before the
//! start fails the run on every rank with one line naming it; only rank 0
//! prints and touches the store.

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::template;
use super::wire::RankResult;
use super::world::{World, abort_on_panic};
use crate::commands::CommandError;
use crate::commands::measure::{Histograms, How, Measured, Peers, Ran, measure};
use crate::commands::run::{self as run_cmd, Output, RunMeta, RunOutcome};
use crate::config::{RunConfig, RunLength};
use crate::environment::Environment;
use crate::harness::{StartSync, Status};
use crate::options::RunArgs;
use crate::report::Report;
use crate::samplers::progress::Progress;
use crate::storage::Target;
use crate::storage::region::Region;
use crate::store::Store;
use crate::workload::slob::run::SlobRun;

/// Runs this rank; rank 0 reports and stores the merged run, and a failed
/// run's error and exit code are rank 0's. The other ranks print nothing.
pub fn execute(
    args: RunArgs,
    open_store: impl FnOnce(Option<std::path::PathBuf>) -> Result<Store, CommandError>,
) -> Result<ExitCode, CommandError> {
    let env = Environment::capture();
    let world = World::init(&env.hostname)?;
    abort_on_panic(world.rank, env.hostname.clone());
    let root = world.rank == 0;
    let output = if args.json {
        Output::Json
    } else {
        Output::Text
    };
    let db = args.db.clone();
    let mut store = None;
    let out = super::live::start(&world, &args.metrics.wanted()).and_then(|live| {
        let meta = RunMeta {
            tags: args.tags.clone(),
            live,
            ..Default::default()
        };
        run_rank(
            &world,
            args,
            env,
            &mut store,
            || open_store(db),
            &meta,
            output,
        )
    });
    // The universe is finalized as `world` drops, after every rank is here.
    // A failed run is rank 0's to report, with its exit code (mpirun's):
    // the others end quietly with 0, since a rank that exits non-zero
    // makes mpirun end the rest at once, rank 0 too, sometimes before it
    // had printed why.
    match out {
        Err(_) if !root => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e),
        Ok(None) => Ok(ExitCode::SUCCESS),
        Ok(Some(outcome)) => Ok(run_cmd::exit_code(&outcome, output)),
    }
}

/// One run of this rank, shown as `output` and saved by rank 0 in `store`
/// (opened with `open` at its turn when it is not yet): rank 0's outcome,
/// `None` on the other ranks. An error is every rank's.
pub(super) fn run_rank(
    world: &World,
    args: RunArgs,
    env: Environment,
    store: &mut Option<Store>,
    open: impl FnOnce() -> Result<Store, CommandError>,
    meta: &RunMeta,
    output: Output,
) -> Result<Option<RunOutcome>, CommandError> {
    let root = world.rank == 0;
    let quiet = args.quiet || !root;
    let (grace_s, region_per_rank) = (args.mpi_grace, args.region_per_rank);
    let template = args.target.clone();
    let cfg = world.agree(check(args, world, &env))?;
    // From here to the start barrier, a rank silent for the grace (a stopped
    // process, a stuck device) ends the job, named; long steps run on a
    // worker thread so that a long layout is not silence.
    let _watching = world.watch(grace_s);
    let region = match region_per_rank {
        true => Some(super::shared_device::region(world, &cfg)?),
        false => None,
    };
    refuse_shared_target(world, &cfg, &template, region.is_some())?;
    let opened = world.agree(if root && store.is_none() {
        open().map(Some)
    } else {
        Ok(None)
    })?;
    if opened.is_some() {
        *store = opened;
    }
    let interrupt = crate::commands::interrupt_flag();
    let show = output == Output::Text && !quiet;
    let progress = Progress::from(show && std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let (plan, variable) = (meta.plan.as_deref(), meta.variable.as_deref());
    let watch = meta.live.as_ref().map(|l| l.watch(&cfg, plan, variable));
    let how = How {
        progress: &progress,
        announce: root,
        notes: show,
        interrupt: &interrupt,
        observer: watch.as_ref().map(|w| w as &dyn crate::harness::Observer),
        window: None,
    };
    let Measured { target, ran } = measure(&cfg, &how, &Rank { world, region })?;
    let job = job_config(&cfg, &template, world.size);
    let Some((mut report, histograms, hung)) = merged(world, &job, &target, ran, env, grace_s)?
    else {
        return Ok(None);
    };
    report.target.path = template;
    let store = store
        .as_mut()
        .ok_or_else(|| CommandError::Failed("rank 0 has no store to save the run in".into()))?;
    let saved = run_cmd::show_and_save(&report, &histograms, output, quiet, store, meta);
    if let (Some(w), Ok(o)) = (&watch, &saved) {
        w.saved(o.run_id);
    }
    if let Some(msg) = hung {
        // The missing rank would never join MPI_Finalize: end every rank.
        if let Err(e) = &saved {
            eprintln!("error: {}", crate::terminal::line(&e.to_string()));
        }
        eprintln!("error: {}", crate::terminal::line(&msg));
        let _ = std::io::Write::flush(&mut std::io::stdout());
        World::abort(i32::from(crate::commands::EXIT_FAILED));
    }
    saved.map(Some)
}

/// A rank among the others: each step before the start agreed, the layout
/// on a worker thread (`World::busy`), the start behind MPI's barrier.
struct Rank<'a> {
    world: &'a World,
    /// This rank's region of a shared device (`--region-per-rank`).
    region: Option<Region>,
}

impl Peers for Rank<'_> {
    fn target(&self, cfg: &RunConfig, how: &How) -> Result<Target, CommandError> {
        let (world, interrupt) = (self.world, how.interrupt);
        let device = crate::storage::device::is_block_device(&cfg.target);
        // Every rank's directory is checked before any rank lays out its own.
        if !device {
            let checked = world.busy("checking its directory", interrupt, |_| {
                crate::storage::place::check_directory(&cfg.target, cfg.allow_root_fs)
            });
            world.agree(checked.map_err(run_cmd::layout_error))?;
        }
        let doing = match device {
            true => "checking its device",
            false => "laying out its files",
        };
        let region = self.region;
        let target = world.busy(doing, interrupt, |stop| match region {
            Some(r) => Target::prepare_region(cfg, r, false),
            None => Target::prepare(cfg, how.progress, how.announce, stop),
        });
        let target = world.agree(target.map_err(run_cmd::layout_error))?;
        // A shared device is announced once every rank holds its region.
        if self.region.is_some() && how.announce {
            crate::storage::place::announce(&cfg.target);
        }
        Ok(target)
    }

    fn agree<T>(&self, step: Result<T, CommandError>) -> Result<T, CommandError> {
        self.world.agree(step)
    }

    fn busy<T: Send>(
        &self,
        doing: &'static str,
        interrupt: &AtomicBool,
        step: impl FnOnce(&AtomicBool) -> Result<T, CommandError> + Send,
    ) -> Result<T, CommandError> {
        self.world.busy(doing, interrupt, step)
    }

    fn start_sync(&self) -> Option<&dyn StartSync> {
        Some(self.world)
    }
}

/// Refuses ranks on one host that would share a target (a directory
/// without `{rank}`, a device without `--region-per-rank`).
fn refuse_shared_target(
    world: &World,
    cfg: &RunConfig,
    template: &Path,
    regions: bool,
) -> Result<(), CommandError> {
    let targets: Vec<_> = world
        .all_gather(cfg.target.as_os_str().as_encoded_bytes())
        .into_iter()
        .zip(&world.hosts)
        .map(|(t, h)| (h.clone(), String::from_utf8_lossy(&t).into_owned().into()))
        .collect();
    let Some((a, b)) = template::shared_target(&targets).filter(|_| !regions) else {
        return Ok(());
    };
    let fix = if crate::storage::device::is_block_device(&cfg.target) {
        "add --region-per-rank to give each rank a region of the device of its own".to_string()
    } else {
        format!(
            "put {{rank}} in it (--target {}-{{rank}})",
            template.display()
        )
    };
    Err(CommandError::Usage(format!(
        "--target: ranks {a} and {b} on host {} would share {}; {fix}",
        targets[a].0,
        targets[a].1.display(),
    )))
}

/// This rank's measurement sent to rank 0, which merges every rank's into
/// the job's report (`job`'s settings) with the histograms to store, and
/// the line naming ranks that did not report in time (the run is then
/// failed, and every rank ended after it is saved). `None` on the other
/// ranks.
fn merged(
    world: &World,
    job: &RunConfig,
    target: &Target,
    ran: Ran,
    env: Environment,
    grace_s: f64,
) -> Result<Option<(Report, Histograms, Option<String>)>, CommandError> {
    let (result, slob, threads) = match ran {
        Ran::Raw {
            result, threads, ..
        } => (result, None, threads),
        Ran::Slob {
            slob,
            result,
            run,
            threads,
        } => (result, Some((slob, run)), threads),
        Ran::Server { .. } => return Err(CommandError::Usage(NO_SERVER_UNDER_MPI.into())),
    };
    // Every rank ran the job's sessions over the ranks.
    let sessions = job.sessions / world.size;
    let mut sent = RankResult::new(world.rank, [sessions, threads], &result, &env);
    if let Some((_, run)) = &slob {
        sent = sent.with_slob(run);
    }
    // A rank that has not reported by then hangs (a stuck device): the
    // grace after the window's planned end (rank 0's may have been cut short
    // by Ctrl-C); an --ops run's ranks may take up to twice rank 0's window.
    let ran_s = result.ramp_s + result.measured_s;
    let wait_s = grace_s + job.total_s().map_or(ran_s, |t| (t - ran_s).max(0.0));
    let deadline = Instant::now() + Duration::from_secs_f64(wait_s);
    let Some(all) = world.report_by(&sent.encode(), deadline) else {
        return Ok(None);
    };
    let missing: Vec<u32> = (0..world.size)
        .filter(|&r| all[r as usize].is_none())
        .collect();
    let ranks = all
        .iter()
        .flatten()
        .map(|b| RankResult::decode(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    let mut merged = super::merge::merge(ranks, result, target.block_size, World::library())
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    let hung = (!missing.is_empty()).then(|| {
        let names: Vec<String> = missing.iter().map(|&r| world.name(r)).collect();
        format!(
            "{} did not report within {wait_s:.0} s of rank 0's window end (hung?); stored what the other {} rank(s) measured as a failed run and ended the job",
            names.join(", "),
            world.size as usize - missing.len()
        )
    });
    if let Some(msg) = &hung {
        merged.result.status = Status::Failed;
        merged.result.error = Some(msg.clone());
        merged.mpi.missing_ranks = missing;
    }
    let (mut report, histograms) = match (slob, merged.slob) {
        (Some((slob, local)), Some([sessions, dbwr, lgwr])) => {
            let run = SlobRun {
                sessions,
                dbwr,
                lgwr,
                redo_files: local.redo_files,
                // Each rank's model has its own checkpoint cycle.
                cycle: None,
            };
            let threads = [slob.sessions(), slob.db_writers].map(|n| n * world.size);
            run_cmd::slob_report(job, slob, target, merged.result, &run, threads, env)
        }
        _ => {
            let histograms = run_cmd::histograms(&merged.result);
            (Report::new(job, target, merged.result, env), histograms)
        }
    };
    report.mpi = Some(merged.mpi);
    report.ranks = merged.ranks;
    Ok(Some((report, histograms, hung)))
}

/// Why a server workload does not run under MPI.
const NO_SERVER_UNDER_MPI: &str = "--mpi runs --workload raw and slob (a database server's workload under MPI is not supported yet)";

/// This rank's options checked into its run's settings, its `--target`
/// and `--redo-dir` templates (`{rank}`, `{host}`) expanded.
fn check(mut args: RunArgs, world: &World, env: &Environment) -> Result<RunConfig, CommandError> {
    for t in &args.tags {
        crate::store::validate_tag(t).map_err(|e| CommandError::Usage(e.to_string()))?;
    }
    use crate::options::WorkloadKind;
    if !matches!(args.workload, WorkloadKind::Raw | WorkloadKind::Slob) {
        return Err(CommandError::Usage(NO_SERVER_UNDER_MPI.into()));
    }
    args.target = template::expand(&args.target, world.rank, &env.hostname);
    if let Some(redo) = &mut args.slob.redo_dir {
        *redo = template::expand(redo, world.rank, &env.hostname);
    }
    let cfg = args
        .into_config()
        .map_err(|e| CommandError::Usage(e.into()))?;
    crate::preflight::check(&cfg).map_err(|e| CommandError::Usage(e.to_string()))?;
    Ok(cfg)
}

/// The job's settings, as stored: every rank ran `cfg`, so sessions, the
/// number of requests and the rate are the ranks' together, and the
/// target is the template.
fn job_config(cfg: &RunConfig, template: &std::path::Path, ranks: u32) -> RunConfig {
    let mut job = cfg.clone();
    job.target = template.to_path_buf();
    job.sessions *= ranks;
    if let RunLength::Ops { ops } = &mut job.length {
        *ops *= u64::from(ranks);
    }
    job.rate_iops = job.rate_iops.map(|r| r * u64::from(ranks));
    job
}
