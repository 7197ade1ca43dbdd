//! A SLOB model run's AWR content on its page, from the `slob` part of the
//! stored report (`report::awr` computed it when the run ended; nothing is
//! recomputed here): the headline, Load Profile, Top Timed Events as bars
//! and as AWR's table, background events, IO Profile by Function, redo, and
//! the Wait Event Histogram as one small bar chart per event beside AWR's
//! table of percentages.

use std::fmt::Write;

use super::page::{figure, key_values, table, td};
use crate::chart::{BarChart, BarSeries, HBar, HBarChart, color, escape};
use crate::document::awr::{BUCKETS_US, EventSummary, SlobSummary, bucket_bounds};
use crate::report::run::awr_text::bucket_name;
use crate::units::{fmt_count, fmt_size};
use crate::workload::slob::events::Side;

/// The SLOB model's section of the run document, as the page shows it.
pub type Awr = SlobSummary;

/// The foreground wait events, longest total time first.
fn foreground(a: &Awr) -> Vec<&EventSummary> {
    let mut fg: Vec<&EventSummary> = a
        .events
        .iter()
        .filter(|e| e.side == Side::Foreground)
        .collect();
    fg.sort_by(|a, b| b.time_s.total_cmp(&a.time_s));
    fg
}

/// DB CPU, CPU wait when it is over 1% of DB time (as the terminal
/// report), then the foreground events by time: (name, class, time, %).
fn top_rows(a: &Awr) -> Vec<(String, String, Option<&EventSummary>, f64, f64)> {
    let share = |t: f64| {
        if a.db_time_s > 0.0 {
            100.0 * t / a.db_time_s
        } else {
            0.0
        }
    };
    let mut rows = vec![(
        "DB CPU".to_string(),
        "CPU".to_string(),
        None,
        a.db_cpu_s,
        share(a.db_cpu_s),
    )];
    if a.db_time_s > 0.0 && a.cpu_wait_s > 0.01 * a.db_time_s {
        rows.push((
            "CPU wait".into(),
            "CPU (run queue)".into(),
            None,
            a.cpu_wait_s,
            share(a.cpu_wait_s),
        ));
    }
    for e in foreground(a) {
        rows.push((
            e.name.clone(),
            e.class.clone(),
            Some(e),
            e.time_s,
            e.pct_db_time,
        ));
    }
    rows
}

/// A stable colour per wait class, so a class reads the same in every chart.
fn class_color(class: &str) -> &'static str {
    match class {
        "User I/O" => color(0),
        "Commit" => color(1),
        "Configuration" => color(3),
        "System I/O" => color(5),
        c if c.starts_with("CPU") => color(2),
        _ => color(6),
    }
}

/// The headline: time, CPU, cache, redo.
pub fn summary_html(a: &Awr) -> String {
    let k = &a.counters;
    let mut facts = vec![
        (
            "elapsed (measured)".to_string(),
            format!("{:.1} s", a.elapsed_s),
        ),
        ("DB time".into(), format!("{:.1} s", a.db_time_s)),
        ("DB CPU".into(), format!("{:.1} s", a.db_cpu_s)),
        (
            "buffer cache hit".into(),
            format!("{:.1}%", a.cache_hit_pct),
        ),
    ];
    if k.redo_written_bytes > 0 {
        let pct = 100.0 * k.redo_wastage_bytes as f64 / k.redo_written_bytes as f64;
        facts.extend([
            ("redo generated".to_string(), fmt_size(k.redo_bytes)),
            (
                "redo written".into(),
                format!(
                    "{} in {} writes of {} on average",
                    fmt_size(k.redo_written_bytes),
                    k.redo_writes,
                    fmt_size(k.redo_written_bytes / k.redo_writes.max(1))
                ),
            ),
            (
                "redo wastage (padding to the redo block)".into(),
                format!("{} ({pct:.1}% of written)", fmt_size(k.redo_wastage_bytes)),
            ),
            ("log switches".into(), k.log_switches.to_string()),
        ]);
    }
    key_values(&facts)
}

fn num_td(v: String) -> String {
    format!("<td class=\"num\">{}</td>", escape(&v))
}

fn headers(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Load Profile per second and per transaction.
pub fn load_profile_html(a: &Awr) -> String {
    let rows: Vec<Vec<String>> = a
        .load_profile
        .iter()
        .map(|l| {
            vec![
                td(&l.name),
                num_td(format!("{:.1}", l.per_second)),
                num_td(
                    l.per_transaction
                        .map_or(String::new(), |v| format!("{v:.1}")),
                ),
            ]
        })
        .collect();
    table(
        "awr",
        &headers(&["", "Per Second", "Per Transaction"]),
        &rows,
    )
}

/// Top Timed Events: bars of the share of DB time, then AWR's table.
pub fn top_events_chart(a: &Awr) -> HBarChart {
    let mut c = HBarChart::new("Top timed events (foreground)", "% of DB time");
    for (name, class, e, time, pct) in top_rows(a) {
        let text = match e {
            Some(e) => format!(
                "{pct:.1}% · {time:.1} s · {} waits · {:.3} ms avg",
                e.waits, e.avg_ms
            ),
            None => format!("{pct:.1}% · {time:.1} s"),
        };
        c.bars.push(HBar {
            tip: format!("{name} ({class}): {text}"),
            name,
            value: pct,
            text,
            color: class_color(&class),
        });
    }
    c
}

fn event_table(rows: &[(String, String, Option<&EventSummary>, f64, f64)], share: &str) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, class, e, time, pct)| {
            vec![
                td(name),
                num_td(e.map_or(String::new(), |e| e.waits.to_string())),
                num_td(format!("{time:.1}")),
                num_td(e.map_or(String::new(), |e| format!("{:.3}", e.avg_ms))),
                num_td(format!("{pct:.1}")),
                td(class),
            ]
        })
        .collect();
    table(
        "awr",
        &headers(&["Event", "Waits", "Time(s)", "Avg(ms)", share, "Wait Class"]),
        &rows,
    )
}

/// AWR's Top Timed Events table.
pub fn top_events_table(a: &Awr) -> String {
    event_table(&top_rows(a), "%DB time")
}

/// Background Wait Events (share of the window), as the terminal report.
pub fn background_table(a: &Awr) -> String {
    let rows: Vec<_> = a
        .events
        .iter()
        .filter(|e| e.side == Side::Background)
        .map(|e| {
            (
                e.name.clone(),
                e.class.clone(),
                Some(e),
                e.time_s,
                e.pct_db_time,
            )
        })
        .collect();
    event_table(&rows, "%bg time")
}

/// IO Profile by Function.
pub fn io_by_function_html(a: &Awr) -> String {
    let rows: Vec<Vec<String>> = a
        .io_by_function
        .iter()
        .map(|f| {
            vec![
                td(&f.function),
                num_td(fmt_count(f.read_requests_per_s)),
                num_td(format!("{:.1}", f.read_mib_per_s)),
                num_td(fmt_count(f.write_requests_per_s)),
                num_td(format!("{:.1}", f.write_mib_per_s)),
                num_td(format!("{:.3}", f.avg_ms)),
            ]
        })
        .collect();
    table(
        "awr",
        &headers(&[
            "Function",
            "Reads/s",
            "Read MiB/s",
            "Writes/s",
            "Write MiB/s",
            "Avg(ms)",
        ]),
        &rows,
    )
}

/// The histogram's bucket names: each upper bound (marked `≤` in tables,
/// bare under the bars of a chart "up to"), then ">1s".
fn bucket_names(a: &Awr, mark: &str) -> Vec<String> {
    let counts = a
        .events
        .first()
        .map_or(BUCKETS_US.len() + 1, |e| e.histogram.len());
    bucket_bounds(counts)
        .iter()
        .map(|&b| format!("{mark}{}", bucket_name(b)))
        .chain([">1s".to_string()])
        .collect()
}

/// One bar chart per event: the share of its waits in each bucket.
pub fn histogram_charts(a: &Awr) -> Vec<BarChart> {
    let groups = bucket_names(a, "");
    a.events
        .iter()
        .filter(|e| e.waits > 0)
        .map(|e| {
            let mut c = BarChart::new(
                &format!("{} ({} waits)", e.name, e.waits),
                "wait time, up to",
                "% of waits",
                groups.clone(),
            );
            c.width = 560.0;
            c.height = 240.0;
            c.value_suffix = "%".into();
            // One scale for every event, the numbers in the tooltips and the
            // table below.
            c.y_max = Some(100.0);
            c.value_labels = false;
            let pct = |n: u64| 100.0 * n as f64 / e.waits as f64;
            c.series.push(BarSeries {
                name: e.class.clone(),
                color: class_color(&e.class),
                values: e
                    .histogram
                    .iter()
                    .map(|&n| (n > 0).then(|| pct(n)))
                    .collect(),
                tips: e
                    .histogram
                    .iter()
                    .zip(&groups)
                    .map(|(&n, g)| {
                        let up_to = if g.starts_with('>') { "" } else { "up to " };
                        format!("{}: {n} waits {up_to}{g} ({:.1}%)", e.name, pct(n))
                    })
                    .collect(),
            });
            c
        })
        .collect()
}

/// AWR's Wait Event Histogram table (% of waits in each bucket).
pub fn histogram_table(a: &Awr) -> String {
    let mut header = headers(&["Event", "Waits"]);
    header.extend(bucket_names(a, "≤"));
    let rows: Vec<Vec<String>> = a
        .events
        .iter()
        .map(|e| {
            let mut r = vec![td(&e.name), num_td(e.waits.to_string())];
            for &n in &e.histogram {
                r.push(num_td(if n == 0 {
                    ".".into()
                } else {
                    format!("{:.1}", 100.0 * n as f64 / e.waits.max(1) as f64)
                }));
            }
            r
        })
        .collect();
    table("awr", &header, &rows)
}

/// Every AWR section, as `(id, heading, html)`.
pub fn sections(a: &Awr) -> Vec<(&'static str, &'static str, String)> {
    let mut events = figure(
        &top_events_chart(a).render(),
        "Share of DB time (session time in operations): DB CPU, then each foreground wait event; colour = wait class.",
    );
    events += &top_events_table(a);
    events += "<h3>Background wait events</h3>\n";
    events += "<p class=\"note\">Share of the measured window (the DB writers and the log writer are not in DB time).</p>\n";
    events += &background_table(a);
    let mut hist = String::from("<div class=\"charts\">");
    for c in histogram_charts(a) {
        hist += &figure(&c.render(), "");
    }
    hist += "</div>\n";
    let _ = write!(
        hist,
        "<p class=\"note\">% of each event's waits by upper bound of its wait time (AWR's buckets; . = none).</p>\n{}",
        histogram_table(a)
    );
    vec![
        ("awr", "AWR summary", summary_html(a)),
        ("load", "Load Profile", load_profile_html(a)),
        ("events", "Top Timed Events", events),
        ("io", "IO Profile by Function", io_by_function_html(a)),
        ("histograms", "Wait Event Histogram", hist),
    ]
}
