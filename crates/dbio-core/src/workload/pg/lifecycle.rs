//! A server's end in every case: SIGINT (fast shutdown) then SIGKILL; a
//! postmaster a killed dbio left (found through `postmaster.pid`); one that
//! was itself killed, whose shared memory, socket and pid file PostgreSQL
//! removes only when started again on the data directory (stale and zombie
//! lock files removed first); the memory cgroup; `dbio clean`.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use super::binaries::{Binaries, pg_user};
use super::postmaster;
use super::server::{PORT, Paths, ServerError, Shape};
use crate::workload::db::procs::{self, forget_cgroup, processes_in};
use crate::workload::db::server;
use crate::workload::db::user::ServerUser;

/// The postmaster's pid from `postmaster.pid`, if that process is alive.
pub(super) fn live_postmaster(data: &Path) -> Option<u32> {
    live_pid_in(&data.join("postmaster.pid"))
}

/// The pid on the first line of a PostgreSQL lock file, if that process is
/// a live (not zombie) postgres.
pub(super) fn live_pid_in(lock: &Path) -> Option<u32> {
    procs::live_pid_in(lock, "postgres")
}

/// Stops a server running on `paths.data` that dbio did not start in this
/// process (a killed dbio's orphan). Returns its pid.
pub(super) fn stop_orphan(bin: &Binaries, paths: &Paths, user: &ServerUser) -> Option<u32> {
    let pid = live_postmaster(&paths.data)?;
    stop_data_dir(bin, paths, user);
    eprintln!(
        "dbio: stopped PostgreSQL (pid {pid}) on {}, left running by an earlier dbio that was killed",
        paths.data.display()
    );
    Some(pid)
}

/// Stops the postmaster on `paths.data` (SIGINT, then SIGKILL:
/// `postmaster::stop`). A postmaster that died without cleaning up
/// (killed) leaves its shared memory, socket and pid file: PostgreSQL
/// removes them itself when started again on the data directory, so it is
/// started once more (crash recovery) and stopped cleanly.
pub(super) fn stop_data_dir(bin: &Binaries, paths: &Paths, user: &ServerUser) {
    if live_postmaster(&paths.data).is_none() {
        if paths.data.join("postmaster.pid").exists() {
            recover(bin, paths, user);
        }
        return;
    }
    postmaster::stop(&paths.data, None);
}

/// Starts and stops a server whose postmaster died, so that PostgreSQL
/// removes what the dead one left (shared memory segments, socket, pid file).
pub(super) fn recover(bin: &Binaries, paths: &Paths, user: &ServerUser) {
    eprintln!(
        "dbio: PostgreSQL on {} died without cleaning up; starting it once more to remove its shared memory, socket and pid file",
        paths.data.display()
    );
    // The dead postmaster's children notice and exit; a new postmaster
    // refuses to start while they still hold the shared memory. They all
    // work in the data directory.
    let t0 = Instant::now();
    while processes_in(&paths.data) && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    remove_stale_locks(paths);
    if make_socket_dir(paths, user).is_err() {
        return;
    }
    if let Ok(mut child) = postmaster::start(bin, paths, user, None, Duration::from_secs(300)) {
        postmaster::stop(&paths.data, Some(&mut child));
    }
    remove_socket_dir(paths);
}

/// Makes the socket directory when it is dbio's own short one outside the
/// cluster (`Paths::new` says when): `db::server::make_socket_dir`.
pub(super) fn make_socket_dir(paths: &Paths, user: &ServerUser) -> Result<(), ServerError> {
    match paths.private_socket_dir() {
        true => server::make_socket_dir(&paths.socket_dir, user),
        false => Ok(()),
    }
}

/// Removes dbio's own short socket directory (outside the cluster), if
/// empty: the server removes its socket and lock file when it stops.
pub(super) fn remove_socket_dir(paths: &Paths) {
    if paths.private_socket_dir() {
        server::remove_socket_dir(&paths.socket_dir);
    }
}

/// Removes the pid file and the socket's lock file of a postmaster that is
/// gone. PostgreSQL removes stale ones itself, but takes a zombie (a killed
/// postmaster nobody reaped, as under a container's init) for a live server
/// and refuses to start. Its shared memory is found without them (by the
/// data directory's inode) and removed by the next start.
pub(super) fn remove_stale_locks(paths: &Paths) {
    let pid_file = paths.data.join("postmaster.pid");
    let sock_lock = paths.socket_dir.join(format!(".s.PGSQL.{PORT}.lock"));
    for lock in [pid_file, sock_lock] {
        if lock.exists() && live_pid_in(&lock).is_none() {
            let _ = fs::remove_file(&lock);
        }
    }
}

/// Removes a cluster's files (its WAL too, where the marker says it is, and
/// dbio's own socket directory).
pub(super) fn remove_cluster_files(paths: &Paths, marked_wal: Option<&Path>) {
    remove_socket_dir(paths);
    for wal in [Some(paths.wal.as_path()), marked_wal]
        .into_iter()
        .flatten()
    {
        if !wal.starts_with(&paths.root) {
            let _ = fs::remove_dir_all(wal);
        }
    }
    let _ = fs::remove_dir_all(&paths.root);
}

/// `dbio clean`: stops a server left on the cluster under `target` and
/// removes the cluster (its WAL too). Returns whether there was one.
pub fn clean(target: &Path) -> Result<bool, ServerError> {
    let paths = Paths::new(target, None);
    if !paths.root.exists() {
        return Ok(false);
    }
    let shape: Option<Shape> = fs::read(paths.marker())
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if live_postmaster(&paths.data).is_some() {
        let bin = Binaries::find(None)?;
        stop_orphan(&bin, &paths, &pg_user()?);
    } else if paths.data.join("postmaster.pid").exists() {
        // A server that was killed: let PostgreSQL clean up after it.
        let bin = Binaries::find(None)?;
        stop_data_dir(&bin, &paths, &pg_user()?);
    }
    forget_cgroup(&paths.root);
    remove_cluster_files(&paths, shape.as_ref().map(|s| s.wal.as_path()));
    Ok(true)
}
