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
