//! The options of `--workload replay` (`--trace`, `--speed`, `--map`) and
//! their validation into a [`ReplayConfig`]: the trace is read once here
//! (as a stream) so that a missing, damaged or oversized trace is refused
//! in one line before anything is laid out.

use std::path::PathBuf;

use clap::Args;

use super::{DEFAULT_BS, Refused, RunArgs};
use crate::config::{EngineKind, RunConfig, RunLength, WorkloadConfig};
use crate::workload::MAX_SESSIONS;
use crate::workload::dist::Distribution;
use crate::workload::replay::{MapMode, ReplayConfig, Sessions, Speed, TraceFacts, facts};

#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Traces (--capture, --workload replay; docs/replay.md)")]
pub struct ReplayArgs {
    /// The trace to replay: a dbio trace (`dbio capture`), a fio iolog v2/v3, blktrace's per-CPU files (repeat --trace for each), or the id of a run stored with --capture.
    #[arg(long = "trace", value_name = "FILE|RUN")]
    pub trace: Vec<PathBuf>,

    /// How fast: 1x (the captured issue times), 2x, 0.5x, or max (as fast as each captured thread's concurrency allows) [default: 1x].
    #[arg(long, value_parser = parse_speed)]
    pub speed: Option<Speed>,

    /// How captured offsets land on a target smaller than the trace: modulo (wrap) or scale (stretch) [default: none; a trace that does not fit is refused].
    #[arg(long, value_parser = parse_map)]
    pub map: Option<MapMode>,

    /// Record every block request to the device under the target while the run goes (the kernel's block tracepoints), kept in the store with the run: `dbio trace convert RUN`, `--workload replay --trace RUN` (docs/replay.md).
    #[arg(long)]
    pub capture: bool,

    /// Run the replay's sessions and its feed at real-time priority (SCHED_FIFO 1; root or CAP_SYS_NICE): a wake-up at a due time no longer waits for other processes' turn on the CPU. A session that never sleeps (--speed max on a fast target) is then held back by the kernel's real-time throttle.
    #[arg(long)]
    pub rt: bool,

    /// The stored run `--trace` named (its trace written out to a file).
    #[arg(skip)]
    pub from_run: Option<i64>,
}

impl ReplayArgs {
    /// The first replay option given, for a refusal on another workload.
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (!self.trace.is_empty(), "--trace"),
            (self.speed.is_some(), "--speed"),
            (self.map.is_some(), "--map"),
            (self.rt, "--rt"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

fn parse_speed(s: &str) -> Result<Speed, Refused> {
    if s == "max" {
        return Ok(Speed::Max);
    }
    match s.strip_suffix('x').unwrap_or(s).parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(Speed::Factor(v)),
        _ => Err("must be a factor above 0 (1x as captured, 2x, 0.5x) or max".into()),
    }
}

fn parse_map(s: &str) -> Result<MapMode, Refused> {
    match s {
        "modulo" => Ok(MapMode::Modulo),
        "scale" => Ok(MapMode::Scale),
        _ => Err("must be modulo or scale".into()),
    }
}

impl RunArgs {
    /// `--workload replay`: refuses what the trace decides, reads the trace
    /// once, and sizes a directory target to it.
    pub(super) fn into_replay_config(self) -> Result<RunConfig, Refused> {
        self.refuse_what_the_trace_decides()?;
        let source = self.trace_source();
        let facts = facts::scan(&self.replay.trace).map_err(|e| format!("--trace: {e}"))?;
        if facts.requests() == 0 {
            return Err(
                format!("--trace {source}: the trace holds no request; nothing to replay").into(),
            );
        }
        let sessions = self.replay_sessions(&facts, &source)?;
        let iodepth = self.replay_iodepth(&facts)?;
        let bs = self.bs.unwrap_or(DEFAULT_BS);
        let size = self.replay_size(&facts, &source, bs)?;
        let requests = facts.requests();
        let replay = ReplayConfig {
            trace: self.replay.trace.clone(),
            source,
            speed: self.replay.speed.unwrap_or(Speed::Factor(1.0)),
            map: self.replay.map,
            rt: self.replay.rt,
            sessions,
            facts,
            uring: self.uring.clone().into_opts(self.engine)?,
        };
        Ok(RunConfig {
            files: self.files,
            size_bytes: size,
            block_size: bs,
            sessions: replay.session_count(),
            iodepth,
            length: RunLength::Ops { ops: requests },
            load_parallel: self.load_parallel(),
            destroy_device: self.destroy_device.clone(),
            content: Default::default(),
            ..self.shared(WorkloadConfig::Replay(replay))
        })
    }

    /// Refuses the model's options and those the trace decides (pattern,
    /// mix, rate, length), and a replay without a trace or with a trace
    /// path that is not UTF-8.
    fn refuse_what_the_trace_decides(&self) -> Result<(), Refused> {
        let decided = [
            (self.pattern.is_some(), "--pattern"),
            (self.read_pct.is_some(), "--read-pct"),
            (self.dist != Distribution::Uniform, "--dist"),
            (self.hotspot_mb.is_some(), "--hotspot-mb"),
            (self.rate.is_some(), "--rate"),
            (self.ops.is_some(), "--ops"),
            (self.time.is_some(), "--time"),
            (self.ramp.is_some(), "--ramp"),
        ];
        if let Some(opt) = self.slob.first_given() {
            return Err(format!(
                "{opt} applies to --workload slob; --workload replay issues the trace's requests"
            )
            .into());
        }
        if let Some((_, opt)) = decided.iter().find(|(given, _)| *given) {
            return Err(format!(
                "{opt} does not apply to --workload replay: the trace decides what is asked and when; drop {opt}"
            )
            .into());
        }
        if self.replay.trace.is_empty() {
            return Err(
                "--workload replay needs --trace FILE (a dbio trace, a fio iolog, or blktrace's per-CPU files)".into(),
            );
        }
        for t in &self.replay.trace {
            super::utf8_path("--trace", t)?;
        }
        Ok(())
    }

    /// What the trace is called in the report and in refusals: the stored
    /// run it came from, or its files.
    fn trace_source(&self) -> String {
        match self.replay.from_run {
            Some(id) => format!("run {id}"),
            None => self
                .replay
                .trace
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    /// The replay's sessions: a pool (`--sessions N`), the trace's threads
    /// (psync: one per request a thread had in flight; `--speed max`), or
    /// for a timed replay with a ring per session, the trace's threads
    /// shared among at most one session per CPU dbio may use.
    fn replay_sessions(&self, facts: &TraceFacts, source: &str) -> Result<Sessions, Refused> {
        let per_thread_in_flight = self.engine == EngineKind::Psync;
        let timed = !matches!(self.replay.speed, Some(Speed::Max));
        let sessions = match self.sessions {
            Some(n) => Sessions::Pool(n),
            None if timed && !per_thread_in_flight => {
                let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
                Sessions::Shared(cpus.min(facts.threads.len()).max(1) as u32)
            }
            None => Sessions::PerThread {
                per_thread_in_flight,
            },
        };
        let count = ReplayConfig::count(facts, sessions);
        if count > u64::from(MAX_SESSIONS) {
            return Err(format!(
                "--trace {source}: replaying its {} threads takes {count} sessions (psync: one per request a thread had in flight), more than {MAX_SESSIONS}; give --engine io_uring, or --sessions N for a pool of N",
                facts.threads.len()
            )
            .into());
        }
        Ok(sessions)
    }

    /// Each session's depth: 1 for psync (more refused), else as deep as
    /// the deepest captured thread.
    fn replay_iodepth(&self, facts: &TraceFacts) -> Result<u32, Refused> {
        Ok(match self.engine {
            EngineKind::Psync if self.iodepth > 1 => {
                return Err(format!(
                    "--iodepth {} needs --engine io_uring (psync has one I/O in flight per session)",
                    self.iodepth
                )
                .into());
            }
            EngineKind::Psync => 1,
            // As deep as the deepest captured thread (more with --iodepth).
            _ => self.iodepth.max(facts.max_in_flight).min(4096),
        })
    }

    /// The data size: `--size`, none on a device, or for a directory as
    /// large as the trace reaches; refused when the room is smaller than
    /// the trace and no `--map` says how to land it.
    fn replay_size(
        &self,
        facts: &TraceFacts,
        source: &str,
        bs: u32,
    ) -> Result<Option<u64>, Refused> {
        let is_device = crate::storage::device::is_block_device(&self.target);
        let size = match (self.size, is_device) {
            (Some(s), _) => Some(s),
            (None, true) => None,
            // A directory: as large as the trace reaches, in whole blocks per file.
            (None, false) => {
                let per_file = facts.extent_bytes.div_ceil(u64::from(self.files)).max(1);
                Some(per_file.next_multiple_of(u64::from(bs)) * u64::from(self.files))
            }
        };
        // The room the trace lands in: --size, else the device's size.
        let room = match (size, is_device) {
            (None, true) => crate::storage::device::probe(&self.target)
                .ok()
                .map(|d| d.size_bytes),
            (s, _) => s,
        };
        if let Some(room) = room.filter(|&r| r < facts.extent_bytes)
            && self.replay.map.is_none()
        {
            let what = match self.size {
                Some(_) => format!("--size {room}"),
                None => format!("{} ({room} bytes)", self.target.display()),
            };
            return Err(format!(
                "--trace {source}: the trace reaches byte {} and {what} is smaller; give --map modulo or --map scale, or room for {} bytes",
                facts.extent_bytes, facts.extent_bytes
            )
            .into());
        }
        Ok(size)
    }
}
