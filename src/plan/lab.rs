//! The `[lab]` section of a plan (docs/lab.md): the storage `dbio lab run`
//! builds for each arm — loop devices over image files or named block
//! devices, a filesystem (ext4, xfs, btrfs, or none for the raw device) with
//! its mkfs and mount options, an I/O scheduler — read into a [`LabSpec`]
//! with every mistake located like the rest of the plan (`lab_parse`). Each
//! lab arm becomes a plan arm whose `target` is under the arm's mount point
//! (or is the arm's device, filled in when the device exists).

use std::path::{Path, PathBuf};

/// The `--target` a raw-device arm has in the plan until the lab has made
/// its device: `/dev/dbio-lab/ARM` (no such node exists; `dbio lab run`
/// replaces it with the real device path before the run).
pub const DEVICE_MARKER: &str = "/dev/dbio-lab/";

/// The image size when `image_size` is not given.
pub const DEFAULT_IMAGE_SIZE: u64 = 4 << 30;
/// The directory under each mount the runs use when `target` is not given.
pub const DEFAULT_SUBDIR: &str = "dbio";

/// Where images go when `image_dir` is not given.
pub const DEFAULT_IMAGE_DIR: &str = "/var/tmp";

/// Environment variable naming the lab directory (state files and, by
/// default, mount points).
pub const DIR_ENV: &str = "DBIO_LAB_DIR";

/// The directory of state files (created when the first lab starts).
pub fn lab_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/state")))
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    state.join("dbio/lab")
}

/// A filesystem the lab can make, or none (the raw device).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FsKind {
    Ext4,
    Xfs,
    Btrfs,
    /// No filesystem: the runs use the device itself.
    None,
}

impl FsKind {
    pub fn name(self) -> &'static str {
        match self {
            FsKind::Ext4 => "ext4",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
            FsKind::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<FsKind> {
        Some(match s {
            "ext4" => FsKind::Ext4,
            "xfs" => FsKind::Xfs,
            "btrfs" => FsKind::Btrfs,
            "none" => FsKind::None,
            _ => return None,
        })
    }

    /// The mkfs program, e.g. `mkfs.xfs`.
    pub fn mkfs_tool(self) -> Option<&'static str> {
        match self {
            FsKind::Ext4 => Some("mkfs.ext4"),
            FsKind::Xfs => Some("mkfs.xfs"),
            FsKind::Btrfs => Some("mkfs.btrfs"),
            FsKind::None => None,
        }
    }

    /// The Debian package that ships the mkfs program.
    pub fn package(self) -> Option<&'static str> {
        match self {
            FsKind::Ext4 => Some("e2fsprogs"),
            FsKind::Xfs => Some("xfsprogs"),
            FsKind::Btrfs => Some("btrfs-progs"),
            FsKind::None => None,
        }
    }

    /// Flags dbio always passes so that mkfs overwrites the previous arm's
    /// filesystem without asking.
    pub fn force_flags(self) -> &'static [&'static str] {
        match self {
            FsKind::Ext4 => &["-F", "-q"],
            FsKind::Xfs => &["-f", "-q"],
            FsKind::Btrfs => &["-f", "-q"],
            FsKind::None => &[],
        }
    }
}

/// What the arms' devices are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Loop devices over sparse image files the lab creates and deletes.
    Images {
        dir: PathBuf,
        size: u64,
        /// The loop device reads and writes the image with O_DIRECT
        /// (`losetup --direct-io=on`), so I/O reaches the disk under it.
        direct_io: bool,
    },
    /// Named block devices, each repeated in `destroy_devices`: one for all
    /// arms (`same_device`) or one per arm, in arm order.
    Devices { devices: Vec<PathBuf> },
}

/// One arm of the lab: its filesystem and how it is made and mounted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabArm {
    pub name: String,
    pub fs: FsKind,
    /// Extra mkfs arguments (`-E nodiscard`, `-m crc=1`), split on whitespace.
    pub mkfs_options: Vec<String>,
    /// `mount -o` options (`noatime,nodiratime`), if any.
    pub mount_options: Option<String>,
    /// The I/O scheduler set on the arm's device (`none`, `mq-deadline`...).
    pub scheduler: Option<String>,
    /// Where the arm's mount point is (for fs arms).
    pub mountpoint: PathBuf,
    /// Every run starts from the state the data was loaded in: a copy kept
    /// after loading, restored before each run (`lab::snapshot`).
    pub restore: bool,
    pub line: usize,
}

/// The `[lab]` section, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabSpec {
    pub backing: Backing,
    /// All arms reuse one device, re-made between arms.
    pub same_device: bool,
    /// Discard the whole device before an arm on a device used before
    /// (shared, or named), so every arm starts from the same state.
    pub discard: bool,
    /// The directory holding the arms' mount points.
    pub mount_dir: PathBuf,
    /// The path under each mount the runs use (may hold `{placeholders}`).
    pub subdir: String,
    pub arms: Vec<LabArm>,
    /// The line of `[lab]`.
    pub line: usize,
}

impl LabSpec {
    /// How many backing devices the lab needs at once.
    pub fn devices_needed(&self) -> usize {
        if self.same_device { 1 } else { self.arms.len() }
    }
}

/// A plan name as a file name: `[A-Za-z0-9._-]`, at most 40 bytes, and a
/// hash of the whole name so that two names never share a directory.
pub fn slug(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{clean}-{:08x}", super::expand::seed_from_name(name) as u32)
}
