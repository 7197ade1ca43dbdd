//! The options of a run — what `dbio run` takes and a plan file's keys
//! name: their clap definition ([`RunArgs`], each workload's own in a file
//! of its own), their validation into a [`RunConfig`], and the table a plan
//! shares with the command line (`table`). Every bad value becomes one line
//! naming the option, the value and what is allowed. The command line of
//! every subcommand is `cli`'s, above plan and lab, which read only this.

use std::path::PathBuf;

use clap::{Args, FromArgMatches};

use crate::config::{
    Arrival, EngineKind, HotspotConfig, IoMode, Paced, Pattern, RawConfig, RunConfig, RunLength,
    WorkloadConfig,
};
use crate::options::slob::SlobArgs;
use crate::options::uring::UringArgs;
use crate::units::{fmt_size, parse_seconds, parse_size};
use crate::workload::dist::Distribution;
use choice::choice;
pub use refused::Refused;

pub mod choice;
#[cfg(test)]
mod config_json_tests;
pub mod db;
pub mod metrics;
pub mod mysql;
mod pace;
pub mod pg;
pub mod progress;
mod refused;
pub mod replay;
pub mod slob;
pub mod steady;
pub mod table;
pub mod uring;

/// The directory used when `--target` is not given.
pub const DEFAULT_TARGET: &str = "dbio-data";

/// Longest `--time` or `--ramp`: a year. Longer is a typo, and the per-second
/// series of a run grows with its length.
pub const MAX_SECONDS: f64 = 365.0 * 86400.0;

/// `dbio run`'s options as a command of their own (a plan's keys are
/// these), parsed as the binary parses `dbio run`.
pub fn run_command() -> clap::Command {
    negatives(RunArgs::augment_args(
        clap::Command::new("run")
            .bin_name("dbio run")
            .no_binary_name(true),
    ))
}

/// A `dbio run` argument list (the words after `dbio run`) parsed as the
/// binary parses it.
pub fn parse_run_args<I, T>(args: I) -> Result<RunArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = run_command().try_get_matches_from(join_negative_values(args))?;
    RunArgs::from_arg_matches(&matches)
}

/// `cmd` with every option that takes a value accepting a negative number
/// as its value, so that `--size -1` reaches the option's parser, which
/// names the option and the value, instead of clap taking `-1` for an
/// unknown flag.
pub fn negatives(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negatives)
}

/// `--size -1G` as `--size=-1G`: no option of dbio is a dash followed by a
/// digit, so such a word after a long option is that option's value, which
/// its parser then refuses by name (clap would call `-1G` an unknown flag).
pub fn join_negative_values<I, T>(argv: I) -> Vec<std::ffi::OsString>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for word in argv.into_iter().map(Into::into) {
        let negative = word.to_str().is_some_and(|w| {
            let mut c = w.chars();
            c.next() == Some('-') && c.next().is_some_and(|d| d.is_ascii_digit() || d == '.')
        });
        if negative
            && let Some(prev) = out.last_mut()
            && let Some(p) = prev.to_str()
            && p.starts_with("--")
            && p.len() > 2
            && !p.contains('=')
        {
            let joined = format!("{p}={}", word.to_string_lossy());
            *prev = joined.into();
            continue;
        }
        out.push(word);
    }
    out
}

/// clap's message on one line without `error: `: its first line, the list
/// below a line ending in `:` (the required arguments not provided), the
/// possible values when clap lists them, and what dbio calls a name it does
/// not know (`hint`: `cli`'s, e.g. fio's option names) or else clap's tip (`a similar
/// argument exists: '--sessions'`); control characters escaped, long values
/// cut (`terminal::line`).
pub fn error_line(e: &clap::Error, hint: Option<String>) -> String {
    let rendered = e.render().to_string();
    let mut lines = rendered.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("invalid arguments").trim();
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if line.ends_with(':') {
        let more: Vec<&str> = lines
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect();
        if !more.is_empty() {
            line = format!("{line} {}", more.join(", "));
        }
    }
    if let Some(values) = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("[possible values: "))
    {
        line = format!("{line} (possible values: {})", values.trim_end_matches(']'));
    }
    // dbio's own answer, else clap's tips.
    let tips = match hint {
        Some(hint) => vec![hint],
        None => rendered
            .lines()
            .filter_map(|l| l.trim().strip_prefix("tip: "))
            .map(str::to_string)
            .collect(),
    };
    for tip in tips {
        line = format!("{line}; {tip}");
    }
    // Rust's words for a count that is not one (`--rate -10`, `--limit x`).
    let line = line.replace(
        ": invalid digit found in string",
        ": not a whole number (digits only, e.g. 100)",
    );
    // A value quoted whole (`--tag` of 100 KB) or holding escapes is cut
    // and escaped.
    crate::terminal::line(&line)
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Where I/O goes: a directory (dbio lays out data files in it) or a block device.
    #[arg(long, default_value = DEFAULT_TARGET)]
    pub target: PathBuf,

    /// What is asked: raw I/O patterns (fio/IObench style) or the SLOB database model.
    #[arg(long, value_enum, default_value_t = WorkloadKind::Raw)]
    pub workload: WorkloadKind,

    /// Number of data files to lay out in a directory target (slob: the datafiles of the tablespace; mysql: HASH partitions of each table, an .ibd file each).
    #[arg(long, visible_alias = "datafiles", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub files: u32,

    /// Total data size over all files (K/M/G/T); on a device, how much of it to use [default: 1G for a directory, the whole device].
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u64>,

    /// Block size and I/O size, a power of two from 512 to 1M [default: 8k; --workload mysql and --workload slob --flavor innodb: 16k, InnoDB's page].
    #[arg(long, value_parser = parse_block_size)]
    pub bs: Option<u32>,

    /// Access pattern (raw) [default: randrw].
    #[arg(long, value_parser = choice::<Pattern>())]
    pub pattern: Option<Pattern>,

    /// Percentage of reads in a randrw run (0..100).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    pub read_pct: Option<u8>,

    /// Concurrent sessions (threads), started together (slob: schemas of one session each) [default: 4].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=crate::workload::MAX_SESSIONS as i64))]
    pub sessions: Option<u32>,

    /// Requests in flight per session (io_uring only).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub iodepth: u32,

    /// I/O engine.
    #[arg(long, value_parser = choice::<EngineKind>(), default_value = "psync")]
    pub engine: EngineKind,

    #[command(flatten)]
    pub uring: UringArgs,

    /// Open mode and durability of writes.
    #[arg(long = "io", value_parser = choice::<IoMode>(), default_value = "direct")]
    pub io_mode: IoMode,

    /// Measured run time (e.g. 60, 90s, 5m); the default is 10 s unless --ops is given.
    #[arg(long, value_parser = parse_positive_seconds, conflicts_with = "ops")]
    pub time: Option<f64>,

    /// Warm-up before measuring starts, excluded from the results (with --time).
    #[arg(long, value_parser = parse_ramp, conflicts_with = "ops")]
    pub ramp: Option<f64>,

    /// Where the window sits in the checkpoint cycle (pg, mysql, and the model's own with slob): any (where the ramp ends), after-checkpoint (right after a checkpoint; the model's begins as the window opens), or cycles:N (from a checkpoint until N more complete, --time the longest) [default: any].
    #[arg(long, value_name = "WHERE", value_parser = crate::workload::db::cycle::CycleWindow::parse)]
    pub window: Option<crate::workload::db::cycle::CycleWindow>,

    /// Issue exactly this many I/O requests in total over all sessions, then stop.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub ops: Option<u64>,

    /// Access distribution: uniform, zipf:THETA or pareto:H.
    #[arg(long, default_value = "uniform", value_parser = parse_distribution)]
    pub dist: Distribution,

    /// Hot spot size in MiB (SLOB's HOTSPOT_MB); needs --hotspot-frequency.
    #[arg(long)]
    pub hotspot_mb: Option<u64>,

    /// Hot spot offset in MiB from the start of the data (SLOB's HOTSPOT_OFFSET_MB) [default: 0].
    #[arg(long)]
    pub hotspot_offset_mb: Option<u64>,

    /// Every Nth operation of a session goes to the hot spot (SLOB's HOTSPOT_FREQUENCY).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub hotspot_frequency: Option<u32>,

    /// Open loop: this many per second in total (raw: I/O requests; slob: operations; pg, mysql: transactions) fall due on a schedule that never waits for completions; latency is counted from the due time and from the start.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub rate: Option<u64>,

    /// How --rate's requests fall due: evenly spaced, or a Poisson process [default: uniform].
    #[arg(long, value_parser = choice::<Arrival>())]
    pub arrival: Option<Arrival>,

    /// Streams writing the data files when dbio lays them out, each with 8 writes of 1 MiB in flight (SLOB's LOAD_PARALLEL_DEGREE) [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=crate::storage::layout::MAX_STREAMS as i64))]
    pub load_parallel: Option<u32>,

    /// Seed for reproducible offsets [default: random, printed in the report].
    #[arg(long)]
    pub seed: Option<u64>,

    /// List every I/O slower than this many milliseconds.
    #[arg(long, default_value_t = 500.0, value_parser = parse_outlier_ms)]
    pub outlier_ms: f64,

    /// Sample device and host telemetry every this many seconds (e.g. 1, 0.5, 5s).
    #[arg(long, default_value = "1", value_parser = parse_interval)]
    pub interval: f64,

    /// Allow writing to this block device although it holds data: repeat the --target path exactly.
    #[arg(long, value_name = "DEVICE")]
    pub destroy_device: Option<PathBuf>,

    /// Allow a directory target on the root filesystem under /mnt, /media, /data*, /oradata or /u0* (refused by default: usually a filesystem that is not mounted).
    #[arg(long)]
    pub allow_root_fs: bool,

    /// Check every block the run reads: its stamps, and its generation against the lost-write map; the run stops at the first bad block with a one-line error (raw workload; docs/verify.md).
    #[arg(long)]
    pub verify: bool,

    /// Read back every acknowledged write and check it, as fio's verify_backlog (raw workload; the read-backs are not counted as the run's reads).
    #[arg(long)]
    pub verify_after_write: bool,

    /// Seconds between sync points of the lost-write map while a raw run writes a directory target (data files fsynced, then the map written, in a background thread): a crash loses at most this much of the map; 0 = only at the run's end (docs/verify.md).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub verify_sync_interval: f64,

    /// Make this percent of every written sector zeros, for storage that compresses (as fio's buffer_compress_percentage; 0-90, stamps kept; raw workload and its layout; docs/verify.md).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub compress_pct: u8,

    /// Make this percent of written blocks copies of a small pool, for storage that deduplicates (0-100; raw workload and its layout; docs/verify.md).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub dedupe_pct: u8,

    /// The results store every run is saved in [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Tag the saved run (repeatable), e.g. --tag xfs --tag baseline.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,

    /// Print the report as JSON on stdout (schema in docs/json.md).
    #[arg(long)]
    pub json: bool,

    /// Never show the live status line.
    #[arg(long)]
    pub quiet: bool,

    #[command(flatten)]
    pub progress: crate::options::progress::ProgressArgs,

    /// Write the report (or the --json document) to FILE instead of stdout; FILE is replaced only once the run printed it.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Run as one rank of an MPI job (mpirun, srun): every rank has its own target (`{rank}` and `{host}` in --target), all start together, rank 0 stores one merged run (docs/multihost.md; needs a build with --features mpi).
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: every rank names the same block device in --target and works in a byte range of its own (rank r at r × its size; --size is each rank's, else an equal share), block- and sector-aligned (docs/multihost.md).
    #[arg(long)]
    pub region_per_rank: bool,

    /// With --mpi: how long a silent rank is waited for. Before the start, a rank whose heartbeats stop for this long (a stopped process, a stuck device; a long layout still beats) is named and the job ended; after the window, rank 0 waits this long past its own window's end for a rank that has not reported (--ops runs: this plus rank 0's own window), then stores what it has as a failed run, names the rank and ends the job.
    #[arg(long, value_parser = parse_positive_seconds, default_value = "60")]
    pub mpi_grace: f64,

    #[command(flatten)]
    pub slob: SlobArgs,

    #[command(flatten)]
    pub pg: crate::options::pg::PgArgs,

    #[command(flatten)]
    pub mysql: crate::options::mysql::MysqlArgs,

    #[command(flatten)]
    pub metrics: crate::options::metrics::MetricsArgs,

    #[command(flatten)]
    pub replay: crate::options::replay::ReplayArgs,

    #[command(flatten)]
    pub steady: crate::options::steady::SteadyArgs,
}

/// The workloads `--workload` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// fio/IObench patterns: --pattern, --read-pct, --dist.
    Raw,
    /// The SLOB-method database I/O model: sessions, buffer cache, DB writers, log writer.
    Slob,
    /// The SLOB method on a real PostgreSQL that dbio starts on the target (docs/pg.md).
    Pg,
    /// The SLOB method on a real MariaDB/InnoDB that dbio starts on the target (docs/mysql.md).
    Mysql,
    /// A captured or imported block trace, at its captured times or faster (--trace; docs/replay.md).
    Replay,
}

fn parse_block_size(s: &str) -> Result<u32, Refused> {
    let v = parse_size(s)?;
    if !(512..=1 << 20).contains(&v) || !v.is_power_of_two() {
        return Err("must be a power of two from 512 to 1M (e.g. 4k, 8k, 16k)".into());
    }
    Ok(v as u32)
}

fn parse_positive_seconds(s: &str) -> Result<f64, Refused> {
    let v = parse_ramp(s)?;
    if v <= 0.0 {
        return Err("must be more than 0 seconds".into());
    }
    Ok(v)
}

/// A duration of at most [`MAX_SECONDS`].
fn parse_ramp(s: &str) -> Result<f64, Refused> {
    let v = parse_seconds(s)?;
    if v > MAX_SECONDS {
        return Err(format!(
            "must be at most a year ({} s, e.g. 365d is too long; 8h, 30m and 90s are fine)",
            MAX_SECONDS as u64
        )
        .into());
    }
    Ok(v)
}

fn parse_interval(s: &str) -> Result<f64, Refused> {
    let v = parse_seconds(s)?;
    if !(0.1..=3600.0).contains(&v) {
        return Err("must be from 0.1 to 3600 seconds".into());
    }
    Ok(v)
}

fn parse_outlier_ms(s: &str) -> Result<f64, Refused> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3_600_000.0 => Ok(v),
        _ => Err("must be a number of milliseconds above 0 and at most an hour (e.g. 500)".into()),
    }
}

fn parse_distribution(s: &str) -> Result<Distribution, Refused> {
    s.parse()
        .map_err(|e: crate::workload::dist::ParseDistError| e.to_string().into())
}

/// A path the run records as text (`--target`, `--redo-dir`, `--db`: the
/// report, the store and a kept run are UTF-8 JSON), refused in one line
/// when it is not UTF-8.
pub(crate) fn utf8_path(option: &str, path: &std::path::Path) -> Result<(), Refused> {
    match path.to_str() {
        Some(_) => Ok(()),
        None => Err(format!(
            "{option} {} is not valid UTF-8: dbio records its paths as text; give a UTF-8 path",
            crate::terminal::quote(&format!("{path:?}"))
        )
        .into()),
    }
}

/// `--bs` when not given (but for --workload mysql).
const DEFAULT_BS: u32 = 8192;

impl RunArgs {
    /// Checks the combinations clap cannot and resolves defaults, then
    /// steady state (`--steady-state`: `--time` becomes its cap).
    pub fn into_config(self) -> Result<RunConfig, Refused> {
        let (steady, time, mpi) = (self.steady.clone(), self.time, self.mpi);
        let mut cfg = self.into_workload_config()?;
        steady.apply(&mut cfg, time, mpi)?;
        Ok(cfg)
    }

    /// The workload's settings and what every run shares.
    fn into_workload_config(self) -> Result<RunConfig, Refused> {
        self.check_paths()?;
        self.check_checks()?;
        self.check_content()?;
        if self.workload != WorkloadKind::Replay
            && let Some(opt) = self.replay.first_given()
        {
            return Err(format!(
                "{opt} applies to --workload replay; add --workload replay or drop {opt}"
            )
            .into());
        }
        match self.workload {
            WorkloadKind::Pg => {
                if let Some(opt) = self.mysql.first_given() {
                    return Err(format!(
                        "{opt} applies to --workload mysql; use --pg-set with --workload pg"
                    )
                    .into());
                }
                self.into_pg_config()
            }
            WorkloadKind::Mysql => self.into_mysql_config(),
            WorkloadKind::Replay => {
                self.refuse_window("replay")?;
                self.refuse_server_options()?;
                self.into_replay_config()
            }
            WorkloadKind::Slob => {
                self.refuse_server_options()?;
                self.into_slob_config()
            }
            WorkloadKind::Raw => {
                self.refuse_window("raw")?;
                self.refuse_server_options()?;
                if let Some(opt) = self.slob.first_given() {
                    return Err(format!(
                        "{opt} applies to --workload slob; add --workload slob or drop {opt}"
                    )
                    .into());
                }
                self.into_raw_config()
            }
        }
    }

    /// Paths the run records are UTF-8; `--region-per-rank` comes with `--mpi`.
    fn check_paths(&self) -> Result<(), Refused> {
        utf8_path("--target", &self.target)?;
        if let Some(dir) = &self.slob.redo_dir {
            utf8_path("--redo-dir", dir)?;
        }
        if let Some(db) = &self.db {
            utf8_path("--db", db)?;
        }
        if self.region_per_rank && !self.mpi {
            return Err(
                "--region-per-rank shares one block device among the ranks of an MPI run; add --mpi (and start it with mpirun)".into(),
            );
        }
        Ok(())
    }

    /// `--verify` and `--verify-after-write` on raw only; the map's sync interval in range.
    fn check_checks(&self) -> Result<(), Refused> {
        if self.workload != WorkloadKind::Raw && (self.verify || self.verify_after_write) {
            let opt = if self.verify {
                "--verify"
            } else {
                "--verify-after-write"
            };
            return Err(format!(
                "{opt} applies to --workload raw only: a database model's reads are not checked; drop {opt} (a slob tablespace can be checked afterwards with `dbio verify --target`)"
            ).into());
        }
        let content = self.content();
        content.check().map_err(|e| e.to_string())?;
        if !(self.verify_sync_interval >= 0.0 && self.verify_sync_interval <= 86400.0) {
            return Err(format!(
                "--verify-sync-interval {} is not a number of seconds from 0 to 86400 (0 = sync the lost-write map only at the run's end)",
                self.verify_sync_interval
            ).into());
        }
        Ok(())
    }

    /// Block content and `--flavor` only where dbio writes the blocks itself.
    fn check_content(&self) -> Result<(), Refused> {
        let server = matches!(self.workload, WorkloadKind::Pg | WorkloadKind::Mysql);
        if server && !self.content().is_default() {
            return Err(
                "--compress-pct and --dedupe-pct apply to --workload raw and slob only: PostgreSQL and MariaDB write their own block content; drop them".into(),
            );
        }
        if server && let Some(f) = self.slob.flavor {
            return Err(format!(
                "--flavor {} shapes the model's redo (--workload slob); a real server logs its own way: drop --flavor",
                if f.is_oracle() { "oracle" } else { "postgres" }
            ).into());
        }
        Ok(())
    }

    /// `--window` with a workload that has no checkpoints (raw, replay).
    fn refuse_window(&self, workload: &str) -> Result<(), Refused> {
        match self.window {
            Some(_) => Err(format!(
                "--window places the window in a checkpoint cycle, and --workload {workload} has none: it applies to --workload slob, pg and mysql; drop --window"
            )
            .into()),
            None => Ok(()),
        }
    }

    /// The servers' options refused with a workload that starts no server.
    fn refuse_server_options(&self) -> Result<(), Refused> {
        if let Some(opt) = self.mysql.first_given() {
            return Err(format!(
                "{opt} applies to --workload mysql; add --workload mysql or drop {opt}"
            )
            .into());
        }
        if let Some(opt) = self.pg.first_given() {
            return Err(
                format!("{opt} applies to --workload pg; add --workload pg or drop {opt}").into(),
            );
        }
        Ok(())
    }

    /// `--compress-pct` and `--dedupe-pct`.
    fn content(&self) -> crate::storage::content::ContentSpec {
        crate::storage::content::ContentSpec {
            compress_pct: self.compress_pct,
            dedupe_pct: self.dedupe_pct,
        }
    }

    /// `--workload raw`: its pattern and mix, length, size and pacing checked.
    fn into_raw_config(self) -> Result<RunConfig, Refused> {
        let pattern = self.pattern.unwrap_or(Pattern::Randrw);
        let sessions = self.sessions.unwrap_or(4);
        let read_pct = read_pct(pattern, self.read_pct)?;
        if self.engine == EngineKind::Psync && self.iodepth > 1 {
            return Err(format!(
                "--iodepth {} needs --engine io_uring (psync has one I/O in flight per session)",
                self.iodepth
            )
            .into());
        }
        let length = self.raw_length(sessions)?;
        self.check_size()?;
        let hotspot = hotspot(
            self.hotspot_mb,
            self.hotspot_offset_mb,
            self.hotspot_frequency,
        )?;
        self.check_random_only(pattern, hotspot.is_some())?;
        let (rate_iops, arrival) = self.pacing(sessions, Paced::Requests, false)?;
        let raw = RawConfig {
            pattern,
            read_pct,
            distribution: self.dist,
            uring: self.uring.clone().into_opts(self.engine)?,
            verify: crate::verify::online::VerifyOpts {
                reads: self.verify,
                after_write: self.verify_after_write,
                map_sync_ms: (self.verify_sync_interval * 1e3).round() as u64,
            },
        };
        Ok(RunConfig {
            files: self.files,
            size_bytes: self.size,
            block_size: self.bs.unwrap_or(DEFAULT_BS),
            sessions,
            iodepth: self.iodepth,
            length,
            hotspot,
            rate_iops,
            arrival,
            load_parallel: self.load_parallel(),
            destroy_device: self.destroy_device.clone(),
            ..self.shared(WorkloadConfig::Raw(raw))
        })
    }

    /// What every workload takes as given (`--engine`, `--io`, `--seed`,
    /// …), around `workload`; the rest as for a database workload (one
    /// session, no size, no hot spot, rate or device to destroy), for the
    /// caller to set.
    pub(crate) fn shared(&self, workload: WorkloadConfig) -> RunConfig {
        RunConfig {
            target: self.target.clone(),
            files: 1,
            size_bytes: None,
            block_size: self.bs.unwrap_or(DEFAULT_BS),
            sessions: 1,
            iodepth: 1,
            engine: self.engine,
            io_mode: self.io_mode,
            length: RunLength::Time {
                time_s: self.time.unwrap_or(10.0),
                ramp_s: self.ramp.unwrap_or(0.0),
            },
            hotspot: None,
            rate_iops: None,
            arrival: None,
            seed: self.seed.unwrap_or_else(random_seed),
            load_parallel: 1,
            outlier_ms: self.outlier_ms,
            interval_s: self.interval,
            destroy_device: None,
            allow_root_fs: self.allow_root_fs,
            content: self.content(),
            steady: None,
            workload,
        }
    }

    /// `--load-parallel`, or as many streams as suit the machine.
    fn load_parallel(&self) -> u32 {
        self.load_parallel
            .unwrap_or_else(crate::storage::layout::default_streams)
    }

    /// `--ops` (at least one per session) or `--time` after `--ramp`.
    fn raw_length(&self, sessions: u32) -> Result<RunLength, Refused> {
        Ok(match (self.ops, self.time) {
            (Some(ops), _) => {
                if ops < u64::from(sessions) {
                    return Err(format!(
                        "--ops {ops} is fewer than --sessions {} (each session needs at least one)",
                        sessions
                    )
                    .into());
                }
                RunLength::Ops { ops }
            }
            (None, time) => RunLength::Time {
                time_s: time.unwrap_or(10.0),
                ramp_s: self.ramp.unwrap_or(0.0),
            },
        })
    }

    /// `--size`: at least a block per file, whole blocks.
    fn check_size(&self) -> Result<(), Refused> {
        let Some(size) = self.size else {
            return Ok(());
        };
        let bs = u64::from(self.bs.unwrap_or(DEFAULT_BS));
        let min = bs * u64::from(self.files);
        if size < min {
            return Err(format!(
                "--size {size} is smaller than one block per file ({} files x {bs} bytes = {min})",
                self.files,
            )
            .into());
        }
        if !size.is_multiple_of(bs) {
            return Err(format!(
                "--size {} is not a whole number of --bs {} blocks; give --size {} or {}",
                fmt_size(size),
                fmt_size(bs),
                fmt_size(size / bs * bs),
                fmt_size((size / bs + 1) * bs)
            )
            .into());
        }
        Ok(())
    }

    /// A hot spot and `--dist` apply to random patterns only.
    fn check_random_only(&self, pattern: Pattern, hotspot: bool) -> Result<(), Refused> {
        if hotspot && pattern.sequential() {
            return Err("--hotspot-mb applies to random patterns only".into());
        }
        if self.dist != Distribution::Uniform && pattern.sequential() {
            return Err(format!(
                "--dist {} applies to random patterns only (got --pattern {})",
                self.dist,
                pattern.name()
            )
            .into());
        }
        Ok(())
    }
}

/// `--read-pct` for randrw (50 when not given), 100 or 0 for the others.
fn read_pct(pattern: Pattern, given: Option<u8>) -> Result<u8, Refused> {
    match (pattern, given) {
        (Pattern::Randrw, Some(p)) => Ok(p),
        (Pattern::Randrw, None) => Ok(50),
        (p, Some(_)) => Err(format!(
            "--read-pct applies to --pattern randrw only (got --pattern {})",
            p.name()
        )
        .into()),
        (Pattern::Randread | Pattern::Seqread, None) => Ok(100),
        (_, None) => Ok(0),
    }
}

impl RunArgs {
    /// `--workload slob`: refuses raw-only options, validates the model's.
    fn into_slob_config(mut self) -> Result<RunConfig, Refused> {
        self.refuse_raw_options()?;
        let hotspot = hotspot(
            self.hotspot_mb,
            self.hotspot_offset_mb,
            self.hotspot_frequency,
        )?;
        let is_device = crate::storage::device::is_block_device(&self.target);
        let dir = (!is_device).then_some(self.target.as_path());
        let work_loop = self.slob.work_loop;
        let flavor = self.slob.flavor.unwrap_or_default();
        let bs = self.bs.or(flavor.block_size()).unwrap_or(DEFAULT_BS);
        let mut slob = std::mem::take(&mut self.slob).into_config(
            self.sessions,
            bs,
            self.files,
            hotspot,
            dir,
        )?;
        slob.window = db::window(self.window, work_loop)?;
        let sessions = slob.sessions();
        let length = db::length(work_loop, sessions, self.time, self.ramp)?;
        let (rate_iops, arrival) =
            self.pacing(sessions, Paced::Operations, slob.think.is_some())?;
        // --memory: the datafiles through the page cache it bounds (not InnoDB's).
        let io_mode = match slob.memory {
            Some(_) => slob.flavor.io_under_memory(self.io_mode),
            None => self.io_mode,
        };
        Ok(RunConfig {
            io_mode,
            files: self.files,
            // The flavor's page when --bs is not given.
            block_size: bs,
            size_bytes: Some(slob.tablespace_blocks() * u64::from(bs)),
            sessions,
            length,
            hotspot,
            rate_iops,
            arrival,
            load_parallel: self.load_parallel(),
            destroy_device: self.destroy_device.clone(),
            ..self.shared(WorkloadConfig::Slob(slob))
        })
    }

    /// The raw workload's options, each refused with what the model uses instead.
    fn refuse_raw_options(&self) -> Result<(), Refused> {
        let raw_only = [
            (
                self.pattern.is_some(),
                "--pattern",
                "the model decides reads and writes",
            ),
            (self.read_pct.is_some(), "--read-pct", "use --update-pct"),
            (
                self.dist != Distribution::Uniform,
                "--dist",
                "use --hotspot-mb",
            ),
            (
                self.iodepth != 1,
                "--iodepth",
                "use --dbwr-batch for DB writer batches",
            ),
            (
                self.size.is_some(),
                "--size",
                "the data size is --scale per schema",
            ),
            (self.ops.is_some(), "--ops", "use --work-loop"),
            (
                self.uring.given().is_some(),
                self.uring.given().unwrap_or_default(),
                "the io_uring settings apply to --workload raw",
            ),
        ];
        match raw_only.iter().find(|(given, ..)| *given) {
            Some((_, opt, instead)) => {
                Err(format!("{opt} does not apply to --workload slob; {instead}").into())
            }
            None => Ok(()),
        }
    }
}

/// The hot spot of `--hotspot-mb`, `--hotspot-offset-mb` and
/// `--hotspot-frequency` (clap makes sure they come together).
pub(crate) fn hotspot(
    mb: Option<u64>,
    offset_mb: Option<u64>,
    every: Option<u32>,
) -> Result<Option<HotspotConfig>, Refused> {
    let (mb, every) = match (mb, offset_mb, every) {
        (None, None, None) => return Ok(None),
        (Some(mb), _, Some(every)) => (mb, every),
        (Some(mb), _, None) => {
            return Err(format!(
                "--hotspot-mb {mb} needs --hotspot-frequency N (every Nth operation goes to the hot spot)"
            ).into());
        }
        (None, Some(off), _) => {
            return Err(format!(
                "--hotspot-offset-mb {off} needs --hotspot-mb SIZE and --hotspot-frequency N"
            )
            .into());
        }
        (None, None, Some(n)) => {
            return Err(format!(
                "--hotspot-frequency {n} needs --hotspot-mb SIZE (the hot spot's size in MiB)"
            )
            .into());
        }
    };
    let offset_mb = offset_mb.unwrap_or(0);
    if mb == 0 {
        return Err("--hotspot-mb 0: the hot spot needs at least 1 MiB".into());
    }
    // At most 8 EiB each, so that offset + size cannot overflow.
    let bytes = |opt: &str, v: u64| {
        (v <= 1 << 43)
            .then_some(v << 20)
            .ok_or_else(|| format!("{opt} {v} is too large (more than 8 EiB)"))
    };
    Ok(Some(HotspotConfig {
        size_bytes: bytes("--hotspot-mb", mb)?,
        offset_bytes: bytes("--hotspot-offset-mb", offset_mb)?,
        every,
    }))
}

/// A seed from the clock and process id, printed in the report so the run can be repeated.
pub(crate) fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15
}
