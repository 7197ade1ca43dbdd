//! The SLOB model's terminal report, AWR style: the settings, Load Profile
//! per second and per transaction, Top Timed Events (with DB CPU and CPU
//! wait), background events, IO Profile by Function, redo, the Wait Event
//! Histogram, then the plain physical I/O, host and device sections. Where
//! the window sat in the model's checkpoint cycle is the `cycle` line under
//! the settings (`cycle_text`).

use std::fmt::Write;

use crate::document::Report;
use crate::document::awr::{BUCKETS_US, EventSummary, SlobSummary, bucket_bounds};
use crate::document::cycle::CheckpointCycle;
use crate::units::{fmt_count, fmt_size};
use crate::workload::slob::SlobConfig;
use crate::workload::slob::events::Side;

/// Who wrote the buffers written, as pg_stat_bgwriter splits them: for a
/// checkpoint (`buffers_checkpoint`), DB writers cleaning
/// (`buffers_clean`), sessions freeing one (`buffers_backend`).
fn buffer_writes(o: &mut String, k: &crate::workload::slob::instance::Counters) {
    if k.checkpoint_writes + k.backend_writes == 0 {
        return;
    }
    let all = k.physical_writes.max(1) as f64;
    let clean = k
        .physical_writes
        .saturating_sub(k.checkpoint_writes + k.backend_writes);
    let _ = writeln!(
        o,
        "buffer writes: {} — checkpoint {} ({:.1}%), DB writers cleaning {} ({:.1}%), sessions (backend) {} ({:.1}%)",
        k.physical_writes,
        k.checkpoint_writes,
        100.0 * k.checkpoint_writes as f64 / all,
        clean,
        100.0 * clean as f64 / all,
        k.backend_writes,
        100.0 * k.backend_writes as f64 / all,
    );
}

/// The terminal report of a SLOB model run.
pub fn render(r: &Report, m: &SlobConfig, s: &SlobSummary) -> String {
    let mut o = String::new();
    settings(&mut o, r, m, s);
    if let Some(c) = &s.checkpoint_cycle {
        super::cycle_text::line(&mut o, c, CheckpointCycle::model_log(m.flavor));
    }
    elapsed(&mut o, r, s);
    load_profile(&mut o, s);
    timed_events(&mut o, s);
    io_profile(&mut o, s);
    wait_histogram(&mut o, s);
    let _ = writeln!(
        o,
        "\nPhysical I/O (read = sessions' reads, write = DB writer and log writer writes{})",
        if s.counters.backend_writes > 0 {
            ", and sessions' own"
        } else {
            ""
        }
    );
    super::text::io_sections(&mut o, r);
    o
}

/// The run's settings: sessions and mix, data, redo, cache, storage.
fn settings(o: &mut String, r: &Report, m: &SlobConfig, s: &SlobSummary) {
    let c = &r.config;
    let _ = writeln!(
        o,
        "dbio {}  slob  {} session{} ({} schema{} x {} thread{})  UPDATE_PCT {}  SCAN_PCT {}  WORK_UNIT {}  {}  {} (DBWR {})  {}",
        r.dbio_version,
        c.sessions,
        plural(c.sessions),
        m.schemas,
        plural(m.schemas),
        m.threads_per_schema,
        plural(m.threads_per_schema),
        m.update_pct,
        m.scan_pct,
        m.work_unit,
        if m.flavor.is_oracle() {
            format!("REDO_STRESS {:?}", m.redo_stress)
        } else {
            m.flavor.describe().to_string()
        },
        c.engine.name(),
        m.dbwr_engine.name(),
        c.io_mode.name(),
    );
    let _ = writeln!(
        o,
        "data     {}: {} datafile{}, SCALE {} blocks per schema ({}), blocks of {}",
        r.target.path.display(),
        r.target.files.len(),
        plural(r.target.files.len() as u32),
        m.scale_blocks,
        fmt_size(m.scale_blocks * u64::from(m.block_size)),
        fmt_size(u64::from(m.block_size)),
    );
    let _ = writeln!(
        o,
        "redo     {}: {} x {}, redo block {}, {}; log buffer {}",
        m.redo_dir
            .join(crate::workload::slob::run::REDO_SUBDIR)
            .display(),
        m.redo_files,
        fmt_size(m.redo_file_size),
        m.redo_block,
        match m.redo_sync {
            crate::workload::slob::RedoSync::Dsync => "O_DSYNC",
            crate::workload::slob::RedoSync::Fdatasync => "fdatasync",
        },
        fmt_size(m.log_buffer)
    );
    let _ = writeln!(
        o,
        "cache    {} ({} buffers), hit {:.1}%; {} DB writer{} (batch {})",
        fmt_size(m.cache_bytes),
        m.cache_buffers(),
        s.cache_hit_pct,
        m.db_writers,
        plural(m.db_writers),
        m.dbwr_batch
    );
    if let Some(limit) = m.memory {
        let _ = writeln!(
            o,
            "memory   limited to {} (buffer cache and page cache: a memory cgroup); datafiles through the page cache, fsynced at checkpoints",
            fmt_size(limit)
        );
    }
    if let Some(chain) = &r.storage {
        let _ = writeln!(o, "storage  {}", chain.describe());
    }
}

/// How the run ended, its length, DB time and seed.
fn elapsed(o: &mut String, r: &Report, s: &SlobSummary) {
    let status = match r.status {
        crate::harness::Status::Completed => "completed".to_string(),
        crate::harness::Status::Interrupted => super::text::interrupted_line(r),
        crate::harness::Status::Failed => {
            format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error"))
        }
    };
    let _ = writeln!(
        o,
        "elapsed  {:.1} s (after {:.1} s ramp)   DB time {:.1} s   seed {}   {status}\n",
        s.elapsed_s, r.ramp_s, s.db_time_s, r.config.seed
    );
}

/// Load Profile: per second and per transaction.
fn load_profile(o: &mut String, s: &SlobSummary) {
    let _ = writeln!(
        o,
        "Load Profile                 Per Second   Per Transaction"
    );
    let _ = writeln!(
        o,
        "~~~~~~~~~~~~~~~~~~~~~~~  ---------------  ---------------"
    );
    for l in &s.load_profile {
        let per_tx = l
            .per_transaction
            .map(|v| format!("{v:>15.1}"))
            .unwrap_or_default();
        let _ = writeln!(o, "{:<23}  {:>15.1}  {per_tx}", l.name, l.per_second);
    }
    let _ = writeln!(
        o,
        "(MB: AWR's label for MiB, 2^20 bytes, as everywhere in dbio)"
    );
}

/// Top Timed Events (foreground, with DB CPU and CPU wait), then the
/// background events.
fn timed_events(o: &mut String, s: &SlobSummary) {
    let _ = writeln!(o, "\nTop Timed Events (foreground)");
    event_header(o, "%DB time");
    let mut fg: Vec<&EventSummary> = s
        .events
        .iter()
        .filter(|e| e.side == Side::Foreground)
        .collect();
    fg.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
    let cpu_pct = if s.db_time_s > 0.0 {
        100.0 * s.db_cpu_s / s.db_time_s
    } else {
        0.0
    };
    let _ = writeln!(
        o,
        "{:<42}{:>12}{:>12.1}{:>10}{:>9.1}",
        "DB CPU", "", s.db_cpu_s, "", cpu_pct
    );
    if s.db_time_s > 0.0 && s.cpu_wait_s > 0.01 * s.db_time_s {
        let _ = writeln!(
            o,
            "{:<42}{:>12}{:>12.1}{:>10}{:>9.1}  (run queue: DB time not on CPU nor waiting)",
            "CPU wait",
            "",
            s.cpu_wait_s,
            "",
            100.0 * s.cpu_wait_s / s.db_time_s
        );
    }
    for e in &fg {
        event_row(o, e);
    }
    let _ = writeln!(o, "\nBackground Wait Events");
    event_header(o, "%bg time");
    for e in s.events.iter().filter(|e| e.side == Side::Background) {
        event_row(o, e);
    }
}

/// IO Profile by Function, then the redo written and its full-page images.
fn io_profile(o: &mut String, s: &SlobSummary) {
    let _ = writeln!(o, "\nIO Profile by Function");
    let _ = writeln!(
        o,
        "{:<10}{:>12}{:>12}{:>12}{:>12}{:>10}",
        "Function", "Reads/s", "Read MiB/s", "Writes/s", "Write MiB/s", "Avg(ms)"
    );
    for f in &s.io_by_function {
        let _ = writeln!(
            o,
            "{:<10}{:>12}{:>12.1}{:>12}{:>12.1}{:>10.3}",
            f.function,
            fmt_count(f.read_requests_per_s),
            f.read_mib_per_s,
            fmt_count(f.write_requests_per_s),
            f.write_mib_per_s,
            f.avg_ms
        );
    }
    let k = &s.counters;
    if k.redo_written_bytes > 0 {
        let _ = writeln!(
            o,
            "redo: {} generated, {} written in {} writes ({:.1} KiB each), wastage {} ({:.1}%), {} log switch{}",
            fmt_size(k.redo_bytes),
            fmt_size(k.redo_written_bytes),
            k.redo_writes,
            k.redo_written_bytes as f64 / k.redo_writes.max(1) as f64 / 1024.0,
            fmt_size(k.redo_wastage_bytes),
            100.0 * k.redo_wastage_bytes as f64 / k.redo_written_bytes as f64,
            k.log_switches,
            if k.log_switches == 1 { "" } else { "es" }
        );
        buffer_writes(o, k);
        if k.full_page_images > 0 {
            let _ = writeln!(
                o,
                "full-page images: {} ({:.1}% of block changes)",
                k.full_page_images,
                100.0 * k.full_page_images as f64 / k.block_changes.max(1) as f64
            );
        }
    }
}

/// The Wait Event Histogram: each event's waits by bucket.
fn wait_histogram(o: &mut String, s: &SlobSummary) {
    let _ = writeln!(
        o,
        "\nWait Event Histogram (% of waits in each bucket, by upper bound)"
    );
    // Every event's full name: the column is as wide as the longest.
    let width = s
        .events
        .iter()
        .map(|e| e.name.len())
        .max()
        .unwrap_or(0)
        .max(35)
        + 1;
    let mut head = format!("{:<width$}{:>9}", "Event", "Waits");
    let counts = s
        .events
        .first()
        .map_or(BUCKETS_US.len() + 1, |e| e.histogram.len());
    for &b in bucket_bounds(counts) {
        head.push_str(&format!("{:>7}", bucket_name(b)));
    }
    head.push_str(&format!("{:>7}", ">1s"));
    let _ = writeln!(o, "{head}");
    for e in &s.events {
        let mut line = format!("{:<width$}{:>9}", e.name, e.waits);
        for n in &e.histogram {
            let pct = 100.0 * *n as f64 / e.waits.max(1) as f64;
            if *n == 0 {
                line.push_str(&format!("{:>7}", "."));
            } else {
                line.push_str(&format!("{pct:>7.1}"));
            }
        }
        let _ = writeln!(o, "{line}");
    }
}

fn event_header(o: &mut String, share: &str) {
    let _ = writeln!(
        o,
        "{:<42}{:>12}{:>12}{:>10}{share:>9}  Wait Class",
        "Event", "Waits", "Time(s)", "Avg(ms)"
    );
}

fn event_row(o: &mut String, e: &EventSummary) {
    let _ = writeln!(
        o,
        "{:<42}{:>12}{:>12.1}{:>10.3}{:>9.1}  {}",
        e.name, e.waits, e.time_s, e.avg_ms, e.pct_db_time, e.class
    );
}

pub(crate) fn bucket_name(us: u64) -> String {
    if us < 1000 {
        format!("{us}us")
    } else if us < 1_000_000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{}s", us / 1_000_000)
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}
