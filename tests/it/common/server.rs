//! What the tests of real database servers (`pg`, `mysql`) share: a target
//! directory the server's user can reach, cleaned when dropped
//! ([`ServerDir`]), with the runs the fault tests make (Ctrl-C, kill -9 of
//! dbio, the server killed mid-run); the processes working under a
//! directory (a server's processes work in its data directory), a
//! successful run's JSON, and dropping files from the page cache so the
//! next run reads from the device.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::store::store_path;

/// dbio with the test's store.
pub fn dbio() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store_path());
    c
}

/// A target directory for `--workload NAME` that the server's unprivileged
/// user can reach; the server dbio made there is cleaned (stopped, files
/// removed) when dropped, pass or fail.
pub struct ServerDir {
    pub base: PathBuf,
    pub target: PathBuf,
    workload: &'static str,
    /// The server's socket, relative to the target: it exists while the
    /// server runs.
    socket: &'static str,
    /// When the fixture was made: what a server of this test left behind
    /// was made after it (other worktrees' servers may run beside it).
    pub since: std::time::SystemTime,
    _tmp: Option<tempfile::TempDir>,
}

impl ServerDir {
    pub fn on_tmpfs(workload: &'static str, socket: &'static str) -> ServerDir {
        let tmp = tempfile::Builder::new()
            .prefix(&format!("dbio-{workload}-"))
            .tempdir_in("/dev/shm")
            .unwrap();
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
        ServerDir {
            base: tmp.path().to_path_buf(),
            target: tmp.path().join("t"),
            workload,
            socket,
            since: std::time::SystemTime::now(),
            _tmp: Some(tmp),
        }
    }

    pub fn under(mountpoint: &Path, workload: &'static str, socket: &'static str) -> ServerDir {
        fs::set_permissions(mountpoint, fs::Permissions::from_mode(0o755)).unwrap();
        ServerDir {
            base: mountpoint.to_path_buf(),
            target: mountpoint.join("t"),
            workload,
            socket,
            since: std::time::SystemTime::now(),
            _tmp: None,
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.target.join(self.socket)
    }

    /// `dbio run --workload NAME --json --target DIR ARGS`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = dbio();
        c.args(["run", "--workload", self.workload, "--json", "--target"])
            .arg(&self.target)
            .args(args);
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    pub fn clean(&self) -> Output {
        dbio()
            .args(["clean", "--target"])
            .arg(&self.target)
            .output()
            .unwrap()
    }

    /// Waits until the server is up and dbio has measured for `secs`.
    pub fn wait_until_running(&self, child: &mut Child, secs: u64) {
        let t0 = Instant::now();
        while !self.socket().exists() {
            assert!(child.try_wait().unwrap().is_none(), "dbio ended early");
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "server never started"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_secs(secs));
    }

    /// A run of `args` stopped by Ctrl-C after 3 s measured: it ends
    /// quickly with exit 130 and its report says so.
    pub fn interrupted(&self, args: &[&str]) -> Value {
        let mut child = self.spawn(args);
        self.wait_until_running(&mut child, 3);
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let t0 = Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "slow: {:?}",
            t0.elapsed()
        );
        assert_eq!(
            out.status.code(),
            Some(130),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "interrupted");
        r
    }

    /// A run of `args` whose server `kill` kills after 2 s measured: the
    /// run fails (exit 1) naming a session. Its report.
    pub fn server_killed(&self, args: &[&str], kill: impl FnOnce(&ServerDir) -> i32) -> Value {
        let mut child = self.spawn(args);
        self.wait_until_running(&mut child, 2);
        let pid = kill(self);
        // SAFETY: killing the test's own server.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "failed");
        assert!(
            r["error"].as_str().unwrap().contains("session"),
            "{}",
            r["error"]
        );
        r
    }

    /// kill -9 of dbio under a run of `args` leaves its server running;
    /// the next run (`next`) finds and stops that orphan before starting
    /// its own; after another kill -9, `dbio clean` stops it and removes
    /// `made` (the server's directory under the target). `orphan` checks
    /// what the killed dbio left, `nothing_left` what every end leaves.
    pub fn kill_9(
        &self,
        args: &[&str],
        next: &[&str],
        made: &str,
        orphan: impl Fn(&ServerDir),
        nothing_left: impl Fn(&ServerDir),
    ) {
        let mut child = self.spawn(args);
        self.wait_until_running(&mut child, 1);
        child.kill().unwrap(); // SIGKILL: no guard runs
        child.wait().unwrap();
        orphan(self);
        assert!(
            !processes_under(&self.base).is_empty(),
            "the orphan is running"
        );
        let out = self.run(next);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        json(&out);
        assert!(err.contains("left running by an earlier dbio"), "{err}");
        nothing_left(self);
        let mut child = self.spawn(args);
        self.wait_until_running(&mut child, 1);
        child.kill().unwrap();
        child.wait().unwrap();
        let out = self.clean();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        nothing_left(self);
        assert!(!self.target.join(made).exists());
    }
}

impl Drop for ServerDir {
    fn drop(&mut self) {
        let _ = self.clean();
        // Backstop: a server clean could not stop.
        for pid in processes_under(&self.base) {
            // SAFETY: killing a leftover server process of this test.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = fs::remove_dir_all(&self.target);
    }
}

/// Processes whose working directory is under `dir`.
pub fn processes_under(dir: &Path) -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cwd = fs::read_link(e.path().join("cwd")).ok()?;
            cwd.starts_with(dir).then_some(pid)
        })
        .collect()
}

/// Waits (up to 5 s) for the processes under `dir` to go, then says which are left.
pub fn processes_left(dir: &Path) -> Vec<i32> {
    let t0 = std::time::Instant::now();
    while !processes_under(dir).is_empty() && t0.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    processes_under(dir)
}

/// The JSON report of a run that must have succeeded.
pub fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Drops `dir`'s files from the page cache (written back first).
pub fn evict(dir: &Path) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            evict(&p);
        } else if let Ok(file) = fs::File::open(&p) {
            let _ = file.sync_all();
            use std::os::fd::AsRawFd;
            // SAFETY: advice on an open descriptor.
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        }
    }
}

/// stderr without the line saying where the target landed.
pub fn stderr_lines(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("where "))
        .collect::<Vec<_>>()
        .join("\n")
}
