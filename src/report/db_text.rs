//! The sections every database server's terminal report has, in the same
//! layout (`pg_text`, `mysql_text` add their server's own): the run's
//! status line, Load Profile, Top Events from the sampled sessions, and the
//! operations with their client-side latency.

use std::fmt::Write;

use super::Report;
use super::db::{DbOps, ProfileLine};
use crate::units::fmt_count;

/// Wait events shown.
const TOP_EVENTS: usize = 10;

/// `storage` and `run` lines: the storage chain, how the run ended.
pub fn status(o: &mut String, r: &Report) {
    if let Some(chain) = &r.storage {
        let _ = writeln!(o, "storage  {}", chain.describe());
    }
    let status = match r.status {
        crate::harness::Status::Completed => "completed".to_string(),
        crate::harness::Status::Interrupted => "INTERRUPTED (Ctrl-C): results so far".into(),
        crate::harness::Status::Failed => {
            format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error"))
        }
    };
    let _ = writeln!(
        o,
        "run      {status}; {:.1} s measured after {:.1} s ramp; start skew {:.0} µs",
        r.measured_s, r.ramp_s, r.start_skew_us
    );
}

/// Load Profile per second and per transaction; why it is empty when the
/// server's counters could not be read.
pub fn load_profile(o: &mut String, lines: &[ProfileLine], ops: &DbOps, have_server: bool) {
    let _ = writeln!(
        o,
        "\nLoad Profile                                      Per Second   Per Transaction"
    );
    for p in lines {
        let _ = writeln!(
            o,
            "  {:<46} {:>12} {:>16}",
            p.name,
            fmt_count(p.per_second),
            p.per_transaction
                .map_or(String::new(), |v| format!("{v:.2}"))
        );
    }
    if !have_server {
        let _ = writeln!(
            o,
            "  (the server's counters could not be read: {})",
            ops.sampler_error.as_deref().unwrap_or("unknown")
        );
    }
}

/// Top Events from the sampled active sessions.
pub fn top_events(o: &mut String, ops: &DbOps) {
    let _ = writeln!(
        o,
        "\nTop Events (active sessions sampled {} times at {} Hz)     samples   %samples   avg active",
        ops.samples, ops.sample_hz
    );
    for w in ops.waits.iter().take(TOP_EVENTS) {
        let _ = writeln!(
            o,
            "  {:<50} {:>10} {:>9.1}% {:>11.2}",
            w.event, w.samples, w.pct, w.aas
        );
    }
}

/// The operations dbio ran, timed from the client.
pub fn operations(o: &mut String, ops: &DbOps) {
    let _ = writeln!(
        o,
        "\nOperations (client side)    count        /s     avg ms     p50 ms     p99 ms   p99.9 ms"
    );
    for (name, op) in [
        ("select", &ops.select),
        ("update", &ops.update),
        ("commit", &ops.commit),
        ("scan", &ops.scan),
    ] {
        if let Some(op) = op {
            let l = &op.latency;
            let _ = writeln!(
                o,
                "  {:<24} {:>8} {:>9} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
                name,
                op.requests,
                fmt_count(op.iops),
                l.mean_us / 1e3,
                l.p50_us / 1e3,
                l.p99_us / 1e3,
                l.p99_9_us / 1e3
            );
        }
    }
    let _ = writeln!(
        o,
        "  rows asked for (work units) {}; dbio's CPU {:.1} µs per statement",
        ops.rows, ops.client_cpu_us_per_execute
    );
}

pub fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}
