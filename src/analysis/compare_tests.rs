//! Tests for Welch's t-test, ratios and verdicts.

use super::*;

const A: [f64; 15] = [
    27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4,
];
const B: [f64; 15] = [
    27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4,
];

#[test]
fn welch_matches_textbook_example() {
    // Wikipedia, "Welch's t-test", example 1: t = -2.46, df = 24.99, p = 0.021.
    let w = welch(&A, &B).unwrap();
    assert!((w.t - -2.46).abs() < 0.005, "t = {}", w.t);
    assert!((w.df - 24.99).abs() < 0.01, "df = {}", w.df);
    assert!(
        (w.p_two_sided - 0.021).abs() < 0.0005,
        "p = {}",
        w.p_two_sided
    );
    assert_eq!(verdict(&w, 0.05), "significant difference");
    assert_eq!(verdict(&w, 0.01), "no significant difference");
}

#[test]
fn welch_is_antisymmetric() {
    let ab = welch(&A, &B).unwrap();
    let ba = welch(&B, &A).unwrap();
    assert!((ab.t + ba.t).abs() < 1e-12);
    assert!((ab.df - ba.df).abs() < 1e-9);
    assert!((ab.p_two_sided - ba.p_two_sided).abs() < 1e-12);
}

#[test]
fn welch_identical_samples_give_p_one() {
    let w = welch(&A, &A).unwrap();
    assert_eq!(w.t, 0.0);
    assert!((w.p_two_sided - 1.0).abs() < 1e-12);
    assert_eq!(verdict(&w, 0.05), "no significant difference");
}

#[test]
fn welch_zero_variance_both_sides() {
    let same = welch(&[5.0, 5.0, 5.0], &[5.0, 5.0]).unwrap();
    assert_eq!(same.p_two_sided, 1.0);
    assert_eq!(same.t, 0.0);
    let diff = welch(&[5.0, 5.0, 5.0], &[6.0, 6.0]).unwrap();
    assert_eq!(diff.p_two_sided, 0.0);
    assert_eq!(diff.t, f64::NEG_INFINITY);
    assert_eq!(verdict(&diff, 0.05), "significant difference");
}

#[test]
fn welch_needs_two_values_a_side() {
    assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    assert!(welch(&[1.0, 2.0], &[]).is_none());
    assert!(welch(&[1.0, f64::NAN], &[1.0, 2.0]).is_none());
}

#[test]
fn welch_far_apart_gives_tiny_p() {
    let w = welch(&[100.0, 101.0, 99.0, 100.5], &[1.0, 2.0, 1.5, 0.5]).unwrap();
    assert!(
        w.p_two_sided > 0.0 && w.p_two_sided < 1e-6,
        "p = {}",
        w.p_two_sided
    );
}

#[test]
fn ratio_guards_zero_and_non_finite() {
    assert_eq!(ratio(30.0, 40.0), Some(0.75));
    assert_eq!(ratio(1.0, 0.0), None);
    assert_eq!(ratio(f64::NAN, 1.0), None);
    assert_eq!(ratio(1.0, f64::INFINITY), None);
}

#[test]
fn power_matches_the_pooled_t_tests() {
    // R: power.t.test(n = 17, delta = 1, sd = 1) = 0.8070367,
    // n = 16: 0.7813 ; n = 64, delta = 0.5: 0.8015.
    for (diff, n, want) in [(1.0, 17, 0.8070367), (1.0, 16, 0.7813), (0.5, 64, 0.8015)] {
        let got = welch_power(diff, 1.0, 1.0, n, 0.05);
        assert!((got - want).abs() < 5e-4, "n={n}: {got} vs {want}");
    }
    // No difference: the power is the level.
    assert!((welch_power(0.0, 1.0, 2.0, 10, 0.05) - 0.05).abs() < 1e-6);
}

#[test]
fn runs_needed_matches_the_textbook_sample_sizes() {
    // Variance exactly 1 on both sides; d = 1 needs 17 runs a side, d = 0.5
    // needs 64 (R's power.t.test at 80% power: 16.71 and 63.77).
    let a = [-1.0, 0.0, 1.0];
    assert_eq!(
        runs_needed(&a, &[0.0, 1.0, 2.0], 0.05, 0.8),
        Some(RunsNeeded::Runs(17))
    );
    assert_eq!(
        runs_needed(&a, &[-0.5, 0.5, 1.5], 0.05, 0.8),
        Some(RunsNeeded::Runs(64))
    );
    assert_eq!(
        runs_needed(&a, &[-0.99, 0.01, 1.01], 0.05, 0.8),
        Some(RunsNeeded::MoreThan(MAX_RUNS))
    );
    assert_eq!(runs_needed(&a, &a, 0.05, 0.8), None);
    assert_eq!(runs_needed(&a, &[1.0], 0.05, 0.8), None);
}

#[test]
fn evidence_words_do_not_call_few_runs_the_same() {
    // The case: a large difference, three runs that spread widely.
    let first = [0.1, 0.12, 0.11];
    let second = [0.2, 5.0, 0.4];
    let e = evidence(&first, &second, 0.05).unwrap();
    assert!(!e.significant);
    let w = e.words();
    assert!(w.starts_with("not significant at 3+3 runs (p=0."), "{w}");
    assert!(w.contains("d=+0.9"), "{w}");
    assert!(w.contains("runs per side to detect it"), "{w}");
    assert!(!w.contains("same"), "{w}");
    // cohens_d: difference over the pooled SD, second minus first.
    let sp = ((2.0 * sample_variance(&first).unwrap() + 2.0 * sample_variance(&second).unwrap())
        / 4.0)
        .sqrt();
    let d = (mean(&second).unwrap() - mean(&first).unwrap()) / sp;
    assert!((e.cohens_d.unwrap() - d).abs() < 1e-12);
    // A clear difference is significant, with no runs estimate.
    let e = evidence(&[10.0, 10.1, 9.9], &[20.0, 20.2, 19.8], 0.05).unwrap();
    assert!(e.significant && e.runs_needed.is_none());
    assert_eq!(e.words(), "significant at 3+3 runs (p<0.001, d=+63.2)");
    assert!(evidence(&[1.0], &[2.0, 3.0], 0.05).is_none());
}
