//! Tests for peak, knee, collapse and the Universal Scalability Law fit.

use super::*;

/// Seed 001's shape: XFS writes/s peaking at 4 processes, collapsing at 16.
const SEED_001: [(f64, f64); 4] = [(1.0, 10e3), (4.0, 40e3), (16.0, 12e3), (64.0, 11e3)];

const NS: [f64; 7] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];

fn within(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

/// X from (λ=1000, σ=0.05, κ=0.002), times a deterministic ±0.5% wobble,
/// `repeats` points per N.
fn usl_points(repeats: usize) -> Vec<(f64, f64)> {
    let mut pts = Vec::new();
    for (i, &n) in NS.iter().enumerate() {
        for r in 0..repeats {
            let wobble = 1.0 + 0.005 * ((i * 7 + r * 3) as f64).sin();
            pts.push((n, usl_at(1000.0, 0.05, 0.002, n) * wobble));
        }
    }
    pts
}

#[test]
fn seed_001_peak_knee_collapse() {
    assert_eq!(
        peak(&SEED_001),
        Some(Peak {
            sessions: 4.0,
            throughput: 40e3
        })
    );
    assert_eq!(knee(&SEED_001), Some(4.0));
    let c = collapse(&SEED_001).unwrap();
    assert_eq!(c.after_sessions, 4.0);
    assert_eq!(c.at_sessions, 16.0);
    assert_eq!((c.from, c.to), (40e3, 12e3));
    assert!((c.drop_pct - 70.0).abs() < 1e-9, "drop {}", c.drop_pct);
}

#[test]
fn peak_is_the_tables_trimmed_value_not_the_plain_mean() {
    // At N = 4 one run far above the others: its plain mean (40.3) would
    // beat N = 2, the table's trimmed value (11) does not.
    let pts = [
        (2.0, 30.0),
        (2.0, 31.0),
        (2.0, 32.0),
        (4.0, 10.0),
        (4.0, 11.0),
        (4.0, 100.0),
    ];
    assert_eq!(per_n_values(&pts), vec![(2.0, 31.0), (4.0, 11.0)]);
    let p = peak(&pts).unwrap();
    assert_eq!((p.sessions, p.throughput), (2.0, 31.0));
    let c = collapse(&pts).unwrap();
    assert_eq!((c.at_sessions, c.to), (4.0, 11.0));
}

#[test]
fn peak_uses_per_n_values() {
    // N = 2 has the single highest point, N = 4 the highest mean.
    let pts = [
        (1.0, 10.0),
        (2.0, 50.0),
        (2.0, 10.0),
        (4.0, 35.0),
        (4.0, 33.0),
    ];
    let p = peak(&pts).unwrap();
    assert_eq!((p.sessions, p.throughput), (4.0, 34.0));
    assert!(peak(&[]).is_none());
}

#[test]
fn no_collapse_for_a_gentle_decline() {
    // 15% below the peak is a decline, not a collapse.
    let pts = [(1.0, 10.0), (4.0, 40.0), (16.0, 34.0), (64.0, 32.5)];
    assert!(collapse(&pts).is_none());
    // Just over 20% is.
    let pts = [(1.0, 10.0), (4.0, 40.0), (16.0, 31.9)];
    assert_eq!(collapse(&pts).unwrap().at_sessions, 16.0);
    // Monotonic growth: peak at the end, nothing after it.
    assert!(collapse(&[(1.0, 1.0), (2.0, 2.0), (4.0, 4.0)]).is_none());
}

#[test]
fn knee_definition() {
    // Linear scaling: no knee.
    let linear: Vec<(f64, f64)> = NS.iter().map(|&n| (n, 100.0 * n)).collect();
    assert_eq!(knee(&linear), None);
    // Slope 100/session to N = 8, then 40/session (< 50): knee at 8.
    let bent = [(1.0, 100.0), (8.0, 800.0), (16.0, 1120.0), (32.0, 1200.0)];
    assert_eq!(knee(&bent), Some(8.0));
    // 60/session (>= 50) is still scaling.
    let mild = [(1.0, 100.0), (8.0, 800.0), (16.0, 1280.0)];
    assert_eq!(knee(&mild), None);
    // Never scaled: the knee is the first N.
    assert_eq!(knee(&[(1.0, 5.0), (2.0, 4.0), (4.0, 3.0)]), Some(1.0));
    // Too few N to tell.
    assert_eq!(knee(&[(1.0, 5.0), (2.0, 9.0)]), None);
}

#[test]
fn usl_recovers_known_parameters() {
    for repeats in [1, 3] {
        let fit = fit_usl(&usl_points(repeats)).unwrap();
        assert!(within(fit.lambda, 1000.0, 0.03), "{fit:?}");
        assert!(within(fit.sigma, 0.05, 0.05), "{fit:?}");
        assert!(within(fit.kappa, 0.002, 0.05), "{fit:?}");
        assert!(fit.r2 > 0.99, "{fit:?}");
        let want_peak = ((1.0 - 0.05) / 0.002f64).sqrt(); // ≈ 21.8
        assert!(within(fit.peak_n.unwrap(), want_peak, 0.05), "{fit:?}");
        assert!(within(
            usl(&fit, 16.0),
            usl_at(1000.0, 0.05, 0.002, 16.0),
            0.02
        ));
    }
}

#[test]
fn usl_exact_data_fits_exactly() {
    let pts: Vec<(f64, f64)> = NS
        .iter()
        .map(|&n| (n, usl_at(250.0, 0.1, 0.0005, n)))
        .collect();
    let fit = fit_usl(&pts).unwrap();
    assert!(within(fit.lambda, 250.0, 1e-6), "{fit:?}");
    assert!(within(fit.sigma, 0.1, 1e-5), "{fit:?}");
    assert!(within(fit.kappa, 0.0005, 1e-5), "{fit:?}");
    assert!(fit.r2 > 0.999_999);
}

#[test]
fn usl_keeps_sigma_and_kappa_non_negative() {
    // Superlinear data would want negative σ or κ; they stay at >= 0.
    let pts: Vec<(f64, f64)> = NS.iter().map(|&n| (n, 100.0 * n.powf(1.2))).collect();
    let fit = fit_usl(&pts).unwrap();
    assert!(fit.sigma >= 0.0 && fit.kappa >= 0.0, "{fit:?}");
    assert!(fit.lambda.is_finite() && fit.lambda > 0.0);
    // Perfectly linear data: σ = κ = 0, no peak.
    let linear: Vec<(f64, f64)> = NS.iter().map(|&n| (n, 100.0 * n)).collect();
    let fit = fit_usl(&linear).unwrap();
    assert!(within(fit.lambda, 100.0, 1e-6), "{fit:?}");
    assert!(fit.sigma < 1e-6 && fit.kappa < 1e-8, "{fit:?}");
}

#[test]
fn usl_needs_four_distinct_n() {
    let three = [
        (1.0, 10.0),
        (2.0, 19.0),
        (2.0, 18.0),
        (4.0, 30.0),
        (4.0, 31.0),
    ];
    let err = fit_usl(&three).unwrap_err().to_string();
    assert!(err.contains("4 distinct"), "{err}");
    assert!(fit_usl(&[]).is_err());
    assert!(fit_usl(&[(0.0, 1.0), (1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]).is_err());
    assert!(fit_usl(&[(1.0, 0.0), (2.0, 0.0), (3.0, 0.0), (4.0, 0.0)]).is_err());
    assert!(fit_usl(&SEED_001).is_ok());
}
