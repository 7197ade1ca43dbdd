//! The loaded state of an arm, kept and given back: a plain copy of the
//! run's target directory made right after the data was loaded (`keep`),
//! and before every run the target made again from it (`restore`), so that
//! every run starts from the same files, not from what the runs before it
//! left (updates, dead rows, undo, a WAL position). The copy is written
//! byte by byte (read and write, never `copy_file_range` or a reflink:
//! shared extents would change where the runs' writes go), the
//! filesystem synced once, owner and mode kept, so the files' layout on the device is a
//! fresh load's: new, unshared extents. A [`Fingerprint`] of a tree (its
//! files, bytes and a CRC-32C over paths, sizes and contents) says that
//! two starting states are the same.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::LabError;

/// Bytes moved per read and write.
const CHUNK: usize = 1 << 20;

/// A directory tree's files and contents, in short.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Fingerprint {
    /// Regular files.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// CRC-32C over each file's relative path, size and contents, in path order.
    pub crc32c: u32,
}

/// Where the copy of a target's loaded state is kept: beside the target,
/// on the same filesystem (`MOUNT/dbio` → `MOUNT/dbio.loaded`).
pub fn kept_dir(target: &Path) -> PathBuf {
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(".loaded");
    target.with_file_name(name)
}

/// The entries of `dir`, sorted by name (so fingerprints do not depend on
/// the directory's order).
fn entries(dir: &Path) -> io::Result<Vec<fs::DirEntry>> {
    let mut v: Vec<fs::DirEntry> = fs::read_dir(dir)?.collect::<io::Result<_>>()?;
    v.sort_by_key(fs::DirEntry::file_name);
    Ok(v)
}

/// Copies one regular file's bytes with read and write, adding them to
/// `fp` (the whole filesystem is synced once the tree is copied).
fn copy_file(from: &Path, to: &Path, buf: &mut [u8], fp: &mut Fingerprint) -> io::Result<()> {
    let mut dst = File::create_new(to)?;
    add_contents(from, Some(&mut dst), buf, fp)
}

/// Adds the file at `from` to `fp` (its bytes and one file), writing the
/// bytes to `dst` too when given.
fn add_contents(
    from: &Path,
    mut dst: Option<&mut File>,
    buf: &mut [u8],
    fp: &mut Fingerprint,
) -> io::Result<()> {
    let mut src = File::open(from)?;
    loop {
        let n = src.read(buf)?;
        if n == 0 {
            break;
        }
        if let Some(d) = dst.as_mut() {
            d.write_all(&buf[..n])?;
        }
        fp.crc32c = crc32c::crc32c_append(fp.crc32c, &buf[..n]);
        fp.bytes += n as u64;
    }
    fp.files += 1;
    Ok(())
}

/// Adds a file's relative path and size to `fp`, before its contents.
fn add_name(fp: &mut Fingerprint, rel: &Path, len: u64) {
    fp.crc32c = crc32c::crc32c_append(fp.crc32c, rel.as_os_str().as_encoded_bytes());
    fp.crc32c = crc32c::crc32c_append(fp.crc32c, &len.to_le_bytes());
}

/// Gives `to` the owner and mode of `meta` (symlinks: the owner only).
fn same_owner(to: &Path, meta: &fs::Metadata) -> io::Result<()> {
    std::os::unix::fs::lchown(to, Some(meta.uid()), Some(meta.gid()))?;
    if !meta.file_type().is_symlink() {
        fs::set_permissions(to, fs::Permissions::from_mode(meta.mode() & 0o7777))?;
    }
    Ok(())
}

/// Copies the tree `from` into the new directory `to` (which must not
/// exist), in path order, fingerprinting what it writes (paths relative
/// to `root`).
fn copy_tree(
    (root, from): (&Path, &Path),
    to: &Path,
    buf: &mut [u8],
    fp: &mut Fingerprint,
) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    fs::create_dir(to)?;
    for e in entries(from)? {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let m = fs::symlink_metadata(&src)?;
        let t = m.file_type();
        if t.is_dir() {
            copy_tree((root, &src), &dst, buf, fp)?;
            continue;
        }
        if t.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src)?, &dst)?;
        } else if t.is_file() {
            add_name(fp, src.strip_prefix(root).unwrap_or(&src), m.len());
            copy_file(&src, &dst, buf, fp)?;
        } else {
            // A socket or fifo a server left: not data, not copied.
            continue;
        }
        same_owner(&dst, &m)?;
    }
    same_owner(to, &meta)
}

/// Copies `from` to `to` and syncs the filesystem once (one flush, not one
/// per file): the fingerprint of what was written.
fn copy_synced(from: &Path, to: &Path) -> io::Result<Fingerprint> {
    let mut fp = Fingerprint::default();
    let mut buf = vec![0u8; CHUNK];
    copy_tree((from, from), to, &mut buf, &mut fp)?;
    rustix::fs::syncfs(File::open(to)?)?;
    Ok(fp)
}

/// Adds `dir`'s files to the fingerprint `fp` (paths relative to `root`).
fn add_tree(root: &Path, dir: &Path, fp: &mut Fingerprint, buf: &mut [u8]) -> io::Result<()> {
    for e in entries(dir)? {
        let p = e.path();
        let m = fs::symlink_metadata(&p)?;
        if m.is_dir() {
            add_tree(root, &p, fp, buf)?;
            continue;
        }
        if !m.is_file() {
            continue;
        }
        add_name(fp, p.strip_prefix(root).unwrap_or(&p), m.len());
        add_contents(&p, None, buf, fp)?;
    }
    Ok(())
}

/// The fingerprint of the tree at `dir`, read back from its files.
pub fn fingerprint(dir: &Path) -> Result<Fingerprint, LabError> {
    let mut fp = Fingerprint::default();
    let mut buf = vec![0u8; CHUNK];
    add_tree(dir, dir, &mut fp, &mut buf).map_err(|e| LabError::io("read", dir, e))?;
    Ok(fp)
}

/// The regular files under `dir` and their bytes.
fn tree_size(dir: &Path) -> io::Result<(u64, u64)> {
    let (mut files, mut bytes) = (0, 0);
    for e in fs::read_dir(dir)? {
        let p = e?.path();
        let m = fs::symlink_metadata(&p)?;
        if m.is_dir() {
            let (f, b) = tree_size(&p)?;
            (files, bytes) = (files + f, bytes + b);
        } else if m.is_file() {
            (files, bytes) = (files + 1, bytes + m.len());
        }
    }
    Ok((files, bytes))
}

/// Keeps a copy of `target` (just loaded, its server stopped) beside it;
/// refused, with nothing made, when its filesystem has no room for it.
pub fn keep(target: &Path, arm: &str) -> Result<Fingerprint, LabError> {
    let kept = kept_dir(target);
    let (_, need) = tree_size(target).map_err(|e| LabError::io("read", target, e))?;
    let st = rustix::fs::statvfs(target).map_err(|e| LabError::io("examine", target, e.into()))?;
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    // A margin for the filesystem's own metadata.
    if need + need / 20 > free {
        return Err(LabError::Prereq(format!(
            "arm {arm}: no room to keep a copy of the loaded data ({} in {}, {} free on its filesystem): give a larger [lab] image_size (dbio lab vs-engine --image-size)",
            crate::units::fmt_size(need),
            target.display(),
            crate::units::fmt_size(free)
        )));
    }
    copy_synced(target, &kept).map_err(|e| {
        let _ = fs::remove_dir_all(&kept);
        LabError::io("copy the loaded data into", &kept, e)
    })
}

/// Makes `target` again from the copy [`keep`] made: the runs' files
/// removed, the loaded ones written anew. Returns the fingerprint of what
/// was written, its files and bytes as the target now holds them (a file
/// left over or cut short shows there).
pub fn restore(target: &Path) -> Result<Fingerprint, LabError> {
    let kept = kept_dir(target);
    match fs::remove_dir_all(target) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(LabError::io("remove the last run's files in", target, e)),
    }
    let mut fp = copy_synced(&kept, target)
        .map_err(|e| LabError::io("restore the loaded data into", target, e))?;
    let (files, bytes) = tree_size(target).map_err(|e| LabError::io("read", target, e))?;
    (fp.files, fp.bytes) = (files, bytes);
    Ok(fp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_gives_back_the_kept_files_and_removes_the_runs_own() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("dbio");
        fs::create_dir_all(target.join("data/base")).unwrap();
        fs::write(target.join("data/base/1"), vec![7u8; 3 * CHUNK + 5]).unwrap();
        fs::write(target.join("marker"), b"v1").unwrap();
        fs::set_permissions(target.join("data"), fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::symlink("data/base", target.join("link")).unwrap();
        let loaded = keep(&target, "pg").unwrap();
        assert_eq!((loaded.files, loaded.bytes), (2, 3 * CHUNK as u64 + 7));
        assert_eq!(fingerprint(&kept_dir(&target)).unwrap(), loaded);

        // A run changes a file, grows one and adds one.
        fs::write(target.join("data/base/1"), vec![8u8; 3 * CHUNK + 5]).unwrap();
        fs::write(target.join("marker"), b"v1 and more").unwrap();
        fs::write(target.join("data/new"), b"x").unwrap();
        assert_ne!(fingerprint(&target).unwrap(), loaded);

        assert_eq!(restore(&target).unwrap(), loaded);
        assert!(!target.join("data/new").exists());
        let mode = fs::metadata(target.join("data")).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(
            fs::read_link(target.join("link")).unwrap(),
            Path::new("data/base")
        );
        // The kept copy is left as it was, for the next run.
        assert_eq!(fingerprint(&kept_dir(&target)).unwrap(), loaded);
    }

    #[test]
    fn the_kept_copy_sits_beside_the_target() {
        assert_eq!(
            kept_dir(Path::new("/mnt/pg/dbio")),
            Path::new("/mnt/pg/dbio.loaded")
        );
    }
}
