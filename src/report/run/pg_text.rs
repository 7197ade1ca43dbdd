//! The PostgreSQL run's terminal report, AWR style: the server and its
//! settings, the load, Load Profile per second and per transaction, Top
//! Events from the sampled sessions and Background Events from the
//! server's own processes, client-side latency (select, update, commit),
//! WAL and checkpoints, where the window sat in the checkpoint cycle, I/O by backend type (pg_stat_io, 16+), physical
//! reads three ways, then the host and device sections every run has.

use std::fmt::Write;

use super::db_text;
use crate::document::Report;
use crate::document::pg::PgSummary;
use crate::units::{fmt_count, fmt_size};
use crate::workload::pg::PgConfig;
use crate::workload::pg::stats::Delta;

/// The settings the header shows.
const SHOWN: [&str; 7] = [
    "shared_buffers",
    "synchronous_commit",
    "full_page_writes",
    "wal_sync_method",
    "max_wal_size",
    "checkpoint_timeout",
    "wal_compression",
];

pub fn render(r: &Report, pg: &PgConfig, s: &PgSummary) -> String {
    let mut o = String::new();
    db_text::title(&mut o, r, "pg", &pg.slob, &s.version);
    db_text::server(
        &mut o,
        pg.server.url_redacted.as_deref(),
        "schema",
        &s.data_dir,
        format!(
            "cluster  {} (WAL {}){}; binaries {}",
            s.data_dir,
            s.wal_dir,
            db_text::reused(s.cluster_reused),
            s.bin_dir
        ),
    );
    db_text::setup(
        &mut o,
        &s.setup,
        "one per 8 KiB page",
        |k| SHOWN.contains(&k),
        "the server's processes",
    );
    let _ = writeln!(
        o,
        "vacuum   autovacuum {} on dbio's tables (--pg-autovacuum)",
        if pg.autovacuum { "on" } else { "off" }
    );
    db_text::status(&mut o, r);
    db_text::load_profile(&mut o, &s.load_profile, &s.ops, s.server.is_some());
    db_text::top_events(&mut o, &s.ops);
    db_text::background_events(&mut o, &s.ops);
    db_text::operations(&mut o, &s.ops);
    super::open_loop_text::section(&mut o, r);

    if let Some(d) = &s.server {
        server_counters(&mut o, d);
    }
    if let Some(c) = &s.checkpoint_cycle {
        super::cycle_text::line(&mut o, c, "WAL");
    }
    physical_reads(&mut o, r, s);
    db_text::telemetry(&mut o, r);
    o
}

/// The server's own counters over the window: WAL, checkpoints, the
/// database's commits and block reads, I/O by backend type.
fn server_counters(o: &mut String, d: &Delta) {
    let _ = writeln!(
        o,
        "\nWAL      {} records, {} full-page images, {}; {} writes ({:.1} ms), {} syncs ({:.1} ms, {:.3} ms each), {} waits for a full WAL buffer",
        d.wal_records,
        d.wal_fpi,
        fmt_size(d.wal_bytes as u64),
        d.wal_write,
        d.wal_write_time_ms,
        d.wal_sync,
        d.wal_sync_time_ms,
        per(d.wal_sync_time_ms, d.wal_sync),
        d.wal_buffers_full
    );
    let _ = writeln!(
        o,
        "ckpt     {} timed + {} requested; buffers written by checkpointer {}, bgwriter {}, backends {} (fsyncs {}); write {:.0} ms, sync {:.0} ms",
        d.checkpoints_timed,
        d.checkpoints_req,
        d.buffers_checkpoint,
        d.buffers_clean,
        d.buffers_backend,
        d.buffers_backend_fsync,
        d.checkpoint_write_time_ms,
        d.checkpoint_sync_time_ms
    );
    let _ = writeln!(
        o,
        "db       {} commits, {} rollbacks; blocks hit {}, read {} ({:.1} ms reading, {:.3} ms per read)",
        d.xact_commit,
        d.xact_rollback,
        d.blks_hit,
        d.blks_read,
        d.blk_read_time_ms,
        per(d.blk_read_time_ms, d.blks_read)
    );
    io_by_backend(o, d);
}

/// `total` over `n` of them, 0 when there are none.
fn per(total: f64, n: f64) -> f64 {
    if n > 0.0 { total / n } else { 0.0 }
}

/// Physical reads three ways: PostgreSQL's, pg_stat_io's, the device's,
/// and what the page cache absorbed.
fn physical_reads(o: &mut String, r: &Report, s: &PgSummary) {
    let p = &s.physical_reads;
    let _ = writeln!(o, "\nPhysical reads three ways");
    let _ = writeln!(
        o,
        "  PostgreSQL (blks_read)      {:>12} /s  {}",
        fmt_count(p.pg_per_s),
        fmt_size(p.pg_bytes as u64)
    );
    if let Some(io) = p.pg_stat_io_reads {
        let _ = writeln!(
            o,
            "  pg_stat_io (all backends)   {:>12} /s",
            fmt_count(io / r.measured_s.max(1e-9))
        );
    }
    db_text::device_reads(o, &p.device);
    if let Some(a) = p.absorbed_bytes {
        let _ = writeln!(
            o,
            "  absorbed by the page cache  {}{}",
            fmt_size(a as u64),
            p.absorbed_pct.map_or(String::new(), |v| format!(
                " ({v:.1}% of PostgreSQL's reads)"
            ))
        );
    }
}

/// I/O by backend type on data files (pg_stat_io, 16+).
fn io_by_backend(o: &mut String, d: &Delta) {
    if d.io.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nI/O by backend type (pg_stat_io, data files)      reads   read ms    writes  write ms  writebacks   extends    fsyncs"
    );
    for l in &d.io {
        let _ = writeln!(
            o,
            "  {:<44} {:>9} {:>9.1} {:>9} {:>9.1} {:>11} {:>9} {:>9}",
            l.backend_type,
            l.reads,
            l.read_time_ms,
            l.writes,
            l.write_time_ms,
            l.writebacks,
            l.extends,
            l.fsyncs
        );
    }
}
