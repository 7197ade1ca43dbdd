//! The postmaster started and stopped without `pg_ctl` (which builds a
//! `/bin/sh` command line from the data and log paths): `postgres -D DATA`
//! spawned as the postgres user with its arguments as arguments, its output
//! to the log file dbio opens, ready once `postmaster.pid` says so (its
//! status line, as pg_ctl waits: `db::server::wait_up`); stopped with
//! SIGINT (fast shutdown), then SIGKILL (`db::server::Kind::stop`).

use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::binaries::Binaries;
use super::lifecycle::live_postmaster;
use super::server::{KIND, Paths, ServerError, failed};
use crate::workload::db::cgroup::MemCgroup;
use crate::workload::db::server::{Probe, Start, wait_up};
use crate::workload::db::user::ServerUser;

/// The line of `postmaster.pid` holding the postmaster's status (1-based,
/// PostgreSQL's LOCK_FILE_LINE_PM_STATUS), and its value once it accepts
/// connections.
const STATUS_LINE: usize = 8;
const READY: &str = "ready";

/// How a start ended when it did not come up.
#[derive(Debug)]
pub enum NotUp {
    /// The postmaster exited (its status).
    Exited(String),
    /// It did not say ready within the time allowed (it was stopped).
    TimedOut(Duration),
    /// It could not be run at all.
    Spawn(ServerError),
}

/// Starts the postmaster on `paths.data` (in `cgroup` when given) with its
/// output appended to `paths.log`, and waits up to `timeout` until it
/// accepts connections. Returns its process (to reap once stopped).
pub fn start(
    bin: &Binaries,
    paths: &Paths,
    user: &ServerUser,
    cgroup: Option<MemCgroup>,
    timeout: Duration,
) -> Result<Child, NotUp> {
    let log = open_log(&paths.log, user).map_err(NotUp::Spawn)?;
    let err = log
        .try_clone()
        .map_err(|e| NotUp::Spawn(failed("open the server log", e)))?;
    let postgres = bin.dir.join("postgres");
    let mut cmd = match cgroup {
        Some(cg) => user.command_in(&postgres, cg),
        None => user.command(&postgres),
    };
    let mut child = cmd
        .arg("-D")
        .arg(&paths.data)
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| NotUp::Spawn(failed(&format!("cannot run {}", postgres.display()), e)))?;
    let pid = child.id();
    match wait_up(&mut child, timeout, || match ready(&paths.data, pid) {
        true => Probe::Up,
        false => Probe::Waiting,
    }) {
        Start::Up => Ok(child),
        Start::Exited(status) => Err(NotUp::Exited(status.to_string())),
        // The probe never says stuck: a start that does not finish is
        // stopped once its time is up.
        Start::Stuck(_) | Start::TimedOut(_) => {
            stop(&paths.data, Some(&mut child));
            Err(NotUp::TimedOut(timeout))
        }
    }
}

/// The server log, appended to (a start after a crash keeps what the dead
/// server wrote), written by the server's user too. Its directory belongs
/// to that user: a symbolic link there is not followed.
fn open_log(log: &Path, user: &ServerUser) -> Result<fs::File, ServerError> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)
        .map_err(|e| failed(&format!("open {}", log.display()), e))?;
    user.chown(log)?;
    Ok(f)
}

/// Removes the server log of an earlier start (a new start writes a new one).
pub(crate) fn remove_log(log: &Path) -> Result<(), ServerError> {
    match fs::remove_file(log) {
        Err(e) if e.kind() != ErrorKind::NotFound => {
            Err(failed(&format!("remove the old {}", log.display()), e))
        }
        _ => Ok(()),
    }
}

/// Whether `postmaster.pid` in `data` names postmaster `pid` and says it
/// accepts connections.
fn ready(data: &Path, pid: u32) -> bool {
    let Ok(text) = fs::read_to_string(data.join("postmaster.pid")) else {
        return false;
    };
    let mut lines = text.lines();
    let named = lines.next().and_then(|l| l.trim().parse::<u32>().ok()) == Some(pid);
    named
        && lines
            .nth(STATUS_LINE - 2)
            .is_some_and(|s| s.trim() == READY)
}

/// Stops the postmaster `postmaster.pid` names: SIGINT (fast shutdown:
/// sessions ended, a checkpoint, shared memory and socket removed), up to a
/// minute; then SIGKILL and up to 10 s (`KIND.stop`). Reaps `child` when
/// it is that process.
pub fn stop(data: &Path, child: Option<&mut Child>) {
    if let Some(pid) = live_postmaster(data) {
        KIND.stop(pid, || live_postmaster(data).is_some());
    }
    if let Some(c) = child {
        if let Ok(None) = c.try_wait() {
            // Not the postmaster the pid file names (it never wrote one).
            let _ = c.kill();
        }
        let _ = c.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_reads_the_status_line_of_the_right_postmaster() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("postmaster.pid");
        let body = |pid: u32, status: &str| {
            format!("{pid}\n/d\n1700000000\n5432\n/run\n\n  1234  5678\n{status}\n")
        };
        fs::write(&pid_file, body(42, "starting")).unwrap();
        assert!(!ready(dir.path(), 42));
        fs::write(&pid_file, body(42, "ready   ")).unwrap();
        assert!(ready(dir.path(), 42));
        assert!(!ready(dir.path(), 43), "another postmaster's file");
        fs::remove_file(&pid_file).unwrap();
        assert!(!ready(dir.path(), 42));
    }
}
