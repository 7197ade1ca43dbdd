//! The options of `--workload slob` (SLOB's slob.conf and runit.sh, as
//! flags) and their validation into a [`SlobConfig`]. Every refusal is one
//! line naming the option, the value, the limit and what to give instead.

use crate::options::Refused;
use std::path::{Path, PathBuf};

use clap::Args;

use super::choice::choice;
use crate::config::{EngineKind, HotspotConfig};
use crate::units::{fmt_size, parse_seconds, parse_size};
use crate::workload::MAX_SESSIONS;
use crate::workload::slob::flavor::Flavor;
use crate::workload::slob::{RedoStress, RedoSync, SlobConfig, Think};

pub const DEFAULT_SCALE: u64 = 80 << 20;
pub const DEFAULT_CACHE: u64 = 16 << 20;
pub const DEFAULT_UPDATE_PCT: u8 = 25;
pub const DEFAULT_WORK_UNIT: u32 = 64;
/// The DB writers' nice value by default when the sessions outnumber the
/// CPUs `BUSY_SESSIONS_PER_CPU` times over (see `dbwr::raise_priority`).
pub const DEFAULT_DBWR_NICE: i32 = -10;
/// Sessions per CPU beyond which a DB writer at the sessions' priority
/// starves (measured on 2 CPUs, 20% updates: nice -10 gave 0.89x executes/s
/// at 2 sessions, 0.93x at 4, 1.07x at 16, 1.2-1.5x at 64-1024).
pub const BUSY_SESSIONS_PER_CPU: u32 = 4;

/// The DB writers' nice value beyond `CROWDED_SESSIONS_PER_CPU` sessions
/// per CPU. A nice -10 thread weighs about nine sessions, so among 512 or
/// more busy sessions per CPU each writer's share falls under 2%; nice -20
/// weighs about 87. Measured on 2 CPUs, tmpfs, 25% updates, same build
/// (`bench/slob-sessions.sh`, interleaved, two sweeps): CPU per physical
/// I/O 0.89x and 0.96x at 1024 sessions, 0.83x and 0.93x at 4096; I/O/s
/// 1.12x and 1.03x, 1.19x and 1.07x; at 256 sessions 1.04x the CPU (so
/// not there).
pub const CROWDED_DBWR_NICE: i32 = -20;

/// The DB writers' nice value when `--dbwr-nice` is not given: raised only
/// where the sessions keep every core busy, else the sessions' own (0),
/// and raised further where they crowd the cores.
pub fn default_dbwr_nice(sessions: u32, cpus: u32) -> i32 {
    let cpus = cpus.max(1);
    if sessions > CROWDED_SESSIONS_PER_CPU * cpus {
        CROWDED_DBWR_NICE
    } else if sessions > BUSY_SESSIONS_PER_CPU * cpus {
        DEFAULT_DBWR_NICE
    } else {
        0
    }
}

/// Sessions per CPU beyond which four DB writers keep up where two fall
/// behind (measured on 2 CPUs: 4 against 2 writers gave 0.99x executes/s
/// at 1024 sessions and 1.25x at 4096).
pub const CROWDED_SESSIONS_PER_CPU: u32 = 256;

/// The DB writers when `--db-writers` is not given: one while the sessions
/// leave the cores room (SLOB's one DBWn, Oracle's CPU_COUNT/8 on a small
/// host), two beyond `BUSY_SESSIONS_PER_CPU` sessions per CPU and four
/// beyond `CROWDED_SESSIONS_PER_CPU`, where fewer writers fall behind the
/// misses. Measured on 2 CPUs, tmpfs, 25% updates, 256M cache
/// (`bench/ab.sh`, 6 pairs, executes/s of 2 writers against 1): 1.04x at 4
/// sessions (within the noise), 1.12x at 16, 1.13x at 256, 1.10x at 1024,
/// 1.29x at 4096; 4 against 1: 1.24x at 1024, 1.38x at 4096.
pub fn default_db_writers(sessions: u32, cpus: u32) -> u32 {
    let cpus = cpus.max(1);
    if sessions > CROWDED_SESSIONS_PER_CPU * cpus {
        4
    } else if sessions > BUSY_SESSIONS_PER_CPU * cpus {
        2
    } else {
        1
    }
}
/// Sessions per CPU up to which one psync DB writer is the default when the
/// datafiles are on a memory filesystem (see [`default_dbwr_engine`]).
pub const MEMORY_FS_SESSIONS_PER_CPU: u32 = 32;

/// How the DB writers write when `--dbwr-engine` is not given: io_uring
/// where the kernel allows it (a batch in flight at once, as DBWn with
/// asynchronous I/O), except on a memory filesystem (tmpfs, ramfs): there
/// io_uring cannot write without blocking and hands every write to an
/// io-wq worker thread, the same copy plus two context switches per block,
/// so the writers write with psync (one writer up to
/// `MEMORY_FS_SESSIONS_PER_CPU` sessions per CPU, [`one_psync_writer`]).
/// Measured on 2 CPUs, tmpfs, 25% updates (bench/README, "Issue 14, the
/// model's constant cost per I/O", "... after session 8's merges" and
/// "Issue 14 in session 9"): psync cost 0.96x the CPU per physical I/O at
/// 1 session; one psync writer against two io_uring writers 0.84-0.89x at
/// 16 and 64 sessions (three sweeps); with as many psync writers as
/// io_uring ones, 0.91x at 256 and 1024 sessions and 0.96x at 4096, at
/// 1.06-1.11x the I/O/s (once the writers ran at nice -20 beyond 256
/// sessions per CPU; at nice -10 psync had lost at 4096).
pub fn default_dbwr_engine(target_dir: Option<&Path>) -> EngineKind {
    if !crate::engine::uring::available() || target_dir.is_some_and(on_memory_fs) {
        EngineKind::Psync
    } else {
        EngineKind::IoUring
    }
}

/// True where one DB writer writing with psync is the default: the
/// datafiles on a memory filesystem and at most
/// `MEMORY_FS_SESSIONS_PER_CPU` sessions per CPU (there one writer doing
/// memory copies keeps up; [`default_db_writers`] is for devices).
pub fn one_psync_writer(target_dir: Option<&Path>, sessions: u32, cpus: u32) -> bool {
    sessions <= MEMORY_FS_SESSIONS_PER_CPU * cpus.max(1) && target_dir.is_some_and(on_memory_fs)
}

/// True when `dir` (or, if it does not exist yet, its nearest existing
/// ancestor) is on tmpfs or ramfs.
fn on_memory_fs(dir: &Path) -> bool {
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find_map(|d| rustix::fs::statfs(d).ok())
        .is_some_and(|s| {
            // f_type's width differs between architectures.
            #[allow(clippy::unnecessary_cast)]
            let t = s.f_type as i64;
            #[allow(clippy::unnecessary_cast)]
            let tmpfs = libc::TMPFS_MAGIC as i64;
            t == tmpfs || t == RAMFS_MAGIC
        })
}

pub const DEFAULT_REDO_FILE_SIZE: u64 = 128 << 20;
pub const DEFAULT_LOG_BUFFER: u64 = 4 << 20;
/// A buffer cache is capped at this many times the data.
pub const CACHE_CAP_X: u64 = 4;
/// Longest think time, seconds.
pub const MAX_THINK_S: f64 = 3600.0;

#[derive(Args, Debug, Default, Clone)]
#[command(next_help_heading = "SLOB model (--workload slob)")]
pub struct SlobArgs {
    /// Rows (one per block) per schema: a block count, or a size with K/M/G/T (SLOB's SCALE) [default: 80M].
    #[arg(long, value_name = "BLOCKS|SIZE")]
    pub scale: Option<String>,

    /// Schemas (SLOB's runit.sh -s); each is a disjoint region of the datafiles [default: --sessions].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SESSIONS as i64))]
    pub schemas: Option<u32>,

    /// Sessions per schema (runit.sh -t); they share the schema's blocks [default: 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SESSIONS as i64))]
    pub threads_per_schema: Option<u32>,

    /// Rows each operation touches, 3..1024 (SLOB's WORK_UNIT) [default: 64].
    #[arg(long)]
    pub work_unit: Option<u32>,

    /// Percentage of operations that update and commit, 0..100, exact over a run (UPDATE_PCT) [default: 25].
    #[arg(long)]
    pub update_pct: Option<u32>,

    /// Percentage of operations that scan --scan-size contiguous blocks, 0..100 (SCAN_PCT) [default: 0].
    #[arg(long)]
    pub scan_pct: Option<u32>,

    /// Blocks per scan read: a count or a size with K/M [default: 1M worth of blocks].
    #[arg(long, value_name = "BLOCKS|SIZE")]
    pub scan_size: Option<String>,

    /// Redo per changed block: lite (2 of 19 columns) or heavy (all 19, 9.5x) (REDO_STRESS) [default: lite].
    #[arg(long, value_parser = choice::<RedoStress>())]
    pub redo_stress: Option<RedoStress>,

    /// Whose redo the model writes: oracle (change vectors only), postgres (WAL records plus a full-page image of each block's first change after a checkpoint, in 8 KiB WAL pages) or innodb (redo records per changed row in 512-byte log blocks, a write and fsync per commit group, page cleaners writing each batch through a doublewrite file; 16k blocks unless --bs says otherwise) [default: oracle].
    #[arg(long, value_parser = choice::<Flavor>())]
    pub flavor: Option<Flavor>,

    /// Every Nth operation goes to the first schema (HOT_SCHEMA_FREQUENCY).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub hot_schema_frequency: Option<u32>,

    /// Every Nth operation is followed by think time (THINK_TM_FREQUENCY).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub think_frequency: Option<u32>,

    /// Shortest think time (THINK_TM_MIN), e.g. 0.1 or 100ms [default: 0.1].
    #[arg(long, value_parser = parse_seconds)]
    pub think_min: Option<f64>,

    /// Longest think time (THINK_TM_MAX) [default: --think-min].
    #[arg(long, value_parser = parse_seconds)]
    pub think_max: Option<f64>,

    /// Operations per session, then stop (SLOB's WORK_LOOP); instead of --time.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with_all = ["time", "ramp"])]
    pub work_loop: Option<u64>,

    /// Buffer cache size (db_cache_size); small forces physical reads [default: 16M].
    #[arg(long, value_parser = parse_size)]
    pub cache: Option<u64>,

    /// DB writer threads [default: 1; 2 with more than 4 sessions per CPU, 4 with more than 256; --flavor innodb: 1, its one page cleaner].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub db_writers: Option<u32>,

    /// How DB writers write: io_uring (a batch in flight at once, like DBWn
    /// with asynchronous I/O), psync (one write at a time) or null (no I/O:
    /// the model's own cost) [default: io_uring where the kernel allows it,
    /// psync on tmpfs or ramfs, where io_uring hands every write to a
    /// worker thread, and where it does not].
    #[arg(long, value_parser = choice::<crate::config::EngineKind>(), value_name = "ENGINE", hide_possible_values = true)]
    pub dbwr_engine: Option<crate::config::EngineKind>,

    /// Nice value of the DB writer threads where dbio may raise their priority (root, CAP_SYS_NICE), -20..19: on a host whose cores the sessions keep busy, a writer at the sessions' priority gets one share of CPU among hundreds and the sessions wait on free buffers [default: -10 with more than 4 sessions per CPU, -20 with more than 256, else 0].
    #[arg(long, value_name = "NICE", value_parser = clap::value_parser!(i32).range(-20..=19), allow_hyphen_values = true)]
    pub dbwr_nice: Option<i32>,

    /// Most buffers a DB writer writes per batch (all in flight with io_uring) [default: 64].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub dbwr_batch: Option<u32>,

    /// Most buffers per second the DB writers write outside checkpoints (PostgreSQL's background writer cap); sessions that find no clean buffer then write one themselves with --flavor postgres [default: 500 with --flavor postgres (bgwriter_lru_maxpages 100 per bgwriter_delay 200ms), else no cap].
    #[arg(long, value_name = "BUFFERS", value_parser = clap::value_parser!(u32).range(1..))]
    pub dbwr_rate: Option<u32>,

    /// Bound the model's memory, page cache included (a memory cgroup, as --pg-memory bounds PostgreSQL's), e.g. 512M: the datafiles are then read and written through the page cache (--io direct becomes buffered), which absorbs what it would for PostgreSQL with shared_buffers = --cache; with --flavor innodb --io direct stays O_DIRECT, as innodb_flush_method=O_DIRECT does under --mysql-memory; at least --cache + 64M.
    #[arg(long, value_parser = parse_size)]
    pub memory: Option<u64>,

    /// Directory for the redo logs (another filesystem is fine) [default: the --target directory].
    #[arg(long, value_name = "DIR")]
    pub redo_dir: Option<PathBuf>,

    /// Redo log files, used in turn [default: 3].
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub redo_files: Option<u32>,

    /// Size of each redo log file [default: 128M].
    #[arg(long, value_parser = parse_size)]
    pub redo_file_size: Option<u64>,

    /// Redo block size: every log write is whole blocks of it (512, 4096 or 8192); oracle pads a partly filled block, postgres and innodb write it again with the next write [default: 512; --flavor postgres: 8192, its WAL page].
    #[arg(long)]
    pub redo_block: Option<u32>,

    /// How a log write is made durable: dsync (O_DSYNC) or fdatasync [default: dsync; --flavor innodb: fdatasync after each write; --flavor postgres: fdatasync when a commit waits, as wal_sync_method=fdatasync].
    #[arg(long, value_parser = choice::<RedoSync>())]
    pub redo_sync: Option<RedoSync>,

    /// Log buffer size: the most one log write carries [default: 4M].
    #[arg(long, value_parser = parse_size)]
    pub log_buffer: Option<u64>,
}

impl SlobArgs {
    /// The first model option given, for refusing them with `--workload raw`.
    pub fn first_given(&self) -> Option<&'static str> {
        let given = [
            (self.scale.is_some(), "--scale"),
            (self.schemas.is_some(), "--schemas"),
            (self.threads_per_schema.is_some(), "--threads-per-schema"),
            (self.work_unit.is_some(), "--work-unit"),
            (self.update_pct.is_some(), "--update-pct"),
            (self.scan_pct.is_some(), "--scan-pct"),
            (self.scan_size.is_some(), "--scan-size"),
            (self.redo_stress.is_some(), "--redo-stress"),
            (self.flavor.is_some(), "--flavor"),
            (
                self.hot_schema_frequency.is_some(),
                "--hot-schema-frequency",
            ),
            (self.think_frequency.is_some(), "--think-frequency"),
            (self.think_min.is_some(), "--think-min"),
            (self.think_max.is_some(), "--think-max"),
            (self.work_loop.is_some(), "--work-loop"),
            (self.cache.is_some(), "--cache"),
            (self.db_writers.is_some(), "--db-writers"),
            (self.dbwr_batch.is_some(), "--dbwr-batch"),
            (self.dbwr_engine.is_some(), "--dbwr-engine"),
            (self.dbwr_nice.is_some(), "--dbwr-nice"),
            (self.dbwr_rate.is_some(), "--dbwr-rate"),
            (self.memory.is_some(), "--memory"),
            (self.redo_dir.is_some(), "--redo-dir"),
            (self.redo_files.is_some(), "--redo-files"),
            (self.redo_file_size.is_some(), "--redo-file-size"),
            (self.redo_block.is_some(), "--redo-block"),
            (self.redo_sync.is_some(), "--redo-sync"),
            (self.log_buffer.is_some(), "--log-buffer"),
        ];
        given.iter().find(|(g, _)| *g).map(|(_, n)| *n)
    }

    /// Validates the model's options. `sessions` is --sessions if given;
    /// `target_dir` the directory target (None for a block device).
    pub fn into_config(
        self,
        sessions: Option<u32>,
        block_size: u32,
        datafiles: u32,
        hotspot: Option<HotspotConfig>,
        target_dir: Option<&Path>,
    ) -> Result<SlobConfig, Refused> {
        let (schemas, threads) = self.schemas(sessions)?;
        let bs = u64::from(block_size);
        let scale_blocks = self.scale_blocks(bs, schemas)?;
        let mix = self.mix(bs, scale_blocks)?;
        let think = self.think()?;
        let redo = self.redo(target_dir)?;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        let sessions = schemas * threads;
        let mut cfg = SlobConfig {
            schemas,
            threads_per_schema: threads,
            scale_blocks,
            block_size,
            datafiles,
            work_unit: mix.work_unit,
            update_pct: mix.update_pct as u8,
            scan_pct: mix.scan_pct as u8,
            scan_blocks: mix.scan_blocks as u32,
            redo_stress: self.redo_stress.unwrap_or(RedoStress::Lite),
            flavor: redo.flavor,
            hotspot,
            hot_schema_every: self.hot_schema_frequency,
            think,
            work_loop: self.work_loop,
            cache_bytes: self.cache.unwrap_or(DEFAULT_CACHE),
            db_writers: self
                .db_writers
                .or(redo.flavor.db_writers())
                .unwrap_or_else(|| {
                    let psync = self.dbwr_engine.is_none_or(|e| e == EngineKind::Psync);
                    if psync && one_psync_writer(target_dir, sessions, cpus) {
                        1
                    } else {
                        default_db_writers(sessions, cpus)
                    }
                }),
            dbwr_batch: self.dbwr_batch.unwrap_or(redo.flavor.dbwr_batch()),
            dbwr_rate: self.dbwr_rate.or((redo.flavor == Flavor::Postgres)
                .then_some(crate::workload::slob::pace::BGWRITER_RATE)),
            memory: self.memory,
            dbwr_nice: self
                .dbwr_nice
                .unwrap_or_else(|| default_dbwr_nice(sessions, cpus)),
            dbwr_engine: self
                .dbwr_engine
                .unwrap_or_else(|| default_dbwr_engine(target_dir)),
            redo_dir: redo.dir,
            redo_files: self.redo_files.unwrap_or(3),
            redo_file_size: redo.file_size,
            redo_block: redo.block,
            redo_sync: self.redo_sync.unwrap_or(redo.flavor.redo_sync()),
            log_buffer: redo.log_buffer,
            // `--window` is the run's option (`options::mod`).
            window: Default::default(),
        };
        check_hotspot(&cfg, bs)?;
        cfg.cache_bytes = cache_bytes(&cfg, bs)?;
        check_memory(&cfg)?;
        check_log_sizes(&cfg)?;
        Ok(cfg)
    }

    /// `--schemas` and `--threads-per-schema` (or `--sessions`, their
    /// product), within SLOB's limit of sessions.
    fn schemas(&self, sessions: Option<u32>) -> Result<(u32, u32), Refused> {
        let threads = self.threads_per_schema.unwrap_or(1);
        let schemas = match (self.schemas, sessions) {
            (Some(n), None) => n,
            (None, Some(s)) => {
                if s % threads != 0 {
                    return Err(format!(
                        "--sessions {s} is not a multiple of --threads-per-schema {threads}; give --schemas N instead (sessions = schemas x threads)"
                    ).into());
                }
                s / threads
            }
            (Some(n), Some(s)) => {
                if n * threads != s {
                    return Err(format!(
                        "--sessions {s} disagrees with --schemas {n} x --threads-per-schema {threads} = {}; give one or the other",
                        n * threads
                    ).into());
                }
                n
            }
            (None, None) if self.threads_per_schema.is_some() => 1,
            (None, None) => 4,
        };
        if schemas * threads > MAX_SESSIONS {
            return Err(format!(
                "--schemas {schemas} x --threads-per-schema {threads} = {} sessions is more than {MAX_SESSIONS} (SLOB's limit); give fewer schemas or threads per schema",
                schemas * threads
            ).into());
        }
        Ok((schemas, threads))
    }

    /// `--scale`: blocks per schema, at most 1 EiB of data in all.
    fn scale_blocks(&self, bs: u64, schemas: u32) -> Result<u64, Refused> {
        let scale_blocks = match &self.scale {
            None => DEFAULT_SCALE / bs,
            Some(s) => blocks_or_size(s, bs, "--scale")?,
        };
        if scale_blocks
            .checked_mul(u64::from(schemas))
            .and_then(|b| b.checked_mul(bs))
            .is_none_or(|b| b > 1 << 60)
        {
            return Err(format!(
                "--scale {scale_blocks} blocks x {schemas} schemas of {} is too large (more than 1 EiB of data)",
                fmt_size(bs)
            ).into());
        }
        Ok(scale_blocks)
    }

    /// The operations' mix: `--work-unit`, `--update-pct`, `--scan-pct`
    /// and `--scan-size`, each within SLOB's ranges and the schema's rows.
    fn mix(&self, bs: u64, scale_blocks: u64) -> Result<Mix, Refused> {
        let work_unit = self.work_unit.unwrap_or(DEFAULT_WORK_UNIT);
        if !(3..=1024).contains(&work_unit) {
            return Err(format!(
                "--work-unit {work_unit} is out of range: SLOB's WORK_UNIT is 3 to 1024 rows"
            )
            .into());
        }
        let update_pct = self.update_pct.unwrap_or(u32::from(DEFAULT_UPDATE_PCT));
        if update_pct > 100 {
            return Err(format!("--update-pct {update_pct} is out of range: give 0 to 100").into());
        }
        let scan_pct = self.scan_pct.unwrap_or(0);
        if scan_pct > 100 || update_pct + scan_pct > 100 {
            return Err(format!(
                "--scan-pct {scan_pct} with --update-pct {update_pct} is out of range: the two add up to at most 100"
            ).into());
        }
        let scan_blocks = match &self.scan_size {
            None => ((1 << 20) / bs).max(1),
            Some(s) => blocks_or_size(s, bs, "--scan-size")?,
        };
        if self.scan_size.is_some() && scan_pct == 0 {
            return Err("--scan-size needs --scan-pct above 0".into());
        }
        if scan_blocks > 1024 {
            return Err(format!(
                "--scan-size {scan_blocks} blocks is more than 1024 blocks per read; give a smaller --scan-size"
            ).into());
        }
        if scale_blocks < u64::from(work_unit) {
            return Err(format!(
                "--scale {scale_blocks} blocks is smaller than --work-unit {work_unit}; each schema needs at least one work unit of rows"
            ).into());
        }
        if scan_pct > 0 && scale_blocks < scan_blocks {
            return Err(format!(
                "--scale {scale_blocks} blocks is smaller than one scan ({scan_blocks} blocks); raise --scale or lower --scan-size"
            ).into());
        }
        Ok(Mix {
            work_unit,
            update_pct,
            scan_pct,
            scan_blocks,
        })
    }

    /// `--think-frequency` with `--think-min` and `--think-max`.
    fn think(&self) -> Result<Option<Think>, Refused> {
        let Some(every) = self.think_frequency else {
            for (opt, v) in [
                ("--think-min", self.think_min),
                ("--think-max", self.think_max),
            ] {
                if let Some(v) = v {
                    return Err(format!(
                        "{opt} {v} needs --think-frequency N (every Nth operation is followed by think time)"
                    ).into());
                }
            }
            return Ok(None);
        };
        let min_s = self.think_min.unwrap_or(0.1);
        let max_s = self.think_max.unwrap_or(min_s);
        for (opt, v) in [
            ("--think-min", self.think_min),
            ("--think-max", self.think_max),
        ] {
            if let Some(v) = v.filter(|v| *v > MAX_THINK_S) {
                return Err(format!(
                    "{opt} {v} s is more than an hour; think times are short pauses (e.g. 0.1, 100ms)"
                ).into());
            }
        }
        if max_s < min_s {
            return Err(format!("--think-max {max_s} is below --think-min {min_s}").into());
        }
        Ok(Some(Think {
            every,
            min_s,
            max_s,
        }))
    }

    /// The redo's flavor, block, buffer and files, and where they go.
    fn redo(&self, target_dir: Option<&Path>) -> Result<Redo, Refused> {
        let flavor = self.flavor.unwrap_or_default();
        if !flavor.is_oracle() && self.redo_stress.is_some() {
            return Err(format!("--redo-stress does not apply with --flavor {}: its redo per changed row is the engine's (docs/slob.md); drop --redo-stress", flavor.name()).into());
        }
        let block = self.redo_block.unwrap_or(flavor.redo_block());
        if ![512, 4096, 8192].contains(&block) {
            return Err(format!("--redo-block {block} must be 512, 4096 or 8192").into());
        }
        let dir = match (&self.redo_dir, target_dir) {
            (Some(d), _) => d.clone(),
            (None, Some(t)) => t.to_path_buf(),
            (None, None) => {
                return Err("--redo-dir is needed when --target is a block device: the redo logs go in a directory".into());
            }
        };
        Ok(Redo {
            flavor,
            block,
            log_buffer: self.log_buffer.unwrap_or(DEFAULT_LOG_BUFFER),
            file_size: self.redo_file_size.unwrap_or(DEFAULT_REDO_FILE_SIZE),
            dir,
        })
    }
}

/// The model's mix of operations, checked (`SlobArgs::mix`).
struct Mix {
    work_unit: u32,
    update_pct: u32,
    scan_pct: u32,
    scan_blocks: u64,
}

/// The model's redo settings, checked (`SlobArgs::redo`).
struct Redo {
    flavor: Flavor,
    block: u32,
    log_buffer: u64,
    file_size: u64,
    dir: std::path::PathBuf,
}

/// The hot spot within one schema's rows.
fn check_hotspot(cfg: &SlobConfig, bs: u64) -> Result<(), Refused> {
    match cfg.hotspot {
        Some(h)
            if h.offset_bytes.saturating_add(h.size_bytes)
                > cfg.scale_blocks.saturating_mul(bs) =>
        {
            Err(format!(
                "--hotspot-offset-mb {} + --hotspot-mb {} reaches past the end of a schema ({}); make the hot spot smaller or --scale larger",
                h.offset_bytes >> 20,
                h.size_bytes >> 20,
                fmt_size(cfg.scale_blocks * bs)
            ).into())
        }
        _ => Ok(()),
    }
}

/// `--cache`: enough buffers for every session to make progress, no more
/// than the host can give; a cache far larger than the data holds nothing
/// more, so it is capped at CACHE_CAP_X times the data, room enough that
/// dirty and pinned buffers never force a cached block out (the report
/// shows the buffers; `dbio run` says so).
fn cache_bytes(cfg: &SlobConfig, bs: u64) -> Result<u64, Refused> {
    let min = u64::from(cfg.min_cache_buffers()) * bs;
    if cfg.cache_bytes < min {
        return Err(format!(
            "--cache {} is below the minimum the model needs to make progress: {} ({} buffers of {}: 2 per block each of the {} sessions may pin at once); give --cache {} or more",
            fmt_size(cfg.cache_bytes),
            fmt_size(min),
            cfg.min_cache_buffers(),
            fmt_size(bs),
            cfg.sessions(),
            fmt_size(min)
        ).into());
    }
    if cfg.cache_bytes / bs > u64::from(u32::MAX / 2) {
        return Err(format!(
            "--cache {} is too large: at most {} buffers of {}",
            fmt_size(cfg.cache_bytes),
            u32::MAX / 2,
            fmt_size(bs)
        )
        .into());
    }
    let available = crate::preflight::mem_available().map_err(|e| e.to_string())?;
    crate::preflight::check_cache(cfg.cache_bytes, available).map_err(|e| e.to_string())?;
    let data = cfg.tablespace_blocks().saturating_mul(bs);
    Ok(cfg
        .cache_bytes
        .min(data.saturating_mul(CACHE_CAP_X).max(min)))
}

/// `--memory` holds the buffer cache and the model's own memory beside it
/// (with `--flavor postgres`, its backends' too).
fn check_memory(cfg: &SlobConfig) -> Result<(), Refused> {
    use crate::workload::slob::memory::{MIN_ABOVE_CACHE, held_for};
    let own = MIN_ABOVE_CACHE + held_for(cfg.flavor, cfg.sessions());
    match cfg.memory {
        Some(m) if m < cfg.cache_bytes + own => Err(format!(
            "--memory {} does not hold --cache {} and the model's own {} beside it: give --memory {} or more",
            fmt_size(m),
            fmt_size(cfg.cache_bytes),
            fmt_size(own),
            fmt_size(cfg.cache_bytes + own)
        )
        .into()),
        _ => Ok(()),
    }
}

/// `--log-buffer` holds one update's redo in whole redo blocks, and a redo
/// file holds a log write.
fn check_log_sizes(cfg: &SlobConfig) -> Result<(), Refused> {
    let (log_buffer, redo_block) = (cfg.log_buffer, cfg.redo_block);
    let one_op = cfg.max_redo_per_op();
    if log_buffer < one_op || log_buffer > 1 << 30 {
        return Err(format!(
            "--log-buffer {} must hold one update's redo ({} with --work-unit {} and {}) and be at most 1G",
            fmt_size(log_buffer),
            fmt_size(one_op),
            cfg.work_unit,
            match (cfg.flavor, cfg.redo_stress) {
                (Flavor::Postgres, _) => "--flavor postgres",
                (Flavor::Innodb, _) => "--flavor innodb",
                (_, RedoStress::Lite) => "--redo-stress lite",
                (_, RedoStress::Heavy) => "--redo-stress heavy",
            }
        ).into());
    }
    if !log_buffer.is_multiple_of(u64::from(redo_block)) {
        return Err(format!(
            "--log-buffer {} must be a multiple of --redo-block {redo_block}",
            fmt_size(log_buffer)
        )
        .into());
    }
    let redo_file_size = cfg.redo_file_size;
    if redo_file_size < log_buffer || !redo_file_size.is_multiple_of(u64::from(redo_block)) {
        return Err(format!(
            "--redo-file-size {} is smaller than one log write (up to --log-buffer {}) or not a multiple of --redo-block {redo_block}; give --redo-file-size {} or more",
            fmt_size(redo_file_size),
            fmt_size(log_buffer),
            fmt_size(log_buffer)
        ).into());
    }
    Ok(())
}

/// A count of blocks ("10000") or a size ("80M") turned into blocks.
fn blocks_or_size(text: &str, bs: u64, opt: &str) -> Result<u64, Refused> {
    let t = text.trim();
    let blocks = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<u64>()
            .map_err(|_| format!("{opt} {text} is too large"))?
    } else {
        let bytes = parse_size(t).map_err(|e| format!("{opt} {text}: {e}"))?;
        bytes / bs
    };
    if blocks == 0 {
        return Err(format!(
            "{opt} {text} is less than one block of {}; give a block count or a size",
            fmt_size(bs)
        )
        .into());
    }
    Ok(blocks)
}

#[cfg(test)]
#[path = "slob_tests.rs"]
mod tests;
