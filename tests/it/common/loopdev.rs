//! Loop-device fixture for tests: a sparse image attached as /dev/loopN, optionally partitioned, formatted, mounted or used as swap, and torn down again (swapoff, unmount, detach, delete) by `Drop` even when the test panics.
//!
//! Needs root and util-linux (losetup, partx, mount); mkfs, fsck and swap
//! tools only for the calls that use them. Depends on nothing from the dbio
//! crate, only on std, rustix and tempfile.
//!
//! Setup failures panic with the command's stderr; `Drop` never panics.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long to wait for partition device nodes to appear.
const NODE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long Drop waits for a busy loop device to be released.
const DETACH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an unmount is retried while the filesystem is busy. A process
/// that used io_uring has exited before the kernel drops its ring's file
/// references (that happens on a workqueue), so the first `umount` after
/// such a run can see the filesystem busy for a moment.
const UMOUNT_TIMEOUT: Duration = Duration::from_secs(10);
/// Where partitions start in the tables [`LoopDev::partition`] writes (1 MiB).
const FIRST_SECTOR: u64 = 2048;

/// True if `name` is an executable in PATH or in the usual sbin directories.
pub fn have_tool(name: &str) -> bool {
    find_tool(name).is_some()
}

fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let fallback = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from);
    std::env::split_paths(&path)
        .chain(fallback)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A command for `tool`, found in sbin even when PATH lacks it.
fn command(tool: &str) -> Command {
    Command::new(find_tool(tool).unwrap_or_else(|| PathBuf::from(tool)))
}

/// Run `tool args`, panicking with its stderr unless it succeeds.
fn run<I, S>(tool: &str, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args: Vec<_> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let out = command(tool)
        .args(&args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    assert!(
        out.status.success(),
        "{tool} {args:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    out
}

/// Run `tool args` for cleanup: report failure on stderr, never panic.
fn run_quietly<I, S>(tool: &str, args: I) -> bool
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    match command(tool).args(args).output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            eprintln!(
                "loopdev cleanup: {tool} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            false
        }
        Err(e) => {
            eprintln!("loopdev cleanup: cannot run {tool}: {e}");
            false
        }
    }
}

/// A filesystem mounted by the fixture.
struct Mounted {
    dir: TempDir,
}

/// A loop device over a sparse image in a temporary directory.
pub struct LoopDev {
    /// The device node, e.g. /dev/loop3.
    pub path: PathBuf,
    image: PathBuf,
    mount: Option<Mounted>,
    /// Device with active swap, turned off on drop.
    swap: Option<PathBuf>,
    /// (device, fstype) of the last mkfs, for fsck_clean.
    formatted: RefCell<Option<(PathBuf, String)>>,
    // Declared last so the image is deleted only after Drop has detached it.
    _dir: TempDir,
}

impl LoopDev {
    /// Attach a zeroed sparse image of `size_bytes` (512-byte sectors, partition scanning on).
    pub fn new(size_bytes: u64, direct_io: bool) -> LoopDev {
        LoopDev::with_sector_size(size_bytes, direct_io, 512)
    }

    /// Like [`LoopDev::new`] with a logical sector size of `sector_size` bytes.
    pub fn with_sector_size(size_bytes: u64, direct_io: bool, sector_size: u32) -> LoopDev {
        let dir = tempfile::Builder::new()
            .prefix("dbio-loop-")
            .tempdir()
            .expect("create a temp dir for the loop image");
        let image = dir.path().join("disk.img");
        File::create(&image)
            .and_then(|f| f.set_len(size_bytes))
            .unwrap_or_else(|e| panic!("create {}: {e}", image.display()));
        // losetup records the canonical path; compare against the same.
        let image = fs::canonicalize(&image).unwrap_or(image);
        let mut args = vec!["-f".to_string(), "--show".into(), "-P".into()];
        if direct_io {
            args.push("--direct-io=on".into());
        }
        if sector_size != 512 {
            args.push(format!("--sector-size={sector_size}"));
        }
        args.push(image.display().to_string());
        let out = run("losetup", &args);
        let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let dev = LoopDev {
            path,
            image,
            mount: None,
            swap: None,
            formatted: RefCell::new(None),
            _dir: dir,
        };
        if direct_io && !dev.direct_io() {
            eprintln!("loopdev: {} did not enable direct I/O", dev.path.display());
        }
        dev
    }

    /// The backing image file.
    pub fn image(&self) -> &Path {
        &self.image
    }

    /// Kernel name, e.g. "loop3".
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    fn sysfs(&self) -> PathBuf {
        Path::new("/sys/class/block").join(self.name())
    }

    /// Whether the loop driver uses direct I/O on the backing file.
    pub fn direct_io(&self) -> bool {
        fs::read_to_string(self.sysfs().join("loop/dio")).is_ok_and(|s| s.trim() == "1")
    }

    /// Make a filesystem ("ext4", "xfs" or "btrfs") on the whole device.
    pub fn mkfs(&self, fstype: &str) {
        self.mkfs_on(&self.path, fstype);
    }

    /// Make a filesystem on `device` (the loop device or one of its partitions).
    ///
    /// Small devices work too: XFS below its 300 MiB minimum is made the way
    /// fstests does (TEST_DIR/TEST_DEV/QA_CHECK_FS set), btrfs below 128 MiB
    /// with `--mixed`.
    pub fn mkfs_on(&self, device: &Path, fstype: &str) {
        let small = |limit_mib: u64| device_bytes(device) < limit_mib << 20;
        let (tool, mut flags): (&str, Vec<&str>) = match fstype {
            "ext4" => ("mkfs.ext4", vec!["-q", "-F", "-E", "nodiscard"]),
            "xfs" => ("mkfs.xfs", vec!["-q", "-f", "-K"]),
            "btrfs" => ("mkfs.btrfs", vec!["-q", "-f", "-K"]),
            other => panic!("loopdev: unsupported fstype {other:?}"),
        };
        if fstype == "btrfs" && small(128) {
            flags.push("--mixed");
        }
        let mut cmd = command(tool);
        if fstype == "xfs" && small(300) {
            cmd.envs([("TEST_DIR", "1"), ("TEST_DEV", "1"), ("QA_CHECK_FS", "1")]);
        }
        let out = cmd
            .args(&flags)
            .arg(device)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} {}: {}",
            device.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
        *self.formatted.borrow_mut() = Some((device.to_path_buf(), fstype.to_string()));
    }

    /// Mount the whole device on a fresh temp dir and return the mount point.
    pub fn mount(&mut self) -> PathBuf {
        let device = self.path.clone();
        self.mount_device(&device)
    }

    /// Mount `device` (the loop device or one of its partitions) on a fresh temp dir.
    pub fn mount_device(&mut self, device: &Path) -> PathBuf {
        assert!(self.mount.is_none(), "loopdev: already mounted");
        let dir = tempfile::Builder::new()
            .prefix("dbio-mnt-")
            .tempdir()
            .expect("create a mount point");
        run("mount", [device.as_os_str(), dir.path().as_os_str()]);
        let at = dir.path().to_path_buf();
        self.mount = Some(Mounted { dir });
        at
    }

    /// Unmount what [`LoopDev::mount`] mounted; panics if that fails (after a lazy unmount).
    pub fn umount(&mut self) {
        let Some(mounted) = self.mount.take() else {
            return;
        };
        if !umount_retrying(mounted.dir.path()) {
            run_quietly("umount", [OsStr::new("-l"), mounted.dir.path().as_os_str()]);
            panic!("loopdev: umount {} failed", mounted.dir.path().display());
        }
    }

    /// The current mount point, if mounted.
    pub fn mountpoint(&self) -> Option<&Path> {
        self.mount.as_ref().map(|m| m.dir.path())
    }

    /// Run `mkswap` on `device` and activate it; Drop turns it off again.
    pub fn swapon(&mut self, device: &Path) {
        assert!(self.swap.is_none(), "loopdev: swap already active");
        run("mkswap", [device]);
        run("swapon", [device]);
        self.swap = Some(device.to_path_buf());
    }

    /// Turn off swap started by [`LoopDev::swapon`].
    pub fn swapoff(&mut self) {
        if let Some(device) = self.swap.take() {
            run("swapoff", [device]);
        }
    }

    /// Whether the filesystem of the last `mkfs` checks clean (e2fsck -fn,
    /// xfs_repair -n, btrfs check --readonly). Unmount first.
    pub fn fsck_clean(&self) -> bool {
        let formatted = self.formatted.borrow();
        let (device, fstype) = formatted.as_ref().expect("loopdev: fsck_clean before mkfs");
        assert!(self.mount.is_none(), "loopdev: fsck_clean while mounted");
        let (tool, flags): (&str, &[&str]) = match fstype.as_str() {
            "ext4" => ("e2fsck", &["-f", "-n"]),
            "xfs" => ("xfs_repair", &["-n"]),
            "btrfs" => ("btrfs", &["check", "--readonly"]),
            other => panic!("loopdev: no fsck for {other:?}"),
        };
        assert!(have_tool(tool), "loopdev: {tool} not found");
        let out = command(tool)
            .args(flags)
            .arg(device)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
        if !out.status.success() {
            eprintln!(
                "{tool} {}: {}{}",
                device.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out.status.success()
    }

    /// Write a dos partition table with `count` (1..=4) equal Linux
    /// partitions, make the kernel see them, and return their device nodes.
    ///
    /// The table is written directly (no sfdisk needed). Kernels built without
    /// partition-table parsers ignore `losetup -P`, so missing partitions are
    /// added with `partx -a` (BLKPG), which works everywhere.
    pub fn partition(&self, count: usize) -> Vec<PathBuf> {
        let size = fs::metadata(&self.image).expect("stat image").len();
        self.write_sector0(&dos_table(size / 512, count));
        run_quietly(
            "blockdev",
            [OsStr::new("--rereadpt"), self.path.as_os_str()],
        );
        if self.partitions().len() < count {
            run("partx", [OsStr::new("-a"), self.path.as_os_str()]);
        }
        let parts = self.partitions();
        assert_eq!(parts.len(), count, "loopdev: kernel sees {parts:?}");
        wait_for_nodes(&parts);
        parts
    }

    fn write_sector0(&self, sector: &[u8; 512]) {
        let dev = OpenOptions::new()
            .write(true)
            .open(&self.path)
            .unwrap_or_else(|e| panic!("open {}: {e}", self.path.display()));
        dev.write_all_at(sector, 0)
            .and_then(|()| dev.sync_all())
            .unwrap_or_else(|e| panic!("write {}: {e}", self.path.display()));
    }

    /// Device nodes of the partitions the kernel knows, in partition order.
    pub fn partitions(&self) -> Vec<PathBuf> {
        let Ok(entries) = fs::read_dir(self.sysfs()) else {
            return Vec::new();
        };
        let mut parts: Vec<(u32, String)> = entries
            .flatten()
            .filter_map(|e| {
                let number = fs::read_to_string(e.path().join("partition")).ok()?;
                Some((
                    number.trim().parse().ok()?,
                    e.file_name().to_string_lossy().into_owned(),
                ))
            })
            .collect();
        parts.sort();
        parts
            .into_iter()
            .map(|(_, name)| Path::new("/dev").join(name))
            .collect()
    }
}

impl LoopDev {
    /// Whether the loop device is still bound to this fixture's image
    /// (it may already be reused by another test for another image).
    fn still_attached(&self) -> bool {
        fs::read_to_string(self.sysfs().join("loop/backing_file"))
            .is_ok_and(|b| Path::new(b.trim_end_matches('\n')) == self.image)
    }

    fn wait_detached(&self) {
        let deadline = Instant::now() + DETACH_TIMEOUT;
        while self.still_attached() && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(10));
        }
        if self.still_attached() {
            eprintln!("loopdev cleanup: {} is still attached", self.path.display());
        }
    }
}

/// Size of a block device in bytes, from sysfs (which counts 512-byte units).
fn device_bytes(device: &Path) -> u64 {
    let name = fs::canonicalize(device)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_owned()))
        .unwrap_or_default();
    let size = Path::new("/sys/class/block").join(name).join("size");
    let sectors =
        fs::read_to_string(&size).unwrap_or_else(|e| panic!("read {}: {e}", size.display()));
    sectors
        .trim()
        .parse::<u64>()
        .expect("sysfs size is a number")
        * 512
}

/// An MBR with `count` equal primary partitions of type 0x83, 1 MiB aligned.
fn dos_table(total_sectors: u64, count: usize) -> [u8; 512] {
    assert!((1..=4).contains(&count), "loopdev: 1..=4 partitions");
    let per = ((total_sectors - FIRST_SECTOR) / count as u64) & !(FIRST_SECTOR - 1);
    assert!(per > 0, "loopdev: image too small for {count} partitions");
    let mut mbr = [0u8; 512];
    mbr[440..444].copy_from_slice(&0x6462_696fu32.to_le_bytes()); // disk id "dbio"
    for i in 0..count {
        let entry = &mut mbr[446 + 16 * i..462 + 16 * i];
        let start = FIRST_SECTOR + per * i as u64;
        entry[1..4].copy_from_slice(&[0xfe, 0xff, 0xff]); // CHS: use LBA
        entry[4] = 0x83;
        entry[5..8].copy_from_slice(&[0xfe, 0xff, 0xff]);
        entry[8..12].copy_from_slice(&(start as u32).to_le_bytes());
        entry[12..16].copy_from_slice(&(per as u32).to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    mbr
}

/// Wait until every node exists (udev may create them asynchronously).
fn wait_for_nodes(nodes: &[PathBuf]) {
    let deadline = Instant::now() + NODE_TIMEOUT;
    while !nodes.iter().all(|n| n.exists()) {
        assert!(
            Instant::now() < deadline,
            "loopdev: {nodes:?} did not appear"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// `umount dir`, retried every 50 ms while it fails, for up to
/// [`UMOUNT_TIMEOUT`]; the last failure is reported on stderr.
pub fn umount_retrying(dir: &Path) -> bool {
    let deadline = Instant::now() + UMOUNT_TIMEOUT;
    loop {
        let out = command("umount").arg(dir).output();
        match out {
            Ok(out) if out.status.success() => return true,
            Ok(out) if Instant::now() >= deadline => {
                eprintln!(
                    "loopdev cleanup: umount failed for {:?}: {}; held by {:?}",
                    UMOUNT_TIMEOUT,
                    String::from_utf8_lossy(&out.stderr).trim(),
                    holders(dir)
                );
                return false;
            }
            Err(e) => {
                eprintln!("loopdev cleanup: cannot run umount: {e}");
                return false;
            }
            Ok(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// The processes that hold something under `dir` (working directory,
/// root, an open file or a mapping), each as "pid (comm): path": what
/// keeps a filesystem busy, for the message of a failed unmount.
pub fn holders(dir: &Path) -> Vec<String> {
    let Ok(procs) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for p in procs.flatten() {
        if p.file_name()
            .to_str()
            .is_none_or(|n| n.parse::<u32>().is_err())
        {
            continue;
        }
        let links = ["cwd", "root"].map(|l| p.path().join(l));
        let fds = fs::read_dir(p.path().join("fd"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path());
        let mut held: Vec<PathBuf> = links
            .into_iter()
            .chain(fds)
            .filter_map(|l| fs::read_link(l).ok())
            .collect();
        held.extend(
            fs::read_to_string(p.path().join("maps"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_whitespace().nth(5).map(PathBuf::from)),
        );
        if let Some(path) = held.iter().find(|h| h.starts_with(dir)) {
            let comm = fs::read_to_string(p.path().join("comm")).unwrap_or_default();
            found.push(format!(
                "{} ({}): {}",
                p.file_name().to_string_lossy(),
                comm.trim(),
                path.display()
            ));
        }
    }
    found
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Some(device) = self.swap.take() {
            run_quietly("swapoff", [device]);
        }
        if let Some(mounted) = self.mount.take() {
            let dir = mounted.dir.path();
            if !umount_retrying(dir) {
                run_quietly("umount", [OsStr::new("-l"), dir.as_os_str()]);
            }
        }
        // A device still open elsewhere (other tests' losetup, blkid or
        // btrfs scans open every loop device briefly) is only marked
        // autoclear; wait so the image is not deleted while attached.
        if run_quietly("losetup", [OsStr::new("-d"), self.path.as_os_str()]) {
            self.wait_detached();
        }
    }
}
