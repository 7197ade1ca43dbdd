//! The storage chain under a target: which filesystem a path is on, which
//! block devices serve that filesystem, and what those devices are.
//!
//! A file or directory leads to its mount (from /proc/self/mountinfo: type,
//! mount point, options) and the mount's block device; a partition leads to
//! its whole disk; a loop device to its backing file (`loop/backing_file`,
//! and whether it uses direct I/O: `loop/dio`), whose own filesystem and
//! devices follow, recursively; device-mapper and md devices to their slaves
//! (`/sys/class/block/X/slaves`), recursively. Each device is described from
//! sysfs (model, scheduler, rotational, block sizes, discard, size); a missing
//! attribute is `None`, never an error. Filesystems without a block device
//! (tmpfs, overlay, NFS) end the chain.
//!
//! The chain tells the run which devices to sample ([`Chain::devices`]) and
//! the report where the I/O really went ([`Chain::describe`]), e.g.
//! `/mnt/xfs/dbio on xfs (rw,noatime) on /dev/loop2 (direct-io) backed by
//! /work/x.img on ext4 (rw,relatime) on /dev/vda (virtio, mq-deadline,
//! non-rotational, discard)`.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where the kernel lists this process's mounts.
const MOUNTINFO: &str = "/proc/self/mountinfo";
/// Loop over dm over loop … deeper than this is a cycle or nonsense.
const MAX_DEPTH: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error("cannot resolve {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("no mount in {MOUNTINFO} covers {0}")]
    NoMount(PathBuf),
}

/// A target and everything under it, top (the target's filesystem) first.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Chain {
    pub target: PathBuf,
    pub links: Vec<Link>,
}

/// One layer of the chain.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Link {
    /// A file or directory's filesystem. `mount_options` are the mount's
    /// options followed by the superblock's that differ (e.g. `discard`).
    Filesystem {
        path: PathBuf,
        fs_type: String,
        mount_point: PathBuf,
        mount_options: String,
        source: String,
    },
    Device(DeviceLink),
}

/// A block device as sysfs describes it. Queue attributes of a partition
/// are its disk's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeviceLink {
    /// Kernel name, e.g. "vda1", "loop2", "dm-0".
    pub name: String,
    pub major: u32,
    pub minor: u32,
    pub kind: DeviceKind,
    pub model: Option<String>,
    /// The active I/O scheduler (the bracketed entry of queue/scheduler).
    pub scheduler: Option<String>,
    pub rotational: Option<bool>,
    #[serde(rename = "logical_block_bytes")]
    pub logical_block: Option<u32>,
    #[serde(rename = "physical_block_bytes")]
    pub physical_block: Option<u32>,
    /// Whether the device accepts discards (queue/discard_max_bytes > 0).
    pub discard: Option<bool>,
    pub size_bytes: Option<u64>,
    pub loop_backing: Option<PathBuf>,
    pub loop_direct_io: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    Disk,
    Partition,
    Loop,
    Dm,
    Md,
    Other,
}

impl Chain {
    /// Kernel names of every device in the chain, deduplicated, in chain
    /// order: what to sample in /proc/diskstats.
    pub fn devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for link in &self.links {
            if let Link::Device(d) = link
                && !out.contains(&d.name)
            {
                out.push(d.name.clone());
            }
        }
        out
    }

    /// The chain in one line, for people.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        let mut prev: Option<&Link> = None;
        for link in &self.links {
            match link {
                Link::Filesystem {
                    path,
                    fs_type,
                    mount_options,
                    ..
                } => {
                    // After a loop device the path was given as "backed by".
                    if !matches!(prev, Some(Link::Device(d)) if d.loop_backing.is_some()) {
                        if !s.is_empty() {
                            s.push_str(" and ");
                        }
                        s.push_str(&path.display().to_string());
                    }
                    s.push_str(&format!(" on {fs_type} ({mount_options})"));
                }
                Link::Device(d) => {
                    let joint = match prev {
                        None if self.target == Path::new("/dev").join(&d.name) => "",
                        None => " is ",
                        Some(Link::Filesystem { .. }) => " on ",
                        Some(Link::Device(p)) if p.kind == DeviceKind::Partition => " of ",
                        Some(Link::Device(p))
                            if matches!(p.kind, DeviceKind::Dm | DeviceKind::Md) =>
                        {
                            " over "
                        }
                        Some(Link::Device(_)) => " and ",
                    };
                    if prev.is_none() && !joint.is_empty() {
                        s.push_str(&self.target.display().to_string());
                    }
                    s.push_str(joint);
                    s.push_str(&format!("/dev/{}", d.name));
                    let details = d.details();
                    if !details.is_empty() {
                        s.push_str(&format!(" ({details})"));
                    }
                    if let Some(b) = &d.loop_backing {
                        s.push_str(&format!(" backed by {}", b.display()));
                    }
                }
            }
            prev = Some(link);
        }
        if !self.links.iter().any(|l| matches!(l, Link::Device(_))) {
            s.push_str(" (no block device)");
        }
        s
    }
}

impl DeviceLink {
    /// The parenthesised details in [`Chain::describe`].
    fn details(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match self.kind {
            DeviceKind::Loop => {
                parts.push(match self.loop_direct_io {
                    Some(true) => "direct-io".into(),
                    Some(false) => "buffered".into(),
                    None => "loop".into(),
                });
            }
            DeviceKind::Partition => parts.push("partition".into()),
            DeviceKind::Dm => parts.push("dm".into()),
            DeviceKind::Md => parts.push("md".into()),
            DeviceKind::Disk | DeviceKind::Other => {
                parts.extend(self.model.clone());
                parts.extend(self.scheduler.clone());
                parts.extend(
                    self.rotational
                        .map(|r| if r { "rotational" } else { "non-rotational" }.to_string()),
                );
                parts.extend(
                    self.discard
                        .map(|d| if d { "discard" } else { "no discard" }.to_string()),
                );
            }
        }
        if let Some(b) = self.logical_block.filter(|&b| b != 512) {
            parts.push(format!("{b}-byte sectors"));
        }
        parts.join(", ")
    }
}

/// Resolve `path` (a file, a directory, a path not created yet, or a block
/// device node) to its chain.
pub fn resolve(path: &Path) -> Result<Chain, ChainError> {
    let io_err = |source| ChainError::Io {
        path: path.to_path_buf(),
        source,
    };
    let target = std::path::absolute(path).map_err(io_err)?;
    let text = fs::read_to_string(MOUNTINFO).map_err(|source| ChainError::Io {
        path: MOUNTINFO.into(),
        source,
    })?;
    let mut r = Resolver {
        mounts: parse_mountinfo(&text),
        seen: HashSet::new(),
        links: Vec::new(),
    };
    r.path(&target, 0)?;
    Ok(Chain {
        target: path.to_path_buf(),
        links: r.links,
    })
}

struct Resolver {
    mounts: Vec<Mount>,
    seen: HashSet<(u32, u32)>,
    links: Vec<Link>,
}

impl Resolver {
    /// A path: its filesystem and that filesystem's devices, or, for a block
    /// device node, the device.
    fn path(&mut self, path: &Path, depth: usize) -> Result<(), ChainError> {
        let existing = nearest_existing(path);
        let canon = fs::canonicalize(&existing).unwrap_or(existing);
        let meta = fs::metadata(&canon).map_err(|source| ChainError::Io {
            path: canon.clone(),
            source,
        })?;
        if meta.file_type().is_block_device() {
            let (major, minor) = split_dev(meta.rdev());
            self.device(major, minor, depth);
            return Ok(());
        }
        let dev = split_dev(meta.dev());
        let m = find_mount(&self.mounts, &canon, dev)
            .ok_or_else(|| ChainError::NoMount(path.to_path_buf()))?
            .clone();
        self.links.push(Link::Filesystem {
            path: path.to_path_buf(),
            fs_type: m.fs_type.clone(),
            mount_point: m.mount_point.clone(),
            mount_options: m.options(),
            source: m.source.clone(),
        });
        if let Some((major, minor)) = mount_device(&m) {
            self.device(major, minor, depth);
        }
        Ok(())
    }

    /// A device and everything under it.
    fn device(&mut self, major: u32, minor: u32, depth: usize) {
        if depth > MAX_DEPTH || !self.seen.insert((major, minor)) {
            return;
        }
        let link = Path::new("/sys/dev/block").join(format!("{major}:{minor}"));
        let Ok(sys) = fs::canonicalize(&link) else {
            self.links.push(Link::Device(unknown_device(major, minor)));
            return;
        };
        let d = describe_device(&sys, major, minor);
        let (kind, backing) = (d.kind, d.loop_backing.clone());
        self.links.push(Link::Device(d));
        match kind {
            DeviceKind::Partition => {
                if let Some((pmaj, pmin)) = sys.parent().and_then(|p| read_dev(&p.join("dev"))) {
                    self.device(pmaj, pmin, depth + 1);
                }
            }
            DeviceKind::Loop => {
                if let Some(b) = backing.filter(|b| b.exists()) {
                    // A backing file that vanished mid-resolve only ends the chain.
                    let _ = self.path(&b, depth + 1);
                }
            }
            DeviceKind::Dm | DeviceKind::Md => {
                for (smaj, smin) in slaves(&sys) {
                    self.device(smaj, smin, depth + 1);
                }
            }
            DeviceKind::Disk | DeviceKind::Other => {}
        }
    }
}

/// The path itself if it exists, else its nearest existing ancestor.
fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = path;
    loop {
        if fs::metadata(p).is_ok() {
            return p.to_path_buf();
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => return PathBuf::from("/"),
        }
    }
}

fn split_dev(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

/// A mount's block device: its device number, or for filesystems that show
/// an anonymous one (btrfs) the device node named as its source.
fn mount_device(m: &Mount) -> Option<(u32, u32)> {
    if m.major != 0 {
        return Some((m.major, m.minor));
    }
    if !m.source.starts_with("/dev/") {
        return None;
    }
    let meta = fs::metadata(&m.source).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| split_dev(meta.rdev()))
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn read_num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trimmed(path)?.parse().ok()
}

/// A `major:minor` file.
fn read_dev(path: &Path) -> Option<(u32, u32)> {
    let s = read_trimmed(path)?;
    let (a, b) = s.split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// The slaves of a dm or md device, sorted by name.
fn slaves(sys: &Path) -> Vec<(u32, u32)> {
    let Ok(entries) = fs::read_dir(sys.join("slaves")) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    names.sort();
    names
        .iter()
        .filter_map(|p| read_dev(&p.join("dev")))
        .collect()
}

/// The active scheduler in a queue/scheduler line ("none [mq-deadline] kyber").
fn active_scheduler(line: &str) -> Option<String> {
    let line = line.trim();
    if let Some(start) = line.find('[') {
        let rest = &line[start + 1..];
        return rest.find(']').map(|end| rest[..end].to_string());
    }
    (!line.is_empty() && !line.contains(' ')).then(|| line.to_string())
}

fn unknown_device(major: u32, minor: u32) -> DeviceLink {
    DeviceLink {
        name: format!("{major}:{minor}"),
        major,
        minor,
        kind: DeviceKind::Other,
        model: None,
        scheduler: None,
        rotational: None,
        logical_block: None,
        physical_block: None,
        discard: None,
        size_bytes: None,
        loop_backing: None,
        loop_direct_io: None,
    }
}

/// Describe the device whose sysfs directory is `sys`.
fn describe_device(sys: &Path, major: u32, minor: u32) -> DeviceLink {
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| format!("{major}:{minor}"));
    let partition = sys.join("partition").exists();
    // Queue and driver attributes of a partition are its disk's.
    let disk = if partition {
        sys.parent().unwrap_or(sys)
    } else {
        sys
    };
    let disk_name = disk
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = if partition {
        DeviceKind::Partition
    } else if sys.join("loop").is_dir() || name.starts_with("loop") {
        DeviceKind::Loop
    } else if sys.join("dm").is_dir() {
        DeviceKind::Dm
    } else if sys.join("md").is_dir() {
        DeviceKind::Md
    } else if sys.join("device").exists() {
        DeviceKind::Disk
    } else {
        DeviceKind::Other
    };
    let queue = disk.join("queue");
    let driver = fs::read_link(disk.join("device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let model = read_trimmed(&disk.join("device/model")).or_else(|| {
        (disk_name.starts_with("vd") || driver.as_deref() == Some("virtio_blk"))
            .then(|| "virtio".to_string())
    });
    let (loop_backing, loop_direct_io) = if kind == DeviceKind::Loop {
        let backing = fs::read_to_string(sys.join("loop/backing_file"))
            .ok()
            .map(|s| s.trim_end_matches('\n').to_string())
            .filter(|s| !s.is_empty())
            .map(|s| PathBuf::from(s.strip_suffix(" (deleted)").unwrap_or(&s)));
        let dio = read_trimmed(&sys.join("loop/dio")).map(|s| s == "1");
        (backing, dio)
    } else {
        (None, None)
    };
    DeviceLink {
        name,
        major,
        minor,
        kind,
        model,
        scheduler: read_trimmed(&queue.join("scheduler")).and_then(|s| active_scheduler(&s)),
        rotational: read_num::<u8>(&queue.join("rotational")).map(|r| r == 1),
        logical_block: read_num(&queue.join("logical_block_size")),
        physical_block: read_num(&queue.join("physical_block_size")),
        discard: read_num::<u64>(&queue.join("discard_max_bytes")).map(|b| b > 0),
        size_bytes: read_num::<u64>(&sys.join("size")).map(|s| s * 512),
        loop_backing,
        loop_direct_io,
    }
}

/// One line of /proc/self/mountinfo.
#[derive(Clone, Debug, PartialEq)]
pub struct Mount {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    mount_options: String,
    pub fs_type: String,
    pub source: String,
    super_options: String,
}

impl Mount {
    /// The mount's options, then the superblock options it does not repeat.
    fn options(&self) -> String {
        let mut out: Vec<&str> = self.mount_options.split(',').collect();
        for o in self.super_options.split(',') {
            if !o.is_empty() && o != "rw" && o != "ro" && !out.contains(&o) {
                out.push(o);
            }
        }
        out.join(",")
    }
}

/// Undo mountinfo's octal escapes (`\040` for a space, `\011`, `\012`, `\134`).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parse mountinfo text; lines that do not fit the format are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            let sep = f.iter().position(|&x| x == "-")?;
            if sep < 6 || f.len() < sep + 3 {
                return None;
            }
            let (major, minor) = f[2].split_once(':')?;
            Some(Mount {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
                mount_point: PathBuf::from(unescape(f[4])),
                mount_options: f[5].to_string(),
                fs_type: unescape(f[sep + 1]),
                source: unescape(f[sep + 2]),
                super_options: f.get(sep + 3).map(|s| s.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The mount a canonical path is on: the deepest mount point above it; of
/// several on the same point the last (the one on top), preferring one with
/// the path's device number.
fn find_mount<'a>(mounts: &'a [Mount], path: &Path, dev: (u32, u32)) -> Option<&'a Mount> {
    let depth = mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .map(|m| m.mount_point.components().count())
        .max()?;
    let candidates: Vec<&Mount> = mounts
        .iter()
        .filter(|m| path.starts_with(&m.mount_point) && m.mount_point.components().count() == depth)
        .collect();
    candidates
        .iter()
        .rev()
        .find(|m| (m.major, m.minor) == dev)
        .or(candidates.last())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO_TEXT: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684096k
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict
30 25 0:27 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=24684096k
41 27 7:2 / /mnt/my\\040data rw,noatime shared:7 master:1 - xfs /dev/loop2 rw,attr2,inode64,noquota
42 27 0:45 / /mnt/btr rw,relatime - btrfs /dev/loop3 rw,space_cache=v2,subvolid=5
";

    #[test]
    fn parses_mountinfo_with_escapes_and_optional_fields() {
        let m = parse_mountinfo(MOUNTINFO_TEXT);
        assert_eq!(m.len(), 6);
        let xfs = &m[4];
        assert_eq!(xfs.mount_point, Path::new("/mnt/my data"));
        assert_eq!((xfs.major, xfs.minor), (7, 2));
        assert_eq!(xfs.fs_type, "xfs");
        assert_eq!(xfs.source, "/dev/loop2");
        assert_eq!(xfs.mount_options, "rw,noatime");
        assert_eq!(xfs.options(), "rw,noatime,attr2,inode64,noquota");
        assert_eq!(m[2].options(), "rw,relatime,discard,resv_strict");
        assert!(parse_mountinfo("garbage line\n").is_empty());
        assert_eq!(unescape("a\\134b\\011c\\"), "a\\b\tc\\");
    }

    #[test]
    fn finds_the_deepest_topmost_mount() {
        let m = parse_mountinfo(MOUNTINFO_TEXT);
        let at = |p: &str, dev| find_mount(&m, Path::new(p), dev).map(|m| m.mount_point.clone());
        assert_eq!(at("/work/x.img", (254, 0)), Some("/".into()));
        assert_eq!(at("/mnt/my data/db/f", (7, 2)), Some("/mnt/my data".into()));
        // "/mnt/my" is not under "/mnt/my data".
        assert_eq!(at("/mnt/my", (254, 0)), Some("/".into()));
        // Two tmpfs on /dev/shm: the one with the file's device, else the top one.
        let shm = |dev| find_mount(&m, Path::new("/dev/shm/x"), dev).map(|m| (m.major, m.minor));
        assert_eq!(shm((0, 23)), Some((0, 23)));
        assert_eq!(shm((0, 99)), Some((0, 27)));
        assert!(find_mount(&m[..1], Path::new("/work"), (0, 0)).is_none());
    }

    #[test]
    fn reads_the_active_scheduler() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(
            active_scheduler("[none] mq-deadline").as_deref(),
            Some("none")
        );
        assert_eq!(active_scheduler("none").as_deref(), Some("none"));
        assert_eq!(active_scheduler(""), None);
    }

    fn dev(name: &str, kind: DeviceKind) -> DeviceLink {
        DeviceLink {
            name: name.into(),
            kind,
            ..unknown_device(7, 2)
        }
    }

    #[test]
    fn describes_a_loop_chain_in_one_line() {
        let fs = |path: &str, t: &str, o: &str| Link::Filesystem {
            path: path.into(),
            fs_type: t.into(),
            mount_point: "/".into(),
            mount_options: o.into(),
            source: String::new(),
        };
        let chain = Chain {
            target: "/mnt/xfs/dbio".into(),
            links: vec![
                fs("/mnt/xfs/dbio", "xfs", "rw,noatime"),
                Link::Device(DeviceLink {
                    loop_backing: Some("/work/x.img".into()),
                    loop_direct_io: Some(true),
                    ..dev("loop2", DeviceKind::Loop)
                }),
                fs("/work/x.img", "ext4", "rw,relatime"),
                Link::Device(DeviceLink {
                    model: Some("virtio".into()),
                    scheduler: Some("mq-deadline".into()),
                    rotational: Some(false),
                    discard: Some(true),
                    logical_block: Some(512),
                    ..dev("vda", DeviceKind::Disk)
                }),
            ],
        };
        assert_eq!(
            chain.describe(),
            "/mnt/xfs/dbio on xfs (rw,noatime) on /dev/loop2 (direct-io) backed by /work/x.img \
             on ext4 (rw,relatime) on /dev/vda (virtio, mq-deadline, non-rotational, discard)"
        );
        assert_eq!(chain.devices(), ["loop2", "vda"]);
        let json = serde_json::to_value(&chain).unwrap();
        assert_eq!(json["links"][0]["type"], "filesystem");
        assert_eq!(json["links"][1]["type"], "device");
        assert_eq!(json["links"][1]["kind"], "loop");
        assert_eq!(json["links"][1]["loop_direct_io"], true);
    }

    #[test]
    fn describes_partitions_and_bare_devices() {
        let chain = Chain {
            target: "/dev/vda1".into(),
            links: vec![
                Link::Device(dev("vda1", DeviceKind::Partition)),
                Link::Device(DeviceLink {
                    model: Some("virtio".into()),
                    ..dev("vda", DeviceKind::Disk)
                }),
            ],
        };
        assert_eq!(
            chain.describe(),
            "/dev/vda1 (partition) of /dev/vda (virtio)"
        );
        let by_id = Chain {
            target: "/dev/disk/by-id/x".into(),
            ..chain
        };
        assert!(
            by_id
                .describe()
                .starts_with("/dev/disk/by-id/x is /dev/vda1")
        );
    }

    #[test]
    fn resolves_tmpfs_and_paths_not_created_yet() {
        let c = resolve(Path::new("/dev/shm/dbio-not-created/yet/file")).unwrap();
        assert_eq!(c.links.len(), 1, "{c:?}");
        assert!(
            matches!(&c.links[0], Link::Filesystem { fs_type, .. } if fs_type == "tmpfs"),
            "{c:?}"
        );
        assert!(c.devices().is_empty());
        assert!(
            c.describe().ends_with("(no block device)"),
            "{}",
            c.describe()
        );
    }

    #[test]
    fn resolves_the_root_filesystem_to_its_device() {
        let c = resolve(Path::new("/")).unwrap();
        let root_dev = split_dev(fs::metadata("/").unwrap().dev());
        let Link::Filesystem { mount_point, .. } = &c.links[0] else {
            panic!("{c:?}");
        };
        assert_eq!(mount_point, Path::new("/"));
        if root_dev.0 != 0 {
            let Link::Device(d) = &c.links[1] else {
                panic!("{c:?}");
            };
            assert_eq!((d.major, d.minor), root_dev, "{c:?}");
        }
    }
}
