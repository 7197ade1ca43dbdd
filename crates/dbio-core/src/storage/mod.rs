//! Where I/O goes: data files dbio lays out in a directory, or a block device.
//! A target maps a global block number to (file, byte offset) and opens its
//! files in the run's I/O mode.

pub mod block;
pub mod chain;
pub mod content;
pub(crate) mod crc;
pub mod device;
pub(crate) mod genmap;
pub mod genmap_file;
pub mod inflight;
pub(crate) mod intact;
pub mod layout;
pub mod lock;
pub mod manifest;
pub mod place;
pub mod region;
pub(crate) mod slob_mark;

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::engine::open_flags;

/// The subdirectory of a directory target (or of `--redo-dir`) where the
/// SLOB model lays out its redo logs.
pub const REDO_SUBDIR: &str = "dbio-redo";

/// The subdirectory beside [`REDO_SUBDIR`] where the SLOB model's
/// `--flavor innodb` lays out its doublewrite file.
pub const DBLWR_SUBDIR: &str = "dbio-dblwr";

/// The small files `--flavor postgres` writes and fsyncs in
/// [`REDO_SUBDIR`] at each checkpoint's end, as PostgreSQL's checkpointer
/// does (its commit log page, visibility map, control file, replication
/// origin checkpoint and that file's temporary name): made and removed by
/// the run, and by `dbio clean` if a killed run left them.
pub(crate) const PG_CHECKPOINT_FILES: [&str; 5] = [
    "dbio-pg-xact",
    "dbio-pg-vm",
    "dbio-pg-control",
    "dbio-pg-replorigin",
    "dbio-pg-replorigin.tmp",
];

/// Default data size of a directory target.
pub const DEFAULT_DIR_SIZE: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("cannot {what} {path}: {source}")]
    Io {
        path: PathBuf,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{0}")]
    Manifest(#[from] manifest::ManifestError),
    #[error(
        "{0} exists but dbio did not create it (it is not in dbio-manifest.json); move it away or choose another --target"
    )]
    Foreign(PathBuf),
    #[error("laying out {path} failed at byte {offset}: {}; the partial layout was removed", crate::engine::explain_errno(.source.raw_os_error().unwrap_or(0), crate::config::IoMode::Direct))]
    Layout {
        path: PathBuf,
        offset: u64,
        source: std::io::Error,
    },
    #[error("{0}")]
    Device(#[from] device::DeviceError),
    #[error("{0}")]
    Invalid(String),
    #[error("interrupted")]
    Interrupted,
    /// Another dbio command holds the target's lock.
    #[error("{0}")]
    Busy(String),
    #[error(
        "not enough free space in {dir} for {size} of data files; give a smaller --size (slob: --scale, --schemas or --redo-file-size) or free some space (the partial files were removed)"
    )]
    NoSpace { dir: PathBuf, size: String },
}

impl TargetError {
    pub fn io(path: &Path, what: &'static str, source: std::io::Error) -> Self {
        TargetError::Io {
            path: path.to_path_buf(),
            what,
            source,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Directory,
    Device,
}

/// A prepared target: files that exist and hold `blocks_per_file` blocks each.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    pub kind: TargetKind,
    pub path: PathBuf,
    pub files: Vec<PathBuf>,
    pub block_size: u32,
    pub blocks_per_file: u64,
    /// The id every block's stamps carry (from the manifest; 0 = a device).
    pub id: u32,
    /// Logical sector size of a device target.
    pub logical_sector: Option<u32>,
    /// What laying out did (directory targets).
    pub layout: Option<layout::LayoutReport>,
    /// This rank's part of a device shared by the ranks of an MPI run
    /// (`--region-per-rank`): every offset is within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<region::Region>,
    /// The exclusive locks of the target (and of a `--redo-dir` outside
    /// it), held as long as any copy of the target.
    #[serde(skip)]
    pub locks: Arc<Vec<lock::TargetLock>>,
}

impl Target {
    /// Lays out (or reuses) a directory, or checks a device, for `cfg`,
    /// under the target's exclusive lock (kept in the returned target).
    /// `announce` prints where the target landed on stderr once every check
    /// passed, before anything is laid out.
    pub fn prepare(
        cfg: &RunConfig,
        progress: &crate::samplers::progress::Progress,
        announce: bool,
        interrupt: &AtomicBool,
    ) -> Result<Target, TargetError> {
        let path = &cfg.target;
        if device::is_block_device(path) {
            return Self::device_with_redo(cfg, None, announce);
        }
        let redo_lock = redo_lock(cfg)?;
        if path.exists() && !path.is_dir() {
            return Err(TargetError::Invalid(format!(
                "--target {} is neither a directory nor a block device; give a directory for data files or a block device",
                path.display()
            )));
        }
        if cfg.destroy_device.is_some() {
            return Err(TargetError::Invalid(format!(
                "--destroy-device applies to block device targets only; {} is a directory",
                path.display()
            )));
        }
        place::check_directory(path, cfg.allow_root_fs)?;
        let created = layout::create_last(path)?;
        let lock = match lock::TargetLock::directory(path) {
            Ok(l) => l,
            Err(e) => {
                if created {
                    let _ = std::fs::remove_dir(path);
                }
                return Err(e);
            }
        };
        if announce {
            place::announce(path);
        }
        let bs = u64::from(cfg.block_size);
        let total = cfg.size_bytes.unwrap_or(DEFAULT_DIR_SIZE);
        let blocks_per_file = total / bs / u64::from(cfg.files);
        let shape = layout::Shape {
            files: cfg.files,
            file_size: blocks_per_file * bs,
            block_size: cfg.block_size,
            grow: cfg.workload.model().is_some(),
            headers: true,
            content: cfg.content,
            streams: cfg.load_parallel,
            what: "data files",
        };
        let (files, report) =
            match layout::ensure_in(path, created, shape, cfg.seed, progress, interrupt) {
                Ok(r) => r,
                Err(e) => {
                    // The layout removed what it wrote: when nothing of dbio's is
                    // left, the lock file goes too, and the directory if made here.
                    if matches!(manifest::Manifest::load(path), Ok(None)) {
                        lock.remove_file();
                    }
                    if created {
                        let _ = std::fs::remove_dir(path);
                    }
                    return Err(e);
                }
            };
        let id = manifest::Manifest::load(path)?.map_or(0, |m| m.target_id);
        if cfg.workload.model().is_some() {
            // The model's DB writers stamp their own generations: the
            // lost-write map no longer describes these blocks.
            genmap_file::retire(
                path,
                "the SLOB model wrote these blocks, and its DB writers stamp generations of their own",
            )
            .map_err(|e| TargetError::Invalid(e.to_string()))?;
        }
        Ok(Target {
            kind: TargetKind::Directory,
            path: path.clone(),
            files,
            block_size: cfg.block_size,
            blocks_per_file,
            id,
            logical_sector: None,
            layout: Some(report),
            region: None,
            locks: Arc::new([Some(lock), redo_lock].into_iter().flatten().collect()),
        })
    }

    /// Checks the block device `cfg.target` for a run that uses `region` of
    /// it, shared with other ranks (see [`region`]), under a lock on that
    /// byte range that whole-device commands and overlapping regions refuse.
    pub fn prepare_region(
        cfg: &RunConfig,
        region: region::Region,
        announce: bool,
    ) -> Result<Target, TargetError> {
        Self::device_with_redo(cfg, Some(region), announce)
    }

    fn device_with_redo(
        cfg: &RunConfig,
        region: Option<region::Region>,
        announce: bool,
    ) -> Result<Target, TargetError> {
        let redo_lock = redo_lock(cfg)?;
        let mut target = Self::device(cfg, region)?;
        if let Some(l) = redo_lock {
            Arc::get_mut(&mut target.locks)
                .expect("not shared yet")
                .push(l);
        }
        if announce {
            place::announce(&cfg.target);
        }
        Ok(target)
    }

    fn device(cfg: &RunConfig, region: Option<region::Region>) -> Result<Target, TargetError> {
        let path = &cfg.target;
        if cfg.files != 1 {
            return Err(TargetError::Invalid(format!(
                "--files {} applies to directory targets; a block device is one file",
                cfg.files
            )));
        }
        let lock = match region {
            Some(r) => lock::TargetLock::device_region(path, r.offset, r.bytes)?,
            None => lock::TargetLock::device(path)?,
        };
        // The gate looks at the whole device: once per host for a shared one.
        if cfg.writes() && region.is_none_or(|r| r.first_on_host) {
            device::check_writable(path, cfg.destroy_device.as_deref())?;
        } else if let Some(d) = &cfg.destroy_device
            && d != path
        {
            return Err(TargetError::Invalid(format!(
                "--destroy-device {} does not name the --target {}",
                d.display(),
                path.display()
            )));
        }
        let info = device::probe(path)?;
        if cfg.block_size < info.logical_sector && cfg.io_mode == crate::config::IoMode::Direct {
            return Err(TargetError::Invalid(format!(
                "--bs {} is below {}'s logical sector size ({} bytes); O_DIRECT needs --bs {} or more",
                cfg.block_size,
                path.display(),
                info.logical_sector,
                info.logical_sector
            )));
        }
        let span = match (region, cfg.size_bytes) {
            (Some(r), _) if r.offset + r.bytes > info.size_bytes => {
                return Err(TargetError::Invalid(format!(
                    "rank {}'s region (bytes {}..{}) does not fit in {} ({} bytes)",
                    r.rank,
                    r.offset,
                    r.offset + r.bytes,
                    path.display(),
                    info.size_bytes
                )));
            }
            (Some(r), _) => r.bytes,
            (None, Some(s)) if s > info.size_bytes => {
                return Err(TargetError::Invalid(format!(
                    "--size {s} is larger than {} ({} bytes)",
                    path.display(),
                    info.size_bytes
                )));
            }
            (None, Some(s)) => s,
            (None, None) => info.size_bytes,
        };
        let blocks = span / u64::from(cfg.block_size);
        if blocks == 0 {
            return Err(TargetError::Invalid(format!(
                "{} is smaller than one --bs block",
                path.display()
            )));
        }
        Ok(Target {
            kind: TargetKind::Device,
            path: path.clone(),
            files: vec![path.clone()],
            block_size: cfg.block_size,
            blocks_per_file: blocks,
            id: 0,
            logical_sector: Some(info.logical_sector),
            layout: None,
            region,
            locks: Arc::new(vec![lock]),
        })
    }

    pub fn total_blocks(&self) -> u64 {
        self.blocks_per_file * self.files.len() as u64
    }

    pub fn size_bytes(&self) -> u64 {
        self.total_blocks() * u64::from(self.block_size)
    }

    /// The first byte of the data in each file: a region's offset on a
    /// shared device, else 0.
    #[inline]
    pub fn base(&self) -> u64 {
        self.region.map_or(0, |r| r.offset)
    }

    /// The file number and byte offset of global block `b`.
    #[inline]
    pub(crate) fn locate(&self, b: u64) -> (u32, u64) {
        // One file (or the first): no 64-bit division on the hot path.
        let (file, rel) = if b < self.blocks_per_file {
            (0, b)
        } else {
            (b / self.blocks_per_file, b % self.blocks_per_file)
        };
        (file as u32, self.base() + rel * u64::from(self.block_size))
    }

    /// Opens every file in the run's mode. A device opened for writing is
    /// opened O_EXCL, which the kernel refuses while it is mounted or held
    /// (a device shared by ranks: by the first rank on each host only, as
    /// a second exclusive opener would be refused).
    pub fn open(&self, mode: crate::config::IoMode, write: bool) -> Result<OpenFiles, TargetError> {
        let mut flags = open_flags(mode, write);
        if write && self.kind == TargetKind::Device && self.region.is_none_or(|r| r.first_on_host) {
            flags |= OFlags::EXCL;
        }
        let mut fds = Vec::with_capacity(self.files.len());
        for p in &self.files {
            let fd = rustix::fs::open(p, flags, Mode::empty()).map_err(|e| {
                let e: std::io::Error = e.into();
                if e.raw_os_error() == Some(libc::EINVAL) && mode == crate::config::IoMode::Direct {
                    TargetError::Invalid(format!(
                        "cannot open {} with O_DIRECT: the filesystem does not support it; use --io buffered (or fsync/fdatasync/dsync)",
                        p.display()
                    ))
                } else {
                    TargetError::io(p, "open", e)
                }
            })?;
            fds.push(fd);
        }
        Ok(OpenFiles { fds })
    }
}

/// Checks and locks the SLOB model's `--redo-dir` when it is not the
/// target directory (the redo logs go in its `dbio-redo` subdirectory).
fn redo_lock(cfg: &RunConfig) -> Result<Option<lock::TargetLock>, TargetError> {
    let Some(dir) = cfg.workload.model().map(|s| &s.redo_dir) else {
        return Ok(None);
    };
    if *dir == cfg.target {
        return Ok(None);
    }
    place::check_directory_for("--redo-dir", dir, cfg.allow_root_fs)?;
    if !dir.is_dir() {
        return Err(TargetError::Invalid(format!(
            "--redo-dir {} is not an existing directory; create it first (dbio creates only {REDO_SUBDIR} in it)",
            dir.display()
        )));
    }
    lock::TargetLock::directory_itself("--redo-dir", dir).map(Some)
}

/// The open files of a run, shared (by descriptor) by every session.
pub struct OpenFiles {
    fds: Vec<OwnedFd>,
}

impl OpenFiles {
    pub fn raw(&self) -> Vec<RawFd> {
        self.fds.iter().map(|f| f.as_raw_fd()).collect()
    }
}

/// `dbio clean`: removes the files the manifest in `dir` lists, the manifest,
/// the lock file, and the directory if dbio created it and it is now empty.
/// Refused while another dbio command holds the target's lock.
pub fn clean(dir: &Path) -> Result<Vec<PathBuf>, TargetError> {
    let no_manifest = || {
        TargetError::Invalid(format!(
            "{} has no dbio-manifest.json: nothing dbio laid out is there, so nothing was removed",
            dir.display()
        ))
    };
    // Only a directory with a manifest gets a lock file.
    if manifest::Manifest::load(dir)
        .map_err(TargetError::Manifest)?
        .is_none()
    {
        return Err(no_manifest());
    }
    let lock = lock::TargetLock::directory(dir)?;
    let Some(m) = manifest::Manifest::load(dir)? else {
        return Err(no_manifest());
    };
    let mut removed: Vec<PathBuf> = m
        .file_paths(dir)
        .into_iter()
        .filter(|p| p.exists())
        .collect();
    layout::remove_files(dir, &m)?;
    // Redo logs (and a doublewrite file) the SLOB model laid out beside
    // the data, if any.
    for redo in [dir.join(REDO_SUBDIR), dir.join(DBLWR_SUBDIR)] {
        let Ok(Some(rm)) = manifest::Manifest::load(&redo) else {
            continue;
        };
        // `dbio verify --target …/dbio-redo` locks it by a file of its own.
        let redo_lock = lock::TargetLock::directory(&redo)?;
        removed.extend(rm.file_paths(&redo).into_iter().filter(|p| p.exists()));
        layout::remove_files(&redo, &rm)?;
        for name in PG_CHECKPOINT_FILES {
            let p = redo.join(name);
            if std::fs::remove_file(&p).is_ok() {
                removed.push(p);
            }
        }
        redo_lock.remove_file();
        if rm.created_dir {
            let _ = std::fs::remove_dir(&redo);
        }
    }
    lock.remove_file();
    if m.created_dir {
        let _ = std::fs::remove_dir(dir); // only succeeds when empty
    }
    Ok(removed)
}
