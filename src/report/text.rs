//! The terminal report: what was run, on what, and what the storage did, in
//! the vocabulary of database people (requests vs blocks, latency
//! percentiles, outliers, CPU per I/O).

use std::fmt::Write;

use super::{OpSummary, Report};
use crate::config::{IoMode, RunLength};
use crate::runner::Status;
use crate::units::{fmt_count, fmt_size};

/// Outliers printed in the terminal (all of them are in --json).
const OUTLIERS_SHOWN: usize = 20;

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let c = &r.config;
    let mix = match c.pattern {
        crate::config::Pattern::Randrw => format!(" ({}% reads)", c.read_pct),
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
        c.workload,
        c.pattern.name(),
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
        t.path.display(),
        t.files.len(),
        if t.files.len() == 1 { "" } else { "s" },
        fmt_size(t.size_bytes),
        t.blocks,
        fmt_size(u64::from(t.block_size_bytes)),
    );
    let mut extras = vec![format!("dist {}", c.distribution)];
    if let Some(h) = c.hotspot {
        extras.push(format!(
            "hot spot {} MiB at {} MiB every {} ops",
            h.size_bytes >> 20,
            h.offset_bytes >> 20,
            h.every
        ));
    }
    if let Some(rate) = c.rate_iops {
        extras.push(format!("rate {rate} IOPS"));
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
        Status::Interrupted => "INTERRUPTED (Ctrl-C): results so far".to_string(),
        Status::Failed => format!("FAILED: {}", r.error.as_deref().unwrap_or("unknown error")),
    };
    let _ = writeln!(o, "status   {status}\n");

    let _ = writeln!(
        o,
        "{:<7}{:>11}{:>11}{:>10}{:>10} |{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}",
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
            "{name:<7}{:>11}{:>11}{:>10}{:>10.1} |{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}",
            s.requests,
            s.blocks,
            fmt_count(s.iops),
            s.mib_per_s,
            ms(l.min_us),
            ms(l.mean_us),
            ms(l.p50_us),
            ms(l.p90_us),
            ms(l.p99_us),
            ms(l.p99_9_us),
            ms(l.p99_99_us),
            ms(l.max_us)
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
    let _ = writeln!(
        o,
        "\nlatency (min .. max) in ms. requests = I/O calls completed; blocks = {} blocks they moved.",
        fmt_size(u64::from(t.block_size_bytes))
    );
    if r.sync.is_some() {
        let _ = writeln!(
            o,
            "sync = the {} after each write, timed alone; write latency includes it.",
            c.io_mode.name()
        );
    }
    let _ = writeln!(
        o,
        "cpu      user {:.2} s, sys {:.2} s: {:.1} us of dbio CPU per I/O",
        r.cpu.user_s, r.cpu.sys_s, r.cpu.us_per_io
    );
    let out = &r.outliers;
    let _ = writeln!(
        o,
        "outliers {} I/O{} slower than {} ms",
        out.count,
        if out.count == 1 { "" } else { "s" },
        out.threshold_ms
    );
    for x in out.list.iter().take(OUTLIERS_SHOWN) {
        let file = t
            .files
            .get(x.file as usize)
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  at {:>8.3} s  {:<5} {} @ {} ({} bytes)  {:.1} ms",
            x.t_s,
            x.op.name(),
            file,
            x.offset_bytes,
            x.len_bytes,
            x.latency_ms
        );
    }
    if out.count as usize > OUTLIERS_SHOWN {
        let _ = writeln!(
            o,
            "  ... {} more (see --json)",
            out.count as usize - OUTLIERS_SHOWN
        );
    }
    o
}

/// Microseconds shown as milliseconds with enough digits for fast devices.
fn ms(us: f64) -> String {
    let v = us / 1e3;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
