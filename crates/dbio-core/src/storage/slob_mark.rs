//! Whether a SLOB run may have left blocks half written: `dbio-slob-mark`
//! beside a layout's manifest (the datafiles' and the redo logs'). The
//! SLOB model keeps no lost-write map and no record of its writes in
//! flight (its DB writers stamp generations of their own), so a run killed
//! mid-write (kill -9, a crash, a power cut) may leave a block torn by its
//! DB writer anywhere in the tablespace. A run marks the layout *writing*,
//! durably, before its first write, and takes the mark away when it ends
//! cleanly (every writer joined, the files fsynced); one that finds the
//! mark of a run that never ended keeps, when it ends, the mark that an
//! earlier run was interrupted — that run's torn blocks may still be there.
//! A new layout removes the mark with the map (`genmap_file::remove`).
//!
//! The file is one line of text: `writing` or `interrupted before`.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};

pub const NAME: &str = "dbio-slob-mark";
const WRITING: &str = "writing";
const INTERRUPTED: &str = "interrupted before";

/// What the mark of a layout says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// No SLOB run was interrupted writing here: none ran, or each ended
    /// cleanly (no mark).
    Clean,
    /// A SLOB run began writing and never ended cleanly (or is running).
    Writing,
    /// The last SLOB run ended cleanly, but an earlier one was interrupted.
    InterruptedBefore,
    /// A mark that says neither (damaged): taken as an interruption.
    Unusable(String),
}

impl Mark {
    /// Why a torn block here may be a SLOB run's interrupted write (None:
    /// no SLOB run was interrupted here).
    pub(crate) fn interrupted_why(&self) -> Option<String> {
        match self {
            Mark::Clean => None,
            Mark::Writing => Some(format!(
                "a SLOB run began writing these blocks and did not end cleanly ({NAME} says it is writing): killed, crashed or cut off by a power cut"
            )),
            Mark::InterruptedBefore => Some(format!(
                "an earlier SLOB run writing these blocks was interrupted ({NAME}); a later one ended cleanly, but did not rewrite every block"
            )),
            Mark::Unusable(why) => Some(format!(
                "the mark of SLOB runs ({NAME}) is unusable ({why}); a run may have been interrupted"
            )),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {source}", .path.display())]
pub struct MarkError {
    path: PathBuf,
    what: &'static str,
    source: std::io::Error,
}

impl MarkError {
    /// Fsyncing the files of a run that ended failed: the mark stays.
    pub(crate) fn fsync(path: &Path, source: std::io::Error) -> MarkError {
        MarkError {
            path: path.to_path_buf(),
            what: "fsync",
            source,
        }
    }
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(NAME)
}

/// Reads the mark of `dir`.
pub fn read(dir: &Path) -> Mark {
    match fs::read_to_string(path(dir)) {
        Ok(s) => match s.trim_end() {
            WRITING => Mark::Writing,
            INTERRUPTED => Mark::InterruptedBefore,
            _ => Mark::Unusable("neither writing nor interrupted".into()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Mark::Clean,
        Err(e) => Mark::Unusable(e.to_string()),
    }
}

/// A run writing the layouts it marked.
#[derive(Debug)]
pub(crate) struct Writing {
    dirs: Vec<PathBuf>,
    /// Per dir: an earlier run was interrupted there.
    earlier: Vec<bool>,
}

/// Marks each of `dirs` writing, durably, before the run's first write.
pub(crate) fn begin(dirs: &[PathBuf]) -> Result<Writing, MarkError> {
    let mut earlier = Vec::with_capacity(dirs.len());
    for d in dirs {
        earlier.push(read(d) != Mark::Clean);
        put(d, Some(WRITING))?;
    }
    Ok(Writing {
        dirs: dirs.to_vec(),
        earlier,
    })
}

impl Writing {
    /// The run ended cleanly (its writers joined, its files fsynced): the
    /// mark goes, or says that an earlier run was interrupted.
    pub fn end(self) -> Result<(), MarkError> {
        for (d, &earlier) in self.dirs.iter().zip(&self.earlier) {
            put(d, earlier.then_some(INTERRUPTED))?;
        }
        Ok(())
    }
}

/// Puts `line` in place of the mark of `dir` (None: removes it), durably
/// (temporary file, fsync, rename, fsync of the directory).
fn put(dir: &Path, line: Option<&str>) -> Result<(), MarkError> {
    let p = path(dir);
    let err = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| MarkError { path, what, source }
    };
    match line {
        Some(line) => {
            let tmp = dir.join(format!("{NAME}.tmp"));
            let mut f = File::create(&tmp).map_err(err("create", &tmp))?;
            f.write_all(format!("{line}\n").as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(err("write", &tmp))?;
            fs::rename(&tmp, &p).map_err(err("replace", &p))?;
        }
        None => {
            super::inflight::remove_if_there(std::slice::from_ref(&p)).map_err(err("remove", &p))?
        }
    }
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(err("fsync", dir))
}

/// Removes the mark of `dir` (the layout goes, or is laid out anew).
pub fn remove(dir: &Path) -> std::io::Result<()> {
    super::inflight::remove_if_there(&[path(dir), dir.join(format!("{NAME}.tmp"))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_run_stays_marked_until_a_new_layout() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        assert_eq!(read(&d), Mark::Clean);
        assert!(Mark::Clean.interrupted_why().is_none());
        // A run that ends cleanly leaves no mark.
        begin(std::slice::from_ref(&d)).unwrap().end().unwrap();
        assert_eq!(read(&d), Mark::Clean);
        // A run killed mid-write (never ends) leaves it writing.
        let w = begin(std::slice::from_ref(&d)).unwrap();
        assert_eq!(read(&d), Mark::Writing);
        drop(w);
        // The next run ends cleanly: the earlier interruption stays known.
        let w = begin(std::slice::from_ref(&d)).unwrap();
        assert_eq!(read(&d), Mark::Writing);
        w.end().unwrap();
        assert_eq!(read(&d), Mark::InterruptedBefore);
        begin(std::slice::from_ref(&d)).unwrap().end().unwrap();
        assert_eq!(read(&d), Mark::InterruptedBefore, "sticky");
        fs::write(path(&d), "garbage").unwrap();
        assert!(matches!(read(&d), Mark::Unusable(_)));
        assert!(read(&d).interrupted_why().is_some());
        remove(&d).unwrap();
        remove(&d).unwrap();
        assert_eq!(read(&d), Mark::Clean);
    }
}
