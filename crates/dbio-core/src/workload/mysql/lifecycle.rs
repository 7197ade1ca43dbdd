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

use super::server::{INSTANCE_SUBDIR, KIND, Paths, Shape};
use crate::workload::db::procs::{self, forget_cgroup};
use crate::workload::db::server::remove_socket_dir;

/// The server's command name in /proc.
const COMM: &str = "mariadbd";

/// The live server of `paths`, from its pid file.
pub(crate) fn live_server(paths: &Paths) -> Option<u32> {
    procs::live_pid_in(&paths.pid_file(), COMM)
}

/// Stops the server dbio started (its child): SIGTERM, wait, SIGKILL
/// (`KIND.stop`).
pub(super) fn stop_child(child: &mut Child, paths: &Paths) {
    KIND.stop(child.id(), || matches!(child.try_wait(), Ok(None)));
    let _ = child.wait();
    remove_leftovers(paths);
}

/// Stops a server running on `paths` that this dbio did not start (a
/// killed dbio's orphan). Returns its pid.
pub(super) fn stop_orphan(paths: &Paths) -> Option<u32> {
    let pid = live_server(paths)?;
    KIND.stop(pid, || procs::live(pid, COMM));
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
            remove_socket_dir(&paths.socket_dir);
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
