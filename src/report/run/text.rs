//! The terminal report: what was run, on what, and what the storage did, in
//! the vocabulary of database people (requests vs blocks, latency
//! percentiles, outliers, CPU per I/O).

use std::fmt::Write;

use crate::config::{IoMode, RunLength, WorkloadConfig};
use crate::document::{OpSummary, Report};
use crate::harness::Status;
use crate::samplers::telemetry::TelemetrySummary;
use crate::units::{fmt_count, fmt_size};
use crate::workload::dist::Distribution;

/// Outliers printed in the terminal (all of them are in --json).
const OUTLIERS_SHOWN: usize = 20;

pub fn render(r: &Report) -> String {
    match (&r.config.workload, &r.slob, &r.mysql, &r.pg) {
        (WorkloadConfig::Slob(m), Some(s), _, _) => return super::awr_text::render(r, m, s),
        (WorkloadConfig::Mysql(my), _, Some(s), _) => return super::mysql_text::render(r, my, s),
        (WorkloadConfig::Pg(pg), _, _, Some(s)) => return super::pg_text::render(r, pg, s),
        _ => {}
    }
    let mut o = String::new();
    let c = &r.config;
    let raw = c.workload.raw();
    let mix = match raw.map(|r| (r.pattern, r.read_pct)) {
        Some((crate::config::Pattern::Randrw, pct)) => format!(" ({pct}% reads)"),
        _ => String::new(),
    };
    let io = match c.io_mode {
        IoMode::Direct => "O_DIRECT".to_string(),
        IoMode::Dsync => "O_DSYNC".to_string(),
        IoMode::Buffered => "buffered".to_string(),
        m => format!("buffered + {} after each write", m.name()),
    };
    let _ = writeln!(
        o,
        "dbio {}  {} {}{mix}  {} blocks  {} session{} x iodepth {}  {}  {io}",
        r.dbio_version,
        c.workload.name(),
        raw.map_or("-", |r| r.pattern.name()),
        fmt_size(u64::from(c.block_size)),
        c.sessions,
        if c.sessions == 1 { "" } else { "s" },
        c.iodepth,
        c.engine.name(),
    );
    let t = &r.target;
    let layout = match &t.layout {
        Some(l) if l.reused => ", layout reused".to_string(),
        Some(l) => format!(", laid out at {:.0} MiB/s", l.mib_per_s()),
        None => String::new(),
    };
    let _ = writeln!(
        o,
        "target   {}: {} file{}, {} ({} blocks of {}){layout}",
        crate::terminal::field(&t.path.display().to_string()),
        t.files.len(),
        if t.files.len() == 1 { "" } else { "s" },
        fmt_size(t.size_bytes),
        t.blocks,
        fmt_size(u64::from(t.block_size_bytes)),
    );
    if let Some(chain) = &r.storage {
        let _ = writeln!(o, "storage  {}", chain.describe());
    }
    let e = &r.environment;
    let _ = writeln!(
        o,
        "machine  {} ({}), {} x {}, {} memory",
        e.hostname,
        e.kernel,
        e.cpus,
        if e.cpu_model.is_empty() {
            "CPU"
        } else {
            &e.cpu_model
        },
        fmt_size(e.memory_bytes)
    );
    let dist = raw.map_or(Distribution::Uniform, |r| r.distribution);
    let mut extras = vec![format!("dist {dist}")];
    if let Some(h) = c.hotspot {
        extras.push(format!(
            "hot spot {} MiB at {} MiB every {} ops",
            h.size_bytes >> 20,
            h.offset_bytes >> 20,
            h.every
        ));
    }
    if let Some(rate) = c.rate_iops {
        extras.push(format!("rate {rate}/s"));
    }
    extras.push(format!("seed {}", c.seed));
    let window = match c.length {
        RunLength::Time { .. } => format!(
            "{:.1} s measured after {:.1} s ramp",
            r.measured_s, r.ramp_s
        ),
        RunLength::Ops { ops } => format!("{ops} requests in {:.2} s", r.measured_s),
    };
    let _ = writeln!(o, "window   {window}; {}", extras.join(", "));
    let status = match r.status {
        Status::Completed => "completed".to_string(),
        Status::Interrupted => interrupted_line(r),
        Status::Failed => format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error")),
    };
    let _ = writeln!(o, "status   {status}\n");
    io_sections(&mut o, r);
    if let Some(f) = &r.replay {
        o.push_str(&super::replay_text::render(f));
    }
    o
}

/// The physical I/O table, CPU, host and device telemetry, and outliers.
pub(super) fn io_sections(o: &mut String, r: &Report) {
    super::steady_text::section(o, r);
    op_table(o, r);
    super::open_loop_text::section(o, r);
    let _ = writeln!(
        o,
        "\nlatency (min .. max) in the unit each value reads best in (ns, us, ms, s). requests = I/O calls completed; blocks = {} blocks they moved.",
        fmt_size(u64::from(r.target.block_size_bytes))
    );
    if r.sync.is_some() {
        let _ = writeln!(
            o,
            "sync = the {} after each write, timed alone; write latency includes it.",
            r.config.io_mode.name()
        );
    }
    let _ = writeln!(
        o,
        "cpu      user {:.2} s, sys {:.2} s: {:.1} us of dbio CPU per I/O; sessions started within {:.0} us",
        r.cpu.user_s, r.cpu.sys_s, r.cpu.us_per_io, r.start_skew_us
    );
    if let Some(w) = &r.telemetry_window {
        telemetry(o, r, w);
    }
    let _ = writeln!(o);
    outliers(o, r);
}

/// The table of requests, rates and latency percentiles per kind.
fn op_table(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "{:<7}{:>11}{:>11}{:>10}{:>10} |{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "",
        "requests",
        "blocks",
        "IOPS",
        "MiB/s",
        "min",
        "avg",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "p99.99",
        "max"
    );
    let mut row = |name: &str, s: &OpSummary| {
        let l = &s.latency;
        let _ = writeln!(
            o,
            "{name:<7}{:>11}{:>11}{:>10}{:>10.1} |{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
            s.requests,
            s.blocks,
            fmt_count(s.iops),
            s.mib_per_s,
            latency(l.min_us),
            latency(l.mean_us),
            latency(l.p50_us),
            latency(l.p90_us),
            latency(l.p99_us),
            latency(l.p99_9_us),
            latency(l.p99_99_us),
            latency(l.max_us)
        );
    };
    if let Some(s) = &r.read {
        row("read", s);
    }
    if let Some(s) = &r.write {
        row("write", s);
    }
    if let Some(s) = &r.sync {
        row("sync", s);
    }
    if r.read.is_some() && r.write.is_some() {
        row("total", &r.total);
    }
    if r.read.is_none() && r.write.is_none() {
        let _ = writeln!(o, "(no I/O completed in the measurement window)");
    }
}

/// The slowest I/Os: when, which thread, file, offset and length.
fn outliers(o: &mut String, r: &Report) {
    let out = &r.outliers;
    let _ = writeln!(
        o,
        "outliers {} I/O{} slower than {} ms",
        out.count,
        if out.count == 1 { "" } else { "s" },
        out.threshold_ms
    );
    for x in out.list.iter().take(OUTLIERS_SHOWN) {
        // The SLOB model numbers redo logs after the datafiles and names
        // the thread's function (session, DB writer, log writer).
        let redo = r
            .slob
            .as_ref()
            .map(|s| s.redo_files.as_slice())
            .unwrap_or_default();
        let file = r
            .target
            .files
            .iter()
            .chain(redo)
            .nth(x.file as usize)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let op = match &r.slob {
            Some(s) if x.session >= s.lgwr_thread => "LGWR write".to_string(),
            Some(s) if x.session >= s.first_dbwr_thread => {
                format!("DBW{} write", x.session - s.first_dbwr_thread)
            }
            Some(_) => format!("session {} {}", x.session, x.op.name()),
            None => x.op.name().to_string(),
        };
        let _ = writeln!(
            o,
            "  at {:>8.3} s  {:<5} {} @ {} ({} bytes)  {:.1} ms",
            x.t_s, op, file, x.offset_bytes, x.len_bytes, x.latency_ms
        );
    }
    if out.count as usize > OUTLIERS_SHOWN {
        let _ = writeln!(
            o,
            "  ... {} more (see --json)",
            out.count as usize - OUTLIERS_SHOWN
        );
    }
}

/// A latency in microseconds in the unit that reads best for that value,
/// as fio scales its units: `674ns`, `89.0us`, `3.57ms`, `1.20s`.
fn latency(us: f64) -> String {
    crate::units::fmt_latency_ns(us * 1e3)
}

/// The Host and Devices sections (window averages, mpstat and iostat -x
/// definitions), and what reached the first device against what was asked.
pub(super) fn telemetry(o: &mut String, r: &Report, w: &TelemetrySummary) {
    let h = &w.host;
    let _ = writeln!(
        o,
        "\nhost cpu %user {:.1}  %system {:.1}  %iowait {:.1}  %irq+soft {:.1}  %steal {:.1}  %idle {:.1}  load {:.2}  {}/s cs  {}/s intr  dirty {}  writeback {}",
        h.user_pct + h.nice_pct,
        h.system_pct,
        h.iowait_pct,
        h.irq_pct + h.softirq_pct,
        h.steal_pct,
        h.idle_pct,
        h.load1,
        fmt_count(h.ctxt_per_s),
        fmt_count(h.intr_per_s),
        fmt_size((h.dirty_kib * 1024.0) as u64),
        fmt_size((h.writeback_kib * 1024.0) as u64),
    );
    if w.devices.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "{:<10}{:>9}{:>9}{:>10}{:>10}{:>8}{:>8}{:>9}{:>9}{:>8}{:>9}{:>9}{:>7}",
        "device",
        "r/s",
        "w/s",
        "rkB/s",
        "wkB/s",
        "rrqm/s",
        "wrqm/s",
        "r_await",
        "w_await",
        "aqu-sz",
        "rareq-sz",
        "wareq-sz",
        "%util"
    );
    for d in &w.devices {
        match &d.rates {
            Some(x) => {
                let _ = writeln!(
                    o,
                    "{:<10}{:>9.1}{:>9.1}{:>10.1}{:>10.1}{:>8.1}{:>8.1}{:>9.2}{:>9.2}{:>8.2}{:>9.1}{:>9.1}{:>7.1}",
                    d.name,
                    x.r_per_s,
                    x.w_per_s,
                    x.rkib_per_s,
                    x.wkib_per_s,
                    x.rrqm_per_s,
                    x.wrqm_per_s,
                    x.r_await_ms,
                    x.w_await_ms,
                    x.aqu_sz,
                    x.rareq_sz_kib,
                    x.wareq_sz_kib,
                    x.util_pct
                );
            }
            None => {
                let _ = writeln!(o, "{:<10} (gone during the run)", d.name);
            }
        }
    }
    // What was asked against what reached the first device under the
    // target (a pg run shows its own three-way comparison instead).
    if let Some(top) = w
        .devices
        .first()
        .filter(|_| r.pg.is_none() && r.mysql.is_none())
        .and_then(|d| d.rates.as_ref().map(|x| (&d.name, x)))
    {
        let (name, x) = top;
        let asked_r = r.read.as_ref().map_or(0.0, |s| s.iops);
        let asked_w = r.write.as_ref().map_or(0.0, |s| s.iops);
        let mut line = format!(
            "asked    {} reads/s, {} writes/s; {name} served {} r/s, {} w/s",
            fmt_count(asked_r),
            fmt_count(asked_w),
            fmt_count(x.r_per_s),
            fmt_count(x.w_per_s)
        );
        if asked_r > 0.0 && x.r_per_s < asked_r * 0.9 {
            let absorbed = 100.0 * (1.0 - x.r_per_s / asked_r);
            line.push_str(&format!(
                " (the page cache absorbed {absorbed:.0}% of read requests)"
            ));
        }
        let _ = writeln!(o, "{line}");
    }
}

/// The status line of an interrupted run, naming the signal when one came.
pub(super) fn interrupted_line(r: &Report) -> String {
    match &r.interrupted_by {
        Some(by) => format!("INTERRUPTED by {by}: results so far"),
        None => "INTERRUPTED: results so far".to_string(),
    }
}
