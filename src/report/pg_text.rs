//! The PostgreSQL run's terminal report, AWR style: the server and its
//! settings, the load, Load Profile per second and per transaction, Top
//! Events from the sampled sessions, client-side latency (select, update,
//! commit), WAL and checkpoints, physical reads three ways, then the host
//! and device sections every run has.

use std::fmt::Write;

use super::Report;
use super::db_text::{self, plural};
use super::pg::PgSummary;
use crate::units::{fmt_count, fmt_size};

pub fn render(r: &Report, s: &PgSummary) -> String {
    let mut o = String::new();
    let c = &r.config;
    let m = &c.pg.as_ref().expect("a pg run has its settings").slob;
    let _ = writeln!(
        o,
        "dbio {}  pg  {} session{} ({} table{} x {} thread{})  UPDATE_PCT {}  WORK_UNIT {}  {}",
        r.dbio_version,
        c.sessions,
        plural(c.sessions),
        m.schemas,
        plural(m.schemas),
        m.threads_per_schema,
        plural(m.threads_per_schema),
        m.update_pct,
        m.work_unit,
        s.version
    );
    match c.pg.as_ref().and_then(|p| p.url_redacted.as_deref()) {
        Some(url) => {
            let _ = writeln!(
                o,
                "server   {url}: an existing server, dbio's schema dbio; data {}",
                s.data_dir
            );
        }
        None => {
            let _ = writeln!(
                o,
                "cluster  {} (WAL {}){}; binaries {}",
                s.data_dir,
                s.wal_dir,
                if s.cluster_reused {
                    ", reused"
                } else {
                    ", new"
                },
                s.bin_dir
            );
        }
    }
    let l = &s.load;
    let _ = writeln!(
        o,
        "data     {} table{} x {} rows (one per 8 KiB page), {}: {}",
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
        .filter(|(k, _)| {
            [
                "shared_buffers",
                "synchronous_commit",
                "full_page_writes",
                "wal_sync_method",
                "max_wal_size",
                "checkpoint_timeout",
                "wal_compression",
            ]
            .contains(&k.as_str())
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(o, "settings {}", settings.join("  "));
    if let (Some(limit), Some(cg)) = (s.memory_limit_bytes, &s.cgroup) {
        let _ = writeln!(
            o,
            "memory   the server's processes limited to {} (page cache included): cgroup {cg}",
            fmt_size(limit)
        );
    }
    db_text::status(&mut o, r);
    db_text::load_profile(&mut o, &s.load_profile, &s.ops, s.server.is_some());
    db_text::top_events(&mut o, &s.ops);
    db_text::operations(&mut o, &s.ops);

    if let Some(d) = &s.server {
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
            if d.wal_sync > 0.0 {
                d.wal_sync_time_ms / d.wal_sync
            } else {
                0.0
            },
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
            if d.blks_read > 0.0 {
                d.blk_read_time_ms / d.blks_read
            } else {
                0.0
            }
        );
    }

    let p = &s.physical_reads;
    let _ = writeln!(o, "\nPhysical reads three ways");
    let _ = writeln!(
        o,
        "  PostgreSQL (blks_read)      {:>12} /s  {}",
        fmt_count(p.pg_per_s),
        fmt_size(p.pg_bytes as u64)
    );
    match (&p.device, p.device_per_s, p.device_bytes) {
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
    if let Some(w) = &r.telemetry_window {
        super::text::telemetry(&mut o, r, w);
    }
    o
}
