//! Filesystems on a lab's device: mkfs with the arm's options (timed, with
//! the tool's version), mount with its options on a directory the lab made,
//! and unmount. Mounts and directories are recorded in the [`State`] before
//! they are made.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use super::LabError;
use super::state::{Item, State};
use super::sys;
use crate::plan::FsKind;
use crate::storage::chain::parse_mountinfo;

/// How long umount is retried while the filesystem is busy.
const UMOUNT_TIMEOUT: Duration = Duration::from_secs(10);

/// A mkfs tool and its version: `mkfs.xfs`, `6.13.0`, `mkfs.xfs version 6.13.0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolVersion {
    pub tool: String,
    pub version: String,
    pub line: String,
}

/// Asks a mkfs tool its version (`-V`; btrfs: `--version`).
pub fn tool_version(fs: FsKind) -> Result<ToolVersion, LabError> {
    let tool = fs.mkfs_tool().expect("a filesystem with a mkfs tool");
    let flag = if fs == FsKind::Btrfs {
        "--version"
    } else {
        "-V"
    };
    let out = sys::run(tool, &[flag])?;
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_string();
    Ok(ToolVersion {
        tool: tool.to_string(),
        version: version_in(&line).unwrap_or_else(|| "unknown".into()),
        line,
    })
}

/// The first word of a version line that looks like a version number
/// (`1.47.2`, `v6.14` → `6.14`).
pub fn version_in(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || c == ',' || c == '(')
        .map(|w| w.trim_start_matches('v'))
        .find(|w| {
            w.contains('.')
                && w.starts_with(|c: char| c.is_ascii_digit())
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-+~".contains(c))
        })
        .map(str::to_string)
}

/// What a mkfs did.
#[derive(Clone, Debug, PartialEq)]
pub struct Made {
    /// The whole command line.
    pub command: String,
    pub seconds: f64,
}

/// `mkfs.FS <force flags> <options> DEVICE`.
pub fn mkfs(fs: FsKind, options: &[String], device: &Path) -> Result<Made, LabError> {
    let tool = fs.mkfs_tool().expect("a filesystem with a mkfs tool");
    let mut args: Vec<&OsStr> = fs.force_flags().iter().map(OsStr::new).collect();
    args.extend(options.iter().map(OsStr::new));
    args.push(device.as_os_str());
    let out = sys::run(tool, &args)?;
    Ok(Made {
        command: sys::show(tool, &args),
        seconds: out.seconds,
    })
}

/// Creates `path` and any missing parents, recording each directory made.
pub fn make_dirs(state: &mut State, path: &Path) -> Result<PathBuf, LabError> {
    let mut missing = Vec::new();
    let mut p = path;
    while !p.exists() {
        missing.push(p.to_path_buf());
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    for dir in missing.into_iter().rev() {
        let item = Item::Dir { path: dir.clone() };
        state.add(item.clone()).map_err(LabError::state(state))?;
        if let Err(e) = fs::create_dir(&dir) {
            let _ = state.remove(&item);
            return Err(LabError::io("create the directory", &dir, e));
        }
    }
    fs::canonicalize(path).map_err(|e| LabError::io("resolve", path, e))
}

/// Mounts `device` (a `fs` filesystem) on `mountpoint` with `options`.
pub fn mount(
    state: &mut State,
    fs: FsKind,
    device: &Path,
    mountpoint: &Path,
    options: Option<&str>,
) -> Result<(), LabError> {
    let busy = fs::read_dir(mountpoint)
        .map_err(|e| LabError::io("read", mountpoint, e))?
        .next()
        .is_some();
    let mounted_on = fs::read_to_string("/proc/self/mountinfo")
        .map(|t| {
            parse_mountinfo(&t)
                .iter()
                .any(|m| m.mount_point == mountpoint)
        })
        .unwrap_or(false);
    if busy || mounted_on {
        return Err(LabError::Refused(format!(
            "mount point {} is not empty or already a mount point: the lab mounts only on empty directories (choose another mount_dir in [lab])",
            mountpoint.display()
        )));
    }
    let item = Item::Mount {
        device: device.to_path_buf(),
        mountpoint: mountpoint.to_path_buf(),
    };
    state.add(item.clone()).map_err(LabError::state(state))?;
    let mut args: Vec<&OsStr> = vec![OsStr::new("-t"), OsStr::new(fs.name())];
    if let Some(o) = options {
        args.extend([OsStr::new("-o"), OsStr::new(o)]);
    }
    args.extend([device.as_os_str(), mountpoint.as_os_str()]);
    if let Err(e) = sys::run("mount", &args) {
        let _ = state.remove(&item);
        return Err(e);
    }
    Ok(())
}

/// Whether `device` is mounted on `mountpoint` (by path or device number).
pub fn is_mounted(device: &Path, mountpoint: &Path) -> bool {
    let Ok(text) = fs::read_to_string("/proc/self/mountinfo") else {
        return false;
    };
    let rdev = fs::metadata(device).ok().map(|m| m.rdev());
    parse_mountinfo(&text).iter().any(|m| {
        m.mount_point == mountpoint
            && (Path::new(&m.source) == device
                || rdev.is_some_and(|r| {
                    (rustix::fs::major(r), rustix::fs::minor(r)) == (m.major, m.minor)
                }))
    })
}

/// Unmounts `device` from `mountpoint` if it is mounted there, retrying
/// while busy; Ok(false) when it was not mounted there.
pub fn umount(device: &Path, mountpoint: &Path) -> Result<bool, LabError> {
    if !is_mounted(device, mountpoint) {
        return Ok(false);
    }
    let deadline = Instant::now() + UMOUNT_TIMEOUT;
    loop {
        match sys::run("umount", &[mountpoint]) {
            Ok(_) => return Ok(true),
            Err(_) if !is_mounted(device, mountpoint) => return Ok(true),
            Err(e) if Instant::now() > deadline => return Err(e),
            Err(_) => thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Removes a directory the lab made if it is empty; Ok(false) if it is gone
/// already, an error naming it if something was left in it.
pub fn remove_dir(path: &Path) -> Result<bool, LabError> {
    match fs::remove_dir(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(LabError::io("remove the directory", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_version_in_each_tools_banner() {
        assert_eq!(
            version_in("mkfs.xfs version 6.13.0").as_deref(),
            Some("6.13.0")
        );
        assert_eq!(
            version_in("mke2fs 1.47.2 (1-Jan-2025)").as_deref(),
            Some("1.47.2")
        );
        assert_eq!(
            version_in("mkfs.btrfs, part of btrfs-progs v6.14").as_deref(),
            Some("6.14")
        );
        assert_eq!(version_in("no version here"), None);
    }

    #[test]
    fn asks_the_installed_mkfs_tools() {
        for fs in [FsKind::Ext4, FsKind::Xfs, FsKind::Btrfs] {
            assert!(
                sys::find_tool(fs.mkfs_tool().unwrap()).is_some(),
                "{} is not installed: run scripts/test.sh",
                fs.name()
            );
            let v = tool_version(fs).unwrap();
            assert_ne!(v.version, "unknown", "{}: {}", v.tool, v.line);
        }
    }

    #[test]
    fn directories_made_are_recorded_and_removed_only_when_empty() {
        let tmp = tempfile::tempdir().unwrap();
        let mut state = State::create_in(&tmp.path().join("state"), "test", None).unwrap();
        let deep = tmp.path().join("a/b/c");
        let made = make_dirs(&mut state, &deep).unwrap();
        assert_eq!(made, fs::canonicalize(&deep).unwrap());
        let dirs: Vec<_> = state.items().to_vec();
        assert_eq!(dirs.len(), 3, "{dirs:?}");
        fs::write(deep.join("keep"), "x").unwrap();
        assert!(remove_dir(&deep).is_err(), "a directory with a file stays");
        fs::remove_file(deep.join("keep")).unwrap();
        assert!(remove_dir(&deep).unwrap());
        assert!(!remove_dir(&deep).unwrap());
        assert!(!is_mounted(Path::new("/dev/loop999"), &deep));
    }
}
