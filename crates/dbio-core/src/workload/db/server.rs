//! The part of a throwaway server's life that is the same whatever the
//! server (`pg/server.rs`, `mysql/server.rs` keep only what differs: their
//! install, settings, how they say they are ready): the checks before a
//! start (the socket path, a server a killed dbio left, that one's memory
//! cgroup), the memory cgroup the server runs in (`--pg-memory`,
//! `--mysql-memory`), the private socket directory under
//! [`PRIVATE_SOCKET_PARENT`], waiting for a started server to come up, the
//! stop (the server's own shutdown signal, then SIGKILL), forgetting the
//! cgroup when a start fails or the server stops, and the refusals and
//! failures in the server's words (a failed start with its log's last
//! lines). A server's words are a [`Kind`].

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use rustix::process::Signal;

use super::cgroup::MemCgroup;
use super::procs::{forget_cgroup, limit_memory, signal};
use super::user::ServerUser;
use super::{PRIVATE_SOCKET_PARENT, ServerError, check_socket, failed, last_lines};

/// How long a server that ignored its shutdown signal has to go after SIGKILL.
const KILLED_GRACE: Duration = Duration::from_secs(10);
/// How often a start or a stop looks again.
const POLL: Duration = Duration::from_millis(20);

/// What a started server's probe says, each time it is asked.
pub enum Probe {
    /// It accepts connections.
    Up,
    /// Not yet.
    Waiting,
    /// It will not come up by itself (why): it is killed.
    Stuck(&'static str),
}

/// How waiting for a started server ended.
#[derive(Debug)]
pub enum Start {
    Up,
    /// The process exited (its status; reaped).
    Exited(ExitStatus),
    /// The probe said it never would (why): killed and reaped.
    Stuck(&'static str),
    /// Not up within the time allowed (still running: the caller stops it).
    TimedOut(Duration),
}

/// Waits until the server `child` is up (`probe`), exits, is stuck, or
/// `timeout` passes.
pub(crate) fn wait_up(
    child: &mut Child,
    timeout: Duration,
    mut probe: impl FnMut() -> Probe,
) -> Start {
    let t0 = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Start::Exited(status);
        }
        match probe() {
            Probe::Up => return Start::Up,
            Probe::Stuck(why) => {
                // It may wait for ever and not hear its shutdown signal.
                let _ = child.kill();
                let _ = child.wait();
                return Start::Stuck(why);
            }
            Probe::Waiting => {}
        }
        if t0.elapsed() > timeout {
            return Start::TimedOut(timeout);
        }
        std::thread::sleep(POLL);
    }
}

/// Makes dbio's own socket directory `dir` (under [`PRIVATE_SOCKET_PARENT`],
/// made as needed): 0700, the server's user's — the server creates its
/// socket and lock file there; dbio, as root, connects.
pub(crate) fn make_socket_dir(dir: &Path, user: &ServerUser) -> Result<(), ServerError> {
    let made = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            Err(failed(&format!("cannot create {}", dir.display()), e))
        }
        _ => Ok(()),
    };
    made(fs::create_dir_all(PRIVATE_SOCKET_PARENT))?;
    made(fs::create_dir(dir))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
        .map_err(|e| failed(&format!("chmod {}", dir.display()), e))?;
    user.chown(dir)
}

/// Removes dbio's own socket directory `dir` if empty (a server removes its
/// socket when it stops), and [`PRIVATE_SOCKET_PARENT`] once no other
/// server has its socket there.
pub(crate) fn remove_socket_dir(dir: &Path) {
    let _ = fs::remove_dir(dir);
    let _ = fs::remove_dir(PRIVATE_SOCKET_PARENT);
}

/// What names a server in its lifecycle's messages and files, and how it
/// is stopped.
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    /// The server's name in messages: `PostgreSQL`, `MariaDB`.
    pub name: &'static str,
    /// The unprivileged user it runs as (`postgres`, `mysql`).
    pub user: &'static str,
    /// The memory cgroup's name prefix (`dbio-pg`) and the option that
    /// asks for it (`--pg-memory`).
    pub cgroup_prefix: &'static str,
    pub memory_option: &'static str,
    /// The signal that shuts it down cleanly (PostgreSQL's fast shutdown
    /// is SIGINT, MariaDB's SIGTERM), and how long that may take before
    /// SIGKILL.
    pub shutdown: Signal,
    pub shutdown_grace: Duration,
}

impl Kind {
    /// Stops server process `pid`: the shutdown signal, up to the grace
    /// while `alive` says it runs, then SIGKILL and up to 10 s. Returns
    /// whether it went (`alive` said no).
    pub fn stop(&self, pid: u32, mut alive: impl FnMut() -> bool) -> bool {
        let gone_within = |limit: Duration, alive: &mut dyn FnMut() -> bool| {
            let t0 = Instant::now();
            while alive() {
                if t0.elapsed() > limit {
                    return false;
                }
                std::thread::sleep(POLL);
            }
            true
        };
        if !alive() {
            return true;
        }
        signal(pid, self.shutdown);
        if gone_within(self.shutdown_grace, &mut alive) {
            return true;
        }
        signal(pid, Signal::KILL);
        gone_within(KILLED_GRACE, &mut alive)
    }

    /// Before a start: refuses a socket path over the limit, stops what a
    /// killed dbio left (`stop_orphan`, which returns its pid) and forgets
    /// that one's memory cgroup.
    pub(crate) fn before_start(
        &self,
        root: &Path,
        socket: &Path,
        stop_orphan: impl FnOnce() -> Option<u32>,
    ) -> Result<Option<u32>, ServerError> {
        check_socket(self.name, root, socket)?;
        let orphan = stop_orphan();
        forget_cgroup(root);
        Ok(orphan)
    }

    /// The memory cgroup the server is to run in, when `memory` is given
    /// (recorded under `root`; `dirs` are dropped from the page cache).
    pub(crate) fn memory_cgroup(
        &self,
        root: &Path,
        data: &Path,
        dirs: &[&Path],
        memory: Option<u64>,
    ) -> Result<Option<MemCgroup>, ServerError> {
        memory
            .map(|limit| {
                limit_memory(
                    self.cgroup_prefix,
                    self.memory_option,
                    root,
                    data,
                    dirs,
                    limit,
                )
            })
            .transpose()
    }

    /// After the server stopped, or a start failed: its cgroup removed.
    pub(crate) fn after_stop(&self, root: &Path) {
        forget_cgroup(root);
    }

    /// The refusal of a target the server's user cannot reach (`root` is
    /// the server's directory under the target).
    pub fn unreachable(&self, root: &Path) -> ServerError {
        ServerError::Usage(format!(
            "--target {}: the {} user {} runs as cannot reach it (a directory on the way is not searchable by others); chmod o+x the directories above it, or use another --target",
            root.parent().unwrap_or(root).display(),
            self.user,
            self.name
        ))
    }

    /// A start that failed: `why` (if any), then the last lines of the
    /// server log at `log` (of `fallback` when the log is empty). Read it
    /// before stopping what is left of the server, whose shutdown logs too.
    pub(crate) fn did_not_start(
        &self,
        why: Option<&str>,
        log: &Path,
        fallback: &str,
    ) -> ServerError {
        let text = fs::read_to_string(log).unwrap_or_default();
        let tail = match text.trim().is_empty() {
            true => last_lines(fallback, 3),
            false => last_lines(&text, 3),
        };
        let why = why.map(|w| format!("{w}: ")).unwrap_or_default();
        ServerError::Failed(format!(
            "{} did not start: {why}{tail} (server log {})",
            self.name,
            log.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: Kind = Kind {
        name: "MariaDB",
        user: "mysql",
        cgroup_prefix: "dbio-mysql",
        memory_option: "--mysql-memory",
        shutdown: Signal::TERM,
        shutdown_grace: Duration::from_millis(300),
    };

    fn running(c: &mut Child) -> bool {
        matches!(c.try_wait(), Ok(None))
    }

    #[test]
    fn a_stop_sends_the_shutdown_signal_then_sigkill_to_one_that_ignores_it() {
        use std::os::unix::process::ExitStatusExt;
        use std::process::Command;
        let mut polite = Command::new("sleep").arg("30").spawn().unwrap();
        assert!(K.stop(polite.id(), || running(&mut polite)));
        assert_eq!(polite.wait().unwrap().signal(), Some(libc::SIGTERM));
        // Ignores SIGTERM (as a server busy flushing may, for longer than
        // its grace): killed.
        let mut deaf = Command::new("sh")
            .args(["-c", "trap '' TERM; echo; while :; do sleep 0.05; done"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = [0u8; 1];
        std::io::Read::read_exact(deaf.stdout.as_mut().unwrap(), &mut ready).unwrap();
        let t0 = Instant::now();
        assert!(K.stop(deaf.id(), || running(&mut deaf)));
        assert!(t0.elapsed() >= K.shutdown_grace, "waited its grace first");
        assert_eq!(deaf.wait().unwrap().signal(), Some(libc::SIGKILL));
        // Already gone: nothing sent.
        assert!(K.stop(deaf.id(), || false));
    }

    #[test]
    fn waiting_for_a_start_ends_up_exited_stuck_or_timed_out() {
        use std::process::Command;
        let sleep = || Command::new("sleep").arg("30").spawn().unwrap();
        let mut c = sleep();
        let mut asked = 0;
        let up = wait_up(&mut c, Duration::from_secs(10), || {
            asked += 1;
            if asked < 3 { Probe::Waiting } else { Probe::Up }
        });
        assert!(matches!(up, Start::Up) && asked == 3, "{up:?}");
        let _ = c.kill();
        let _ = c.wait();
        let mut c = sleep();
        let t = wait_up(&mut c, Duration::from_millis(100), || Probe::Waiting);
        assert!(matches!(t, Start::TimedOut(_)) && running(&mut c), "{t:?}");
        let s = wait_up(&mut c, Duration::from_secs(10), || Probe::Stuck("full"));
        assert!(
            matches!(s, Start::Stuck("full")) && !running(&mut c),
            "{s:?}"
        );
        let mut c = Command::new("sh").args(["-c", "exit 7"]).spawn().unwrap();
        let e = wait_up(&mut c, Duration::from_secs(10), || Probe::Waiting);
        assert!(
            matches!(e, Start::Exited(st) if st.code() == Some(7)),
            "{e:?}"
        );
    }

    #[test]
    fn a_failed_start_shows_the_logs_last_lines_or_the_fallbacks() {
        let dir = std::env::temp_dir().join(format!("dbio-db-server-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("server.log");
        fs::write(&log, "one\n\ntwo\nthree\nfour\n").unwrap();
        let e = K.did_not_start(Some("it exited (exit status: 7)"), &log, "ignored");
        assert_eq!(
            e.to_string(),
            format!(
                "MariaDB did not start: it exited (exit status: 7): two | three | four (server log {})",
                log.display()
            )
        );
        fs::write(&log, "  \n").unwrap();
        let e = K.did_not_start(None, &log, "pg_ctl: could not start server");
        assert!(matches!(e, ServerError::Failed(_)));
        assert_eq!(
            e.to_string(),
            format!(
                "MariaDB did not start: pg_ctl: could not start server (server log {})",
                log.display()
            )
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unreachable_target_names_the_user_and_the_target() {
        let e = K.unreachable(Path::new("/root/t/dbio-mysql"));
        assert!(matches!(e, ServerError::Usage(_)));
        assert!(
            e.to_string()
                .starts_with("--target /root/t: the mysql user MariaDB runs as cannot reach it"),
            "{e}"
        );
    }
}
