//! The shared statistics on fixed runs: cells keep their run ids, the
//! comparisons and the scaling agree with `analysis` on the same values.

use super::*;

fn run(id: i64, variable: &str, sessions: u32, value: f64) -> RunValue {
    RunValue {
        id,
        variable: variable.into(),
        sessions,
        value,
    }
}

/// Seed 001's shape: XFS peaks at 4 sessions and collapses at 16; EXT4 is
/// flat, one wild repeat (run 104) at 1 session.
fn sample() -> Vec<RunValue> {
    let mut v = Vec::new();
    let mut id = 0;
    for (s, xs) in [
        (1, [14000.0, 15000.0, 16000.0]),
        (2, [26000.0, 27000.0, 28000.0]),
        (4, [39000.0, 40000.0, 41000.0]),
        (8, [30000.0, 31000.0, 29000.0]),
        (16, [12000.0, 12500.0, 11500.0]),
    ] {
        for x in xs {
            id += 1;
            v.push(run(id, "XFS", s, x));
        }
    }
    for (i, x) in [5000.0, 5100.0, 4900.0, 9000.0, 5050.0].iter().enumerate() {
        v.push(run(100 + i as i64, "EXT4", 1, *x));
    }
    for (i, x) in [8000.0, 8100.0, 7900.0].iter().enumerate() {
        v.push(run(200 + i as i64, "EXT4", 4, *x));
    }
    v
}

#[test]
fn cells_carry_run_ids_of_outliers_and_an_overall_per_variable() {
    let runs = sample();
    let all = all_cells(&runs);
    // EXT4 (1, 4, Overall) then XFS (1, 2, 4, 8, 16, Overall).
    let keys: Vec<(&str, Option<u32>)> = all
        .iter()
        .map(|c| (c.variable.as_str(), c.sessions))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("EXT4", Some(1)),
            ("EXT4", Some(4)),
            ("EXT4", None),
            ("XFS", Some(1)),
            ("XFS", Some(2)),
            ("XFS", Some(4)),
            ("XFS", Some(8)),
            ("XFS", Some(16)),
            ("XFS", None),
        ]
    );
    let e1 = &all[0];
    assert_eq!(
        e1.outliers,
        vec![Outlier {
            run: 103,
            value: 9000.0
        }]
    );
    assert_eq!(e1.n, 5);
    assert_eq!(e1.mean, (5000.0 + 5100.0 + 4900.0 + 9000.0 + 5050.0) / 5.0);
    // The wild repeat skews the cell: the bootstrap interval is shown.
    assert_eq!(e1.ci95.unwrap().method, CiMethod::Bootstrap);
    let x4 = &all[5];
    assert_eq!((x4.value, x4.trimmed, x4.mean), (40000.0, true, 40000.0));
    assert!((x4.cv.unwrap() - 1000.0 / 40000.0).abs() < 1e-12);
    let ci = x4.ci95.unwrap();
    assert_eq!(ci.method, CiMethod::StudentT);
    // t(0.975, 2) = 4.302653: 40000 ± 4.302653 · 1000 / √3.
    assert!((ci.high - 40000.0 - 4.302_652_729_7 * 1000.0 / 3f64.sqrt()).abs() < 1e-3);
    assert_eq!(all[8].n, 15);
    // Overall: the outliers of its own cells (run 103 in EXT4 at 1), not
    // fences over runs of different session counts.
    assert_eq!(all[2].outliers, e1.outliers);
    assert!(all[8].outliers.is_empty(), "{:?}", all[8].outliers);
}

#[test]
fn overall_outliers_are_never_fenced_across_session_counts() {
    // Eight runs at 1 session, two at 16 that are ten times higher as 16
    // sessions should be: pooled, Tukey's fences would flag both 16s.
    let mut runs: Vec<RunValue> = (0..8)
        .map(|i| run(i, "XFS", 1, 1000.0 + 10.0 * i as f64))
        .collect();
    runs.push(run(8, "XFS", 16, 10_000.0));
    runs.push(run(9, "XFS", 16, 10_100.0));
    let pooled: Vec<f64> = runs.iter().map(|r| r.value).collect();
    assert_eq!(crate::analysis::tukey_outliers(&pooled), vec![8, 9]);
    let overall = all_cells(&runs)
        .into_iter()
        .find(|c| c.sessions.is_none())
        .unwrap();
    assert_eq!(overall.n, 10);
    assert!(overall.outliers.is_empty(), "{:?}", overall.outliers);
    // A real outlier inside the 1-session cell is still named in Overall.
    runs[3].value = 5000.0;
    let overall = all_cells(&runs)
        .into_iter()
        .find(|c| c.sessions.is_none())
        .unwrap();
    assert_eq!(
        overall.outliers,
        vec![Outlier {
            run: 3,
            value: 5000.0
        }]
    );
}

#[test]
fn comparisons_against_the_baseline_at_shared_session_counts() {
    let mut runs = sample();
    runs.push(run(300, "ZFS", 4, 8000.0)); // one run: no test
    let c = comparisons(&runs, "EXT4");
    let keys: Vec<(&str, u32)> = c
        .iter()
        .map(|c| (c.variable.as_str(), c.sessions))
        .collect();
    assert_eq!(keys, vec![("XFS", 1), ("XFS", 4), ("ZFS", 4)]);
    let x4 = &c[1];
    assert_eq!((x4.n, x4.baseline_n), (3, 3));
    assert_eq!(x4.ratio, Some(40000.0 / 8000.0));
    let w = x4.welch.unwrap();
    assert_eq!(
        Some(w),
        analysis::welch(&[39000.0, 40000.0, 41000.0], &[8000.0, 8100.0, 7900.0])
    );
    assert!(w.p_two_sided < ALPHA);
    assert_eq!(x4.verdict, "significant difference");
    assert_eq!((c[2].welch, c[2].verdict.as_str()), (None, NOT_TESTED));
    // Overlapping cells: said plainly.
    let same = vec![
        run(1, "A", 2, 100.0),
        run(2, "A", 2, 110.0),
        run(3, "B", 2, 104.0),
        run(4, "B", 2, 107.0),
    ];
    let c = comparisons(&same, "A");
    assert_eq!(c[0].verdict, "no significant difference");
    assert!(comparisons(&same, "C").is_empty());
}

#[test]
fn scaling_finds_the_peak_and_collapse_and_says_why_there_is_no_fit() {
    let s = scaling(&sample());
    let (ext4, xfs) = (&s[0], &s[1]);
    assert_eq!(xfs.session_counts, vec![1, 2, 4, 8, 16]);
    let peak = xfs.peak.unwrap();
    assert_eq!((peak.sessions, peak.throughput), (4.0, 40000.0));
    let c = xfs.collapse.unwrap();
    assert_eq!((c.at_sessions, c.to), (8.0, 30000.0));
    let fit = xfs.usl.unwrap();
    assert_eq!(Some(fit), analysis::fit_usl(&xfs.points).ok());
    assert!(
        fit.r2 > 0.8 && fit.peak_n.unwrap() > 2.0 && fit.peak_n.unwrap() < 8.0,
        "{fit:?}"
    );
    assert_eq!(xfs.points.len(), 15);
    assert_eq!(xfs.runs.len(), 15);
    assert!(xfs.no_fit.is_none());
    assert!(ext4.usl.is_none());
    assert!(
        ext4.no_fit
            .as_deref()
            .unwrap()
            .contains("at least 4 distinct"),
        "{:?}",
        ext4.no_fit
    );
}

#[test]
fn throughput_metrics_are_rates() {
    for m in [
        "total.iops",
        "read.mib_per_s",
        "dev.w_per_s",
        "db.physical_reads_s",
        "db.redo_mbs",
        "db.physical_reads_per_s",
        "db.redo_mib_per_s",
        "db.redo_bytes_per_s",
        "pg.device_reads_per_s",
    ] {
        assert!(is_throughput(m), "{m}");
    }
    for m in [
        "read.latency.p99_us",
        "cpu.user_s",
        "db.db_time_s",
        "db.db_time_per_s",
        "event.log_file_sync.waits_per_s",
    ] {
        assert!(!is_throughput(m), "{m}");
    }
}
