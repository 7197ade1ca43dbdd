//! Block devices as targets: size, sector sizes, and the safety check that stops dbio from writing over data it did not create.
//!
//! [`probe`] reports what a device is. [`refusals`] lists every reason a device
//! must not be written: it is mounted, a partition of it is mounted, a driver
//! holds it (md, device-mapper, bcache), it is active swap, a loop device sits
//! on it, someone else has it open exclusively, or it carries the on-disk
//! signature of a filesystem, volume manager, RAID member or partition table.
//! [`check_writable`] turns that list into the gate run before any write
//! workload; [`decide`] is the same gate for a list already in hand.
//!
//! Everything here only reads: devices are opened `O_RDONLY` and their first
//! and last MiB are examined with `pread`. Regular files get the signature
//! part of the check only, which is also what the unit tests use.
//!
//! This module holds the public types, [`probe`], [`refusals`] and the gate.
//! What makes a device busy (mounts, swap, holders, partitions, btrfs members,
//! stacked loops, exclusive claims) is in `usage`; on-disk signature detection
//! is in `signatures` (dbio's own table) and `wipefs` (util-linux's libblkid,
//! asked for block devices); `contents` finds data that is neither zeros nor
//! blocks dbio wrote.

mod contents;
mod signatures;
mod usage;
mod wipefs;

#[cfg(test)]
mod tests_gate;

use std::fmt;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use signatures::signature_refusals;
use usage::{Node, System, Use, claimed_exclusively, partitions};

const SYS_DEV_BLOCK: &str = "/sys/dev/block";
/// The command-line flag that overrides an overridable refusal.
pub const DESTROY_FLAG: &str = "--destroy-device";

/// `BLKGETSIZE64` is `_IOR(0x12, 114, size_t)` and yields the size in bytes as a u64.
const BLKGETSIZE64: rustix::ioctl::Opcode = rustix::ioctl::opcode::read::<libc::size_t>(0x12, 114);

/// A block device's (major, minor) numbers.
type DevNo = (u32, u32);

/// What [`probe`] learns about a block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// The path as given by the caller.
    pub path: PathBuf,
    /// Kernel name, e.g. "loop3", "vda1".
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub size_bytes: u64,
    pub logical_sector: u32,
    pub physical_sector: u32,
    /// From `queue/rotational`; `None` when sysfs does not say.
    pub rotational: Option<bool>,
}

/// Errors from examining a device. Each displays as one line.
#[derive(thiserror::Error, Debug)]
pub enum DeviceError {
    #[error("cannot {op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not a block device", path.display())]
    NotBlockDevice { path: PathBuf },
    #[error("cannot parse {}: {what}", path.display())]
    Parse { path: PathBuf, what: String },
    /// The device must not be written; the message says why and what to do.
    #[error("{0}")]
    Refused(String),
}

/// Why a device must not be written.
///
/// `Display` is a predicate about the device, e.g. "carries an ext4
/// filesystem (signature at byte 1080)"; [`Refusal::describe`] prefixes the
/// device path to make a full sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The device itself is mounted (possibly one of several mount points).
    Mounted {
        mountpoint: String,
    },
    /// One of its partitions is mounted.
    PartitionMounted {
        partition: String,
        mountpoint: String,
    },
    /// Kernel holders (`/sys/class/block/<name>/holders`): md, dm, bcache.
    Held {
        holders: Vec<String>,
    },
    PartitionHeld {
        partition: String,
        holders: Vec<String>,
    },
    /// Active swap (`/proc/swaps`).
    Swap,
    PartitionSwap {
        partition: String,
    },
    /// Used some other way: a loop device on top of it, a member of a mounted
    /// multi-device btrfs, or claimed by another exclusive opener.
    InUse {
        by: String,
    },
    PartitionInUse {
        partition: String,
        by: String,
    },
    /// An on-disk signature: `kind` uses blkid's names ("ext4", "xfs",
    /// "LVM2_member", "dos", ...); `offset` is the byte where it was found.
    Signature {
        kind: &'static str,
        offset: u64,
    },
    /// The kernel knows partitions on it.
    HasPartitions {
        partitions: Vec<String>,
    },
    /// A signature only util-linux's probe (`wipefs`) knows, by blkid name.
    Probed {
        kind: String,
        offset: u64,
    },
    /// `wipefs` was there but gave no answer.
    ProbeFailed {
        why: String,
    },
    /// Data that is neither zeros nor blocks dbio wrote, and no known
    /// signature: `offset` is its first byte.
    UnknownData {
        offset: u64,
    },
}

impl Refusal {
    /// Whether `--destroy-device` may override this refusal. Anything live
    /// (mounted, held, swap, in use) never is.
    pub(crate) fn overridable(&self) -> bool {
        matches!(
            self,
            Refusal::Signature { .. }
                | Refusal::HasPartitions { .. }
                | Refusal::Probed { .. }
                | Refusal::ProbeFailed { .. }
                | Refusal::UnknownData { .. }
        )
    }

    /// A full sentence naming the device, e.g.
    /// "/dev/loop3 carries an ext4 filesystem (signature at byte 1080)".
    pub fn describe(&self, device: &Path) -> String {
        format!("{} {self}", device.display())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Mounted { mountpoint } => write!(f, "is mounted at {mountpoint}"),
            Refusal::PartitionMounted {
                partition,
                mountpoint,
            } => write!(f, "has partition {partition} mounted at {mountpoint}"),
            Refusal::Held { holders } => write!(f, "is held by {}", holders.join(", ")),
            Refusal::PartitionHeld { partition, holders } => {
                write!(
                    f,
                    "has partition {partition} held by {}",
                    holders.join(", ")
                )
            }
            Refusal::Swap => write!(f, "is an active swap device"),
            Refusal::PartitionSwap { partition } => {
                write!(f, "has partition {partition} in use as swap")
            }
            Refusal::InUse { by } => write!(f, "is in use by {by}"),
            Refusal::PartitionInUse { partition, by } => {
                write!(f, "has partition {partition} in use by {by}")
            }
            Refusal::Signature { kind, offset } => write!(
                f,
                "carries {} (signature at byte {offset})",
                kind_phrase(kind)
            ),
            Refusal::HasPartitions { partitions } if partitions.len() == 1 => {
                write!(f, "has partition {}", partitions[0])
            }
            Refusal::HasPartitions { partitions } => {
                write!(f, "has partitions {}", partitions.join(", "))
            }
            Refusal::Probed { kind, offset } => {
                let phrase = match kind_phrase(kind) {
                    UNKNOWN_KIND => format!("a {kind} signature"),
                    p => p.to_string(),
                };
                write!(
                    f,
                    "carries {phrase} (signature at byte {offset}, found by wipefs)"
                )
            }
            Refusal::ProbeFailed { why } => {
                write!(f, "could not be checked for signatures: {why}")
            }
            Refusal::UnknownData { offset } => write!(
                f,
                "holds data that is neither zeros nor blocks dbio wrote (from byte {offset}) and no signature dbio or wipefs knows: it may be someone's data"
            ),
        }
    }
}

/// [`kind_phrase`] of a kind it does not know.
const UNKNOWN_KIND: &str = "a known on-disk signature";

/// A readable noun phrase for a signature kind.
fn kind_phrase(kind: &str) -> &'static str {
    match kind {
        "ext2" => "an ext2 filesystem",
        "ext3" => "an ext3 filesystem",
        "ext4" => "an ext4 filesystem",
        "jbd" => "an ext3/ext4 external journal",
        "xfs" => "an XFS filesystem",
        "btrfs" => "a btrfs filesystem",
        "LVM2_member" => "an LVM2 physical volume",
        "linux_raid_member" => "a Linux md RAID superblock",
        "swap" => "a swap area",
        "crypto_LUKS" => "a LUKS encrypted volume",
        "gpt" => "a GPT partition table",
        "dos" => "a dos partition table or boot sector",
        "vfat" => "a FAT filesystem",
        "ntfs" => "an NTFS filesystem",
        "exfat" => "an exFAT filesystem",
        "iso9660" => "an ISO9660 filesystem",
        "zfs_member" => "a ZFS pool label",
        "f2fs" => "an F2FS filesystem",
        "erofs" => "an EROFS filesystem",
        "squashfs" => "a squashfs image",
        "bcache" => "a bcache superblock",
        "ceph_bluestore" => "a Ceph BlueStore label",
        "oracleasm" => "an Oracle ASM disk label",
        "ocfs2" => "an OCFS2 filesystem",
        "jfs" => "a JFS filesystem",
        "reiserfs" => "a ReiserFS filesystem",
        "vdo" => "a VDO volume",
        "drbd" => "a DRBD metadata block",
        "nilfs2" => "a NILFS2 filesystem",
        _ => UNKNOWN_KIND,
    }
}

/// True if `path` (after following symlinks) is a block device.
pub fn is_block_device(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Size, sector sizes, kernel name and rotational flag of a block device.
pub fn probe(path: &Path) -> Result<DeviceInfo, DeviceError> {
    let meta = block_metadata(path)?;
    let file = File::open(path).map_err(io_err("open", path))?;
    let devno = devno_of(&meta);
    let sysdir = sys_dir(devno).map_err(io_err("find sysfs entry of", path))?;
    Ok(DeviceInfo {
        path: path.to_path_buf(),
        name: kernel_name(&sysdir),
        major: devno.0,
        minor: devno.1,
        size_bytes: device_size(&file).map_err(io_err("get the size of", path))?,
        logical_sector: rustix::fs::ioctl_blksszget(&file)
            .map_err(|e| io_err("get the logical sector size of", path)(e.into()))?,
        physical_sector: rustix::fs::ioctl_blkpbszget(&file)
            .map_err(|e| io_err("get the physical sector size of", path)(e.into()))?,
        rotational: rotational(&sysdir),
    })
}

/// Every reason found not to write `path` (empty = safe to write). Reads only.
///
/// For a block device this checks mounts, holders, swap, stacked loop
/// devices, exclusive openers and partitions, then signatures. For a regular
/// file it checks signatures only.
pub fn refusals(path: &Path) -> Result<Vec<Refusal>, DeviceError> {
    let meta = fs::metadata(path).map_err(io_err("stat", path))?;
    let kind = meta.file_type();
    if kind.is_block_device() {
        block_refusals(path, &probe(path)?)
    } else if kind.is_file() {
        signature_refusals(path, meta.len())
    } else {
        Err(DeviceError::NotBlockDevice {
            path: path.to_path_buf(),
        })
    }
}

/// The gate used before any write run on a block device.
///
/// `Ok(())` if nothing stands in the way, or if every refusal is overridable
/// and `destroy` repeats `path` exactly as typed (compared as strings after
/// trimming whitespace). Otherwise [`DeviceError::Refused`] with one line
/// saying why and how to proceed.
pub fn check_writable(path: &Path, destroy: Option<&Path>) -> Result<(), DeviceError> {
    block_metadata(path)?;
    decide(path, &refusals(path)?, destroy)
}

/// [`check_writable`]'s verdict for refusals already gathered.
pub(crate) fn decide(
    path: &Path,
    found: &[Refusal],
    destroy: Option<&Path>,
) -> Result<(), DeviceError> {
    if found.is_empty() {
        return Ok(());
    }
    let blocking = found.iter().any(|r| !r.overridable());
    if !blocking && destroy.is_some_and(|d| same_spelling(d, path)) {
        return Ok(());
    }
    Err(DeviceError::Refused(refusal_message(
        path, found, blocking, destroy,
    )))
}

/// Whether two paths are the same string, ignoring surrounding whitespace.
fn same_spelling(a: &Path, b: &Path) -> bool {
    a.as_os_str().as_encoded_bytes().trim_ascii() == b.as_os_str().as_encoded_bytes().trim_ascii()
}

fn refusal_message(
    path: &Path,
    found: &[Refusal],
    blocking: bool,
    destroy: Option<&Path>,
) -> String {
    let reasons: Vec<String> = found.iter().map(Refusal::to_string).collect();
    let mut msg = format!(
        "refusing to write to {}: it {}",
        path.display(),
        reasons.join("; it ")
    );
    if blocking {
        msg.push_str("; unmount/deactivate it first");
        if destroy.is_some() {
            msg.push_str(&format!(" ({DESTROY_FLAG} cannot override this)"));
        }
    } else {
        if let Some(d) = destroy {
            msg.push_str(&format!(
                "; {DESTROY_FLAG} {} does not repeat the device path exactly",
                d.display()
            ));
        }
        msg.push_str(&format!(
            "; to overwrite it anyway repeat the device path: {DESTROY_FLAG} {}",
            path.display()
        ));
    }
    msg.replace(['\n', '\r'], " ")
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> DeviceError + 'a {
    move |source| DeviceError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// Metadata of `path`, or `NotBlockDevice` if it is something else.
fn block_metadata(path: &Path) -> Result<fs::Metadata, DeviceError> {
    let meta = fs::metadata(path).map_err(io_err("stat", path))?;
    if meta.file_type().is_block_device() {
        Ok(meta)
    } else {
        Err(DeviceError::NotBlockDevice {
            path: path.to_path_buf(),
        })
    }
}

fn devno_of(meta: &fs::Metadata) -> DevNo {
    let rdev = meta.rdev();
    (rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// The device numbers of a block device node, `None` for anything else.
fn block_devno(path: &Path) -> Option<DevNo> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type().is_block_device().then(|| devno_of(&meta))
}

fn device_size(file: &File) -> io::Result<u64> {
    // SAFETY: BLKGETSIZE64 is a getter whose kernel side writes exactly one u64.
    let size = unsafe {
        let getter = rustix::ioctl::Getter::<BLKGETSIZE64, u64>::new();
        rustix::ioctl::ioctl(file, getter)
    }?;
    Ok(size)
}

/// The canonical sysfs directory of a block device, e.g. /sys/devices/virtual/block/loop0.
fn sys_dir((major, minor): DevNo) -> io::Result<PathBuf> {
    fs::canonicalize(format!("{SYS_DEV_BLOCK}/{major}:{minor}"))
}

fn kernel_name(sysdir: &Path) -> String {
    sysdir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `queue/rotational` of the device, or of its disk for a partition.
fn rotational(sysdir: &Path) -> Option<bool> {
    let own = sysdir.join("queue/rotational");
    let file = if own.exists() {
        own
    } else {
        sysdir.parent()?.join("queue/rotational")
    };
    match fs::read_to_string(file).ok()?.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

fn block_refusals(path: &Path, info: &DeviceInfo) -> Result<Vec<Refusal>, DeviceError> {
    let devno = (info.major, info.minor);
    let sysdir = sys_dir(devno).map_err(io_err("find sysfs entry of", path))?;
    let system = System::read()?;
    let device = Node {
        name: info.name.clone(),
        devno,
        sysdir,
    };
    let mut out: Vec<Refusal> = system
        .uses(&device)?
        .into_iter()
        .map(Use::on_device)
        .collect();
    let parts = partitions(&device.sysdir).map_err(io_err("list partitions of", path))?;
    for part in &parts {
        let uses = system.uses(part)?;
        out.extend(uses.into_iter().map(|u| u.on_partition(&part.name)));
    }
    if out.is_empty() && claimed_exclusively(path)? {
        out.push(Refusal::InUse {
            by: "another exclusive opener (a mount in another namespace, a database or a driver)"
                .to_string(),
        });
    }
    let own = signature_refusals(path, info.size_bytes)?;
    let probed = probed_refusals(path, &own);
    let known = !own.is_empty() || !parts.is_empty() || !probed.is_empty();
    out.extend(own);
    out.extend(probed);
    if !parts.is_empty() {
        let partitions = parts.into_iter().map(|p| p.name).collect();
        out.push(Refusal::HasPartitions { partitions });
    }
    if !known && let Some(offset) = contents::foreign_data(path, info.size_bytes)? {
        out.push(Refusal::UnknownData { offset });
    }
    Ok(out)
}

/// What `wipefs` finds beyond dbio's own table (`own`): each kind once.
/// A GPT's protective MBR is part of the GPT, as dbio's table counts it.
fn probed_refusals(path: &Path, own: &[Refusal]) -> Vec<Refusal> {
    let own_kinds: Vec<&str> = own
        .iter()
        .filter_map(|r| match r {
            Refusal::Signature { kind, .. } => Some(*kind),
            _ => None,
        })
        .collect();
    match wipefs::probe(path) {
        wipefs::Probe::Unavailable => Vec::new(),
        wipefs::Probe::Failed(why) => vec![Refusal::ProbeFailed { why }],
        wipefs::Probe::Found(found) => {
            let mut out: Vec<Refusal> = Vec::new();
            for (kind, offset) in found {
                let explained = own_kinds.contains(&kind.as_str())
                    || (kind == "PMBR" && own_kinds.contains(&"gpt"))
                    || out
                        .iter()
                        .any(|r| matches!(r, Refusal::Probed { kind: k, .. } if *k == kind));
                if !explained {
                    out.push(Refusal::Probed { kind, offset });
                }
            }
            out
        }
    }
}
