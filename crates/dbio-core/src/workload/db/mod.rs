//! What every workload on a real database server shares, whatever the
//! server: its errors, the unprivileged user it runs as (`user`), a memory
//! cgroup bounding its page cache (`cgroup`), finding and ending its
//! processes (`procs`), naming the OS error behind a failure (`cause`), a SLOB session's loop over any client (`session`),
//! the sampler thread that reads the server's counters at the window's
//! edges and samples its sessions' waits in between (`sampler`), where the
//! window sits in the checkpoint cycle and `--window` (`cycle`), the
//! settings dbio changes from a stock server (`departures`), and the
//! server-independent part of a server's start and stop (`server`). `pg/` and
//! `mysql/` hold only what differs: their binaries, settings, data loading,
//! statements and counters.

pub mod cause;
pub mod cgroup;
pub mod cycle;
pub mod data;
pub mod departures;
pub mod procs;
pub mod sampler;
pub mod server;
pub mod session;
pub(crate) mod user;

use std::path::Path;

use crate::measure::stats::OpStats;

/// What can go wrong with a database server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Bad input or a machine that cannot run it (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The server failed (exit 1).
    #[error("{0}")]
    Failed(String),
    /// Ctrl-C before the sessions started (exit 130).
    #[error("{0}")]
    Interrupted(String),
}

/// A statement the server refused or failed, in the server's own words
/// (the loader's, a session's and a sampler's statements).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

impl From<String> for Refused {
    fn from(s: String) -> Refused {
        Refused(s)
    }
}

/// `ServerError::Failed` saying what failed and why.
pub fn failed(what: &str, e: impl std::fmt::Display) -> ServerError {
    ServerError::Failed(format!("{what}: {e}"))
}

/// The last `n` non-empty lines of `text`, joined into one line.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

/// Where a server's unix socket goes when the target's path cannot hold
/// it (over [`SOCKET_PATH_MAX`], or text the server or its client cannot
/// take): a short directory of dbio's own per instance, named by
/// `procs::cgroup_name`.
pub(crate) const PRIVATE_SOCKET_PARENT: &str = "/run/dbio";

/// Longest path of a unix socket (sun_path is 108 bytes with its NUL).
pub(crate) const SOCKET_PATH_MAX: usize = 107;

/// Refuses a server socket whose path is over [`SOCKET_PATH_MAX`] (a
/// `--target` too deep); `root` is the server's directory under the target.
pub(crate) fn check_socket(server: &str, root: &Path, socket: &Path) -> Result<(), ServerError> {
    if socket.as_os_str().len() <= SOCKET_PATH_MAX {
        return Ok(());
    }
    Err(ServerError::Usage(format!(
        "--target {} is too deep for {server}'s unix socket ({} is over {SOCKET_PATH_MAX} bytes); give a shorter --target path",
        root.parent().unwrap_or(root).display(),
        socket.display()
    )))
}

/// Bytes allocated to the files under `dir`, the directories' own blocks
/// too, symbolic links not followed (none when it is missing): the room an
/// instance already there gives back when it is reused or replaced.
pub fn allocated(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(md) = std::fs::symlink_metadata(dir) else {
        return 0;
    };
    let own = md.blocks() * 512;
    if !md.is_dir() {
        return own;
    }
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| allocated(&e.path()))
        .sum::<u64>()
        + own
}

/// What an instance was made for (`marker`, JSON), if it is there and readable.
pub(crate) fn read_marker<T: serde::de::DeserializeOwned>(marker: &Path) -> Option<T> {
    std::fs::read(marker)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
}

/// Records what an instance was made for, once it is complete.
pub(crate) fn write_marker<T: serde::Serialize>(
    marker: &Path,
    shape: &T,
) -> Result<(), ServerError> {
    let name = marker.file_name().unwrap_or_default().to_string_lossy();
    let json = serde_json::to_vec(shape).map_err(|e| failed(&format!("write {name}"), e))?;
    std::fs::write(marker, json).map_err(|e| failed(&format!("write {name}"), e))
}

/// A `--pg-set` / `--mysql-set` that is not `NAME=VALUE`.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("must be NAME=VALUE (e.g. {example})")]
    NotNameValue { example: String },
    #[error("{name:?} is not a setting name: letters, digits, _ and . only (e.g. {example})")]
    BadName { name: String, example: String },
    #[error("the value must be one line")]
    MultiLine,
}

/// `NAME=VALUE` with a setting-like name (`--pg-set`, `--mysql-set`);
/// `example` is shown in the refusals.
pub fn parse_setting(s: &str, example: &str) -> Result<(String, String), SettingError> {
    let example = || example.to_string();
    let Some((k, v)) = s.split_once('=') else {
        return Err(SettingError::NotNameValue { example: example() });
    };
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(SettingError::BadName {
            name: k.to_string(),
            example: example(),
        });
    }
    if v.contains('\n') {
        return Err(SettingError::MultiLine);
    }
    Ok((k.to_ascii_lowercase(), v.trim().to_string()))
}

/// A URL with its password replaced, for reports.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((a, h)) => (Some(a), h),
        None => (None, rest),
    };
    let mut out = format!("{scheme}://");
    if let Some(a) = auth {
        match a.split_once(':') {
            Some((user, _)) => out.push_str(&format!("{user}:***@")),
            None => out.push_str(&format!("{a}@")),
        }
    }
    out.push_str(host);
    // password=... in the query string
    if let Some((base, query)) = out.clone().split_once('?') {
        let q: Vec<String> = query
            .split('&')
            .map(|kv| {
                if kv.starts_with("password=") {
                    "password=***".to_string()
                } else {
                    kv.to_string()
                }
            })
            .collect();
        out = format!("{base}?{}", q.join("&"));
    }
    out
}

/// What a thread of a database run counted: a session's operations, or the
/// sampler's waits and the server's counters (`S`) at the window's edges.
#[derive(Default)]
pub struct DbPart<S> {
    /// Client-side latency of each kind (HDR histograms), in the window.
    pub select: OpStats,
    pub update: OpStats,
    pub commit: OpStats,
    pub scan: OpStats,
    /// Rows the operations in the window asked for.
    pub rows: u64,
    /// The sampler's: waits of active sessions by name (`CPU` when not
    /// waiting) and of the server's busy background processes, and the
    /// number of samples taken.
    pub waits: sampler::Waits,
    pub samples: u64,
    /// The sampler's: the server's counters at the window's two edges, and
    /// the seconds between them.
    pub edges: Option<(S, S, f64)>,
    /// The sampler's error, if it could not read the server.
    pub error: Option<String>,
}

pub use crate::config::db::ServerConfig;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_or_say_what_is_wrong() {
        let ex = "wal_compression=on";
        assert_eq!(
            parse_setting("Wal_Compression = on", ex).unwrap(),
            ("wal_compression".into(), "on".into())
        );
        assert!(parse_setting("innodb-doublewrite=0", ex).is_err());
        assert!(
            parse_setting("nothing", ex)
                .unwrap_err()
                .to_string()
                .contains("NAME=VALUE")
        );
        assert!(
            parse_setting("a b=1", ex)
                .unwrap_err()
                .to_string()
                .contains("not a setting name")
        );
    }

    #[test]
    fn allocated_counts_the_files_under_a_directory() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("sub/f"), vec![1u8; 64 << 10]).unwrap();
        assert!(allocated(d.path()) >= 64 << 10);
        assert_eq!(allocated(&d.path().join("missing")), 0);
    }

    #[test]
    fn last_lines_make_one_line() {
        assert_eq!(last_lines("a\n\nb\nc\nd\n", 3), "b | c | d");
        assert_eq!(last_lines("only", 3), "only");
    }
}
