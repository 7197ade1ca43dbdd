//! The sections every database server's terminal report has, in the same
//! layout (`pg_text`, `mysql_text` add their server's own): the title,
//! server, data, settings and memory lines, the run's status line, Load
//! Profile, Top Events from the sampled sessions (and Background Events
//! where the server shows its own processes), the operations with their
//! client-side latency, and the device's line of the physical reads.

use std::fmt::Write;

use crate::document::Report;
use crate::document::db::{DbOps, DeviceReads, ProfileLine, Setup};
use crate::units::{fmt_count, fmt_size};
use crate::workload::slob::SlobConfig;

/// Wait events shown.
const TOP_EVENTS: usize = 10;

/// The first line: dbio, the workload, the sessions and SLOB's shape and
/// mix, the server's version.
pub fn title(o: &mut String, r: &Report, workload: &str, m: &SlobConfig, version: &str) {
    let c = &r.config;
    let _ = writeln!(
        o,
        "dbio {}  {workload}  {} session{} ({} table{} x {} thread{})  UPDATE_PCT {}  WORK_UNIT {}  {version}",
        r.dbio_version,
        c.sessions,
        plural(c.sessions),
        m.schemas,
        plural(m.schemas),
        m.threads_per_schema,
        plural(m.threads_per_schema),
        m.update_pct,
        m.work_unit,
    );
}

/// The server line: an existing server (`url`, where dbio works in a
/// `space` of its own), or `own`, the line of the server dbio started.
pub fn server(o: &mut String, url: Option<&str>, space: &str, data_dir: &str, own: String) {
    match url {
        Some(url) => {
            let _ = writeln!(
                o,
                "server   {url}: an existing server, dbio's {space} dbio; data {data_dir}"
            );
        }
        None => {
            let _ = writeln!(o, "{own}");
        }
    }
}

/// `, reused` or `, new`.
pub fn reused(yes: bool) -> &'static str {
    if yes { ", reused" } else { ", new" }
}

/// The data, settings (those `shown`) and memory lines; `rows` says how
/// many rows a page holds, `limited` what the cgroup holds.
pub fn setup(o: &mut String, s: &Setup, rows: &str, shown: impl Fn(&str) -> bool, limited: &str) {
    let l = &s.load;
    let _ = writeln!(
        o,
        "data     {} table{} x {} rows ({rows}), {}: {}",
        l.tables,
        plural(l.tables),
        l.rows_per_table,
        fmt_size(l.bytes),
        if l.reused {
            "reused".to_string()
        } else {
            format!("loaded in {:.1} s at {:.1} MiB/s", l.seconds, l.mib_per_s)
        }
    );
    let settings: Vec<String> = s
        .settings
        .iter()
        .filter(|(k, _)| shown(k))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(o, "settings {}", settings.join("  "));
    super::cycle_text::departures(o, &s.departures);
    if let (Some(limit), Some(cg)) = (s.memory_limit_bytes, &s.cgroup) {
        let _ = writeln!(
            o,
            "memory   {limited} limited to {} (page cache included): cgroup {cg}",
            fmt_size(limit)
        );
    }
}

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

/// Background Events: the server's own processes sampled with the
/// sessions, when busy (only where the server shows them).
pub fn background_events(o: &mut String, ops: &DbOps) {
    if ops.background_waits.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nBackground Events (the server's own processes)          samples   %samples   avg active"
    );
    for w in ops.background_waits.iter().take(TOP_EVENTS) {
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

/// The device's line of the physical reads.
pub fn device_reads(o: &mut String, d: &DeviceReads) {
    match (&d.device, d.device_per_s, d.device_bytes) {
        (Some(dev), Some(per_s), Some(bytes)) => {
            let _ = writeln!(
                o,
                "  device {:<20} {:>12} /s  {}",
                dev,
                fmt_count(per_s),
                fmt_size(bytes as u64)
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "  device                      (none under the data directory: tmpfs?)"
            );
        }
    }
}

/// The host and device sections every run has.
pub fn telemetry(o: &mut String, r: &Report) {
    if let Some(w) = &r.telemetry_window {
        super::text::telemetry(o, r, w);
    }
}

pub fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
#[path = "db_text_tests.rs"]
mod tests;
