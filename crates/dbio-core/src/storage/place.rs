//! Where a directory target lands, checked before anything is created.
//!
//! A mistyped or unmounted target must be refused, not created: dbio creates
//! at most the last component of `--target`; refuses paths under /dev, /proc,
//! /sys and /run (device nodes and kernel state, not data; /dev/shm is
//! allowed, it is tmpfs for files); and refuses a target on the root
//! filesystem whose path starts where mounts usually are (/mnt, /media,
//! /data, /oradata, /u01...) unless `--allow-root-fs` says the root
//! filesystem is meant — the classic empty, unmounted mount point.
//! [`landing`] is the line telling where the target really is, printed
//! once per target by [`announce`].

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use super::TargetError;
use super::chain::{self, Link};

/// The flag that says a target on the root filesystem is intended.
pub(crate) const ALLOW_ROOT_FS: &str = "--allow-root-fs";

/// Trees that hold device nodes and kernel state, never data files.
const SYSTEM_TREES: &[&str] = &["/dev", "/proc", "/sys", "/run"];
/// The RAM filesystem for files under /dev.
const SHM: &str = "/dev/shm";

/// Checks a directory target (existing or to be created) before anything is
/// created. `path` is not an existing block device.
pub fn check_directory(path: &Path, allow_root_fs: bool) -> Result<(), TargetError> {
    check_directory_for("--target", path, allow_root_fs)
}

/// [`check_directory`] for the directory option `opt` (e.g. `--redo-dir`).
pub(crate) fn check_directory_for(
    opt: &str,
    path: &Path,
    allow_root_fs: bool,
) -> Result<(), TargetError> {
    let resolved = resolve(path)?;
    let shown = path.display();
    if let Some(tree) = SYSTEM_TREES
        .iter()
        .find(|t| resolved.starts_with(t) && !resolved.starts_with(SHM))
    {
        return Err(TargetError::Invalid(format!(
            "{opt} {shown} is under {tree}, which holds device nodes and kernel state, not data, and it is not an existing block device (a mistyped device name? see lsblk); nothing was created"
        )));
    }
    if !path.exists() {
        let parent = resolved.parent().unwrap_or(Path::new("/"));
        if !parent.is_dir() {
            return Err(missing_parent(opt, path, parent));
        }
    }
    if !allow_root_fs
        && let Some(prefix) = mount_like_prefix(&resolved)
        && on_root_fs(&resolved)
    {
        return Err(TargetError::Invalid(format!(
            "{opt} {shown} is on the root filesystem, but {prefix} usually holds mounted filesystems: is the filesystem meant to be there not mounted? Mount it, or add {ALLOW_ROOT_FS} if the root filesystem is what you want to measure; nothing was created"
        )));
    }
    Ok(())
}

/// The refusal for a directory given as `opt` (empty: not an option)
/// whose parent directory does not exist.
pub(crate) fn missing_parent(opt: &str, path: &Path, parent: &Path) -> TargetError {
    let opt = if opt.is_empty() {
        String::new()
    } else {
        format!("{opt} ")
    };
    TargetError::Invalid(format!(
        "{opt}{}: the directory {} does not exist; dbio creates only the last component of a path (create the parent first, or check the path for a typo); nothing was created",
        path.display(),
        parent.display()
    ))
}

/// The absolute path with symlinks of its existing part resolved.
fn resolve(path: &Path) -> Result<PathBuf, TargetError> {
    let abs = std::path::absolute(path).map_err(|e| TargetError::io(path, "resolve", e))?;
    let mut existing = abs.as_path();
    let mut rest: Vec<&OsStr> = Vec::new();
    while fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = fs::canonicalize(existing).unwrap_or_else(|_| existing.to_path_buf());
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    // Lexically drop "." and ".." left in the part that does not exist yet.
    let mut clean = PathBuf::new();
    for c in out.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            c => clean.push(c),
        }
    }
    Ok(clean)
}

/// "/mnt", "/data2", "/u01"...: the first component of `path`, if it is
/// where mounts usually are.
fn mount_like_prefix(path: &Path) -> Option<String> {
    let first = path.components().nth(1)?;
    let name = first.as_os_str().to_str()?;
    let digits_after = |p: &str| {
        name.strip_prefix(p)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
    };
    let mount_like = ["mnt", "media", "data", "oradata"]
        .iter()
        .any(|p| digits_after(p))
        || (name.starts_with("u0") && digits_after("u"));
    mount_like.then(|| format!("/{name}"))
}

/// Whether the nearest existing ancestor of `path` is on the filesystem of /.
fn on_root_fs(path: &Path) -> bool {
    let existing = path
        .ancestors()
        .find(|p| fs::metadata(p).is_ok())
        .unwrap_or(Path::new("/"));
    match (fs::metadata(existing), fs::metadata("/")) {
        (Ok(a), Ok(root)) => a.dev() == root.dev(),
        _ => false,
    }
}

/// Prints [`landing`] on stderr, once per target in this process (a plan
/// runs many times on one target).
pub fn announce(path: &Path) {
    static SEEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if !seen.iter().any(|p| p == path) {
        seen.push(path.to_path_buf());
        eprintln!("{}", crate::terminal::field(&landing(path)));
    }
}

/// One line saying where a target is: its filesystem, mount point and
/// device, or the device's chain.
pub(crate) fn landing(path: &Path) -> String {
    let chain = match chain::resolve(path) {
        Ok(c) => c,
        Err(e) => return format!("where    {}: unknown ({e})", path.display()),
    };
    match chain.links.first() {
        Some(Link::Filesystem {
            fs_type,
            mount_point,
            source,
            ..
        }) => {
            let device = chain
                .devices()
                .first()
                .map(|d| format!("/dev/{d}"))
                .unwrap_or_else(|| format!("{source}, no block device"));
            format!(
                "where    {} on {fs_type} mounted at {} ({device})",
                path.display(),
                mount_point.display()
            )
        }
        _ => format!("where    {}", chain.describe()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_like_prefixes() {
        let p = |s: &str| mount_like_prefix(Path::new(s));
        assert_eq!(p("/mnt/xfs/dbio").as_deref(), Some("/mnt"));
        assert_eq!(p("/u01/app").as_deref(), Some("/u01"));
        assert_eq!(p("/u02").as_deref(), Some("/u02"));
        assert_eq!(p("/data3/x").as_deref(), Some("/data3"));
        assert_eq!(p("/oradata/ORCL").as_deref(), Some("/oradata"));
        for no in ["/tmp/x", "/home/u01", "/usr/x", "/database", "/mntx", "/"] {
            assert_eq!(p(no), None, "{no}");
        }
    }

    #[test]
    fn system_trees_missing_parents_and_dot_dot_are_refused() {
        let refused = |p: &str| {
            check_directory(Path::new(p), false)
                .unwrap_err()
                .to_string()
        };
        let e = refused("/dev/nvme1n1x");
        assert!(e.contains("under /dev") && e.contains("lsblk"), "{e}");
        let e = refused("/tmp/../dev/nvme1n1x");
        assert!(e.contains("under /dev"), "{e}");
        assert!(refused("/sys/x").contains("under /sys"));
        assert!(refused("/run/dbio-x").contains("under /run"));
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("a/b/c");
        let e = check_directory(&deep, false).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "{} does not exist",
                dir.path().join("a/b").display()
            )),
            "{e}"
        );
        assert!(!dir.path().join("a").exists());
        check_directory(&dir.path().join("a"), false).unwrap();
        if Path::new(SHM).is_dir() {
            check_directory(Path::new("/dev/shm/dbio-x"), false).unwrap();
        }
    }
}
