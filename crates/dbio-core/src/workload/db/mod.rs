//! What every workload on a real database server shares, whatever the
//! server: its errors, the unprivileged user it runs as (`user`), a memory
//! cgroup bounding its page cache (`cgroup`), finding and ending its
//! processes (`procs`), a SLOB session's loop over any client (`session`),
//! and the sampler thread that reads the server's counters at the window's
//! edges and samples its sessions' waits in between (`sampler`). `pg/` and
//! `mysql/` hold only what differs: their binaries, settings, data loading,
//! statements and counters.

pub mod cgroup;
pub mod data;
pub mod procs;
pub mod sampler;
pub mod session;
pub mod user;

use std::collections::BTreeMap;

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

/// `NAME=VALUE` with a setting-like name (`--pg-set`, `--mysql-set`);
/// `example` is shown in the refusals.
pub fn parse_setting(s: &str, example: &str) -> Result<(String, String), String> {
    let Some((k, v)) = s.split_once('=') else {
        return Err(format!("must be NAME=VALUE (e.g. {example})"));
    };
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        return Err(format!(
            "{k:?} is not a setting name: letters, digits, _ and . only (e.g. {example})"
        ));
    }
    if v.contains('\n') {
        return Err("the value must be one line".into());
    }
    Ok((k.to_ascii_lowercase(), v.trim().to_string()))
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
    /// waiting), and the number of samples taken.
    pub waits: BTreeMap<String, u64>,
    pub samples: u64,
    /// The sampler's: the server's counters at the window's two edges, and
    /// the seconds between them.
    pub edges: Option<(S, S, f64)>,
    /// The sampler's error, if it could not read the server.
    pub error: Option<String>,
}

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
                .contains("NAME=VALUE")
        );
        assert!(
            parse_setting("a b=1", ex)
                .unwrap_err()
                .contains("not a setting name")
        );
    }

    #[test]
    fn last_lines_make_one_line() {
        assert_eq!(last_lines("a\n\nb\nc\nd\n", 3), "b | c | d");
        assert_eq!(last_lines("only", 3), "only");
    }
}
