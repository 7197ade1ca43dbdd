//! Checks of a validated [`RunConfig`] against this host, made before
//! anything is written: the data files and redo logs (or a PostgreSQL
//! cluster's files, tables and WAL, or everything a MariaDB instance
//! writes, as `workload::mysql::space` counts it) against free space,
//! the raw hot spot against the data; and the buffer cache against memory
//! (made by the slob options' validation). Each
//! refusal is one line naming the option and the value; nothing has been
//! created when it comes.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::config::{RunConfig, WorkloadConfig};
use crate::storage::manifest::Manifest;
use crate::storage::{DBLWR_SUBDIR, DEFAULT_DIR_SIZE, REDO_SUBDIR, device};
use crate::units::fmt_size;
use crate::workload::db::allocated;
use crate::workload::mysql::MysqlConfig;
use crate::workload::mysql::server::Paths;
use crate::workload::mysql::space;
use crate::workload::pg::PgConfig;
use crate::workload::pg::server as pg_server;
use crate::workload::pg::space::Estimate;
use crate::workload::slob::SlobConfig;

/// Why a run cannot start on this host: one line each.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The host cannot give what the options ask (memory, free space), or
    /// the options contradict the data (a hot spot past its end): the
    /// option, the value and what to give instead.
    #[error("{0}")]
    Refused(String),
    /// A place the data would land could not be examined.
    #[error("cannot examine {}: {source}", path.display())]
    Examine { path: PathBuf, source: io::Error },
    #[error("cannot read /proc/meminfo to check --cache: {0}")]
    Meminfo(io::Error),
    #[error("no MemAvailable in /proc/meminfo to check --cache against")]
    NoMemAvailable,
}

/// The share of the host's available memory a buffer cache may take.
const CACHE_SHARE_OF_AVAILABLE: f64 = 0.8;

/// Every check, in order; the first refusal.
pub fn check(cfg: &RunConfig) -> Result<(), PreflightError> {
    check_buffers(cfg, mem_available()?)?;
    if device::is_block_device(&cfg.target) {
        return Ok(());
    }
    let data = data_bytes(cfg);
    match &cfg.workload {
        WorkloadConfig::Raw(_) => {
            check_hotspot(cfg, data)?;
            check_space(cfg, data, None)
        }
        WorkloadConfig::Replay(_) => check_space(cfg, data, None),
        WorkloadConfig::Slob(s) => check_space(cfg, data, Some(s)),
        WorkloadConfig::Pg(pg) => match pg.server.url {
            Some(_) => Ok(()),
            None => check_pg_space(cfg, pg),
        },
        WorkloadConfig::Mysql(my) => {
            check_hotspot(cfg, data)?;
            match my.server.url {
                Some(_) => Ok(()),
                None => check_mysql_space(cfg, my),
            }
        }
    }
}

/// Refuses a hot spot past the end of `data` bytes.
fn check_hotspot(cfg: &RunConfig, data: u64) -> Result<(), PreflightError> {
    match cfg.hotspot {
        Some(h) if h.offset_bytes.saturating_add(h.size_bytes) > data => {
            Err(PreflightError::Refused(format!(
                "--hotspot-offset-mb {} + --hotspot-mb {} reaches past the end of the data ({}); make the hot spot smaller or --size larger",
                h.offset_bytes >> 20,
                h.size_bytes >> 20,
                fmt_size(data)
            )))
        }
        _ => Ok(()),
    }
}

/// The bytes of data files a directory target gets (whole blocks per file).
pub fn data_bytes(cfg: &RunConfig) -> u64 {
    let bs = u64::from(cfg.block_size);
    let total = cfg.size_bytes.unwrap_or(DEFAULT_DIR_SIZE);
    total / bs / u64::from(cfg.files) * bs * u64::from(cfg.files)
}

/// Refuses a buffer cache the host cannot give.
pub fn check_cache(cache: u64, available: u64) -> Result<(), PreflightError> {
    let most = (available as f64 * CACHE_SHARE_OF_AVAILABLE) as u64;
    if cache > most {
        return Err(PreflightError::Refused(format!(
            "--cache {} is more than this host can give a buffer cache ({} of memory available, {}% of it at most); give --cache {} or less",
            fmt_size(cache),
            fmt_size(available),
            (CACHE_SHARE_OF_AVAILABLE * 100.0) as u32,
            fmt_size(most >> 20 << 20)
        )));
    }
    Ok(())
}

/// Refuses I/O buffers the host cannot give: one block per request in
/// flight in every session (and the slob cache and DB writer batches).
pub fn check_buffers(cfg: &RunConfig, available: u64) -> Result<(), PreflightError> {
    let bs = u64::from(cfg.block_size);
    let io = u64::from(cfg.sessions)
        .saturating_mul(u64::from(cfg.iodepth))
        .saturating_mul(bs);
    let slob = cfg.workload.model().map_or(0, |s| {
        s.cache_bytes
            .saturating_add(u64::from(s.db_writers) * u64::from(s.dbwr_batch) * bs)
            .saturating_add(s.log_buffer.saturating_mul(2))
    });
    let most = (available as f64 * CACHE_SHARE_OF_AVAILABLE) as u64;
    if io.saturating_add(slob) > most {
        return Err(PreflightError::Refused(format!(
            "--sessions {} x --iodepth {} x --bs {} = {} of I/O buffers{} is more than this host can give ({} of memory available); lower --iodepth, --sessions or --bs",
            cfg.sessions,
            cfg.iodepth,
            fmt_size(bs),
            fmt_size(io),
            if slob > 0 {
                format!(
                    " plus {} of buffer cache, DB writer batches and log buffer",
                    fmt_size(slob)
                )
            } else {
                String::new()
            },
            fmt_size(available)
        )));
    }
    Ok(())
}

/// MemAvailable from /proc/meminfo, in bytes.
pub fn mem_available() -> Result<u64, PreflightError> {
    let text = std::fs::read_to_string("/proc/meminfo").map_err(PreflightError::Meminfo)?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or(PreflightError::NoMemAvailable)
}

/// Where new files would land: the path itself, or its nearest existing
/// ancestor.
fn existing_ancestor(path: &Path) -> PathBuf {
    path.ancestors()
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"))
        .to_path_buf()
}

/// Bytes allocated to the files a dbio manifest in `dir` lists: room a new
/// layout gets back (they are reused, extended or replaced).
fn dbio_allocated(dir: &Path) -> u64 {
    match Manifest::load(dir) {
        Ok(Some(m)) => m
            .file_paths(dir)
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|md| md.blocks() * 512)
            .sum(),
        _ => 0,
    }
}

/// One filesystem's demand: where, the device it is on, bytes needed.
struct Demand {
    at: PathBuf,
    dev: u64,
    need: u64,
}

/// Bytes wanted in directories, grouped by the filesystem they land on.
fn demands(wants: &[(&Path, u64)]) -> Result<Vec<Demand>, PreflightError> {
    let mut demands: Vec<Demand> = Vec::new();
    for (dir, need) in wants {
        let at = existing_ancestor(dir);
        let dev = std::fs::metadata(&at)
            .map_err(|source| PreflightError::Examine {
                path: at.clone(),
                source,
            })?
            .dev();
        match demands.iter_mut().find(|d| d.dev == dev) {
            Some(d) => d.need = d.need.saturating_add(*need),
            None => demands.push(Demand {
                at,
                dev,
                need: *need,
            }),
        }
    }
    Ok(demands)
}

/// The first demand its filesystem cannot hold: where (resolved), what is
/// needed, what is free.
fn first_short(demands: &[Demand]) -> Result<Option<(PathBuf, u64, u64)>, PreflightError> {
    for d in demands {
        let st = rustix::fs::statvfs(&d.at).map_err(|e| PreflightError::Examine {
            path: d.at.clone(),
            source: e.into(),
        })?;
        let free = st.f_bavail.saturating_mul(st.f_frsize);
        if d.need > free {
            let at = std::fs::canonicalize(&d.at).unwrap_or_else(|_| d.at.clone());
            return Ok(Some((at, d.need, free)));
        }
    }
    Ok(None)
}

/// Refuses data files (and the SLOB `model`'s redo logs and doublewrite
/// file) that do not fit in free space.
fn check_space(
    cfg: &RunConfig,
    data: u64,
    model: Option<&SlobConfig>,
) -> Result<(), PreflightError> {
    let redo = model.map(|s| {
        (
            s.redo_dir.join(REDO_SUBDIR),
            u64::from(s.redo_files).saturating_mul(s.redo_file_size),
        )
    });
    let mut wants = vec![(
        cfg.target.as_path(),
        data.saturating_sub(dbio_allocated(&cfg.target)),
    )];
    if let Some((dir, bytes)) = &redo {
        wants.push((dir.as_path(), bytes.saturating_sub(dbio_allocated(dir))));
    }
    // `--flavor innodb`'s doublewrite file, beside the redo logs.
    let dblwr = model.map(|s| (s.redo_dir.join(DBLWR_SUBDIR), s.doublewrite_bytes()));
    if let Some((dir, bytes)) = dblwr.as_ref().filter(|(_, b)| *b > 0) {
        wants.push((dir.as_path(), bytes.saturating_sub(dbio_allocated(dir))));
    }
    let Some((at, need, free)) = first_short(&demands(&wants)?)? else {
        return Ok(());
    };
    let what = match model {
        None => format!(
            "--size {} of data files",
            fmt_size(cfg.size_bytes.unwrap_or(DEFAULT_DIR_SIZE))
        ),
        Some(s) => format!(
            "--scale {} blocks x {} schemas ({} of data files) and {} redo logs of --redo-file-size {}{}",
            s.scale_blocks,
            s.schemas,
            fmt_size(data),
            s.redo_files,
            fmt_size(s.redo_file_size),
            doublewrite_words(s),
        ),
    };
    let fix = match model {
        Some(s) if s.doublewrite_bytes() > 0 => {
            "give a smaller --scale, fewer --schemas, smaller redo logs or a smaller --dbwr-batch, or --redo-dir elsewhere"
        }
        Some(_) => {
            "give a smaller --scale, fewer --schemas or smaller redo logs, or --redo-dir elsewhere"
        }
        None => "give a smaller --size",
    };
    Err(PreflightError::Refused(format!(
        "not enough free space in {} for {what}: {} needed, {} free; {fix}, or another --target",
        at.display(),
        fmt_size(need),
        fmt_size(free),
    )))
}

/// The doublewrite file in a refusal's list of what was wanted (`--flavor
/// innodb`), or nothing.
fn doublewrite_words(s: &SlobConfig) -> String {
    match s.doublewrite_bytes() {
        0 => String::new(),
        b => format!(
            " and a doublewrite file of {} (--db-writers {} x --dbwr-batch {} pages, and {} undo pages)",
            fmt_size(b),
            s.db_writers,
            s.dbwr_batch,
            crate::workload::slob::UNDO_PAGES,
        ),
    }
}

/// Refuses a MariaDB instance whose files do not fit in free space: its
/// tables, system files and redo (`workload::mysql::space`), less what an
/// instance already there holds.
fn check_mysql_space(cfg: &RunConfig, my: &MysqlConfig) -> Result<(), PreflightError> {
    let paths = Paths::new(&cfg.target, my.redo_dir.as_deref());
    let need = space::need(my);
    let separate = !paths.redo.starts_with(&paths.root);
    let (here, redo) = match separate {
        true => (need.tables + need.system, need.redo),
        false => (need.tables + need.system + need.redo, 0),
    };
    let mut wants = vec![(
        paths.root.as_path(),
        here.saturating_sub(allocated(&paths.root)),
    )];
    if separate {
        wants.push((
            paths.redo.as_path(),
            redo.saturating_sub(allocated(&paths.redo)),
        ));
    }
    let Some((at, needed, free)) = first_short(&demands(&wants)?)? else {
        return Ok(());
    };
    Err(PreflightError::Refused(format!(
        "not enough free space in {} for MariaDB: --scale {} rows x {} schemas ({} of tables) and the server's own files ({} of redo log (innodb_log_file_size), {} of system and temporary tablespaces, undo and system tables): {} needed, {} free; give a smaller --scale or fewer --schemas, a smaller --mysql-set innodb_log_file_size, --redo-dir elsewhere, or another --target",
        at.display(),
        my.slob.scale_blocks,
        my.slob.schemas,
        fmt_size(need.tables),
        fmt_size(need.redo),
        fmt_size(need.system),
        fmt_size(needed),
        fmt_size(free),
    )))
}

/// Refuses a PostgreSQL cluster whose files do not fit: the cluster, the
/// tables and the WAL up to `max_wal_size` (`pg::space`), on each
/// filesystem they land on; the line names the options that set them.
fn check_pg_space(cfg: &RunConfig, pg: &PgConfig) -> Result<(), PreflightError> {
    let paths = pg_server::Paths::new(&cfg.target, pg.wal_dir.as_deref());
    let e = Estimate::new(
        &paths,
        pg.slob.schemas,
        pg.slob.scale_blocks,
        &pg.server.set,
    )
    .map_err(|source| PreflightError::Examine {
        path: cfg.target.clone(),
        source,
    })?;
    let Some(short) = e.short() else {
        return Ok(());
    };
    let wal = match e.wal_given {
        true => format!("--pg-set max_wal_size {}", fmt_size(e.max_wal)),
        false => format!("at least {}", fmt_size(e.max_wal)),
    };
    Err(PreflightError::Refused(format!(
        "not enough free space in {} for --scale {} rows x {} schemas ({} of tables), the cluster ({}) and its WAL ({wal}): {} needed, {} free; give a smaller --scale or fewer --schemas, WAL elsewhere with --redo-dir, or another --target",
        std::fs::canonicalize(&short.at)
            .unwrap_or_else(|_| short.at.clone())
            .display(),
        pg.slob.scale_blocks,
        pg.slob.schemas,
        fmt_size(e.tables),
        fmt_size(e.cluster),
        fmt_size(short.need),
        fmt_size(short.free),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_beyond_available_memory_is_refused() {
        let e = check_cache(20 << 30, 24 << 30).unwrap_err().to_string();
        assert!(e.starts_with("--cache 20 GiB is more"), "{e}");
        assert!(e.contains("give --cache 19.20 GiB or less"), "{e}");
        assert!(check_cache(16 << 20, 24 << 30).is_ok());
    }

    #[test]
    fn new_files_land_on_the_nearest_existing_directory() {
        let dir = std::env::temp_dir();
        assert_eq!(existing_ancestor(&dir.join("no/such/dir")), dir);
        assert_eq!(existing_ancestor(Path::new("rel-no-such")), Path::new("."));
    }
}
