//! A MariaDB server's end in every case: SIGTERM (InnoDB shuts down
//! cleanly, removing its socket and pid file), SIGKILL when it does not go;
//! a server a killed dbio left running (found through its pid file: it
//! keeps running in its own process group) stopped by the next run or
//! `dbio clean`; the socket and pid file a killed server leaves, removed
//! (InnoDB recovers from its redo at the next start), with the socket's
//! directory when it is dbio's own; `dbio clean`.

use std::fs;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::server::{INSTANCE_SUBDIR, Paths, Shape};
use crate::workload::db::procs::{self, forget_cgroup, signal};

/// The server's command name in /proc.
const COMM: &str = "mariadbd";
/// How long a clean shutdown may take (dirty pages are flushed).
const SHUTDOWN: Duration = Duration::from_secs(120);

/// The live server of `paths`, from its pid file.
pub fn live_server(paths: &Paths) -> Option<u32> {
    procs::live_pid_in(&paths.pid_file(), COMM)
}

/// Stops the server dbio started (its child): SIGTERM, wait, SIGKILL.
pub(super) fn stop_child(child: &mut Child, paths: &Paths) {
    if matches!(child.try_wait(), Ok(None)) {
        signal(child.id(), Signal::TERM);
        let t0 = Instant::now();
        while matches!(child.try_wait(), Ok(None)) && t0.elapsed() < SHUTDOWN {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(child.try_wait(), Ok(None)) {
            signal(child.id(), Signal::KILL);
        }
    }
    let _ = child.wait();
    remove_leftovers(paths);
}

/// Stops a server running on `paths` that this dbio did not start (a
/// killed dbio's orphan). Returns its pid.
pub(super) fn stop_orphan(paths: &Paths) -> Option<u32> {
    let pid = live_server(paths)?;
    signal(pid, Signal::TERM);
    let t0 = Instant::now();
    while procs::live(pid, COMM) && t0.elapsed() < SHUTDOWN {
        std::thread::sleep(Duration::from_millis(20));
    }
    if procs::live(pid, COMM) {
        signal(pid, Signal::KILL);
        let t0 = Instant::now();
        while procs::live(pid, COMM) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    remove_leftovers(paths);
    eprintln!(
        "dbio: stopped MariaDB (pid {pid}) on {}, left running by an earlier dbio that was killed",
        paths.data.display()
    );
    Some(pid)
}

/// Removes the socket and pid file of a server that is gone (a killed one
/// leaves them), and the socket's directory when it is dbio's own.
pub(super) fn remove_leftovers(paths: &Paths) {
    if live_server(paths).is_none() {
        let _ = fs::remove_file(paths.socket());
        let _ = fs::remove_file(paths.pid_file());
        let _ = fs::remove_file(paths.socket_dir.join("mysqld.sock.lock"));
        if paths.private_socket_dir() {
            let _ = fs::remove_dir(&paths.socket_dir);
        }
    }
}

/// Removes an instance's files (its redo too, where the marker says it is).
pub(super) fn remove_instance_files(paths: &Paths, marked_redo: Option<&Path>) {
    for redo in [Some(paths.redo.as_path()), marked_redo]
        .into_iter()
        .flatten()
    {
        if !redo.starts_with(&paths.root) {
            let _ = fs::remove_dir_all(redo);
        }
    }
    let _ = fs::remove_dir_all(&paths.root);
}

/// `dbio clean`: stops a server left on the instance under `target` and
/// removes the instance (its redo too). Returns whether there was one.
pub fn clean(target: &Path) -> bool {
    let paths = Paths::new(target, None);
    if !target.join(INSTANCE_SUBDIR).exists() {
        return false;
    }
    let shape: Option<Shape> = fs::read(paths.marker())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    stop_orphan(&paths);
    remove_leftovers(&paths);
    forget_cgroup(&paths.root);
    remove_instance_files(&paths, shape.as_ref().map(|s| s.redo.as_path()));
    true
}
