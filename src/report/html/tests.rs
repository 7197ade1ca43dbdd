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
fn the_metric_chart_has_a_line_per_variable_with_whiskers() {
    let c = charts::metric_vs_sessions(&sample());
    assert_eq!(c.series.len(), 2);
    let ext4 = &c.series[0];
    assert_eq!(ext4.name, "EXT4");
    // 1 session: SLOB.R drops 4900 and 9000, keeps 5000, 5050, 5100.
    assert_eq!(ext4.points[0], (1.0, 5050.0));
    assert_eq!(ext4.whiskers[0], (1.0, 4900.0, 9000.0));
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
            .contains("ZFS")
    );
    let w = tables::welch_table(&d, "EXT4");
    assert!(w.contains("significant difference"), "{w}");
    assert_eq!(w.matches("<tr>").count(), 1 + 5);
}

#[test]
fn scaling_is_offered_for_rates_only() {
    assert!(
        is_throughput("total.iops") && is_throughput("read.mib_per_s") && is_throughput("dev.w_s")
    );
    assert!(!is_throughput("read.latency.p99_us") && !is_throughput("cpu.user_s"));
}
