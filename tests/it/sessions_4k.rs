//! SLOB's limit of 4096 sessions in both workloads: every session runs (an
//! exact quota per session adds up), the start skew is reported, and each
//! session costs at most 256 KiB of memory beyond the buffer cache; 4097 is
//! refused in one line.

use std::path::Path;

use crate::common::run::{Run, dbio, num};
use crate::common::store::temp_store;
use serde_json::Value;

const SESSIONS: u32 = 4096;
/// Memory per session beyond the cache and the data (issue 14).
const BUDGET: f64 = 256.0 * 1024.0;

/// Peak memory per session beyond `cache` bytes, and the start skew.
fn per_session(r: &Value, cache: f64) -> (f64, f64) {
    assert_eq!(num(r, "config.sessions") as u32, SESSIONS);
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    let skew = num(r, "start_skew_us");
    assert!(skew.is_finite() && skew >= 0.0, "start_skew_us {skew}");
    let peak = num(r, "peak_rss_bytes");
    assert!(peak > cache, "peak RSS {peak} is below the cache {cache}");
    ((peak - cache) / f64::from(SESSIONS), skew)
}

fn raw_runs_4096_sessions() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Two requests per session, exactly: a session that never ran leaves
    // its share undone.
    let ops = 2 * SESSIONS;
    let r = Run::raw(&dir.path().join("data"))
        .args(&[
            "--engine",
            "null",
            "--size",
            "4M",
            "--ops",
            &ops.to_string(),
        ])
        .sessions(SESSIONS)
        .json();
    assert_eq!(num(&r, "total.requests") as u32, ops);
    let (mem, skew) = per_session(&r, 0.0);
    eprintln!(
        "raw: {:.0} KiB per session, start skew {skew:.0} us",
        mem / 1024.0
    );
    assert!(mem <= BUDGET, "{:.0} KiB per session", mem / 1024.0);
}

fn slob_runs_4096_sessions() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // 16 schemas of 256 sessions; two operations per session.
    let cache = 64u64 << 20;
    let r = Run::slob(&dir.path().join("data"))
        .args(&[
            "--schemas",
            "16",
            "--threads-per-schema",
            "256",
            "--scale",
            "256",
            "--work-unit",
            "3",
            "--work-loop",
            "2",
            "--cache",
            "64M",
        ])
        .json();
    for counters in ["slob.counters", "slob.run_totals"] {
        assert_eq!(
            num(&r, &format!("{counters}.executes")) as u32,
            2 * SESSIONS,
            "{counters}"
        );
    }
    let (mem, skew) = per_session(&r, cache as f64);
    eprintln!(
        "slob: {:.0} KiB per session beyond the cache, start skew {skew:.0} us",
        mem / 1024.0
    );
    assert!(mem <= BUDGET, "{:.0} KiB per session", mem / 1024.0);
}

fn refused(args: &[&str], needles: &[&str]) {
    let out = dbio().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
    assert!(out.stdout.is_empty());
}

fn more_than_4096_sessions_are_refused() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let t = t.to_str().unwrap();
    refused(
        &["run", "--target", t, "--sessions", "4097"],
        &["--sessions", "4097", "1..=4096"],
    );
    let slob = ["run", "--workload", "slob", "--target", t];
    refused(
        &[&slob[..], &["--sessions", "4097"]].concat(),
        &["--sessions", "4097", "1..=4096"],
    );
    refused(
        &[&slob[..], &["--schemas", "4097"]].concat(),
        &["--schemas", "4097", "1..=4096"],
    );
    refused(
        &[
            &slob[..],
            &["--schemas", "64", "--threads-per-schema", "65"],
        ]
        .concat(),
        &["--schemas 64", "--threads-per-schema 65", "4160", "4096"],
    );
    assert!(!Path::new(t).exists(), "a refused run created its target");
}

crate::tests! {
    raw_runs_4096_sessions,
    slob_runs_4096_sessions,
    more_than_4096_sessions_are_refused,
}
