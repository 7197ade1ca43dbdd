//! The text exposition: Prometheus's text format 0.0.4, or OpenMetrics
//! 1.0.0 when the scraper's Accept header asks for it (Prometheus 2.x asks
//! for OpenMetrics first). Label values are escaped as both formats say
//! (`\` → `\\`, `"` → `\"`, newline → `\n`): a target path or a plan name is
//! data, never syntax.
//!
//! The per-second samples carry the time their second ended, and the
//! telemetry samples the time their interval ended (the formats' optional
//! timestamp): a scrape a moment before or after a second's collection
//! then changes nothing, and `rate()` over whole seconds is exact.

use std::fmt::Write;

use super::names::{self, CPU_MODES, Family, Type};
use super::state::{OPS, Phase, RunState, State};
use crate::samplers::series::{self, BUCKETS, DUE_KINDS};
use crate::workload::live::LiveWait;

/// Which exposition format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// The format an Accept header asks for: OpenMetrics when it names
    /// `application/openmetrics-text` with a quality above 0, else 0.0.4.
    pub fn from_accept(accept: Option<&str>) -> Format {
        let wants_om = accept.unwrap_or("").split(',').any(|range| {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            let q = parts
                .filter_map(|p| p.strip_prefix("q="))
                .find_map(|q| q.parse::<f64>().ok())
                .unwrap_or(1.0);
            media.eq_ignore_ascii_case("application/openmetrics-text") && q > 0.0
        });
        match wants_om {
            true => Format::OpenMetrics,
            false => Format::Prometheus,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A label value escaped for either format.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A float as both formats read it.
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

/// Writes the exposition of `state`.
pub fn render(state: &State, format: Format) -> String {
    let mut out = Out {
        text: String::with_capacity(16 << 10),
        format,
    };
    if let Some(run) = state.run.as_ref().filter(|r| r.phase != Phase::Starting) {
        run_families(&mut out, run);
    }
    if let Some(p) = &state.plan {
        let labels = format!("plan=\"{}\"", escape(&p.plan));
        out.gauge("dbio_plan_runs", &labels, p.total as f64);
        out.gauge("dbio_plan_runs_done", &labels, p.done as f64);
        out.gauge("dbio_plan_eta_seconds", &labels, p.eta_s);
    }
    if format == Format::OpenMetrics {
        out.text.push_str("# EOF\n");
    }
    out.text
}

struct Out {
    text: String,
    format: Format,
}

impl Out {
    /// `# HELP` and `# TYPE` of a family.
    fn head(&mut self, f: &Family) {
        let name = match (self.format, f.kind) {
            (Format::Prometheus, Type::Counter) => format!("{}_total", f.name),
            _ => f.name.to_string(),
        };
        let _ = writeln!(self.text, "# HELP {name} {}", f.help);
        let _ = writeln!(self.text, "# TYPE {name} {}", f.kind.word());
    }

    fn sample(&mut self, name: &str, labels: &str, v: f64) {
        let _ = writeln!(self.text, "{name}{{{labels}}} {}", num(v));
    }

    /// A sample at `ms` (UNIX ms): milliseconds in 0.0.4, seconds in OpenMetrics.
    fn sample_at(&mut self, name: &str, labels: &str, v: f64, ms: u64) {
        let _ = match self.format {
            Format::Prometheus => writeln!(self.text, "{name}{{{labels}}} {} {ms}", num(v)),
            Format::OpenMetrics => writeln!(
                self.text,
                "{name}{{{labels}}} {} {}.{:03}",
                num(v),
                ms / 1000,
                ms % 1000
            ),
        };
    }

    fn gauge(&mut self, name: &str, labels: &str, v: f64) {
        self.head(names::family(name));
        self.sample(name, labels, v);
    }

    fn gauge_at(&mut self, name: &str, labels: &str, v: f64, ms: u64) {
        self.head(names::family(name));
        self.sample_at(name, labels, v, ms);
    }

    /// A family with one sample per (extra label value, value), at `ms`.
    fn each(&mut self, name: &str, base: &str, values: &[(String, f64)], ms: u64) {
        let f = names::family(name);
        self.head(f);
        let sample = match f.kind {
            Type::Counter => format!("{name}_total"),
            _ => name.to_string(),
        };
        for (extra, v) in values {
            self.sample_at(
                &sample,
                &format!("{base},{}=\"{}\"", f.extra[0], escape(extra)),
                *v,
                ms,
            );
        }
    }
}

fn run_families(out: &mut Out, r: &RunState) {
    let base = r
        .labels
        .0
        .iter()
        .map(|(n, v)| format!("{n}=\"{}\"", escape(v)))
        .collect::<Vec<_>>()
        .join(",");
    out.gauge(
        "dbio_run_running",
        &base,
        f64::from(u8::from(r.phase == Phase::Running)),
    );
    let ramp = r.phase == Phase::Running && r.elapsed_s < r.ramp_s;
    let ms = r.second_ms;
    out.gauge_at("dbio_run_ramp", &base, f64::from(u8::from(ramp)), ms);
    out.gauge_at("dbio_run_elapsed_seconds", &base, r.elapsed_s, ms);
    if let Some(p) = r.planned_s {
        out.gauge("dbio_run_planned_seconds", &base, p);
    }
    if let Some(id) = r.stored_id {
        out.gauge("dbio_run_stored_id", &base, id as f64);
    }
    let per_op = |v: &dyn Fn(usize) -> f64| -> Vec<(String, f64)> {
        OPS.iter()
            .map(|(k, op)| (op.to_string(), v(*k as usize)))
            .collect()
    };
    out.each("dbio_requests", &base, &per_op(&|i| r.ops[i] as f64), ms);
    out.each(
        "dbio_request_bytes",
        &base,
        &per_op(&|i| r.bytes[i] as f64),
        ms,
    );
    histograms(out, r, &base);
    devices(out, r, &base);
    host(out, r, &base);
    db(out, r, &base);
}

/// A database run's waits, commits and writer I/O so far.
fn db(out: &mut Out, r: &RunState, base: &str) {
    let Some((d, _)) = &r.db else { return };
    let ms = r.second_ms;
    let wait = |w: &LiveWait| {
        format!(
            "{base},process=\"{}\",event=\"{}\",class=\"{}\"",
            w.process.name(),
            escape(&w.event),
            escape(&w.class)
        )
    };
    if !d.waits.is_empty() {
        out.head(names::family("dbio_db_wait_seconds"));
        for w in &d.waits {
            out.sample_at("dbio_db_wait_seconds_total", &wait(w), w.seconds, ms);
        }
    }
    if d.waits.iter().any(|w| w.count.is_some()) {
        out.head(names::family("dbio_db_waits"));
        for w in &d.waits {
            if let Some(n) = w.count {
                out.sample_at("dbio_db_waits_total", &wait(w), n as f64, ms);
            }
        }
    }
    let a = &d.activity;
    if let Some(n) = a.commits {
        out.head(names::family("dbio_db_commits"));
        out.sample_at("dbio_db_commits_total", base, n, ms);
    }
    let writes: Vec<(String, f64)> = d
        .writers()
        .iter()
        .filter_map(|(w, io)| Some((w.name().to_string(), io.writes?)))
        .collect();
    let bytes: Vec<(String, f64)> = d
        .writers()
        .iter()
        .filter_map(|(w, io)| Some((w.name().to_string(), io.bytes?)))
        .collect();
    if !writes.is_empty() {
        out.each("dbio_db_writer_writes", base, &writes, ms);
    }
    if !bytes.is_empty() {
        out.each("dbio_db_writer_written_bytes", base, &bytes, ms);
    }
}

/// Bucket edges in ns: 2^m and 1.5 × 2^m for m = 8..=34 (256 ns to 25.8 s),
/// each an edge of the series' compact buckets, so the counts are exact.
fn edges() -> impl Iterator<Item = u64> {
    (8..=34).flat_map(|m| [1u64 << m, 3u64 << (m - 1)])
}

fn histograms(out: &mut Out, r: &RunState, base: &str) {
    let service: Vec<Hist> = OPS
        .iter()
        .map(|&(k, op)| (op, &r.hists[k as usize], r.lat_sum_s[k as usize]))
        .collect();
    histogram(
        out,
        "dbio_request_service_seconds",
        base,
        r.second_ms,
        &service,
    );
    let Some(d) = &r.due else { return };
    let (due, late) = (paced(&d.due, &d.due_sum_ns), paced(&d.late, &d.late_sum_ns));
    histogram(out, "dbio_request_due_seconds", base, r.second_ms, &due);
    histogram(
        out,
        "dbio_request_lateness_seconds",
        base,
        r.second_ms,
        &late,
    );
}

/// A paced part's rows: read and write (a sync has no due time).
fn paced<'a>(hists: &'a [[u64; BUCKETS]; DUE_KINDS], sums: &[u64; DUE_KINDS]) -> Vec<Hist<'a>> {
    (0..DUE_KINDS)
        .map(|k| (OPS[k].1, &hists[k], sums[k] as f64 / 1e9))
        .collect()
}

/// One op's histogram: its `op` label, its compact buckets, its sum in seconds.
type Hist<'a> = (&'a str, &'a [u64; BUCKETS], f64);

/// Histogram family `name`, one `op` per row, at `ms`.
fn histogram(out: &mut Out, name: &str, base: &str, ms: u64, rows: &[Hist]) {
    out.head(names::family(name));
    for &(op, hist, sum_s) in rows {
        let labels = format!("{base},op=\"{op}\"");
        let mut cum = 0u64;
        let mut next = 0usize;
        for edge in edges() {
            // Latencies below `edge` ns are the buckets before bucket(edge).
            let upto = series::bucket(edge);
            cum += hist[next..upto].iter().sum::<u64>();
            next = upto;
            let le = num(edge as f64 / 1e9);
            out.sample_at(
                &format!("{name}_bucket"),
                &format!("{labels},le=\"{le}\""),
                cum as f64,
                ms,
            );
        }
        let count: u64 = hist.iter().sum();
        out.sample_at(
            &format!("{name}_bucket"),
            &format!("{labels},le=\"+Inf\""),
            count as f64,
            ms,
        );
        out.sample_at(&format!("{name}_sum"), &labels, sum_s, ms);
        out.sample_at(&format!("{name}_count"), &labels, count as f64, ms);
    }
}

fn devices(out: &mut Out, r: &RunState, base: &str) {
    if r.devices.is_empty() {
        return;
    }
    type Get = fn(&super::state::DeviceTotals) -> f64;
    let families: [(&str, Get); 9] = [
        ("dbio_device_reads_completed", |d| d.reads),
        ("dbio_device_writes_completed", |d| d.writes),
        ("dbio_device_read_bytes", |d| d.read_bytes),
        ("dbio_device_written_bytes", |d| d.written_bytes),
        ("dbio_device_read_time_seconds", |d| d.read_time_s),
        ("dbio_device_write_time_seconds", |d| d.write_time_s),
        ("dbio_device_io_time_seconds", |d| d.io_time_s),
        ("dbio_device_io_time_weighted_seconds", |d| {
            d.weighted_io_time_s
        }),
        ("dbio_device_utilization_ratio", |d| d.util),
    ];
    for (name, get) in families {
        let values: Vec<(String, f64)> =
            r.devices.iter().map(|d| (d.name.clone(), get(d))).collect();
        out.each(name, base, &values, r.tele_ms);
    }
}

fn host(out: &mut Out, r: &RunState, base: &str) {
    let Some(h) = &r.host else { return };
    let pct = [
        h.user_pct,
        h.nice_pct,
        h.system_pct,
        h.iowait_pct,
        h.irq_pct,
        h.softirq_pct,
        h.steal_pct,
        h.idle_pct,
    ];
    let modes: Vec<(String, f64)> = CPU_MODES
        .iter()
        .zip(pct)
        .map(|(m, p)| (m.to_string(), p / 100.0))
        .collect();
    let ms = r.tele_ms;
    out.each("dbio_host_cpu_ratio", base, &modes, ms);
    let name = "dbio_host_context_switches";
    out.head(names::family(name));
    out.sample_at(&format!("{name}_total"), base, r.context_switches, ms);
    out.gauge_at("dbio_host_load1", base, h.load1, ms);
    out.gauge_at("dbio_host_dirty_bytes", base, h.dirty_kib * 1024.0, ms);
    out.gauge_at(
        "dbio_host_writeback_bytes",
        base,
        h.writeback_kib * 1024.0,
        ms,
    );
}
