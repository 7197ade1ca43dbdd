//! The manifest dbio keeps next to the data files it lays out: which files it
//! made, their size and block size. It is how a later run reuses a layout and
//! how `dbio clean` knows what it may delete (only what is listed here).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) const MANIFEST_NAME: &str = "dbio-manifest.json";
const FORMAT: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    pub created_by: String,
    pub block_size: u32,
    /// Bytes in each file (all files are the same size).
    pub file_size: u64,
    /// File names, relative to the directory.
    pub files: Vec<String>,
    /// True when dbio created the directory itself (then `clean` removes it if empty).
    pub created_dir: bool,
    /// False while a layout is being written; an incomplete layout is redone.
    pub complete: bool,
    /// A random number every block of this layout carries in its stamps, so
    /// a block copied in from another target is named as misdirected (0 in
    /// manifests written before stamps carried it: such layouts are redone).
    #[serde(default)]
    pub target_id: u32,
    /// `--compress-pct` of the layout (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub compress_pct: u8,
    /// `--dedupe-pct` of the layout (absent: 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dedupe_pct: u8,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

impl Manifest {
    pub fn new(files: Vec<String>, file_size: u64, block_size: u32, created_dir: bool) -> Self {
        Manifest {
            format: FORMAT,
            created_by: format!("dbio {}", env!("CARGO_PKG_VERSION")),
            block_size,
            file_size,
            files,
            created_dir,
            complete: false,
            target_id: new_target_id(),
            compress_pct: 0,
            dedupe_pct: 0,
        }
    }

    /// What the layout's blocks hold.
    pub fn content(&self) -> crate::storage::content::ContentSpec {
        crate::storage::content::ContentSpec {
            compress_pct: self.compress_pct,
            dedupe_pct: self.dedupe_pct,
        }
    }

    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_NAME)
    }

    /// Reads the manifest of `dir`, if there is one.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, ManifestError> {
        let path = Self::path(dir);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(ManifestError::Read { path, source }),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|source| ManifestError::Foreign {
            path: path.clone(),
            source,
        })?;
        if m.files
            .iter()
            .any(|f| f.contains('/') || f.starts_with('.'))
        {
            return Err(ManifestError::Outside(path));
        }
        Ok(Some(m))
    }

    /// Writes the manifest atomically (temporary file, fsync, rename).
    pub fn store(&self, dir: &Path) -> std::io::Result<()> {
        let tmp = dir.join(format!("{MANIFEST_NAME}.tmp"));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(
            serde_json::to_string_pretty(self)
                .expect("manifest serializes")
                .as_bytes(),
        )?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, Self::path(dir))?;
        fs::File::open(dir)?.sync_all()
    }

    pub fn file_paths(&self, dir: &Path) -> Vec<PathBuf> {
        self.files.iter().map(|f| dir.join(f)).collect()
    }
}

/// A random, non-zero target id (0 stands for a device, which has no manifest).
fn new_target_id() -> u32 {
    let salt = u64::from(std::process::id()) << 32;
    let mut rng = crate::rng::Rng::new(crate::measure::clock::now_ns() ^ salt);
    loop {
        let id = rng.next_u64() as u32;
        if id != 0 {
            return id;
        }
    }
}

/// The name of data file `i`.
pub(crate) fn data_file_name(i: u32) -> String {
    format!("dbio-data-{i:04}.dat")
}

/// A manifest dbio cannot trust.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not a dbio manifest ({source}); move it away or choose another --target", .path.display())]
    Foreign {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("{} lists a file outside its directory; refusing to use it", .0.display())]
    Outside(PathBuf),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_foreign_json() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), None);
        let m = Manifest::new(vec![data_file_name(0)], 1 << 20, 8192, false);
        m.store(dir.path()).unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), Some(m));
        fs::write(Manifest::path(dir.path()), "{\"files\": 3}").unwrap();
        let e = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("not a dbio manifest"), "{e}");
        let mut evil = Manifest::new(vec!["../etc/passwd".into()], 1, 512, false);
        evil.format = 1;
        fs::write(
            Manifest::path(dir.path()),
            serde_json::to_string(&evil).unwrap(),
        )
        .unwrap();
        assert!(matches!(
            Manifest::load(dir.path()),
            Err(ManifestError::Outside(_))
        ));
    }
}
