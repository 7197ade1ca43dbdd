//! The MariaDB run's terminal report, AWR style in InnoDB's words: the
//! server and its settings, the load, Load Profile per second and per
//! transaction, Top Events (sampled session states), client-side latency,
//! the buffer pool, redo and doublewrite, InnoDB's reads beside the
//! device's, then the host and device sections every run has.

use std::fmt::Write;

use super::db_text;
use crate::document::Report;
use crate::document::mysql::{AGREE_PCT, MysqlSummary};
use crate::units::{fmt_count, fmt_size};
use crate::workload::mysql::MysqlConfig;

/// performance_schema wait events shown.
const PS_WAITS: usize = 12;

/// The settings shown in the header.
const SHOWN: [&str; 8] = [
    "innodb_page_size",
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_flush_log_at_trx_commit",
    "innodb_doublewrite",
    "innodb_log_file_size",
    "innodb_file_per_table",
    "innodb_io_capacity",
];

pub fn render(r: &Report, my: &MysqlConfig, s: &MysqlSummary) -> String {
    let mut o = String::new();
    db_text::title(
        &mut o,
        r,
        "mysql",
        &my.slob,
        &format!("MariaDB {}", s.version),
    );
    db_text::server(
        &mut o,
        my.server.url_redacted.as_deref(),
        "database",
        &s.data_dir,
        format!(
            "instance {} (redo {}){}",
            s.data_dir,
            s.redo_dir,
            db_text::reused(s.instance_reused)
        ),
    );
    db_text::setup(
        &mut o,
        &s.setup,
        &format!("two per {} page", fmt_size(u64::from(my.page_size))),
        |k| SHOWN.contains(&k) || my.server.set.iter().any(|(n, _)| n == k),
        "the server",
    );
    db_text::status(&mut o, r);
    db_text::load_profile(&mut o, &s.load_profile, &s.ops, s.server.is_some());
    db_text::top_events(&mut o, &s.ops);
    if let Some(c) = &s.checkpoint_cycle {
        let mut line = String::new();
        super::cycle_text::line(&mut line, c, "redo");
        if !line.is_empty() {
            o.push('\n');
            o.push_str(&line);
        }
    }
    ps_waits(&mut o, s);
    db_text::operations(&mut o, &s.ops);
    super::open_loop_text::section(&mut o, r);

    if s.server.is_some() {
        server_counters(&mut o, s);
    }
    physical_reads(&mut o, s);
    db_text::telemetry(&mut o, r);
    o
}

/// The waits performance_schema counted, the first `PS_WAITS` of them.
fn ps_waits(o: &mut String, s: &MysqlSummary) {
    if !s.ps_waits.is_empty() {
        let _ = writeln!(
            o,
            "\nWait events (performance_schema)                      waits    time ms     avg µs"
        );
        for w in s.ps_waits.iter().take(PS_WAITS) {
            let _ = writeln!(
                o,
                "  {:<48} {:>10} {:>10.1} {:>10.1}",
                w.event, w.waits, w.time_ms, w.avg_us
            );
        }
    }
}

/// InnoDB's own counters over the window: the buffer pool, redo,
/// doublewrite and page writes.
fn server_counters(o: &mut String, s: &MysqlSummary) {
    let n = |k: &str| s.counter(k);
    let req = n("Innodb_buffer_pool_read_requests");
    let _ = writeln!(
        o,
        "\nbuffer pool  {} read requests, {} reads ({:.2}% hit), {} read ahead; {} write requests, {} pages flushed, {} waits for a free page",
        req,
        n("Innodb_buffer_pool_reads"),
        if req > 0.0 {
            100.0 * (1.0 - n("Innodb_buffer_pool_reads") / req)
        } else {
            100.0
        },
        n("Innodb_buffer_pool_read_ahead"),
        n("Innodb_buffer_pool_write_requests"),
        n("Innodb_buffer_pool_pages_flushed"),
        n("Innodb_buffer_pool_wait_free")
    );
    // MariaDB 10.11 counts no redo fsyncs (it writes the log O_DSYNC or
    // O_DIRECT); say so rather than print a zero.
    let fsyncs = match s
        .server
        .as_ref()
        .is_some_and(|d| d.contains_key("Innodb_os_log_fsyncs"))
    {
        true => format!("{} fsyncs", n("Innodb_os_log_fsyncs")),
        false => "fsyncs not counted".into(),
    };
    let _ = writeln!(
        o,
        "redo         {} written, {fsyncs}, {} log waits; {} commits, {} rollbacks",
        fmt_size(n("Innodb_os_log_written") as u64),
        n("Innodb_log_waits"),
        n("Com_commit"),
        n("Com_rollback")
    );
    let _ = writeln!(
        o,
        "doublewrite  {} pages in {} writes; pages written {} (data writes {}, {} written, {} fsyncs)",
        n("Innodb_dblwr_pages_written"),
        n("Innodb_dblwr_writes"),
        n("Innodb_pages_written"),
        n("Innodb_data_writes"),
        fmt_size(n("Innodb_data_written") as u64),
        n("Innodb_data_fsyncs")
    );
}

/// Physical reads as InnoDB and the device counted them, and whether they
/// agree.
fn physical_reads(o: &mut String, s: &MysqlSummary) {
    let p = &s.physical_reads;
    let _ = writeln!(o, "\nPhysical reads: InnoDB and the device");
    let _ = writeln!(
        o,
        "  InnoDB (Innodb_data_reads)  {:>12} /s  {}",
        fmt_count(p.innodb_per_s),
        fmt_size(p.innodb_bytes as u64)
    );
    db_text::device_reads(o, &p.device);
    if let Some(d) = p.difference_pct {
        let _ = writeln!(
            o,
            "  difference                  {d:+.1}%{}",
            match p.agree {
                Some(true) => format!(": they agree (O_DIRECT, within {AGREE_PCT}%)"),
                Some(false) => format!(": they DISAGREE (O_DIRECT, beyond {AGREE_PCT}%)"),
                None => " (through the page cache: the device sees fewer)".into(),
            }
        );
    }
}
