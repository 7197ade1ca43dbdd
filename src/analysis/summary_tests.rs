//! Tests for SLOB.R's trimmed mean, cell summaries and READWRITE.

use super::*;

/// `mean(z[!z %in% c(min(z), max(z))])` transcribed independently: R's
/// `%in%` is `match(x, table) > 0`, `min`/`max` are found by sorting, and
/// `mean` of an empty vector is NaN.
fn r_myavg(z: &[f64]) -> f64 {
    let mut s = z.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let table = [s[0], s[s.len() - 1]];
    let keep: Vec<f64> = z
        .iter()
        .copied()
        .filter(|x| !table.iter().any(|t| t == x))
        .collect();
    let mut total = 0.0;
    for x in &keep {
        total += x;
    }
    total / keep.len() as f64 // NaN when empty, as in R
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn trimmed_mean_hand_checked() {
    assert_eq!(slob_trimmed_mean(&[1.0, 2.0, 3.0, 4.0, 5.0]), Some(3.0));
    // Ties: both 1s and both 9s go, leaving 5 and 7.
    assert_eq!(
        slob_trimmed_mean(&[1.0, 1.0, 5.0, 7.0, 9.0, 9.0]),
        Some(6.0)
    );
    assert_eq!(
        slob_trimmed_mean(&[9.0, 1.0, 7.0, 1.0, 5.0, 9.0]),
        Some(6.0)
    );
    // Order does not matter, and only the extremes go.
    assert_eq!(slob_trimmed_mean(&[5.0, 100.0, 4.0, 6.0, 0.0]), Some(5.0));
    // One value between a single min and a single max.
    assert_eq!(slob_trimmed_mean(&[2.0, 8.0, 3.0]), Some(3.0));
    // Repeated middle value with min and max ties.
    assert_eq!(slob_trimmed_mean(&[1.0, 1.0, 4.0, 4.0, 9.0]), Some(4.0));
}

#[test]
fn trimmed_mean_none_when_nothing_is_left() {
    assert_eq!(slob_trimmed_mean(&[3.0, 3.0, 3.0]), None);
    assert_eq!(slob_trimmed_mean(&[1.0, 2.0]), None);
    assert_eq!(slob_trimmed_mean(&[2.0, 2.0, 5.0]), None);
    assert_eq!(slob_trimmed_mean(&[2.0, 5.0, 5.0, 2.0, 5.0]), None);
    assert_eq!(slob_trimmed_mean(&[42.0]), None);
    assert_eq!(slob_trimmed_mean(&[]), None);
    assert_eq!(slob_trimmed_mean(&[1.0, f64::NAN, 3.0, 4.0]), None);
}

#[test]
fn trimmed_mean_matches_r_transcription() {
    let cases: Vec<Vec<f64>> = vec![
        vec![1.0, 2.0, 3.0, 4.0, 5.0],
        vec![1.0, 1.0, 5.0, 7.0, 9.0, 9.0],
        vec![3.0, 3.0, 3.0],
        vec![1.0, 2.0],
        vec![2.0, 2.0, 5.0],
        vec![7.0],
        vec![
            40123.5, 39877.25, 40555.0, 38001.0, 40555.0, 39990.125, 41000.0,
        ],
        vec![0.1, 0.2, 0.3, 0.1, 0.25],
        vec![-5.0, 3.0, -5.0, 8.0, 8.0, 0.0, 2.5],
    ];
    for z in &cases {
        let r = r_myavg(z);
        match slob_trimmed_mean(z) {
            Some(v) => assert!(close(v, r), "{z:?}: {v} vs R {r}"),
            None => assert!(r.is_nan(), "{z:?}: None but R gives {r}"),
        }
    }
    // A deterministic pseudo-random sweep, with ties forced by rounding.
    let mut rng = SplitMix64::new(7);
    for len in 1..40 {
        let z: Vec<f64> = (0..len).map(|_| (rng.below(12) as f64) * 0.5).collect();
        let r = r_myavg(&z);
        match slob_trimmed_mean(&z) {
            Some(v) => assert!(close(v, r), "{z:?}: {v} vs R {r}"),
            None => assert!(r.is_nan(), "{z:?}: None but R gives {r}"),
        }
    }
}

#[test]
fn summarize_t_interval_and_cv_match_hand_computation() {
    let s = summarize(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
    assert_eq!(s.n, 5);
    assert_eq!(s.mean, 14.0);
    assert_eq!(s.trimmed_mean, Some(14.0));
    assert!(s.trimmed);
    assert_eq!((s.min, s.max), (10.0, 18.0));
    // s = sqrt(40 / 4) = sqrt(10); se = sqrt(10 / 5) = sqrt(2).
    assert!(close(s.stddev, 10f64.sqrt()));
    assert!(close(s.cv.unwrap(), 10f64.sqrt() / 14.0));
    let half = 2.776445 * 2f64.sqrt();
    let (lo, hi) = s.ci95.unwrap();
    assert!((lo - (14.0 - half)).abs() < 1e-5, "lo = {lo}");
    assert!((hi - (14.0 + half)).abs() < 1e-5, "hi = {hi}");
    assert!(lo < s.mean && s.mean < hi);
    assert!(s.outliers.is_empty());
}

#[test]
fn summarize_flags_tukey_outlier() {
    let s = summarize(&[10.0, 10.2, 9.9, 10.1, 30.0]).unwrap();
    assert_eq!(s.outliers, vec![4]);
    // Trimming drops 9.9 and 30, so the shown value ignores the outlier.
    assert!(close(s.value, (10.0 + 10.2 + 10.1) / 3.0));
    // A low outlier, too.
    let s = summarize(&[0.5, 10.0, 10.2, 9.9, 10.1]).unwrap();
    assert_eq!(s.outliers, vec![0]);
    // No fences below four values.
    assert!(summarize(&[1.0, 1.0, 100.0]).unwrap().outliers.is_empty());
}

#[test]
fn summarize_bootstrap_is_deterministic_and_contains_mean() {
    let v = [101.0, 98.5, 103.2, 99.9, 100.4, 97.8, 102.6];
    let a = summarize(&v).unwrap();
    let b = summarize(&v).unwrap();
    let (lo, hi) = a.bootstrap_ci95.unwrap();
    assert_eq!(a.bootstrap_ci95, b.bootstrap_ci95);
    assert!(lo < a.mean && a.mean < hi, "({lo}, {hi}) vs {}", a.mean);
    assert!(lo >= a.min && hi <= a.max);
    // Narrower than the data's range, roughly as wide as the t interval.
    let (tlo, thi) = a.ci95.unwrap();
    assert!((hi - lo) < (a.max - a.min));
    assert!((hi - lo) > 0.4 * (thi - tlo) && (hi - lo) < 1.5 * (thi - tlo));
    // A different seed gives a (slightly) different interval.
    assert_ne!(bootstrap_mean_ci95(&v, 2000, 1), (lo, hi));
}

#[test]
fn summarize_bootstrap_only_for_3_to_30() {
    assert!(summarize(&[1.0, 2.0]).unwrap().bootstrap_ci95.is_none());
    assert!(
        summarize(&[1.0, 2.0, 4.0])
            .unwrap()
            .bootstrap_ci95
            .is_some()
    );
    let thirty: Vec<f64> = (0..30).map(f64::from).collect();
    let thirty_one: Vec<f64> = (0..31).map(f64::from).collect();
    assert!(summarize(&thirty).unwrap().bootstrap_ci95.is_some());
    assert!(summarize(&thirty_one).unwrap().bootstrap_ci95.is_none());
}

#[test]
fn summarize_falls_back_to_plain_mean_and_marks_it() {
    let s = summarize(&[2.0, 2.0, 5.0]).unwrap();
    assert_eq!(s.trimmed_mean, None);
    assert!(!s.trimmed);
    assert_eq!(s.value, 3.0);
    let one = summarize(&[7.0]).unwrap();
    assert_eq!((one.value, one.trimmed, one.stddev), (7.0, false, 0.0));
    assert_eq!((one.ci95, one.cv, one.bootstrap_ci95), (None, None, None));
    assert!(summarize(&[]).is_none());
    assert!(summarize(&[1.0, f64::INFINITY]).is_none());
}

#[test]
fn constant_cell_has_degenerate_interval() {
    let s = summarize(&[5.0, 5.0, 5.0, 5.0]).unwrap();
    assert_eq!(s.ci95, Some((5.0, 5.0)));
    assert_eq!(s.bootstrap_ci95, Some((5.0, 5.0)));
    assert_eq!(s.cv, Some(0.0));
    assert!(s.outliers.is_empty());
}

#[test]
fn readwrite_adds_separately_trimmed_sides() {
    let reads = [100.0, 110.0, 120.0, 130.0, 140.0]; // trimmed 120
    let writes = [10.0, 10.0, 20.0, 30.0, 90.0]; // trimmed 25
    assert_eq!(readwrite(&reads, &writes), Some(145.0));
    // Not the trimmed mean of the sums, which would be (120 + 140 + 160) / 3.
    let cell = readwrite_cell(&reads, &writes).unwrap();
    assert_eq!(
        cell,
        ReadWrite {
            value: 145.0,
            trimmed: true
        }
    );
}

#[test]
fn readwrite_fallback_is_flagged() {
    let reads = [100.0, 110.0, 120.0];
    let writes = [10.0, 30.0];
    assert_eq!(readwrite(&reads, &writes), None);
    let cell = readwrite_cell(&reads, &writes).unwrap();
    assert_eq!(
        cell,
        ReadWrite {
            value: 110.0 + 20.0,
            trimmed: false
        }
    );
    assert!(readwrite_cell(&reads, &[]).is_none());
}

#[test]
fn splitmix64_reference_values() {
    // First outputs for seed 1234567 from the reference C implementation.
    let mut r = SplitMix64::new(1234567);
    assert_eq!(r.next_u64(), 6457827717110365317);
    assert_eq!(r.next_u64(), 3203168211198807973);
    let mut r = SplitMix64::new(9);
    assert!((0..1000).all(|_| r.below(7) < 7));
}

#[test]
fn skewness_is_the_adjusted_fisher_pearson_g1() {
    // By hand: mean 4, m2 = 12.5, m3 = 45, g1 = 45 / 12.5^1.5,
    // G1 = g1 · √(n(n−1)) / (n−2) = 1.7636326...
    let g = skewness(&[1.0, 2.0, 3.0, 10.0]).unwrap();
    assert!((g - 1.763_632_614_803_888).abs() < 1e-12, "{g}");
    assert!(skewness(&[3.0, 1.0, 2.0]).unwrap().abs() < 1e-12);
    assert_eq!(skewness(&[1.0, 2.0]), None);
    assert_eq!(skewness(&[5.0, 5.0, 5.0]), None);
}

#[test]
fn ci95_is_student_t_unless_the_cell_is_skewed() {
    let symmetric = [10.0, 11.0, 12.0, 13.0];
    let s = summarize(&symmetric).unwrap();
    let (lo, hi, m) = ci95(&symmetric, &s).unwrap();
    assert_eq!((Some((lo, hi)), m), (s.ci95, CiMethod::StudentT));
    // Three values are never called skewed: their skewness is at most
    // 1/√3 · 3 = 1.73 < 2 · 1.22.
    let three = [10.0, 10.1, 20.0];
    assert!(!is_skewed(&three) && skewness(&three).unwrap() > 1.7);
    assert!((skewness_se(3).unwrap() - 1.224_744_871).abs() < 1e-9);
    let skewed = [10.0, 10.5, 11.0, 10.2, 30.0];
    let s = summarize(&skewed).unwrap();
    let (lo, hi, m) = ci95(&skewed, &s).unwrap();
    assert_eq!((Some((lo, hi)), m), (s.bootstrap_ci95, CiMethod::Bootstrap));
    // The bootstrap stays inside the data; the t interval does not.
    assert!(lo >= 10.0 && hi <= 30.0 && s.ci95.unwrap().0 < 10.0);
    assert!(is_skewed(&skewed));
    // Two values: no bootstrap, and no skewness; the t interval, unless
    // it reaches zero for positive values (then the log-normal one).
    let two = [10.0, 10.2];
    let s = summarize(&two).unwrap();
    assert_eq!(ci95(&two, &s).unwrap().2, CiMethod::StudentT);
    let two = [1.0, 9.0];
    let s = summarize(&two).unwrap();
    assert!(s.ci95.unwrap().0 < 0.0);
    let (lo, _, m) = ci95(&two, &s).unwrap();
    assert_eq!((m, lo > 0.0), (CiMethod::LogNormal, true));
    // Not for values that may be negative: the t interval stays.
    let signed = [-1.0, 9.0];
    assert_eq!(
        ci95(&signed, &summarize(&signed).unwrap()).unwrap().2,
        CiMethod::StudentT
    );
    assert_eq!(ci95(&[4.0], &summarize(&[4.0]).unwrap()), None);
}

#[test]
fn lognormal_interval_is_positive_and_matches_the_modified_cox_formula() {
    // The IOPS cell: three runs, the t interval goes negative.
    let iops = [220_000.0, 1_450_000.0, 435_000.0];
    let s = summarize(&iops).unwrap();
    assert!(s.ci95.unwrap().0 < 0.0, "{:?}", s.ci95);
    let (lo, hi, m) = ci95(&iops, &s).unwrap();
    assert_eq!(m, CiMethod::LogNormal);
    assert_eq!(Some((lo, hi)), s.lognormal_ci95);
    // By hand: ln values, their mean and variance, t(0.975, 2) = 4.302653.
    let l: Vec<f64> = iops.iter().map(|v: &f64| v.ln()).collect();
    let ybar = l.iter().sum::<f64>() / 3.0;
    let s2 = l.iter().map(|v| (v - ybar).powi(2)).sum::<f64>() / 2.0;
    let se = (s2 / 3.0 + s2 * s2 / 4.0).sqrt();
    let centre = ybar + s2 / 2.0;
    assert!(close(lo, (centre - 4.302_652_73 * se).exp()), "{lo}");
    assert!(close(hi, (centre + 4.302_652_73 * se).exp()), "{hi}");
    assert!(lo > 0.0 && lo < s.mean && s.mean < hi);
    // Equal values: a zero-width interval at the value; a zero or a
    // negative value: none.
    let (lo, hi) = lognormal_mean_ci95(&[5.0, 5.0]).unwrap();
    assert!(close(lo, 5.0) && close(hi, 5.0), "{lo} {hi}");
    assert_eq!(lognormal_mean_ci95(&[0.0, 5.0]), None);
    assert_eq!(lognormal_mean_ci95(&[5.0]), None);
}
