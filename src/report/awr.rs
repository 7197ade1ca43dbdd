//! The SLOB model's report in AWR's vocabulary: the data (part of the
//! `--json` document as `slob`) and its terminal rendering — header, Load
//! Profile per second and per transaction, Top Timed Events, background
//! events, I/O by function, wait event histograms.

use std::fmt::Write;
use std::path::PathBuf;

use serde::Serialize;

use super::Report;
use crate::measure::stats::OpStats;
use crate::units::{fmt_count, fmt_size};
use crate::workload::slob::events::{EVENTS, Event, EventStats, Side};
use crate::workload::slob::instance::{Counters, Tally};
use crate::workload::slob::run::SlobRun;

/// Upper bounds of the wait event histogram buckets, µs (the last is open).
pub const BUCKETS_US: [u64; 12] = [
    64, 128, 256, 512, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 1_000_000,
];

#[derive(Clone, Debug, Serialize)]
pub struct SlobSummary {
    pub elapsed_s: f64,
    /// Session time in operations (busy or waiting) over the window.
    pub db_time_s: f64,
    /// CPU the sessions used (their threads' CPU clocks).
    pub db_cpu_s: f64,
    /// DB time neither on CPU nor in a wait event: waiting for a CPU (run
    /// queue) and the model's own bookkeeping.
    pub cpu_wait_s: f64,
    pub load_profile: Vec<LoadLine>,
    /// Window counters, every function together.
    pub counters: Counters,
    /// Whole-run counters (ramp included), every function together: the
    /// invariants hold exactly on these.
    pub run_totals: Counters,
    pub events: Vec<EventSummary>,
    pub io_by_function: Vec<FunctionIo>,
    pub cache_buffers: u32,
    pub cache_hit_pct: f64,
    pub redo_files: Vec<PathBuf>,
    /// Thread numbers in outliers: sessions are 0.., DB writers from
    /// `first_dbwr_thread`, the log writer is `lgwr_thread`.
    pub first_dbwr_thread: u32,
    pub lgwr_thread: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct LoadLine {
    pub name: &'static str,
    pub per_second: f64,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct EventSummary {
    pub name: &'static str,
    pub class: &'static str,
    pub side: Side,
    pub waits: u64,
    pub time_s: f64,
    pub avg_ms: f64,
    /// Share of DB time (foreground events), or of the window (background).
    pub pct_db_time: f64,
    /// Waits per bucket of [`BUCKETS_US`], then one for everything slower.
    pub histogram: Vec<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FunctionIo {
    pub function: &'static str,
    pub read_requests_per_s: f64,
    pub read_mb_per_s: f64,
    pub write_requests_per_s: f64,
    pub write_mb_per_s: f64,
    /// Mean latency of one request, ms.
    pub avg_ms: f64,
}

fn histogram(s: &OpStats) -> Vec<u64> {
    let mut out = Vec::with_capacity(BUCKETS_US.len() + 1);
    let mut below = 0;
    for b in BUCKETS_US {
        let upto = if s.count == 0 {
            0
        } else {
            s.hist.count_between(0, b * 1000)
        };
        out.push(upto - below);
        below = upto;
    }
    out.push(s.count - below);
    out
}

impl SlobSummary {
    pub fn new(run: &SlobRun, measured_s: f64, sessions: u32, writers: u32) -> Self {
        Self::from_tallies(
            [&run.sessions, &run.dbwr, &run.lgwr],
            run.redo_files.clone(),
            measured_s,
            sessions,
            writers,
        )
    }

    /// From what the sessions, the DB writers and the log writer measured.
    pub fn from_tallies(
        [fg, dbwr, lgwr]: [&Tally; 3],
        redo_files: Vec<PathBuf>,
        measured_s: f64,
        sessions: u32,
        writers: u32,
    ) -> Self {
        let mut all = fg.clone();
        all.merge(dbwr);
        all.merge(lgwr);
        let c = all.window;
        let secs = measured_s.max(1e-9);
        let db_time_s = c.db_time_ns as f64 / 1e9;
        let db_cpu_s = c.db_cpu_ns as f64 / 1e9;
        let fg_wait_s = all.events.foreground_ns() as f64 / 1e9;
        let tx = c.transactions as f64;
        let line = |name, v: f64| LoadLine {
            name,
            per_second: v / secs,
            per_transaction: (tx > 0.0).then(|| v / tx),
        };
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        let load_profile = vec![
            line("DB Time(s)", db_time_s),
            line("DB CPU(s)", db_cpu_s),
            line("Redo size (bytes)", c.redo_bytes as f64),
            line("Logical read (blocks)", c.logical_reads as f64),
            line("Block changes", c.block_changes as f64),
            line("Physical read (blocks)", c.physical_reads as f64),
            line("Physical write (blocks)", c.physical_writes as f64),
            line("Read IO requests", c.read_requests as f64),
            line("Write IO requests", c.write_requests as f64),
            line("Read IO (MB)", mb(c.read_bytes)),
            line("Write IO (MB)", mb(c.write_bytes)),
            line("Executes (SQL)", c.executes as f64),
            line("Transactions", tx),
        ];
        let events = EVENTS
            .iter()
            .map(|&e| event(&all.events, e, db_time_s, secs))
            .filter(|e| e.waits > 0)
            .collect();
        let func = |name, t: &Tally, reads: bool| {
            let w = &t.window;
            let (reqs, lat_ns) = if reads {
                let seq = t.events.get(Event::DbFileSequentialRead);
                let sc = t.events.get(Event::DbFileScatteredRead);
                (w.read_requests, seq.sum_ns + sc.sum_ns)
            } else if name == "LGWR" {
                (
                    w.redo_writes,
                    t.events.get(Event::LogFileParallelWrite).sum_ns,
                )
            } else {
                (
                    w.write_requests,
                    t.events.get(Event::DbFileParallelWrite).sum_ns,
                )
            };
            let write_bytes = if name == "LGWR" {
                w.redo_written_bytes
            } else {
                w.write_bytes
            };
            FunctionIo {
                function: name,
                read_requests_per_s: w.read_requests as f64 / secs,
                read_mb_per_s: mb(w.read_bytes) / secs,
                write_requests_per_s: if name == "LGWR" {
                    w.redo_writes as f64
                } else {
                    w.write_requests as f64
                } / secs,
                write_mb_per_s: mb(write_bytes) / secs,
                avg_ms: if reqs > 0 {
                    lat_ns as f64 / reqs as f64 / 1e6
                } else {
                    0.0
                },
            }
        };
        let io_by_function = vec![
            func("Sessions", fg, true),
            func("DBWR", dbwr, false),
            func("LGWR", lgwr, false),
        ];
        SlobSummary {
            elapsed_s: measured_s,
            db_time_s,
            db_cpu_s,
            cpu_wait_s: (db_time_s - db_cpu_s - fg_wait_s).max(0.0),
            load_profile,
            counters: c,
            run_totals: all.total,
            events,
            io_by_function,
            cache_buffers: 0,
            cache_hit_pct: if c.logical_reads > 0 {
                100.0 * c.cache_hits as f64 / c.logical_reads as f64
            } else {
                0.0
            },
            redo_files,
            first_dbwr_thread: sessions,
            lgwr_thread: sessions + writers,
        }
    }
}

fn event(s: &EventStats, e: Event, db_time_s: f64, secs: f64) -> EventSummary {
    let st = s.get(e);
    let time_s = st.sum_ns as f64 / 1e9;
    let base = if e.side() == Side::Foreground {
        db_time_s
    } else {
        secs
    };
    EventSummary {
        name: e.name(),
        class: e.class(),
        side: e.side(),
        waits: st.count,
        time_s,
        avg_ms: st.mean_ns() / 1e6,
        pct_db_time: if base > 0.0 {
            100.0 * time_s / base
        } else {
            0.0
        },
        histogram: histogram(st),
    }
}

/// The terminal report of a SLOB model run.
pub fn render(r: &Report, s: &SlobSummary) -> String {
    let mut o = String::new();
    let c = &r.config;
    let m = c.slob.as_ref().expect("a slob run has its settings");
    let _ = writeln!(
        o,
        "dbio {}  slob  {} session{} ({} schema{} x {} thread{})  UPDATE_PCT {}  SCAN_PCT {}  WORK_UNIT {}  REDO_STRESS {:?}  {}  {}",
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
        m.redo_stress,
        c.engine.name(),
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
    if let Some(chain) = &r.storage {
        let _ = writeln!(o, "storage  {}", chain.describe());
    }
    let status = match r.status {
        crate::runner::Status::Completed => "completed".to_string(),
        crate::runner::Status::Interrupted => "INTERRUPTED (Ctrl-C): results so far".into(),
        crate::runner::Status::Failed => {
            format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error"))
        }
    };
    let _ = writeln!(
        o,
        "elapsed  {:.1} s (after {:.1} s ramp)   DB time {:.1} s   seed {}   {status}\n",
        s.elapsed_s, r.ramp_s, s.db_time_s, c.seed
    );

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

    let _ = writeln!(o, "\nTop Timed Events (foreground)");
    let _ = writeln!(
        o,
        "{:<42}{:>12}{:>12}{:>10}{:>9}  Wait Class",
        "Event", "Waits", "Time(s)", "Avg(ms)", "%DB time"
    );
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
        let _ = writeln!(
            o,
            "{:<42}{:>12}{:>12.1}{:>10.3}{:>9.1}  {}",
            e.name, e.waits, e.time_s, e.avg_ms, e.pct_db_time, e.class
        );
    }
    let _ = writeln!(o, "\nBackground Wait Events");
    let _ = writeln!(
        o,
        "{:<42}{:>12}{:>12}{:>10}{:>9}  Wait Class",
        "Event", "Waits", "Time(s)", "Avg(ms)", "%bg time"
    );
    for e in s.events.iter().filter(|e| e.side == Side::Background) {
        let _ = writeln!(
            o,
            "{:<42}{:>12}{:>12.1}{:>10.3}{:>9.1}  {}",
            e.name, e.waits, e.time_s, e.avg_ms, e.pct_db_time, e.class
        );
    }

    let _ = writeln!(o, "\nIO Profile by Function");
    let _ = writeln!(
        o,
        "{:<10}{:>12}{:>11}{:>12}{:>11}{:>10}",
        "Function", "Reads/s", "Read MB/s", "Writes/s", "Write MB/s", "Avg(ms)"
    );
    for f in &s.io_by_function {
        let _ = writeln!(
            o,
            "{:<10}{:>12}{:>11.1}{:>12}{:>11.1}{:>10.3}",
            f.function,
            fmt_count(f.read_requests_per_s),
            f.read_mb_per_s,
            fmt_count(f.write_requests_per_s),
            f.write_mb_per_s,
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
    }

    let _ = writeln!(
        o,
        "\nWait Event Histogram (% of waits in each bucket, by upper bound)"
    );
    let mut head = format!("{:<36}{:>9}", "Event", "Waits");
    for b in BUCKETS_US {
        head.push_str(&format!("{:>7}", bucket_name(b)));
    }
    head.push_str(&format!("{:>7}", ">1s"));
    let _ = writeln!(o, "{head}");
    for e in &s.events {
        let mut line = format!("{:<36}{:>9}", truncate(e.name, 35), e.waits);
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
    let _ = writeln!(
        o,
        "\nPhysical I/O (read = sessions' reads, write = DB writer and log writer writes)"
    );
    super::text::io_sections(&mut o, r);
    o
}

fn bucket_name(us: u64) -> String {
    if us < 1000 {
        format!("{us}us")
    } else if us < 1_000_000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{}s", us / 1_000_000)
    }
}

fn truncate(s: &str, n: usize) -> &str {
    if s.len() <= n { s } else { &s[..n] }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}
