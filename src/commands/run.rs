//! `dbio run` on this host, typed or part of a plan or a lab: the run
//! measured (`measure.rs`, the one path every run takes), its report shown,
//! and the run kept in the store; what MPI ranks share of it (the report of
//! a SLOB run, showing and saving).

use std::sync::atomic::AtomicBool;

use super::CommandError;
use super::measure::{Alone, How, Measured, measure};
use crate::config::RunConfig;
use crate::document::cycle::CheckpointCycle;
use crate::environment::Environment;
use crate::harness::{self, RunResult, Status};
use crate::measure::stats::KINDS;
use crate::report::awr::SlobSummary;
use crate::report::{Report, text};
use crate::samplers::progress::Progress;
use crate::storage::{Target, TargetError};
use crate::store::{NewRun, Store, encode_histogram, unsaved};
use crate::workload::slob::SlobConfig;
use crate::workload::slob::events::EVENTS;
use crate::workload::slob::run::{self as slob_run, Slob};

/// How a run's report is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// The terminal report on stdout, a live status line on stderr.
    Text,
    /// The JSON document on stdout.
    Json,
    /// One line per run on stdout (plans).
    Line,
    /// One line per run on stderr (a command whose stdout is a table of
    /// the runs: `dbio lab vs-engine`).
    LineOnStderr,
}

/// Where a run belongs, saved with it.
#[derive(Clone, Debug, Default)]
pub struct RunMeta {
    pub plan: Option<String>,
    pub variable: Option<String>,
    pub cell_key: Option<String>,
    pub warmup: bool,
    pub tags: Vec<String>,
    /// Storage `dbio lab` built for the run: shown under the report and
    /// saved in the run's environment as `lab`.
    pub lab: Option<crate::lab::LabInfo>,
    /// Live metrics (`--metrics-listen`, `--metrics-textfile`): not saved.
    pub live: Option<crate::metrics::Live>,
    /// Capture the block requests to the target's device (`--capture`).
    pub capture: bool,
}

/// A finished run: how it ended and its id in the store.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub status: Status,
    pub error: Option<String>,
    pub run_id: i64,
}

/// Runs `cfg`, shows it as `output` asks, and saves it in `store`. A run
/// that failed or was interrupted is saved too, with that status.
pub fn run(
    cfg: &RunConfig,
    (output, quiet): (Output, bool),
    progress: &Progress,
    store: &mut Store,
    meta: &RunMeta,
    interrupt: &AtomicBool,
) -> Result<RunOutcome, CommandError> {
    let (plan, variable) = (meta.plan.as_deref(), meta.variable.as_deref());
    let watch = meta.live.as_ref().map(|l| l.watch(cfg, plan, variable));
    // `--capture`: the block layer's record of the run's threads, kept
    // with it (not the layout, nor a server's start, load and stop).
    let store_path = store.path().to_path_buf();
    let capture = meta
        .capture
        .then(|| super::run_capture::CaptureWindow::new(&cfg.target, &store_path));
    let how = How {
        progress,
        // Plans (quiet, one line per run) say it too: once per target.
        announce: !quiet || matches!(output, Output::Line | Output::LineOnStderr),
        notes: output == Output::Text && !quiet,
        interrupt,
        observer: watch.as_ref().map(|w| w as &dyn harness::Observer),
        window: capture.as_ref().map(|c| c as &dyn harness::Window),
    };
    let measured = measure(cfg, &how, &Alone);
    let captured = capture.and_then(super::run_capture::CaptureWindow::captured);
    let Measured { target, ran } = match measured {
        Ok(m) => m,
        Err(e) => {
            if let Some(c) = captured {
                c.discard();
            }
            return Err(e);
        }
    };
    let (report, histograms) = ran.report(cfg, &target, Environment::capture());
    let outcome = show_and_save(&report, &histograms, output, quiet, store, meta);
    match (captured, &outcome) {
        (Some(c), Ok(o)) => c.keep(store, o.run_id),
        (Some(c), Err(_)) => c.discard(),
        (None, _) => {}
    }
    let outcome = outcome?;
    if let Some(w) = &watch {
        w.saved(outcome.run_id);
    }
    progress.json(&serde_json::json!({
        "event": "saved",
        "run_id": outcome.run_id,
        "store": store.path(),
        "status": &outcome.status,
    }));
    Ok(outcome)
}

/// A SLOB run whose threads were all joined: its files fsynced and its
/// marks taken away, or a warning of why they stay.
pub(crate) fn slob_ended(work: Slob) {
    if let Err(e) = work.ended() {
        eprintln!(
            "warning: {}; `dbio verify` will count torn blocks as this run's interruption",
            crate::terminal::line(&e.to_string())
        );
    }
}

/// Shows a finished run's report as `output` asks and saves it in `store`
/// with its latency histograms.
pub(crate) fn show_and_save(
    report: &Report,
    histograms: &[(String, Vec<u8>)],
    output: Output,
    quiet: bool,
    store: &mut Store,
    meta: &RunMeta,
) -> Result<RunOutcome, CommandError> {
    let mut rendered = text::render(report);
    rendered.push_str(&crate::report::run::ranks_text::render(report));
    if let Some(lab) = &meta.lab {
        rendered.push_str(&format!("lab      {}\n", lab.summary));
    }
    // Paths given on the command line are UTF-8 (`cli::utf8_path`); any
    // other text that JSON cannot carry fails the save, never panics.
    let report_json = serde_json::to_value(report).map_err(|e| {
        CommandError::Failed(format!(
            "the run was measured but its report cannot be written as JSON: {e}"
        ))
    })?;
    let mut env_json =
        serde_json::json!({ "host": &report.environment, "storage": &report.storage });
    if let Some(lab) = &meta.lab {
        env_json["lab"] = lab.detail.clone();
    }
    if !report.ranks.is_empty() {
        env_json["ranks"] = report
            .ranks
            .iter()
            .map(|r| serde_json::json!({ "rank": r.rank, "host": &r.environment, "storage": &r.storage }))
            .collect();
    }
    let run_id = save_or_keep(
        store,
        &NewRun {
            report: &report_json,
            report_text: &rendered,
            environment: &env_json,
            histograms,
            plan: meta.plan.as_deref(),
            variable: meta.variable.as_deref(),
            cell_key: meta.cell_key.as_deref(),
            warmup: meta.warmup,
            tags: &meta.tags,
        },
    );
    // Saved first, shown either way: under mpirun, a job stopped by Ctrl-C
    // is killed a second after, while its output may still be on the way.
    // A closed stdout (`| head`) does not stop the run from being saved.
    // Control characters in a path, tag or name reach the terminal escaped.
    if output == Output::LineOnStderr {
        eprint!("{}", crate::terminal::field(&one_line(report, meta)));
        eprintln!();
    }
    super::output::print_anyway(&match output {
        Output::Text => crate::grid::fit(
            &crate::terminal::text(&rendered),
            crate::grid::terminal_width(),
        ),
        // In the report's field order; it serialized above already.
        Output::Json => with_run_id(report, &report_json, run_id.as_ref().ok().copied()),
        Output::Line => crate::terminal::field(&one_line(report, meta)).into_owned() + "\n",
        Output::LineOnStderr => String::new(),
    });
    let run_id = run_id?;
    if output == Output::Text && !quiet {
        eprintln!(
            "saved as run {run_id} in {}",
            crate::terminal::field(&store.path().display().to_string())
        );
    }
    Ok(RunOutcome {
        status: report.status.clone(),
        error: report.error.clone(),
        run_id,
    })
}

/// The `--json` document: the report, then the id the store gave it
/// (`run_id`, absent when it was not saved).
fn with_run_id(report: &Report, report_json: &serde_json::Value, run_id: Option<i64>) -> String {
    #[derive(serde::Serialize)]
    struct Saved<'a> {
        #[serde(flatten)]
        report: &'a Report,
        #[serde(skip_serializing_if = "Option::is_none")]
        run_id: Option<i64>,
    }
    serde_json::to_string_pretty(&Saved { report, run_id })
        .unwrap_or_else(|_| format!("{report_json:#}"))
        + "\n"
}

/// Saves `run` in `store`; a run the store cannot take is kept whole in a
/// side file that the error line names, for `dbio import run`.
fn save_or_keep(store: &mut Store, run: &NewRun) -> Result<i64, CommandError> {
    store.save_run(run).map_err(|e| {
        kept_or_lost(
            "the run was measured",
            &e,
            &unsaved::Unsaved::new(store.path(), run, &e),
        )
    })
}

/// The one error line of a run (`what`: "the run was measured") the store
/// could not take (`e`): `run` kept in a side file it names, for `dbio
/// import run`, or why it could not be kept either.
pub(crate) fn kept_or_lost(
    what: &str,
    e: &crate::store::StoreError,
    run: &unsaved::Unsaved,
) -> CommandError {
    let line = match unsaved::keep(run) {
        Ok(file) => format!(
            "{what} but not saved: {e}; it is kept whole in {0}: save it with `dbio import run {0}`",
            crate::terminal::path(&file)
        ),
        Err(why) => format!(
            "{what} but not saved: {e}; nor could it be kept in a file ({}): only the report above is left",
            why.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    };
    CommandError::Failed(line)
}

/// A SLOB model run's report and the histograms to store (its latencies
/// and every wait event's), from its result and the tallies of its
/// `[sessions, db writers]` threads.
pub(crate) fn slob_report(
    cfg: &RunConfig,
    slob: &SlobConfig,
    target: &Target,
    result: RunResult,
    run: &slob_run::SlobRun,
    [sessions, writers]: [u32; 2],
    env: Environment,
) -> (Report, Vec<(String, Vec<u8>)>) {
    let mut histograms = histograms(&result);
    let mut events = run.sessions.events.clone();
    events.merge(&run.dbwr.events);
    events.merge(&run.lgwr.events);
    for e in EVENTS {
        if events.get(e).count > 0 {
            histograms.push((
                format!("event.{}", e.key_in(slob.flavor)),
                encode_histogram(&events.get(e).hist),
            ));
        }
    }
    let mut summary = SlobSummary::new(run, result.measured_s, sessions, writers);
    summary.cache_buffers = slob.cache_buffers();
    summary.name_events(slob.flavor);
    summary.checkpoint_cycle = run
        .cycle
        .as_ref()
        .map(|e| CheckpointCycle::of_model(e, &summary.counters, slob.flavor));
    let mut report = Report::new(cfg, target, result, env);
    report.slob = Some(summary);
    (report, histograms)
}

/// A failure to prepare data files or redo logs, as a command error.
pub(crate) fn layout_error(e: TargetError) -> CommandError {
    match e {
        TargetError::Interrupted => CommandError::Interrupted(
            "interrupted while laying out; the partial layout was removed".into(),
        ),
        e @ (TargetError::Io { .. } | TargetError::Layout { .. } | TargetError::NoSpace { .. }) => {
            CommandError::Failed(e.to_string())
        }
        e => CommandError::Usage(e.to_string()),
    }
}

/// The latency histograms of the kinds that saw any operation, serialized.
pub(crate) fn histograms(r: &RunResult) -> Vec<(String, Vec<u8>)> {
    KINDS
        .iter()
        .filter(|k| r.stats.ops[**k as usize].count > 0)
        .map(|k| {
            (
                k.name().to_string(),
                encode_histogram(&r.stats.ops[*k as usize].hist),
            )
        })
        .collect()
}

/// A run in one line, for plans.
fn one_line(r: &Report, meta: &RunMeta) -> String {
    let which = meta.cell_key.as_deref().unwrap_or("run");
    let status = match r.status {
        Status::Completed => String::new(),
        Status::Interrupted => "  INTERRUPTED".into(),
        Status::Failed => format!("  FAILED: {}", r.error.as_deref().unwrap_or("")),
    };
    let what = match &r.slob {
        None if r.pg.is_some() => crate::report::pg::one_line(r),
        None if r.mysql.is_some() => crate::report::mysql::one_line(r),
        Some(s) => {
            let per_s = |v: u64| v as f64 / s.elapsed_s.max(1e-9);
            let sync = s
                .events
                .iter()
                .find(|e| e.class == "Commit")
                .map_or(0.0, |e| e.avg_ms);
            format!(
                "{:>8.0} reads/s {:>7.0} writes/s {:>6.1} redo MiB/s  log file sync {:>7.3} ms",
                per_s(s.counters.read_requests),
                per_s(s.counters.write_requests),
                per_s(s.counters.redo_bytes) / 1048576.0,
                sync
            )
        }
        None => format!(
            "{:>10.0} IOPS {:>9.1} MiB/s  p99 {:>8.3} ms",
            r.total.iops,
            r.total.mib_per_s,
            r.total.latency.p99_us / 1e3
        ),
    };
    format!(
        "{which:<40} {what}{}{status}",
        if meta.warmup {
            "  (warm-up, not counted)"
        } else {
            ""
        },
    )
}

/// `dbio run`: checks everything before anything is written, opens the
/// store, runs, and maps how the run ended to the exit code.
pub fn execute(
    args: crate::options::RunArgs,
    open_store: impl FnOnce(Option<std::path::PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<std::process::ExitCode> {
    let metrics = args.metrics.wanted();
    let output = if args.json {
        Output::Json
    } else {
        Output::Text
    };
    let (quiet, db) = (args.quiet, args.db.clone());
    let mut meta = RunMeta {
        tags: args.tags.clone(),
        capture: args.replay.capture,
        ..Default::default()
    };
    for t in &meta.tags {
        crate::store::validate_tag(t).map_err(|e| CommandError::Usage(e.to_string()))?;
    }
    let asked_cache = args.slob.cache;
    let progress = args.progress.clone();
    let mut args = args;
    let mut opener = Some(open_store);
    // `--trace RUN`: the run's stored trace, written out for the replay.
    let (store, _stored) = match super::trace::run_id_of(&args.replay.trace) {
        Some(id) if args.workload == crate::options::WorkloadKind::Replay => {
            let store = opener.take().expect("opened once")(db.clone())?;
            let stored = super::trace::StoredTrace::write(&store, id)?;
            args.replay.trace = vec![stored.path.clone()];
            args.replay.from_run = Some(id);
            (Some(store), Some(stored))
        }
        _ => (None, None),
    };
    let cfg = args
        .into_config()
        .map_err(|e| CommandError::Usage(e.into()))?;
    crate::preflight::check(&cfg).map_err(|e| CommandError::Usage(e.to_string()))?;
    if meta.capture {
        super::run_capture::device_under(&cfg.target)?;
    }
    let progress = progress
        .resolve(output == Output::Json, quiet)
        .map_err(|e| CommandError::Usage(e.into()))?;
    say_rounding(&cfg, asked_cache);
    let live = start_metrics(&metrics, quiet)?;
    let mut store = match store {
        Some(s) => s,
        None => opener.take().expect("opened once")(db)?,
    };
    store
        .ensure_writable()
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let interrupt = super::interrupt_flag();
    meta.live = live;
    let outcome = run(
        &cfg,
        (output, quiet),
        &progress,
        &mut store,
        &meta,
        &interrupt,
    )?;
    Ok(exit_code(&outcome, output))
}

/// Binds `--metrics-listen` and checks `--metrics-textfile` before anything
/// is laid out (a refusal is a usage error), and says where they are.
pub(crate) fn start_metrics(
    wanted: &crate::metrics::Wanted,
    quiet: bool,
) -> Result<Option<crate::metrics::Live>, CommandError> {
    let live =
        crate::metrics::Live::start(wanted).map_err(|e| CommandError::Usage(e.to_string()))?;
    if let Some(addr) = live.as_ref().and_then(|l| l.addr)
        && !quiet
    {
        eprintln!("live metrics at http://{addr}/metrics, live page at http://{addr}/");
    }
    Ok(live)
}

/// The exit code of a finished run (its error on stderr when stdout has JSON).
pub(crate) fn exit_code(outcome: &RunOutcome, output: Output) -> std::process::ExitCode {
    use std::process::ExitCode;
    match outcome.status {
        Status::Completed => ExitCode::SUCCESS,
        Status::Interrupted => ExitCode::from(super::EXIT_INTERRUPTED),
        Status::Failed => {
            if output == Output::Json {
                eprintln!(
                    "error: {}",
                    crate::terminal::line(outcome.error.as_deref().unwrap_or("run failed"))
                );
            }
            ExitCode::from(super::EXIT_FAILED)
        }
    }
}

/// Says where a value was adjusted: a buffer cache larger than the data,
/// a size that does not split into whole blocks per file.
fn say_rounding(cfg: &crate::config::RunConfig, asked_cache: Option<u64>) {
    use crate::units::fmt_size;
    if let (Some(slob), Some(asked)) = (cfg.workload.model(), asked_cache)
        && asked > slob.cache_bytes
    {
        eprintln!(
            "note: --cache {} is more than 4 times the data; capped at {} (a larger cache holds nothing more)",
            fmt_size(asked),
            fmt_size(slob.cache_bytes)
        );
    }
    if cfg.workload.model().is_none()
        && let Some(size) = cfg.size_bytes
        && !crate::storage::device::is_block_device(&cfg.target)
    {
        let data = crate::preflight::data_bytes(cfg);
        if data != size {
            eprintln!(
                "note: --size {} over --files {} is {} x {} (whole blocks per file) = {}",
                fmt_size(size),
                cfg.files,
                cfg.files,
                fmt_size(data / u64::from(cfg.files)),
                fmt_size(data)
            );
        }
    }
}
