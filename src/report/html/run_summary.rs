//! What a fio user looks for first on one run's page: the headline
//! numbers, a percentile table per operation (min … p99.99, max, each in
//! the unit that reads best), the latency histogram in log buckets, and the
//! settings as the equivalent `dbio run` command line beside a table
//! grouped as `dbio run --help` groups its options.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::page::{table, td};
use crate::chart::{BarChart, BarSeries, color, escape};
use crate::config::{Pattern, RunConfig, RunLength};
use crate::document::{Latency, Report};
use crate::store::{StoredRun, decode_histogram};
use crate::units::{fmt_count, fmt_latency_ns};

/// One field of a [`Latency`].
type LatencyField = fn(&Latency) -> f64;

/// The latency columns: (heading, the field of [`Latency`]).
pub(super) const LATENCY: [(&str, LatencyField); 8] = [
    ("min", |l| l.min_us),
    ("mean", |l| l.mean_us),
    ("p50", |l| l.p50_us),
    ("p90", |l| l.p90_us),
    ("p99", |l| l.p99_us),
    ("p99.9", |l| l.p99_9_us),
    ("p99.99", |l| l.p99_99_us),
    ("max", |l| l.max_us),
];

/// A latency given in µs, in the unit that reads best (`850ns`, `12.4us`, `3.21ms`).
fn latency(us: Option<f64>) -> String {
    us.map_or_else(|| "-".into(), |us| fmt_latency_ns(us * 1e3))
}

/// The headline numbers of a run: IOPS, MiB/s, mean and p99 latency of all
/// its I/O, sessions and the window's length (`None`: not a dbio run).
pub fn headline(report: Option<&Report>) -> String {
    let Some(r) = report else {
        return "<p class=\"note\">No I/O completed in the measurement window.</p>\n".into();
    };
    let t = &r.total;
    let tiles = [
        ("IOPS", fmt_count(t.iops)),
        ("MiB/s", format!("{:.1}", t.mib_per_s)),
        ("mean latency", latency(Some(t.latency.mean_us))),
        ("p99 latency", latency(Some(t.latency.p99_us))),
        ("sessions", r.config.sessions.to_string()),
        ("measured", format!("{:.1} s", r.measured_s)),
    ];
    let mut o = String::from("<div class=\"headline\">");
    for (what, value) in tiles {
        let _ = write!(
            o,
            "<div class=\"tile\"><span class=\"v\">{}</span><span class=\"k\">{}</span></div>",
            escape(&value),
            escape(what)
        );
    }
    o + "</div>\n"
}

/// Requests, rates and latency percentiles per operation, as fio prints
/// them (a row per kind that completed any request).
pub fn percentile_table(report: Option<&Report>) -> String {
    let mut header: Vec<String> = ["operation", "requests", "IOPS", "MiB/s"]
        .map(String::from)
        .to_vec();
    header.extend(LATENCY.iter().map(|(h, _)| h.to_string()));
    let num_td = |s: String| format!("<td class=\"num\">{}</td>", escape(&s));
    let kinds = report.map_or_else(Vec::new, |r| {
        vec![
            ("read", r.read.as_ref()),
            ("write", r.write.as_ref()),
            ("sync", r.sync.as_ref()),
            ("total", Some(&r.total)),
        ]
    });
    let rows: Vec<Vec<String>> = kinds
        .into_iter()
        .filter_map(|(name, v)| {
            let v = v?;
            let mut row = vec![
                td(name),
                num_td(fmt_count(v.requests as f64)),
                num_td(fmt_count(v.iops)),
                num_td(format!("{:.1}", v.mib_per_s)),
            ];
            for (_, field) in LATENCY {
                row.push(num_td(latency(Some(field(&v.latency)))));
            }
            Some(row)
        })
        .collect();
    if rows.is_empty() {
        return "<p class=\"note\">No request completed in the measurement window.</p>\n".into();
    }
    table("pct", &header, &rows)
}

/// The latency histogram of each kind stored with the run: the share of
/// its requests in each power-of-two bucket of latency, every bucket from
/// the fastest request's to the slowest's (none skipped). None without
/// histograms.
pub fn latency_histogram(run: &StoredRun) -> Option<BarChart> {
    // (kind, requests per bucket), bucket b: latency ≤ 2^b µs.
    let mut kinds: Vec<(String, BTreeMap<u32, u64>)> = Vec::new();
    for (op, bytes) in &run.histograms {
        let Ok(h) = decode_histogram(bytes) else {
            continue;
        };
        let mut buckets = BTreeMap::new();
        for v in h.iter_recorded() {
            let us = v.value_iterated_to() as f64 / 1e3;
            let b = us.max(1.0).log2().ceil() as u32;
            *buckets.entry(b).or_default() += v.count_at_value();
        }
        if !buckets.is_empty() {
            kinds.push((op.clone(), buckets));
        }
    }
    let lo = kinds.iter().filter_map(|(_, b)| b.keys().next()).min()?;
    let hi = kinds.iter().filter_map(|(_, b)| b.keys().last()).max()?;
    let names: Vec<String> = (*lo..=*hi).map(bucket_label).collect();
    // Every other label when the buckets are many, so labels never overlap.
    let every = if names.len() > 10 { 2 } else { 1 };
    let groups: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i % every == 0 {
                n.clone()
            } else {
                String::new()
            }
        })
        .collect();
    let mut c = BarChart::new(
        "Latency distribution",
        "latency (log2 buckets)",
        "% of requests",
        groups,
    );
    c.value_labels = false;
    for (i, (op, buckets)) in kinds.iter().enumerate() {
        let n: u64 = buckets.values().sum();
        let values: Vec<Option<f64>> = (*lo..=*hi)
            .map(|b| Some(100.0 * *buckets.get(&b).unwrap_or(&0) as f64 / n as f64))
            .collect();
        let tips = values
            .iter()
            .zip(&names)
            .map(|(v, n)| format!("{op} ≤ {n}: {:.2}%", v.unwrap_or(0.0)))
            .collect();
        c.series.push(BarSeries {
            name: op.clone(),
            color: color(i),
            values,
            tips,
        });
    }
    Some(c)
}

/// Bucket `b`'s upper bound, 2^b µs, in two significant digits at most:
/// `16µs`, `512µs`, `1ms`, `4.1ms`, `33ms`, `1.1s`.
fn bucket_label(b: u32) -> String {
    let us = (1u64 << b) as f64;
    let short = |v: f64, unit: &str| match v {
        v if v < 10.0 => format!("{:.1}{unit}", v).replace(".0", ""),
        v => format!("{v:.0}{unit}"),
    };
    match us {
        us if us < 1e3 => format!("{us:.0}µs"),
        us if us < 1e6 => short(us / 1e3, "ms"),
        us => short(us / 1e6, "s"),
    }
}

/// The `dbio run` command line that makes a run like this one (its seed
/// included), from its stored settings: every setting of a raw run; of a
/// model or server run its target, sessions, length and seed (the rest is
/// in the settings table).
pub fn command_line(config: &RunConfig) -> String {
    let c = config;
    let mut words: Vec<String> = vec!["dbio".into(), "run".into()];
    let mut opt = |name: &str, value: Option<String>| {
        if let Some(v) = value {
            words.push(format!("--{name}"));
            words.push(shell_word(&v));
        }
    };
    opt("target", Some(c.target.to_string_lossy().into_owned()));
    opt("workload", Some(c.workload.name().into()));
    let raw_cfg = c.workload.raw();
    let raw = raw_cfg.is_some();
    if let Some(r) = raw_cfg {
        opt("pattern", Some(r.pattern.name().into()));
        if r.pattern == Pattern::Randrw {
            opt("read-pct", Some(r.read_pct.to_string()));
        }
        opt(
            "files",
            Some(c.files).filter(|f| *f != 1).map(|f| f.to_string()),
        );
        opt("size", c.size_bytes.map(size_word));
        opt("bs", Some(size_word(u64::from(c.block_size))));
    }
    opt("sessions", Some(c.sessions.to_string()));
    if raw {
        opt("engine", Some(c.engine.name().into()));
        opt(
            "iodepth",
            Some(c.iodepth).filter(|d| *d > 1).map(|d| d.to_string()),
        );
        opt("io", Some(c.io_mode.name().into()));
    }
    match c.length {
        RunLength::Time { time_s, ramp_s } => {
            opt("time", Some(seconds(time_s)));
            opt("ramp", Some(ramp_s).filter(|r| *r > 0.0).map(seconds));
        }
        RunLength::Ops { ops } => opt("ops", Some(ops.to_string())),
    }
    if let Some(r) = raw_cfg {
        let dist = r.distribution.to_string();
        opt("dist", Some(dist).filter(|d| d != "uniform"));
        opt("rate", c.rate_iops.map(|r| r.to_string()));
        opt(
            "arrival",
            c.arrival
                .map(|a| a.name().to_string())
                .filter(|a| a != "uniform"),
        );
    }
    opt("seed", Some(c.seed.to_string()));
    if let Some(st) = &c.steady {
        steady_words(&mut words, st);
    }
    words.join(" ")
}

/// `--steady-state` (or `--precondition`) and every rule, as given.
fn steady_words(words: &mut Vec<String>, st: &crate::steady::Steady) {
    let r = &st.rules;
    words.push(
        if st.precondition {
            "--precondition"
        } else {
            "--steady-state"
        }
        .into(),
    );
    for (name, v) in [
        ("round", format!("{}s", r.round_s)),
        ("steady-window", r.window.to_string()),
        ("steady-range", format!("{}%", r.range_pct)),
        ("steady-slope", format!("{}%", r.slope_pct)),
        ("steady-on", r.metric.name().to_string()),
    ] {
        words.push(format!("--{name}"));
        words.push(shell_word(&v));
    }
}

/// A size as `--size` takes it: `64M`, `8k`, or bytes.
fn size_word(bytes: u64) -> String {
    for (unit, n) in [
        ("T", 1u64 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("k", 1 << 10),
    ] {
        if bytes >= n && bytes.is_multiple_of(n) {
            return format!("{}{unit}", bytes / n);
        }
    }
    bytes.to_string()
}

fn seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// A word as a POSIX shell reads it back: bare when it is only safe
/// characters, else in single quotes (a `'` inside as `'\''`).
pub fn shell_word(w: &str) -> String {
    let safe = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:+=,@%".contains(c));
    if safe {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// The heading a stored setting belongs under, as `dbio run --help` groups them.
fn group(key: &str) -> &'static str {
    let first = key.split('.').next().unwrap_or(key);
    match first {
        "target" | "files" | "size_bytes" | "destroy_device" | "load_parallel"
        | "allow_root_fs" => "Target",
        "workload" | "pattern" | "read_pct" | "sessions" | "distribution" | "hotspot"
        | "rate_iops" | "seed" | "block_size_bytes" => "Workload",
        "engine" | "iodepth" | "io_mode" | "uring" => "Engine",
        "length" | "interval_s" | "outlier_ms" => "Timing",
        "verify" | "content" => "Content and verify",
        "slob" => "SLOB model",
        "pg" => "PostgreSQL",
        "mysql" => "MariaDB",
        "steady_state" => "Steady state",
        _ => "Other",
    }
}

/// The settings: the command line (of a dbio run: an import is not one
/// dbio can make again), then the stored settings in a table grouped by
/// heading.
pub fn settings(run: &StoredRun, report: Option<&Report>) -> String {
    // Every setting as stored (a field added since an old run was stored
    // is not shown at a default it never had).
    let config = run.report.get("config").cloned().unwrap_or(Value::Null);
    let o = report.map_or_else(String::new, |r| {
        format!(
            "<p class=\"note\">The same run again (its seed included):</p>\n<pre class=\"cmd\">{}</pre>\n",
            escape(&command_line(&r.config))
        )
    });
    let flat = super::data::flatten_config(Some(&config));
    let order = [
        "Target",
        "Workload",
        "Engine",
        "Timing",
        "Content and verify",
        "SLOB model",
        "PostgreSQL",
        "MariaDB",
        "Other",
    ];
    let mut rows: Vec<Vec<String>> = Vec::new();
    for heading in order {
        let items: Vec<(&String, &String)> =
            flat.iter().filter(|(k, _)| group(k) == heading).collect();
        if items.is_empty() {
            continue;
        }
        rows.push(vec![format!(
            "<th colspan=\"2\" class=\"group\">{}</th>",
            escape(heading)
        )]);
        for (k, v) in items {
            rows.push(vec![td(k), td(v)]);
        }
    }
    o + &table("settings", &["setting".into(), "value".into()], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_reads_back_as_the_run() {
        use crate::config::{EngineKind, IoMode, RawConfig, WorkloadConfig};
        let config = RunConfig {
            target: "/mnt/my data/it's".into(),
            workload: WorkloadConfig::Raw(RawConfig {
                pattern: Pattern::Randrw,
                read_pct: 70,
                distribution: "zipf:1.2".parse().unwrap(),
                uring: None,
                verify: Default::default(),
            }),
            files: 2,
            size_bytes: Some(67108864),
            block_size: 8192,
            sessions: 4,
            engine: EngineKind::IoUring,
            iodepth: 8,
            io_mode: IoMode::Direct,
            length: RunLength::Time {
                time_s: 3.0,
                ramp_s: 0.5,
            },
            rate_iops: None,
            seed: 7,
            ..crate::report::run::tests::sample().config
        };
        let line = command_line(&config);
        assert_eq!(
            line,
            "dbio run --target '/mnt/my data/it'\\''s' --workload raw --pattern randrw --read-pct 70 \
             --files 2 --size 64M --bs 8k --sessions 4 --engine io_uring --iodepth 8 --io direct \
             --time 3 --ramp 0.5 --dist zipf:1.2 --seed 7"
        );
    }

    /// A command line → its settings → the page's command line → the same settings.
    #[test]
    fn the_command_line_makes_the_same_settings() {
        let config = |argv: &[&str]| -> RunConfig {
            let cli = crate::cli::try_parse_from(argv).unwrap();
            let crate::cli::Command::Run(args) = cli.command else {
                panic!("a run")
            };
            args.into_config().unwrap()
        };
        let value = |c: &RunConfig| serde_json::to_value(c).unwrap();
        for argv in [
            &[
                "dbio",
                "run",
                "--target",
                "/tmp/x",
                "--pattern",
                "randrw",
                "--read-pct",
                "70",
                "--files",
                "3",
                "--size",
                "96M",
                "--bs",
                "4k",
                "--sessions",
                "8",
                "--engine",
                "io_uring",
                "--iodepth",
                "16",
                "--io",
                "fsync",
                "--time",
                "20",
                "--ramp",
                "2",
                "--dist",
                "zipf:1.1",
                "--rate",
                "5000",
                "--seed",
                "11",
            ][..],
            &[
                "dbio",
                "run",
                "--target",
                "/tmp/y",
                "--pattern",
                "seqwrite",
                "--ops",
                "1000",
                "--seed",
                "3",
            ],
            &[
                "dbio",
                "run",
                "--workload",
                "slob",
                "--target",
                "/tmp/z",
                "--sessions",
                "2",
                "--time",
                "5",
                "--seed",
                "1",
            ],
            &[
                "dbio",
                "run",
                "--target",
                "/tmp/w",
                "--steady-state",
                "--round",
                "2s",
                "--steady-window",
                "4",
                "--steady-range",
                "15%",
                "--steady-slope",
                "7.5",
                "--steady-on",
                "p99",
                "--time",
                "40",
                "--seed",
                "2",
            ],
        ] {
            let first = config(argv);
            let line = command_line(&first);
            let words: Vec<&str> = line.split_whitespace().collect();
            let (first, again) = (value(&first), value(&config(&words)));
            let raw = first["workload"] == "raw";
            let keys = [
                "target",
                "workload",
                "sessions",
                "length",
                "seed",
                "pattern",
                "read_pct",
                "files",
                "size_bytes",
                "block_size_bytes",
                "engine",
                "iodepth",
                "io_mode",
                "distribution",
                "rate_iops",
                "steady_state",
            ];
            for k in keys.iter().take(if raw { keys.len() } else { 5 }) {
                assert_eq!(first.get(k), again.get(k), "{k}: {argv:?} -> {line}");
            }
        }
    }

    #[test]
    fn buckets_are_named_short() {
        let names: Vec<String> = [0, 4, 9, 10, 12, 15, 20].map(bucket_label).to_vec();
        assert_eq!(
            names,
            ["1µs", "16µs", "512µs", "1ms", "4.1ms", "33ms", "1s"]
        );
    }

    #[test]
    fn latencies_take_the_unit_that_reads_best() {
        assert_eq!(latency(Some(0.674)), "674ns");
        assert_eq!(latency(Some(22.655)), "22.7us");
        assert_eq!(latency(Some(16056.319)), "16.06ms");
        assert_eq!(latency(None), "-");
    }
}
