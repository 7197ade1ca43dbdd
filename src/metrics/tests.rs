//! The exposition from a state fed as the harness feeds it: escaping, the
//! two formats and their negotiation, exact cumulative buckets, every
//! family present and listed in docs/metrics.md.

use super::expo::{self, Format, escape};
use super::names::{FAMILIES, Type};
use super::state::{Labels, State};
use crate::measure::stats::Kind;
use crate::samplers::diskstats::DeviceRates;
use crate::samplers::host::HostRates;
use crate::samplers::series::{self, BUCKETS, DueHists, KindPoint, SecondHists, SecondPoint};
use crate::samplers::telemetry::{DeviceSample, TelemetryPoint};
use crate::workload::live::{Activity, LiveDb, LiveWait, Process, WriterIo};

const START_NS: u64 = 1_790_000_000_123_000_000;

/// A state with one paced run of 2 s (reads at 1 µs and 3 ms, due 2 µs
/// and 50 ms after they fell due), telemetry and a plan.
fn fed() -> State {
    fed_as(true)
}

/// [`fed`], paced or a closed loop (no due times).
fn fed_as(paced: bool) -> State {
    let mut s = State::default();
    let labels = Labels(vec![
        ("run", String::new()),
        ("plan", "p \"1\"".into()),
        ("variable", "A".into()),
        ("workload", "raw".into()),
        ("sessions", "4".into()),
        ("target", "/data/a\\b\nc".into()),
    ]);
    s.begin(labels, Some(10.0), 1.0, paced);
    s.started(START_NS);
    for t_s in 0..2 {
        let mut hists: SecondHists = [[0; BUCKETS]; 3];
        hists[Kind::Read as usize][series::bucket(1_000)] = 90;
        hists[Kind::Read as usize][series::bucket(3_000_000)] = 10;
        let point = SecondPoint {
            t_s,
            ramp: t_s == 0,
            read: KindPoint {
                ops: 100,
                bytes: 100 * 8192,
                lat_mean_us: (90.0 * 1.0 + 10.0 * 3000.0) / 100.0,
                lat_p99_us: 3000.0,
            },
            write: KindPoint::default(),
            sync: KindPoint::default(),
        };
        s.second(&point, &hists, &due_second(paced));
    }
    let rates = DeviceRates {
        r_per_s: 50.0,
        r_await_ms: 2.0,
        util_pct: 40.0,
        aqu_sz: 0.5,
        rkib_per_s: 400.0,
        ..Default::default()
    };
    s.telemetry(&TelemetryPoint {
        t_s: 2.0,
        interval_s: 2.0,
        host: HostRates {
            user_pct: 30.0,
            idle_pct: 70.0,
            ctxt_per_s: 1000.0,
            ..Default::default()
        },
        devices: vec![DeviceSample {
            name: "vda".into(),
            rates: Some(rates),
        }],
    });
    s.db(&live_db());
    s.plan_progress("p \"1\"", 3, 8, 120.0);
    s
}

/// One second's paced part: 100 reads, 90 due 2 µs after they fell due
/// (issued 1 µs late), 10 due 50 ms after (issued 47 ms late); nothing in
/// a closed loop.
fn due_second(paced: bool) -> DueHists {
    let mut d = DueHists::default();
    if paced {
        d.ops[0] = 100;
        d.due[0][series::bucket(2_000)] = 90;
        d.due[0][series::bucket(50_000_000)] = 10;
        d.late[0][series::bucket(1_000)] = 90;
        d.late[0][series::bucket(47_000_000)] = 10;
        d.due_sum_ns[0] = 90 * 2_000 + 10 * 50_000_000;
        d.late_sum_ns[0] = 90 * 1_000 + 10 * 47_000_000;
    }
    d
}

/// A database run's counts: sampled waits (no count), one counted wait,
/// commits, the DB writer's writes and bytes, the log writer's bytes only.
fn live_db() -> LiveDb {
    let wait = |process, event: &str, class: &str, seconds, count| LiveWait {
        process,
        event: event.into(),
        class: class.into(),
        seconds,
        count,
    };
    LiveDb {
        seq: 1,
        waits: vec![
            wait(Process::Session, "CPU", "CPU", 2.0, None),
            wait(Process::Session, "IO:DataFileRead", "IO", 1.0, None),
            wait(Process::Session, "log file sync", "Commit", 0.2, Some(40)),
            wait(
                Process::Background,
                "checkpointer IO:DataFileWrite",
                "IO",
                0.5,
                None,
            ),
        ],
        activity: Activity {
            commits: Some(40.0),
            db_writer: WriterIo {
                writes: Some(10.0),
                bytes: Some(81920.0),
            },
            log_writer: WriterIo {
                writes: None,
                bytes: Some(4096.0),
            },
        },
    }
}

/// A sample line's value (after the labels, before the timestamp).
fn sample_value(line: &str) -> f64 {
    let after = line.rsplit_once("} ").map_or(line, |(_, v)| v);
    after.split(' ').next().unwrap().parse().unwrap()
}

/// The run label `fed` gives.
fn run_label() -> String {
    format!(
        "run=\"{}\"",
        crate::store::fmt_utc((START_NS / 1_000_000) as i64)
    )
}

/// The value of the one sample whose line starts with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(lines.len(), 1, "{prefix}: {lines:?}");
    sample_value(lines[0])
}

#[test]
fn label_values_are_escaped_as_the_formats_say() {
    assert_eq!(escape("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    assert_eq!(escape("plain /path"), "plain /path");
    let text = expo::render(&fed(), Format::Prometheus);
    assert!(text.contains("target=\"/data/a\\\\b\\nc\""), "{text}");
    assert!(text.contains("plan=\"p \\\"1\\\"\""), "{text}");
    // No raw newline inside a sample line: every line is a comment or a sample.
    for l in text.lines() {
        assert!(l.starts_with("# ") || l.starts_with("dbio_"), "{l:?}");
    }
}

#[test]
fn the_accept_header_chooses_the_format() {
    // What Prometheus 2.42 sends (checked with a listening socket).
    let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    assert_eq!(Format::from_accept(Some(prom)), Format::OpenMetrics);
    assert_eq!(Format::from_accept(Some("text/plain")), Format::Prometheus);
    assert_eq!(Format::from_accept(None), Format::Prometheus);
    let refused = "application/openmetrics-text;q=0, text/plain";
    assert_eq!(Format::from_accept(Some(refused)), Format::Prometheus);
}

#[test]
fn the_two_formats_differ_in_counter_names_timestamps_and_eof() {
    let s = fed();
    let prom = expo::render(&s, Format::Prometheus);
    let om = expo::render(&s, Format::OpenMetrics);
    assert!(prom.contains("# TYPE dbio_requests_total counter\n"));
    assert!(om.contains("# TYPE dbio_requests counter\n"));
    assert!(!prom.contains("# EOF"));
    assert!(om.ends_with("# EOF\n"));
    // The per-second samples are at the end of the last second: start + 2 s.
    let ms = START_NS / 1_000_000 + 2000;
    let read = format!("dbio_requests_total{{{}", run_label());
    let line = |t: &str| {
        t.lines()
            .find(|l| l.starts_with(&read) && l.contains("op=\"read\""))
            .unwrap()
            .to_string()
    };
    assert!(
        line(&prom).ends_with(&format!("}} 200 {ms}")),
        "{}",
        line(&prom)
    );
    assert!(
        line(&om).ends_with(&format!("}} 200 {}.{:03}", ms / 1000, ms % 1000)),
        "{}",
        line(&om)
    );
}

#[test]
fn histogram_buckets_are_cumulative_and_exact() {
    let text = expo::render(&fed(), Format::Prometheus);
    let buckets = buckets(&text, "dbio_request_service_seconds", "read");
    assert_eq!(buckets.len(), 55);
    assert!(
        buckets
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
    );
    for (le, n) in &buckets {
        // 180 reads at 1 µs, 20 at 3 ms.
        let want = if *le <= 1e-6 {
            0.0
        } else if *le <= 3e-3 {
            180.0
        } else {
            200.0
        };
        assert_eq!(*n, want, "le {le}");
    }
    let base = format!(
        "{{{},plan=\"p \\\"1\\\"\",variable=\"A\",workload=\"raw\",sessions=\"4\",target=\"/data/a\\\\b\\nc\",op=\"read\"",
        run_label()
    );
    assert_eq!(
        value(&text, &format!("dbio_request_service_seconds_count{base}")),
        200.0
    );
    let sum = value(&text, &format!("dbio_request_service_seconds_sum{base}"));
    assert!((sum - (180.0 * 1e-6 + 20.0 * 3e-3)).abs() < 1e-9, "{sum}");
    assert_eq!(
        value(&text, &format!("dbio_request_bytes_total{base}")),
        200.0 * 8192.0
    );
}

#[test]
fn device_rates_become_counters_over_the_interval() {
    let text = expo::render(&fed(), Format::Prometheus);
    let dev = |name: &str| {
        let l = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("device=\"vda\""))
            .unwrap();
        sample_value(l)
    };
    assert_eq!(dev("dbio_device_reads_completed_total"), 100.0);
    assert_eq!(dev("dbio_device_read_bytes_total"), 800.0 * 1024.0);
    assert!((dev("dbio_device_read_time_seconds_total") - 0.2).abs() < 1e-12);
    assert!((dev("dbio_device_io_time_seconds_total") - 0.8).abs() < 1e-12);
    assert_eq!(dev("dbio_device_io_time_weighted_seconds_total"), 1.0);
    assert!((dev("dbio_device_utilization_ratio") - 0.4).abs() < 1e-12);
    assert!(text.contains("dbio_plan_runs_done{plan=\"p \\\"1\\\"\"} 3\n"));
    assert!(text.contains("dbio_plan_eta_seconds{plan=\"p \\\"1\\\"\"} 120\n"));
}

#[test]
fn every_family_is_exposed_and_listed_in_the_docs() {
    let mut s = fed();
    s.saved(42);
    let text = expo::render(&s, Format::Prometheus);
    let docs = include_str!("../../docs/metrics.md");
    let mut listed = Vec::new();
    for f in FAMILIES {
        let head = match f.kind {
            Type::Counter => format!("# TYPE {}_total counter", f.name),
            k => format!("# TYPE {} {}", f.name, k.word()),
        };
        assert!(text.contains(&head), "{} not exposed", f.name);
        for sample in f.samples() {
            assert!(
                text.contains(&format!("\n{sample}{{")),
                "no sample {sample}"
            );
            assert!(
                docs.contains(&format!("`{sample}`")),
                "docs/metrics.md does not list {sample}"
            );
            listed.push(sample);
        }
    }
    // And the docs' metric table lists nothing else.
    for row in docs.lines().filter(|l| l.starts_with("| `dbio_")) {
        for name in row
            .split('|')
            .nth(1)
            .unwrap()
            .split('`')
            .filter(|n| n.starts_with("dbio_"))
        {
            assert!(
                listed.iter().any(|l| l == name),
                "docs/metrics.md lists {name}, which is not exposed"
            );
        }
    }
    // Every sample line belongs to a family.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let name = l.split('{').next().unwrap();
        assert!(listed.iter().any(|s| s == name), "{name} is in no family");
    }
}

#[test]
fn a_run_not_yet_started_exposes_nothing_of_itself() {
    let mut s = State::default();
    s.begin(Labels::default(), None, 0.0, false);
    assert_eq!(expo::render(&s, Format::Prometheus), "");
    assert_eq!(expo::render(&s, Format::OpenMetrics), "# EOF\n");
}

#[test]
fn sampled_waits_are_seconds_and_the_page_gets_active_sessions() {
    let s = fed();
    let text = expo::render(&s, Format::Prometheus);
    let wait = |process: &str, event: &str| {
        let l = text
            .lines()
            .find(|l| {
                l.starts_with("dbio_db_wait_seconds_total{")
                    && l.contains(&format!("process=\"{process}\",event=\"{event}\""))
            })
            .unwrap_or_else(|| panic!("{process} {event}: {text}"));
        sample_value(l)
    };
    assert_eq!(wait("session", "CPU"), 2.0);
    assert_eq!(wait("session", "IO:DataFileRead"), 1.0);
    assert_eq!(wait("background", "checkpointer IO:DataFileWrite"), 0.5);
    assert!(
        text.contains("event=\"IO:DataFileRead\",class=\"IO\""),
        "{text}"
    );
    // Only a counted wait has a count.
    let counts: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("dbio_db_waits_total{"))
        .collect();
    assert_eq!(counts.len(), 1, "{counts:?}");
    assert!(counts[0].contains("event=\"log file sync\",class=\"Commit\""));
    assert_eq!(sample_value(counts[0]), 40.0);
    // Over the 2 s collected: 1 session on CPU, 0.5 reading, largest first.
    let page = s.json();
    let active = &page["run"]["waits"][0]["active"];
    assert_eq!(active[0], serde_json::json!(["CPU", 1.0]));
    assert_eq!(active[1], serde_json::json!(["IO:DataFileRead", 0.5]));
    // Nothing new: no new point.
    let mut s = s;
    s.db(&live_db());
    assert_eq!(s.json()["run"]["waits"].as_array().unwrap().len(), 1);
}

#[test]
fn commits_and_writer_io_are_counters_and_the_page_gets_rates() {
    let mut s = fed();
    let text = expo::render(&s, Format::Prometheus);
    let one = |prefix: &str, label: &str| {
        let l: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(prefix) && l.contains(label))
            .collect();
        assert_eq!(l.len(), 1, "{prefix} {label}: {text}");
        sample_value(l[0])
    };
    assert_eq!(one("dbio_db_commits_total{", ""), 40.0);
    assert_eq!(one("dbio_db_writer_writes_total{", "writer=\"db\""), 10.0);
    assert_eq!(
        one("dbio_db_writer_written_bytes_total{", "writer=\"db\""),
        81920.0
    );
    assert_eq!(
        one("dbio_db_writer_written_bytes_total{", "writer=\"log\""),
        4096.0
    );
    // The log writer's writes are not counted (MariaDB): no sample, not a 0.
    let log_writes =
        |l: &&str| l.starts_with("dbio_db_writer_writes_total{") && l.contains("writer=\"log\"");
    assert!(!text.lines().any(|l| log_writes(&l)), "{text}");
    // A second later, 60 more commits and 2 MiB more from the DB writer.
    let mut later = live_db();
    later.seq = 2;
    later.activity.commits = Some(100.0);
    later.activity.db_writer.bytes = Some(81920.0 + f64::from(2 << 20));
    s.run.as_mut().unwrap().elapsed_s += 1.0;
    s.db(&later);
    let page = s.json();
    let db = page["run"]["db"].as_array().unwrap();
    assert_eq!(db.len(), 2);
    // The first stretch is the 2 s from the start.
    assert_eq!(db[0]["commits"], 20.0);
    assert_eq!(db[1]["commits"], 60.0);
    assert_eq!(db[1]["db_mib"], 2.0);
    assert_eq!(db[1]["log_writes"], serde_json::Value::Null);
}

/// The `le` bounds and counts of histogram `family` for `op`.
fn buckets(text: &str, family: &str, op: &str) -> Vec<(f64, f64)> {
    text.lines()
        .filter(|l| {
            l.starts_with(&format!("{family}_bucket{{")) && l.contains(&format!("op=\"{op}\""))
        })
        .map(|l| {
            let le = l.split(",le=\"").nth(1).unwrap().split('"').next().unwrap();
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().unwrap()
            };
            (le, sample_value(l))
        })
        .collect()
}

#[test]
fn a_paced_run_exposes_due_time_and_lateness_beside_service() {
    let s = fed();
    let text = expo::render(&s, Format::Prometheus);
    let due = buckets(&text, "dbio_request_due_seconds", "read");
    assert_eq!(due.len(), 55);
    for (le, n) in &due {
        // 180 reads due 2 µs after they fell due, 20 after 50 ms.
        let want = match *le {
            le if le <= 2e-6 => 0.0,
            le if le <= 50e-3 => 180.0,
            _ => 200.0,
        };
        assert_eq!(*n, want, "le {le}");
    }
    assert_eq!(
        buckets(&text, "dbio_request_lateness_seconds", "read").len(),
        55
    );
    // Sync has no due time; write has one, empty here.
    assert!(buckets(&text, "dbio_request_due_seconds", "sync").is_empty());
    assert_eq!(
        buckets(&text, "dbio_request_due_seconds", "write")
            .last()
            .unwrap()
            .1,
        0.0
    );
    let read = |name: &str| {
        let l = text
            .lines()
            .find(|l| l.starts_with(&format!("{name}{{")) && l.contains("op=\"read\""))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        sample_value(l)
    };
    assert_eq!(read("dbio_request_due_seconds_count"), 200.0);
    assert!((read("dbio_request_due_seconds_sum") - (180.0 * 2e-6 + 20.0 * 0.05)).abs() < 1e-9);
    assert!(
        (read("dbio_request_lateness_seconds_sum") - (180.0 * 1e-6 + 20.0 * 0.047)).abs() < 1e-9
    );
    // The page's seconds carry the due-time p99 beside the service p99.
    let page = s.json();
    let last = &page["run"]["seconds"][1];
    let due_p99 = last["due_p99_us"][0].as_f64().unwrap();
    let service_p99 = last["p99_us"][0].as_f64().unwrap();
    assert!((due_p99 - 50_000.0).abs() / 50_000.0 < 0.07, "{due_p99}");
    assert!(
        (service_p99 - 3_000.0).abs() / 3_000.0 < 0.07,
        "{service_p99}"
    );
}

#[test]
fn a_closed_loop_exposes_no_due_time() {
    let s = fed_as(false);
    let text = expo::render(&s, Format::Prometheus);
    assert!(text.contains("dbio_request_service_seconds_count{"));
    assert!(!text.contains("dbio_request_due_seconds"), "{text}");
    assert!(!text.contains("dbio_request_lateness_seconds"), "{text}");
    assert!(s.json()["run"]["seconds"][1]["due_p99_us"].is_null());
}
