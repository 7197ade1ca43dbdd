//! Undoing what a lab made, newest first, each thing only if it is still
//! the lab's: a mount only if that device is still mounted on that mount
//! point, a loop device only if it is still bound to the lab's image, a
//! directory only if empty. Used for the teardown of a running lab and by
//! `dbio lab cleanup` for the state files of labs that died.

use std::io::Write;
use std::path::Path;

use super::LabError;
use super::backing;
use super::fs;
use super::state::{self, Item, State};

/// Undoes one item; Some(what was done), or None when there was nothing
/// left to undo.
pub fn undo(item: &Item) -> Result<Option<String>, LabError> {
    let done = |b: bool, what: String| b.then_some(what);
    Ok(match item {
        Item::Mount { device, mountpoint } => done(
            fs::umount(device, mountpoint)?,
            format!("unmounted {}", mountpoint.display()),
        ),
        Item::Loop { device, image } => done(
            backing::detach(device, image)?,
            format!("detached {}", device.display()),
        ),
        Item::Image { path } => {
            // A loop device attached just before a crash may not be in the
            // state file yet: any loop over the lab's own image is the lab's.
            for d in backing::loops_over(path) {
                backing::detach(&d, path)?;
            }
            match std::fs::remove_file(path) {
                Ok(()) => Some(format!("removed {}", path.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(LabError::io("remove", path, e)),
            }
        }
        Item::Dir { path } => done(
            fs::remove_dir(path)?,
            format!("removed directory {}", path.display()),
        ),
        Item::Scheduler { device, previous } => done(
            backing::restore_scheduler(device, previous)?,
            format!("restored scheduler {previous} on {}", device.display()),
        ),
    })
}

/// Undoes the state's newest items until `mark` are left (e.g. one arm's
/// mount, directories and scheduler); stops at the first failure.
pub fn undo_to(state: &mut State, mark: usize, log: &mut dyn Write) -> Result<(), LabError> {
    while state.items().len() > mark {
        let item = state.items().last().cloned().expect("an item");
        if let Some(what) = undo(&item)? {
            let _ = writeln!(log, "lab: {what}");
        }
        state.remove(&item).map_err(LabError::state(state))?;
    }
    Ok(())
}

/// Undoes everything in a running lab's state, newest first, and deletes
/// the state file; stops at the first failure (what is left stays listed
/// for `dbio lab cleanup`).
pub fn teardown(state: &mut State, log: &mut dyn Write) -> Result<(), LabError> {
    undo_to(state, 0, log)?;
    state.finish().map_err(LabError::state(state))?;
    Ok(())
}

/// Owns a running lab's state and tears everything down when the work is
/// done ([`Guard::finish`]) or when dropped (an early return, a panic).
pub struct Guard {
    state: Option<State>,
}

impl Guard {
    pub fn new(state: State) -> Guard {
        Guard { state: Some(state) }
    }

    pub fn state(&mut self) -> &mut State {
        self.state.as_mut().expect("the lab is not torn down yet")
    }

    /// Tears down, then returns the work's result; the work's error comes
    /// first, a failed teardown after successful work is the error.
    pub fn finish<T>(mut self, result: Result<T, LabError>) -> Result<T, LabError> {
        match (result, self.teardown()) {
            (Ok(v), Ok(())) => Ok(v),
            (Err(e), Ok(())) | (Ok(_), Err(e)) => Err(e),
            (Err(e), Err(t)) => {
                let t = crate::terminal::line(&t.to_string());
                eprintln!("error: lab teardown: {t}; `dbio lab cleanup` removes the rest");
                Err(e)
            }
        }
    }

    fn teardown(&mut self) -> Result<(), LabError> {
        match self.state.take() {
            Some(mut s) => teardown(&mut s, &mut std::io::stderr()),
            None => Ok(()),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            let e = crate::terminal::line(&e.to_string());
            eprintln!("error: lab teardown: {e}; `dbio lab cleanup` removes the rest");
        }
    }
}

/// What `cleanup` did.
#[derive(Debug, Default)]
pub struct Cleaned {
    /// State files fully undone and deleted.
    pub files: usize,
    /// Things undone.
    pub undone: usize,
    /// State files left (owner running, unreadable, or an undo failed).
    pub left: Vec<String>,
}

/// Undoes the state files in `dir` whose lab is no longer running (only
/// those of `plan` when given). With `dry_run`, only says what it would do.
pub fn cleanup(
    dir: &Path,
    plan: Option<&str>,
    dry_run: bool,
    log: &mut dyn Write,
) -> Result<Cleaned, LabError> {
    let mut out = Cleaned::default();
    let found = state::list(dir).map_err(|e| LabError::io("list", dir, e))?;
    for f in found {
        let name = f.path.display().to_string();
        let mut file = match f.file {
            Ok(file) => file,
            Err(e) => {
                out.left
                    .push(format!("{name}: cannot read it ({e}); left alone"));
                continue;
            }
        };
        if plan.is_some() && file.plan.as_deref() != plan {
            continue;
        }
        if file.owner_alive() {
            out.left.push(format!(
                "{name}: dbio {} (pid {}) is still running; stop it first",
                file.command, file.pid
            ));
            continue;
        }
        let _ = writeln!(
            log,
            "lab cleanup: {name} (dbio {}, pid {}, started {}): {} thing(s)",
            file.command,
            file.pid,
            file.started,
            file.items.len()
        );
        if dry_run {
            for item in file.items.iter().rev() {
                let _ = writeln!(log, "  would undo: {}", item.describe());
            }
            continue;
        }
        let mut failed = None;
        while let Some(item) = file.items.last().cloned() {
            match undo(&item) {
                Ok(Some(what)) => {
                    out.undone += 1;
                    let _ = writeln!(log, "  {what}");
                }
                Ok(None) => {
                    let _ = writeln!(log, "  already gone: {}", item.describe());
                }
                Err(e) => {
                    failed = Some(format!("{name}: {e}; the rest is left listed"));
                    break;
                }
            }
            file.items.pop();
            state::rewrite(&f.path, &file).map_err(|e| LabError::io("rewrite", &f.path, e))?;
        }
        match failed {
            Some(m) => out.left.push(m),
            None => {
                state::rewrite(&f.path, &file).map_err(|e| LabError::io("remove", &f.path, e))?;
                out.files += 1;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::state::StateFile;

    /// A state file of a dead process listing an image, a directory and a
    /// mount that is not mounted: cleanup removes the image and the empty
    /// directory, skips the mount, and deletes the state file — and leaves
    /// a file next to them alone.
    #[test]
    fn cleanup_removes_what_a_dead_lab_listed_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        let img = tmp.path().join("lab.img");
        let other = tmp.path().join("not-the-labs.img");
        let mnt = tmp.path().join("mnt");
        std::fs::write(&img, "x").unwrap();
        std::fs::write(&other, "x").unwrap();
        std::fs::create_dir(&mnt).unwrap();
        let file = StateFile {
            version: 1,
            pid: u32::MAX,
            start_ticks: 1,
            command: "lab run p.toml".into(),
            plan: Some("p".into()),
            started: "then".into(),
            items: vec![
                Item::Image { path: img.clone() },
                Item::Dir { path: mnt.clone() },
                Item::Mount {
                    device: "/dev/loop999".into(),
                    mountpoint: mnt.clone(),
                },
            ],
        };
        let path = dir.join("lab-4242.json");
        state::rewrite(&path, &file).unwrap();
        let mut log = Vec::new();
        // Another plan's state is not touched when a plan is named.
        let c = cleanup(&dir, Some("q"), false, &mut log).unwrap();
        assert_eq!((c.files, c.undone), (0, 0));
        assert!(img.exists() && path.exists());
        let c = cleanup(&dir, None, true, &mut log).unwrap();
        assert_eq!(c.undone, 0, "a dry run undoes nothing");
        assert!(img.exists());
        let c = cleanup(&dir, Some("p"), false, &mut log).unwrap();
        assert_eq!(
            (c.files, c.undone),
            (1, 2),
            "{}",
            String::from_utf8_lossy(&log)
        );
        assert!(c.left.is_empty());
        assert!(!img.exists() && !mnt.exists() && !path.exists());
        assert!(other.exists());
    }

    #[test]
    fn a_running_labs_state_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let mut s = State::create_in(tmp.path(), "lab run", None).unwrap();
        let img = tmp.path().join("x.img");
        std::fs::write(&img, "x").unwrap();
        s.add(Item::Image { path: img.clone() }).unwrap();
        let c = cleanup(tmp.path(), None, false, &mut Vec::new()).unwrap();
        assert_eq!(c.left.len(), 1);
        assert!(c.left[0].contains("still running"), "{:?}", c.left);
        assert!(img.exists());
        teardown(&mut s, &mut Vec::new()).unwrap();
        assert!(!img.exists());
        assert!(state::list(tmp.path()).unwrap().is_empty());
    }

    #[test]
    fn the_guard_tears_down_on_drop_and_on_finish_keeping_the_works_error() {
        let tmp = tempfile::tempdir().unwrap();
        let made = |name: &str| {
            let mut s = State::create_in(&tmp.path().join(name), "test", None).unwrap();
            let img = tmp.path().join(format!("{name}.img"));
            std::fs::write(&img, "x").unwrap();
            s.add(Item::Image { path: img.clone() }).unwrap();
            (s, img)
        };
        let (s, img) = made("dropped");
        let panicked = std::panic::catch_unwind(move || {
            let _g = Guard::new(s);
            panic!("the work panicked");
        });
        assert!(panicked.is_err());
        assert!(!img.exists(), "a panic still tears down");
        let (s, img) = made("failed");
        let r: Result<(), LabError> =
            Guard::new(s).finish(Err(LabError::Failed("mkfs failed".into())));
        assert_eq!(r.unwrap_err().to_string(), "mkfs failed");
        assert!(!img.exists());
        assert!(state::list(&tmp.path().join("failed")).unwrap().is_empty());
    }
}
