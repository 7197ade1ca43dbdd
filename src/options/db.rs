//! The options every workload on a real server refuses or resolves alike:
//! the raw patterns' and the SLOB model's own machinery mean nothing to a
//! server that does its own I/O (one line each, with what to use instead);
//! the server's own options under its prefix (`--pg-bin`, `--mysql-set` …:
//! [`ServerArgs`], resolved to [`ServerConfig`]); and the rest of the run
//! ([`resolve`]: SLOB's shape, the run's length from `--work-loop` or
//! `--time`, the [`RunConfig`] every workload has).

use crate::options::Refused;
use std::path::PathBuf;

use crate::config::{Paced, RunConfig, RunLength, WorkloadConfig};
use crate::options::RunArgs;
use crate::workload::db::ServerConfig;
use crate::workload::db::cycle::CycleWindow;
use crate::workload::dist::Distribution;
use crate::workload::slob::SlobConfig;

/// The options every server workload has under its own names, as given.
pub struct ServerArgs {
    /// The options' names: the binaries' directory, a setting, the memory
    /// limit, an existing server's URL (`--pg-bin`, `--pg-set`, ...).
    pub names: [&'static str; 4],
    pub bin: Option<PathBuf>,
    pub set: Vec<(String, String)>,
    pub memory: Option<u64>,
    pub url: Option<String>,
}

impl ServerArgs {
    /// The first option given, for refusing them with other workloads.
    pub fn first_given(&self) -> Option<&'static str> {
        let given = [
            self.bin.is_some(),
            !self.set.is_empty(),
            self.memory.is_some(),
            self.url.is_some(),
        ];
        given
            .into_iter()
            .zip(self.names)
            .find_map(|(g, name)| g.then_some(name))
    }
}

/// A server workload in its own words: what its options mean and what it
/// says when one does not apply.
pub struct Instead {
    /// `--workload NAME`.
    pub workload: &'static str,
    /// What the server makes in the target directory ("the cluster").
    pub makes: &'static str,
    /// What `--cache` sets ("shared_buffers").
    pub cache: &'static str,
    /// What `--*-memory` bounds besides the cache ("the server's
    /// processes"), and how much it needs for them.
    pub processes: &'static str,
    pub processes_bytes: u64,
    /// Why `--files` does not apply (None: the workload takes `--files`).
    pub files: Option<&'static str>,
    /// The server's redo/WAL, as "the server writes its own WAL".
    pub redo: &'static str,
    /// What to use instead of `--redo-files`, `--redo-file-size`,
    /// `--redo-block`, `--redo-sync`, `--log-buffer`.
    pub redo_files: &'static str,
    pub redo_file_size: &'static str,
    pub redo_block: &'static str,
    pub redo_sync: &'static str,
    pub log_buffer: &'static str,
}

/// Refuses the first option that does not apply to a server workload.
pub fn refuse_model_options(a: &RunArgs, i: &Instead) -> Result<(), Refused> {
    let s = &a.slob;
    let not_here = [
        (a.pattern.is_some(), "--pattern", "the mix is --update-pct"),
        (a.read_pct.is_some(), "--read-pct", "use --update-pct"),
        (
            a.dist != Distribution::Uniform,
            "--dist",
            "keys are uniform",
        ),
        (a.iodepth != 1, "--iodepth", "the server issues the I/O"),
        (
            a.uring.given().is_some(),
            a.uring.given().unwrap_or_default(),
            "the server issues the I/O",
        ),
        (
            a.size.is_some(),
            "--size",
            "the data size is --scale per schema",
        ),
        (a.ops.is_some(), "--ops", "use --work-loop"),
        (
            a.files != 1 && i.files.is_some(),
            "--files",
            i.files.unwrap_or_default(),
        ),
        (
            a.load_parallel.is_some(),
            "--load-parallel",
            "the tables are loaded through the server's connections",
        ),
        (s.redo_stress.is_some(), "--redo-stress", i.redo),
        (
            s.db_writers.is_some(),
            "--db-writers",
            "the server has its own writers",
        ),
        (
            s.dbwr_batch.is_some(),
            "--dbwr-batch",
            "the server has its own writers",
        ),
        (
            s.dbwr_engine.is_some(),
            "--dbwr-engine",
            "the server has its own writers",
        ),
        (
            s.dbwr_nice.is_some(),
            "--dbwr-nice",
            "the server has its own writers",
        ),
        (
            s.dbwr_rate.is_some(),
            "--dbwr-rate",
            "the server has its own writers",
        ),
        (
            s.memory.is_some(),
            "--memory",
            "it bounds the model; a server's memory is bounded by --pg-memory or --mysql-memory",
        ),
        (s.redo_files.is_some(), "--redo-files", i.redo_files),
        (
            s.redo_file_size.is_some(),
            "--redo-file-size",
            i.redo_file_size,
        ),
        (s.redo_block.is_some(), "--redo-block", i.redo_block),
        (s.redo_sync.is_some(), "--redo-sync", i.redo_sync),
        (s.log_buffer.is_some(), "--log-buffer", i.log_buffer),
    ];
    match not_here.iter().find(|(given, ..)| *given) {
        Some((_, opt, instead)) => Err(format!(
            "{opt} does not apply to --workload {}; {instead}",
            i.workload
        )
        .into()),
        None => Ok(()),
    }
}

/// With an existing server (`--*-url`): refuses what would change it, the
/// common options and `own_only`.
pub fn refuse_with_url(
    a: &RunArgs,
    server: &ServerArgs,
    own_only: &[(bool, &'static str)],
) -> Result<(), Refused> {
    let [bin_opt, set_opt, memory_opt, url_opt] = server.names;
    if server.url.is_none() {
        return Ok(());
    }
    let common = [
        (server.bin.is_some(), bin_opt),
        (!server.set.is_empty(), set_opt),
        (a.slob.redo_dir.is_some(), "--redo-dir"),
        (a.slob.cache.is_some(), "--cache"),
        (server.memory.is_some(), memory_opt),
    ];
    match common.iter().chain(own_only).find(|(given, _)| *given) {
        Some((_, opt)) => Err(format!(
            "{opt} does not apply with {url_opt}: dbio changes nothing on an existing server (its settings are reported); drop {opt}"
        ).into()),
        None => Ok(()),
    }
}

/// A server run's configuration from its options (checked by
/// [`refuse_model_options`] and [`refuse_with_url`] first): the target is a
/// directory, SLOB's shape within [`MAX_SCALE`](super::data::MAX_SCALE),
/// the memory limit above the cache. `workload` makes the server's own
/// section from SLOB's shape, `--redo-dir` and the server's options.
pub fn resolve(
    a: RunArgs,
    server: ServerArgs,
    i: &Instead,
    (page, files): (u32, u32),
    workload: impl FnOnce(SlobConfig, Option<PathBuf>, ServerConfig) -> WorkloadConfig,
) -> Result<RunConfig, Refused> {
    if crate::storage::device::is_block_device(&a.target) {
        return Err(format!(
            "--target {} is a block device; --workload {} needs a directory on a mounted filesystem for {}",
            a.target.display(),
            i.workload,
            i.makes
        ).into());
    }
    let hotspot = crate::options::hotspot(a.hotspot_mb, a.hotspot_offset_mb, a.hotspot_frequency)?;
    let redo_dir = a.slob.redo_dir.clone();
    let work_loop = a.slob.work_loop;
    let slob = a
        .slob
        .clone()
        .into_config(a.sessions, page, 1, hotspot, Some(&a.target))?;
    check_shape(&slob, &server, i)?;
    let sessions = slob.sessions();
    let length = length(work_loop, sessions, a.time, a.ramp)?;
    let (rate_iops, arrival) = a.pacing(sessions, Paced::Transactions, slob.think.is_some())?;
    let size = slob.scale_blocks * u64::from(slob.schemas) * u64::from(page);
    let window = window(a.window, work_loop)?;
    let server = ServerConfig {
        window,
        bin: server.bin,
        set: server.set,
        memory_bytes: server.memory,
        url_redacted: server.url.as_deref().map(crate::workload::db::redact),
        url: server.url,
    };
    Ok(RunConfig {
        files,
        size_bytes: Some(size),
        block_size: page,
        sessions,
        length,
        hotspot,
        rate_iops,
        arrival,
        ..a.shared(workload(slob, redo_dir, server))
    })
}

/// SLOB's shape within what a server workload handles, and the server's
/// memory limit above its cache and processes.
fn check_shape(slob: &SlobConfig, server: &ServerArgs, i: &Instead) -> Result<(), Refused> {
    let memory_opt = server.names[2];
    let max = crate::workload::db::data::MAX_SCALE;
    if slob.scale_blocks > max {
        return Err(format!(
            "--scale {} rows is more than --workload {} handles ({max} per table); give a smaller --scale",
            slob.scale_blocks, i.workload
        ).into());
    }
    if let Some(m) = server.memory {
        let min = slob.cache_bytes + i.processes_bytes;
        if m < min {
            return Err(format!(
                "{memory_opt} {} is too small for --cache {} ({}) and {}; give {memory_opt} {} or more",
                crate::units::fmt_size(m),
                crate::units::fmt_size(slob.cache_bytes),
                i.cache,
                i.processes,
                crate::units::fmt_size(min)
            ).into());
        }
    }
    Ok(())
}

/// `--window` (any when not given); `cycles:N` needs `--time`, not
/// `--work-loop` (the checkpoints end the window, `--time` caps it).
pub fn window(window: Option<CycleWindow>, work_loop: Option<u64>) -> Result<CycleWindow, Refused> {
    let window = window.unwrap_or_default();
    if let Some(n) = window.cycles()
        && work_loop.is_some()
    {
        return Err(format!(
            "--window cycles:{n} ends the window when the checkpoints complete; give --time (the longest it may run) instead of --work-loop"
        )
        .into());
    }
    Ok(window)
}

/// `--work-loop` operations per session, or `--time` after `--ramp`.
pub fn length(
    work_loop: Option<u64>,
    sessions: u32,
    time: Option<f64>,
    ramp: Option<f64>,
) -> Result<RunLength, Refused> {
    Ok(match work_loop {
        Some(w) => RunLength::Ops {
            ops: w.checked_mul(u64::from(sessions)).ok_or_else(|| {
                format!("--work-loop {w} x {sessions} sessions is too many operations")
            })?,
        },
        None => RunLength::Time {
            time_s: time.unwrap_or(10.0),
            ramp_s: ramp.unwrap_or(0.0),
        },
    })
}

/// The shape the servers' option tests resolve: 4 sessions on 1000 rows
/// each, 20% updates, a 64M cache.
#[cfg(test)]
pub const SHAPE: [&str; 8] = [
    "--sessions",
    "4",
    "--scale",
    "1000",
    "--update-pct",
    "20",
    "--cache",
    "64M",
];

/// `dbio run --workload WORKLOAD ARGS` resolved, for the servers' option tests.
#[cfg(test)]
pub fn config_of(workload: &str, args: &[&str]) -> Result<RunConfig, Refused> {
    let mut argv = vec!["--workload", workload];
    argv.extend_from_slice(args);
    run_config(&argv)
}

/// `dbio run ARGS` resolved (the servers' options without their
/// `--workload`: refused), for the servers' option tests.
#[cfg(test)]
pub fn run_config(args: &[&str]) -> Result<RunConfig, Refused> {
    use clap::Parser;
    let mut argv = vec!["dbio", "run"];
    argv.extend_from_slice(args);
    let cli = crate::cli::Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    match cli.command {
        crate::cli::Command::Run(r) => (*r).into_config(),
        _ => unreachable!(),
    }
}
