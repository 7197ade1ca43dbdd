//! The part of a throwaway server's life that is the same whatever the
//! server (`pg/server.rs`, `mysql/server.rs` keep only what differs: their
//! install, settings, launch and stop): the checks before a start (the
//! socket path, a server a killed dbio left, that one's memory cgroup), the
//! memory cgroup the server runs in (`--pg-memory`, `--mysql-memory`),
//! forgetting it when a start fails or the server stops, and the refusals
//! and failures in the server's words (a failed start with its log's last
//! lines).

use std::fs;
use std::path::Path;

use super::cgroup::MemCgroup;
use super::procs::{forget_cgroup, limit_memory};
use super::{ServerError, check_socket, last_lines};

/// What names a server in its lifecycle's messages and files.
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
}

impl Kind {
    /// Before a start: refuses a socket path over the limit, stops what a
    /// killed dbio left (`stop_orphan`, which returns its pid) and forgets
    /// that one's memory cgroup.
    pub fn before_start(
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
    pub fn memory_cgroup(
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
    pub fn after_stop(&self, root: &Path) {
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
    pub fn did_not_start(&self, why: Option<&str>, log: &Path, fallback: &str) -> ServerError {
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
    };

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
