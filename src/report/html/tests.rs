//! The report's charts and tables on fixed data (no store): what they
//! compute and flag, and a snapshot of the scaling chart.

use super::charts::{self, is_throughput};
use super::data::{LatencyCell, ReportData, RunValue};
use super::tables;

/// XFS peaks at 4 sessions and collapses at 16 (seed 001's shape); EXT4
/// scales slowly; 3 repeats each, one wild repeat in EXT4's 1-session cell.
fn sample() -> ReportData {
    let mut runs = Vec::new();
    let mut id = 0;
    let mut add = |variable: &str, sessions: u32, values: &[f64]| {
        for &value in values {
            id += 1;
            runs.push(RunValue {
                id,
                variable: variable.into(),
                sessions,
                value,
            });
        }
    };
    add("XFS", 1, &[14000.0, 15000.0, 16000.0]);
    add("XFS", 2, &[26000.0, 27000.0, 28000.0]);
    add("XFS", 4, &[39000.0, 40000.0, 41000.0]);
    add("XFS", 8, &[30000.0, 31000.0, 29000.0]);
    add("XFS", 16, &[12000.0, 12500.0, 11500.0]);
    add("EXT4", 1, &[5000.0, 5100.0, 4900.0, 5050.0, 9000.0]);
    add("EXT4", 2, &[8000.0, 8100.0, 7900.0]);
    add("EXT4", 4, &[10000.0, 10100.0, 9900.0]);
    add("EXT4", 8, &[11000.0, 11100.0, 10900.0]);
    add("EXT4", 16, &[11500.0, 11600.0, 11400.0]);
    let latency = [
        ("XFS", 1, 0.1),
        ("XFS", 16, 2.0),
        ("EXT4", 1, 0.3),
        ("EXT4", 16, 1.0),
    ]
    .iter()
    .map(|&(v, s, p50)| LatencyCell {
        kind: "write".into(),
        variable: v.into(),
        sessions: s,
        runs: 3,
        ios: 30000,
        p50_ms: p50,
        p99_ms: p50 * 5.0,
        p999_ms: p50 * 20.0,
    })
    .collect();
    ReportData {
        metric: "write.iops".into(),
        runs,
        latency,
        ..Default::default()
    }
}

#[test]
fn scaling_flags_the_collapse_and_fits_the_usl() {
    let s = charts::scaling(&sample());
    let xfs = s.iter().find(|x| x.fit.variable == "XFS").unwrap();
    assert_eq!(xfs.fit.peak.unwrap().sessions, 4.0);
    let c = xfs.fit.collapse.unwrap();
    assert_eq!((c.after_sessions, c.at_sessions), (4.0, 8.0));
    let fit = xfs.fit.usl.as_ref().unwrap();
    assert!(fit.kappa > 0.0 && fit.peak_n.is_some(), "{fit:?}");
    let svg = xfs.chart.render();
    assert!(
        svg.contains("collapse −") && svg.contains("USL fit (R²"),
        "{svg}"
    );
    let ext4 = s.iter().find(|x| x.fit.variable == "EXT4").unwrap();
    assert!(ext4.fit.collapse.is_none());
    let table = tables::scaling_table(&s);
    assert!(table.contains("class=\"flag\"") && table.contains(">no<"));
    insta::assert_snapshot!(xfs.chart.render());
}

#[test]
fn the_metric_chart_has_a_line_per_variable_with_the_tables_ci_and_every_run() {
    let d = sample();
    let c = charts::metric_vs_sessions(&d);
    // Per variable: its runs as dots (drawn first, no legend), then its line.
    assert_eq!(c.series.len(), 4);
    let (dots, ext4) = (&c.series[0], &c.series[2]);
    assert_eq!(ext4.name, "EXT4");
    assert!(!dots.line && !dots.legend && dots.name == "EXT4 runs");
    // 1 session: SLOB.R drops 4900 and 9000, keeps 5000, 5050, 5100.
    assert_eq!(ext4.points[0], (1.0, 5050.0));
    // The whisker is the 95% CI the table prints for that cell, not min–max.
    let cells = charts::cells(&d.runs);
    let cell = crate::report::plan::stats::cell_stats("EXT4", Some(1), &cells["EXT4"][&1]).unwrap();
    let ci = cell.ci95.unwrap();
    assert_eq!(ext4.whiskers[0], (1.0, ci.low, ci.high));
    assert_ne!(ext4.whiskers[0], (1.0, 4900.0, 9000.0));
    let table = tables::slob_table(&d, None).unwrap();
    let shown = format!(
        "95% CI {} – {}",
        crate::chart::scale::value_label(ci.low),
        crate::chart::scale::value_label(ci.high)
    );
    assert!(table.contains(&shown), "{shown} in {table}");
    // Every run is a dot at its cell: EXT4 has 17 runs.
    assert_eq!(dots.points.len(), 17);
    assert!(dots.points.contains(&(1.0, 9000.0)));
    // The two variables are dodged apart, each with its dots.
    let xfs = &c.series[3];
    assert!(ext4.offset_px < 0.0 && xfs.offset_px > 0.0);
    assert_eq!(dots.offset_px, ext4.offset_px);
    let svg = c.render();
    let stems: Vec<&str> = svg
        .lines()
        .filter(|l| l.contains("stroke-width=\"1.3\""))
        .collect();
    let x_of = |l: &str| -> f64 {
        let v = l.split("x1=\"").nth(1).unwrap();
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    // 10 cells x (stem + 2 caps); the stems at 1 session sit 9 px apart.
    assert_eq!(stems.len(), 30);
    assert!(
        (x_of(stems[15]) - x_of(stems[0]) - 9.0).abs() < 0.02,
        "{} {}",
        stems[0],
        stems[15]
    );
    // Sessions 1..16 span 16x: a log axis with a tick per count.
    assert_eq!(c.x.kind, crate::chart::ScaleKind::Log);
    assert_eq!(c.x.ticks.as_deref(), Some(&[1.0, 2.0, 4.0, 8.0, 16.0][..]));
}

#[test]
fn relative_bars_divide_by_the_baseline_cell() {
    let b = charts::relative_bars(&sample(), "EXT4");
    assert_eq!(b.groups.last().unwrap(), "Overall");
    let xfs = b.series.iter().find(|s| s.name == "XFS").unwrap();
    assert_eq!(xfs.values[2], Some(40000.0 / 10000.0));
    let ext4 = b.series.iter().find(|s| s.name == "EXT4").unwrap();
    assert!(ext4.values.iter().all(|v| *v == Some(1.0)));
}

#[test]
fn latency_charts_come_per_kind_with_three_percentiles_per_variable() {
    let c = charts::latency_vs_sessions(&sample());
    assert_eq!(c.len(), 1, "only write latency is in the data");
    assert_eq!(c[0].series.len(), 6);
    assert_eq!(c[0].y.kind, crate::chart::ScaleKind::Log);
}

#[test]
fn tables_show_spread_outliers_and_plain_verdicts() {
    let d = sample();
    let t = tables::slob_table(&d, None).unwrap();
    assert!(t.contains("outlier: run 20 (9000)"), "{t}");
    assert!(t.contains("95% CI"));
    assert!(
        tables::slob_table(&d, Some("ZFS"))
            .unwrap_err()
            .to_string()
            .contains("ZFS")
    );
    let w = tables::welch_table(&d, "EXT4");
    assert!(w.contains("significant difference"), "{w}");
    assert_eq!(w.matches("<tr>").count(), 1 + 5);
}

#[test]
fn scaling_is_offered_for_rates_only() {
    assert!(
        is_throughput("total.iops")
            && is_throughput("read.mib_per_s")
            && is_throughput("dev.w_per_s")
    );
    assert!(!is_throughput("read.latency.p99_us") && !is_throughput("cpu.user_s"));
}

fn timeline(series: bool, telemetry: bool, devices: bool) -> super::timeline::Timeline {
    use super::timeline::{DeviceRates, TelemetryPoint, Timeline};
    use crate::store::{SeriesKind, SeriesRow};
    let kind = |ops| SeriesKind {
        ops,
        bytes: ops * 8192,
        lat_mean_us: 100.0,
        lat_p99_us: 400.0,
    };
    Timeline {
        run_id: 7,
        variable: "-".into(),
        sessions: 2,
        slob: false,
        ramp_s: 0.0,
        end_s: Some(2.5),
        series: if series {
            (0..3)
                .map(|t| SeriesRow {
                    t_s: t,
                    ramp: false,
                    read: kind(1000),
                    write: kind(500),
                    sync: kind(0),
                })
                .collect()
        } else {
            Vec::new()
        },
        telemetry: if telemetry {
            (1..4)
                .map(|t| TelemetryPoint {
                    t_s: t as f64,
                    user_pct: 20.0,
                    system_pct: 10.0,
                    iowait_pct: 1.0,
                    devices: if devices {
                        vec![DeviceRates {
                            name: "vda".into(),
                            r_per_s: 1000.0,
                            w_per_s: 500.0,
                            rkib_per_s: 8000.0,
                            wkib_per_s: 4000.0,
                            r_await_ms: 0.2,
                            w_await_ms: 0.5,
                            util_pct: 40.0,
                        }]
                    } else {
                        Vec::new()
                    },
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

#[test]
fn panels_without_data_are_left_out_and_the_page_says_why_once() {
    let drawn = |t: &super::timeline::Timeline| -> usize {
        t.charts()
            .iter()
            .map(|(a, b)| usize::from(a.is_some()) + usize::from(b.is_some()))
            .sum()
    };
    let full = timeline(true, true, true);
    assert_eq!(drawn(&full), 6);
    assert!(full.left_out().is_empty());
    // tmpfs: no device under the target; the three device panels go.
    let tmpfs = timeline(true, true, false);
    assert_eq!(drawn(&tmpfs), 3);
    assert_eq!(tmpfs.left_out().len(), 1);
    assert!(tmpfs.left_out()[0].contains("no block device"));
    // An imported run: neither series nor telemetry, nothing drawn.
    let imported = timeline(false, false, false);
    assert_eq!(drawn(&imported), 0);
    let html = super::timeline_html(&imported);
    assert!(
        !html.contains("<svg") && !html.contains("no data"),
        "{html}"
    );
    assert_eq!(html.matches("Panels without data are left out").count(), 1);
    assert!(html.contains("no per-second series") && html.contains("no device or host telemetry"));
}

#[test]
fn dbio_latency_and_device_await_share_a_log_axis() {
    let pairs = timeline(true, true, true).charts();
    let (lat, wait) = (pairs[1].0.as_ref().unwrap(), pairs[1].1.as_ref().unwrap());
    assert!(lat.title.starts_with("dbio latency") && wait.title.starts_with("device await"));
    assert_eq!(lat.y.kind, crate::chart::ScaleKind::Log);
    assert_eq!(wait.y.kind, lat.y.kind);
}

#[test]
fn the_last_second_cut_short_is_a_rate_over_the_time_it_had() {
    let pairs = timeline(true, true, true).charts();
    let ops = pairs[0].0.as_ref().unwrap();
    // 1000 reads in each second; the run ended at 2.5 s, so the last
    // second's 1000 reads took 0.5 s: 2000/s at 2.5, not 1000/s at 3.
    assert_eq!(
        ops.series[0].points,
        vec![(1.0, 1000.0), (2.0, 1000.0), (2.5, 2000.0)]
    );
}

/// The whole report page on fixed data, pinned byte for byte (two
/// variables, a throughput, a run's timeline, a plan file): the page's
/// sections are rendered by named steps, which must not change it.
#[test]
fn the_report_page_is_pinned() {
    let mut data = sample();
    data.throughput = true;
    data.left_out = 2;
    data.arms = ["XFS", "EXT4"]
        .iter()
        .map(|v| super::data::Arm {
            variable: (*v).into(),
            runs: 15,
            settings: vec![("filesystem".into(), (*v).into())],
            environments: Vec::new(),
        })
        .collect();
    data.shared = vec![("block size".into(), "8 KiB".into())];
    data.timelines = vec![timeline(true, true, true)];
    let plan = super::PlanFile {
        name: "fs".into(),
        description: Some("XFS against EXT4".into()),
        path: "plans/fs.toml".into(),
        seed: 42,
        seed_given: true,
        order: "shuffled",
        repeats: 3,
        warmup: 1,
        arms: vec!["XFS".into(), "EXT4".into()],
        cells: vec!["sessions 1".into(), "sessions 16".into()],
    };
    let options = super::Options {
        relative_to: None,
        plan: Some(&plan),
        selection: "--plan fs".into(),
        store: "/tmp/store.sqlite".into(),
        generated: "2026-11-28 02:00".into(),
    };
    insta::assert_snapshot!(super::report_page(&data, &options).unwrap());
}

/// Every timeline chart of a raw and of a SLOB run, pinned as drawn.
#[test]
fn the_timeline_charts_are_pinned() {
    let mut slob = timeline(true, true, true);
    slob.slob = true;
    slob.ramp_s = 1.0;
    for s in &mut slob.series {
        s.sync.ops = 40;
        s.sync.bytes = 40 * 2048;
    }
    let mut drawn = String::new();
    for t in [
        timeline(true, true, true),
        timeline(true, true, false),
        slob,
    ] {
        for (a, b) in t.charts() {
            for c in [a, b] {
                drawn += &c.map_or("(none)".to_string(), |c| c.render());
                drawn += "\n";
            }
        }
    }
    insta::assert_snapshot!(drawn);
}
