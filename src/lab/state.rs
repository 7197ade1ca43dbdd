//! The lab's state file: exactly what a lab created (image files, loop
//! devices over them, mount point directories, mounts, changed schedulers),
//! written before each thing is made and rewritten as each is undone, so
//! that after a crash or kill -9 `dbio lab cleanup` removes those things and
//! nothing else.
//!
//! One JSON file per lab process, `<lab dir>/lab-<pid>.json`, where the lab
//! dir is `$DBIO_LAB_DIR`, else `$XDG_STATE_HOME/dbio/lab`, else
//! `~/.local/state/dbio/lab`. Each file is replaced atomically (write, fsync,
//! rename), so a crash never leaves half a state file.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use crate::plan::lab::{DIR_ENV, lab_dir};

/// The state file format version.
const VERSION: u32 = 1;

/// One thing a lab made. Undone in the reverse order of creation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    /// An image file the lab created (and any loop device still over it).
    Image { path: PathBuf },
    /// A loop device the lab attached over `image`.
    Loop { device: PathBuf, image: PathBuf },
    /// A directory the lab created (a mount point); removed only when empty.
    Dir { path: PathBuf },
    /// `device` mounted on `mountpoint` by the lab.
    Mount {
        device: PathBuf,
        mountpoint: PathBuf,
    },
    /// The I/O scheduler the lab set on `device`, and the one to restore.
    Scheduler { device: PathBuf, previous: String },
}

impl Item {
    /// A short description: `loop device /dev/loop3 over /var/tmp/x.img`.
    pub fn describe(&self) -> String {
        match self {
            Item::Image { path } => format!("image {}", path.display()),
            Item::Loop { device, image } => {
                format!("loop device {} over {}", device.display(), image.display())
            }
            Item::Dir { path } => format!("directory {}", path.display()),
            Item::Mount { device, mountpoint } => {
                format!("mount of {} on {}", device.display(), mountpoint.display())
            }
            Item::Scheduler { device, previous } => format!(
                "I/O scheduler of {} (to restore: {previous})",
                device.display()
            ),
        }
    }
}

/// The file's contents.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateFile {
    pub version: u32,
    /// The lab process and its start time (clock ticks after boot, from
    /// /proc/PID/stat), so a reused pid is not taken for the lab.
    pub pid: u32,
    pub start_ticks: u64,
    /// What it was doing: `lab run plan.toml`, `lab discard`.
    pub command: String,
    /// The plan's name, for `lab run`.
    pub plan: Option<String>,
    pub started: String,
    /// In order of creation.
    pub items: Vec<Item>,
}

impl StateFile {
    /// Whether the process that wrote this file is still running.
    pub fn owner_alive(&self) -> bool {
        start_ticks(self.pid).is_some_and(|t| t == self.start_ticks)
    }
}

/// The state of this process's lab, kept on disk as it changes.
#[derive(Debug)]
pub struct State {
    path: PathBuf,
    file: StateFile,
}

impl State {
    /// Starts a state file for this process in [`lab_dir`].
    pub fn create(command: &str, plan: Option<&str>) -> io::Result<State> {
        State::create_in(&lab_dir(), command, plan)
    }

    pub fn create_in(dir: &Path, command: &str, plan: Option<&str>) -> io::Result<State> {
        fs::create_dir_all(dir)?;
        let pid = std::process::id();
        let state = State {
            path: dir.join(format!("lab-{pid}.json")),
            file: StateFile {
                version: VERSION,
                pid,
                start_ticks: start_ticks(pid).unwrap_or(0),
                command: command.to_string(),
                plan: plan.map(str::to_string),
                started: crate::store::fmt_utc(now_ms()),
                items: Vec::new(),
            },
        };
        state.save()?;
        Ok(state)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn items(&self) -> &[Item] {
        &self.file.items
    }

    /// Records `item` (before it is made).
    pub fn add(&mut self, item: Item) -> io::Result<()> {
        self.file.items.push(item);
        self.save()
    }

    /// Forgets `item` (after it was undone, or when making it failed).
    pub fn remove(&mut self, item: &Item) -> io::Result<()> {
        if let Some(i) = self.file.items.iter().rposition(|x| x == item) {
            self.file.items.remove(i);
            self.save()?;
        }
        Ok(())
    }

    /// Deletes the file if nothing is left in it; true if it was deleted.
    pub fn finish(&self) -> io::Result<bool> {
        if self.file.items.is_empty() {
            remove_file(&self.path)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn save(&self) -> io::Result<()> {
        write_atomic(&self.path, &self.file)
    }
}

/// A state file found on disk: its contents, or why it could not be read.
pub struct Found {
    pub path: PathBuf,
    pub file: Result<StateFile, Unreadable>,
}

/// Why a state file found on disk could not be read (the reader's own words).
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    #[error(transparent)]
    Read(#[from] io::Error),
    #[error(transparent)]
    Parse(#[from] serde_json::Error),
}

/// Every state file in `dir`, oldest name first.
pub fn list(dir: &Path) -> io::Result<Vec<Found>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.starts_with("lab-") && n.ends_with(".json")
        })
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| {
            let file = fs::read_to_string(&path)
                .map_err(Unreadable::from)
                .and_then(|t| Ok(serde_json::from_str::<StateFile>(&t)?));
            Found { path, file }
        })
        .collect())
}

/// Rewrites a state file found on disk (cleanup undoes its items one by one).
pub fn rewrite(path: &Path, file: &StateFile) -> io::Result<()> {
    if file.items.is_empty() {
        remove_file(path)
    } else {
        write_atomic(path, file)
    }
}

fn remove_file(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn write_atomic(path: &Path, file: &StateFile) -> io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(file).expect("state serializes");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A process's start time in clock ticks after boot (field 22 of
/// /proc/PID/stat), None when it does not exist.
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_file_lists_what_was_made_and_goes_away_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = State::create_in(dir.path(), "lab run p.toml", Some("p")).unwrap();
        let img = Item::Image {
            path: "/var/tmp/a.img".into(),
        };
        let lp = Item::Loop {
            device: "/dev/loop9".into(),
            image: "/var/tmp/a.img".into(),
        };
        s.add(img.clone()).unwrap();
        s.add(lp.clone()).unwrap();
        let found = list(dir.path()).unwrap();
        assert_eq!(found.len(), 1);
        let f = found[0].file.as_ref().unwrap();
        assert_eq!(f.items, vec![img.clone(), lp.clone()]);
        assert_eq!(f.plan.as_deref(), Some("p"));
        assert!(f.owner_alive(), "this test process is alive");
        assert!(!s.finish().unwrap());
        s.remove(&lp).unwrap();
        s.remove(&img).unwrap();
        assert!(s.finish().unwrap());
        assert!(list(dir.path()).unwrap().is_empty());
    }

    #[test]
    fn a_dead_or_reused_pid_is_not_the_owner() {
        let me = std::process::id();
        let mut f = StateFile {
            version: VERSION,
            pid: me,
            start_ticks: start_ticks(me).unwrap(),
            command: "lab run".into(),
            plan: None,
            started: String::new(),
            items: Vec::new(),
        };
        assert!(f.owner_alive());
        f.start_ticks += 1; // the same pid, another process
        assert!(!f.owner_alive());
        f.pid = u32::MAX; // no such process
        assert!(!f.owner_alive());
    }

    #[test]
    fn unreadable_state_files_are_reported_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("lab-1.json"), "{ not json").unwrap();
        fs::write(dir.path().join("other.txt"), "ignored").unwrap();
        let found = list(dir.path()).unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].file.is_err());
    }

    #[test]
    fn the_lab_dir_follows_the_environment() {
        // Only reads the variables; the test binary's own environment is not changed.
        let d = lab_dir();
        if let Some(v) = std::env::var_os(DIR_ENV) {
            assert_eq!(d, PathBuf::from(v));
        } else {
            assert!(d.ends_with("dbio/lab"), "{}", d.display());
        }
    }
}
