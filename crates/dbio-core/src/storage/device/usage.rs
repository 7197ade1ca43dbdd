//! What makes a device busy: mounts (/proc/self/mountinfo), active swap
//! (/proc/swaps), kernel holders and partitions (sysfs), members of mounted
//! btrfs filesystems (/sys/fs/btrfs), loop devices stacked on it, and
//! exclusive claims by other openers.
//!
//! [`System`] is a snapshot of the machine-wide tables; [`System::uses`] lists
//! the [`Use`]s of one [`Node`], which the caller turns into device or
//! partition refusals.

use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::{DevNo, DeviceError, Refusal, block_devno, io_err};

const SYS_CLASS_BLOCK: &str = "/sys/class/block";
const SYS_FS_BTRFS: &str = "/sys/fs/btrfs";
const MOUNTINFO: &str = "/proc/self/mountinfo";
const PROC_SWAPS: &str = "/proc/swaps";

/// A block device or partition as sysfs sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Node {
    pub(super) name: String,
    pub(super) devno: DevNo,
    pub(super) sysdir: PathBuf,
}

/// One way a node is in use; becomes a device or partition refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Use {
    Mounted(String),
    Held(Vec<String>),
    Swap,
    Claimed(String),
}

impl Use {
    pub(super) fn on_device(self) -> Refusal {
        match self {
            Use::Mounted(mountpoint) => Refusal::Mounted { mountpoint },
            Use::Held(holders) => Refusal::Held { holders },
            Use::Swap => Refusal::Swap,
            Use::Claimed(by) => Refusal::InUse { by },
        }
    }

    pub(super) fn on_partition(self, partition: &str) -> Refusal {
        let partition = partition.to_string();
        match self {
            Use::Mounted(mountpoint) => Refusal::PartitionMounted {
                partition,
                mountpoint,
            },
            Use::Held(holders) => Refusal::PartitionHeld { partition, holders },
            Use::Swap => Refusal::PartitionSwap { partition },
            Use::Claimed(by) => Refusal::PartitionInUse { partition, by },
        }
    }
}

/// One line of /proc/self/mountinfo, reduced to what matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MountLine {
    devno: DevNo,
    mountpoint: String,
    source: String,
}

/// A mount with the device numbers of its source node, if that is a block device.
/// btrfs reports an anonymous 0:N in mountinfo, so the source node matters.
struct Mount {
    line: MountLine,
    source_devno: Option<DevNo>,
}

/// A snapshot of everything that can make a device busy.
pub(super) struct System {
    mounts: Vec<Mount>,
    swaps: Vec<DevNo>,
    /// (member kernel name, filesystem uuid) of mounted btrfs filesystems.
    btrfs_members: Vec<(String, String)>,
    /// (loop kernel name, backing device) for loops backed by block devices.
    loop_backings: Vec<(String, DevNo)>,
}

impl System {
    pub(super) fn read() -> Result<System, DeviceError> {
        Ok(System {
            mounts: read_mounts()?,
            swaps: read_swaps()?,
            btrfs_members: read_btrfs_members(Path::new(SYS_FS_BTRFS))
                .map_err(io_err("read", Path::new(SYS_FS_BTRFS)))?,
            loop_backings: read_loop_backings(Path::new(SYS_CLASS_BLOCK))
                .map_err(io_err("read", Path::new(SYS_CLASS_BLOCK)))?,
        })
    }

    pub(super) fn uses(&self, node: &Node) -> Result<Vec<Use>, DeviceError> {
        let mut uses = Vec::new();
        for mount in &self.mounts {
            let hit = mount.line.devno == node.devno || mount.source_devno == Some(node.devno);
            let used = Use::Mounted(mount.line.mountpoint.clone());
            if hit && !uses.contains(&used) {
                uses.push(used);
            }
        }
        let holders = holders(&node.sysdir).map_err(io_err("list holders of", &node.sysdir))?;
        if !holders.is_empty() {
            uses.push(Use::Held(holders));
        }
        if self.swaps.contains(&node.devno) {
            uses.push(Use::Swap);
        }
        if !uses.iter().any(|u| matches!(u, Use::Mounted(_))) {
            for (_, uuid) in self.btrfs_members.iter().filter(|(n, _)| *n == node.name) {
                uses.push(Use::Claimed(format!(
                    "a mounted btrfs filesystem (uuid {uuid})"
                )));
            }
        }
        for (name, _) in self.loop_backings.iter().filter(|(_, d)| *d == node.devno) {
            uses.push(Use::Claimed(format!("loop device /dev/{name}")));
        }
        Ok(uses)
    }
}

fn read_mounts() -> Result<Vec<Mount>, DeviceError> {
    let path = Path::new(MOUNTINFO);
    let text = fs::read_to_string(path).map_err(io_err("read", path))?;
    let lines = parse_mountinfo(&text).map_err(|e| DeviceError::Parse {
        path: path.to_path_buf(),
        what: e.to_string(),
    })?;
    Ok(lines
        .into_iter()
        .map(|line| Mount {
            source_devno: device_node_devno(&line.source),
            line,
        })
        .collect())
}

/// Device numbers of a /dev node named in mountinfo, /proc/swaps or a loop's
/// backing_file. Other paths (files, possibly on a hung network mount) are not stat'ed.
fn device_node_devno(source: &str) -> Option<DevNo> {
    source
        .starts_with("/dev/")
        .then(|| block_devno(Path::new(source)))
        .flatten()
}

/// A mountinfo line dbio cannot read.
#[derive(Debug, thiserror::Error)]
#[error("unexpected line {0:?}")]
struct UnexpectedLine(String);

fn parse_mountinfo(text: &str) -> Result<Vec<MountLine>, UnexpectedLine> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| parse_mountinfo_line(l).ok_or_else(|| UnexpectedLine(l.to_string())))
        .collect()
}

/// `id parent maj:min root mountpoint options [optional...] - fstype source superoptions`
fn parse_mountinfo_line(line: &str) -> Option<MountLine> {
    let fields: Vec<&str> = line.split(' ').collect();
    let separator = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    Some(MountLine {
        devno: parse_devno(fields.get(2)?)?,
        mountpoint: unescape_octal(fields.get(4)?),
        source: unescape_octal(fields.get(separator + 2)?),
    })
}

/// "7:0" -> (7, 0).
fn parse_devno(text: &str) -> Option<DevNo> {
    let (major, minor) = text.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// Undo the kernel's `\ooo` escapes in mountinfo and /proc/swaps fields.
fn unescape_octal(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let code = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match code {
            Some(d) => {
                let value = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(value as u8);
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn read_swaps() -> Result<Vec<DevNo>, DeviceError> {
    let path = Path::new(PROC_SWAPS);
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("read", path)(e)),
    };
    Ok(parse_swaps(&text)
        .iter()
        .filter_map(|name| device_node_devno(name))
        .collect())
}

/// File names of active swap areas (the first column after the header).
fn parse_swaps(text: &str) -> Vec<String> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(unescape_octal)
        .collect()
}

/// Directory entry names of `dir`, sorted; a missing directory has none.
fn entry_names(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = entries
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<io::Result<Vec<_>>>()?;
    names.sort();
    Ok(names)
}

/// Kernel names of whatever holds the device (md, dm, bcache).
fn holders(sysdir: &Path) -> io::Result<Vec<String>> {
    entry_names(&sysdir.join("holders"))
}

/// Partitions the kernel knows: subdirectories with a `partition` file, in partition order.
pub(super) fn partitions(sysdir: &Path) -> io::Result<Vec<Node>> {
    let mut found = Vec::new();
    for name in entry_names(sysdir)? {
        let dir = sysdir.join(&name);
        let Ok(number) = fs::read_to_string(dir.join("partition")) else {
            continue;
        };
        let dev = fs::read_to_string(dir.join("dev"))?;
        let devno = parse_devno(&dev).ok_or_else(|| bad_data(&dir, &dev))?;
        let number: u32 = number.trim().parse().unwrap_or(u32::MAX);
        found.push((
            number,
            Node {
                name,
                devno,
                sysdir: dir,
            },
        ));
    }
    found.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
    Ok(found.into_iter().map(|(_, node)| node).collect())
}

fn bad_data(dir: &Path, content: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("unexpected dev {content:?} in {}", dir.display()),
    )
}

/// (member name, uuid) for every device of every mounted btrfs filesystem.
fn read_btrfs_members(root: &Path) -> io::Result<Vec<(String, String)>> {
    let mut members = Vec::new();
    for uuid in entry_names(root)? {
        for name in entry_names(&root.join(&uuid).join("devices"))? {
            members.push((name, uuid.clone()));
        }
    }
    Ok(members)
}

/// (loop name, backing device numbers) for loop devices backed by a block device.
fn read_loop_backings(class_block: &Path) -> io::Result<Vec<(String, DevNo)>> {
    let mut backings = Vec::new();
    for name in entry_names(class_block)? {
        let file = class_block.join(&name).join("loop/backing_file");
        let Ok(backing) = fs::read_to_string(file) else {
            continue;
        };
        if let Some(devno) = device_node_devno(backing.trim_end_matches('\n')) {
            backings.push((name, devno));
        }
    }
    Ok(backings)
}

/// Whether another opener holds the device exclusively (`O_EXCL` fails with EBUSY).
/// This catches mounts in other namespaces and drivers that leave no holder link.
pub(super) fn claimed_exclusively(path: &Path) -> Result<bool, DeviceError> {
    let open = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path);
    match open {
        Ok(_) => Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(true),
        Err(e) => Err(io_err("open", path)(e)),
    }
}

#[cfg(test)]
mod tests {
    //! The /proc and sysfs parsers, and the mount check against this machine.

    use super::super::{check_writable, is_block_device, refusals, rotational};
    use super::*;
    use tempfile::TempDir;

    #[test]
    fn mountinfo_lines_parse() {
        let text = "36 35 98:0 /mnt1 /mnt/parent\\040dir rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n\
                    43 27 0:39 / /tmp/mb rw,relatime - btrfs /dev/loop0 rw,space_cache=v2\n\
                    50 27 0:50 / /x rw shared:3 master:2 - tmpfs my\\040tmp rw\n";
        let lines = parse_mountinfo(text).expect("parse");
        assert_eq!(
            lines,
            [
                MountLine {
                    devno: (98, 0),
                    mountpoint: "/mnt/parent dir".into(),
                    source: "/dev/root".into()
                },
                MountLine {
                    devno: (0, 39),
                    mountpoint: "/tmp/mb".into(),
                    source: "/dev/loop0".into()
                },
                MountLine {
                    devno: (0, 50),
                    mountpoint: "/x".into(),
                    source: "my tmp".into()
                },
            ]
        );
        assert!(parse_mountinfo("1 2 3\n").is_err());
        assert!(parse_mountinfo("36 35 x:0 / /m rw - ext4 /dev/a rw\n").is_err());
    }

    #[test]
    fn the_real_mountinfo_parses() {
        let text = fs::read_to_string(MOUNTINFO).expect("mountinfo");
        let lines = parse_mountinfo(&text).expect("parse");
        assert!(lines.iter().any(|l| l.mountpoint == "/"));
    }

    #[test]
    fn octal_escapes_decode() {
        assert_eq!(unescape_octal("a\\040b\\011c\\134d\\012"), "a b\tc\\d\n");
        assert_eq!(unescape_octal("trailing\\04"), "trailing\\04");
        assert_eq!(unescape_octal("not\\089octal"), "not\\089octal");
        assert_eq!(unescape_octal("\\"), "\\");
    }

    #[test]
    fn swaps_parse() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n\
                    /dev/loop0                              partition\t65532\t\t0\t\t-2\n\
                    /swap\\040file                           file\t\t1024\t\t0\t\t-3\n";
        assert_eq!(parse_swaps(text), ["/dev/loop0", "/swap file"]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn devno_parses() {
        assert_eq!(parse_devno("259:12\n"), Some((259, 12)));
        assert_eq!(parse_devno("259"), None);
        assert_eq!(parse_devno("a:1"), None);
    }

    /// A fake /sys/devices/.../vdb with two partitions and holders.
    fn fake_sysfs() -> TempDir {
        let root = TempDir::new().expect("temp dir");
        let disk = root.path().join("vdb");
        for (name, number, dev) in [("vdb10", "10", "259:9"), ("vdb2", "2", "259:1")] {
            let part = disk.join(name);
            fs::create_dir_all(part.join("holders")).expect("mkdir");
            fs::write(part.join("partition"), format!("{number}\n")).expect("write");
            fs::write(part.join("dev"), format!("{dev}\n")).expect("write");
        }
        fs::create_dir_all(disk.join("holders/md0")).expect("mkdir");
        fs::create_dir_all(disk.join("holders/dm-1")).expect("mkdir");
        fs::create_dir_all(disk.join("queue")).expect("mkdir");
        fs::write(disk.join("queue/rotational"), "0\n").expect("write");
        fs::create_dir_all(disk.join("power")).expect("mkdir");
        root
    }

    #[test]
    fn sysfs_partitions_holders_and_rotational() {
        let root = fake_sysfs();
        let disk = root.path().join("vdb");
        let parts = partitions(&disk).expect("partitions");
        let names: Vec<_> = parts.iter().map(|p| (p.name.as_str(), p.devno)).collect();
        assert_eq!(names, [("vdb2", (259, 1)), ("vdb10", (259, 9))]);
        assert_eq!(holders(&disk).expect("holders"), ["dm-1", "md0"]);
        assert!(holders(&parts[0].sysdir).expect("holders").is_empty());
        assert!(
            holders(&root.path().join("gone"))
                .expect("holders")
                .is_empty()
        );
        assert_eq!(rotational(&disk), Some(false));
        assert_eq!(
            rotational(&parts[0].sysdir),
            Some(false),
            "partitions use their disk's queue"
        );
        assert_eq!(rotational(root.path()), None);
    }

    #[test]
    fn btrfs_members_from_sysfs() {
        let root = TempDir::new().expect("temp dir");
        fs::create_dir_all(root.path().join("features")).expect("mkdir");
        for name in ["loop0", "loop1"] {
            fs::create_dir_all(root.path().join("1234-abcd/devices").join(name)).expect("mkdir");
        }
        assert_eq!(
            read_btrfs_members(root.path()).expect("members"),
            [
                ("loop0".to_string(), "1234-abcd".to_string()),
                ("loop1".into(), "1234-abcd".into())
            ]
        );
        assert!(
            read_btrfs_members(&root.path().join("none"))
                .expect("members")
                .is_empty()
        );
    }

    #[test]
    fn uses_map_to_device_and_partition_refusals() {
        assert_eq!(Use::Swap.on_device(), Refusal::Swap);
        assert_eq!(
            Use::Mounted("/m".into()).on_partition("vdb1"),
            Refusal::PartitionMounted {
                partition: "vdb1".into(),
                mountpoint: "/m".into()
            }
        );
        assert_eq!(
            Use::Held(vec!["md0".into()]).on_partition("vdb1"),
            Refusal::PartitionHeld {
                partition: "vdb1".into(),
                holders: vec!["md0".into()]
            }
        );
    }

    #[test]
    fn devices_mounted_on_this_machine_are_refused() {
        // Read-only: every block device mounted here (loop devices of
        // concurrently running tests aside) must be reported as mounted.
        let text = fs::read_to_string(MOUNTINFO).expect("mountinfo");
        let mut checked = 0;
        for line in parse_mountinfo(&text).expect("parse") {
            let source = Path::new(&line.source);
            if line.source.starts_with("/dev/loop") || !is_block_device(source) {
                continue;
            }
            let Ok(found) = refusals(source) else {
                continue; // e.g. not readable without root
            };
            let mounted = Refusal::Mounted {
                mountpoint: line.mountpoint.clone(),
            };
            assert!(found.contains(&mounted), "{}: {found:?}", line.source);
            assert!(check_writable(source, Some(source)).is_err());
            checked += 1;
        }
        eprintln!("checked {checked} mounted devices");
    }
}
