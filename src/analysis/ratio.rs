//! The ratio of two means with a confidence interval: how many times one
//! set of runs' mean the other's is, and how sure that is.
//!
//! The interval is the log-ratio t interval (the delta method on the log
//! scale): log(m̄a / m̄b) ± t · √(s²a / (na·m̄a²) + s²b / (nb·m̄b²)), with
//! Welch–Satterthwaite degrees of freedom from the two terms, then
//! exponentiated. On the log scale the interval is symmetric, so a ratio
//! and its inverse have inverse intervals, and it never reaches zero or
//! below, as a ratio of positive quantities cannot.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::summary::{mean, sample_variance};

/// The fewest values a side needs for an interval.
pub const RATIO_MIN_N: usize = 2;

/// `mean(a) / mean(b)` with its interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RatioCi {
    pub ratio: f64,
    /// The interval's ends: `ratio` itself when neither side varies.
    pub low: f64,
    pub high: f64,
    /// Welch–Satterthwaite degrees of freedom (infinite when neither side
    /// varies).
    pub df: f64,
}

/// Why a ratio has no interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoRatio {
    #[error("fewer than {RATIO_MIN_N} values on a side")]
    TooFew,
    #[error("a value is not finite")]
    NotFinite,
    #[error("a value is negative")]
    Negative,
    /// Both means are zero: nothing to compare (no writes at 0% updates).
    #[error("both are zero")]
    BothZero,
    /// One mean is zero and the other not: the ratio is 0 or infinite.
    #[error("one side is zero")]
    OneZero,
}

/// The ratio of `a`'s mean to `b`'s, with a `level` (e.g. 0.95) interval.
pub fn ratio_ci(a: &[f64], b: &[f64], level: f64) -> Result<RatioCi, NoRatio> {
    if a.len() < RATIO_MIN_N || b.len() < RATIO_MIN_N {
        return Err(NoRatio::TooFew);
    }
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        return Err(NoRatio::NotFinite);
    }
    if a.iter().chain(b).any(|v| *v < 0.0) {
        return Err(NoRatio::Negative);
    }
    let (ma, mb) = (mean(a).unwrap_or(0.0), mean(b).unwrap_or(0.0));
    match (ma == 0.0, mb == 0.0) {
        (true, true) => return Err(NoRatio::BothZero),
        (true, false) | (false, true) => return Err(NoRatio::OneZero),
        (false, false) => {}
    }
    let ratio = ma / mb;
    // Each side's variance of the log of its mean (delta method).
    let term = |v: &[f64], m: f64| sample_variance(v).unwrap_or(0.0) / (v.len() as f64 * m * m);
    let (ua, ub) = (term(a, ma), term(b, mb));
    let se2 = ua + ub;
    if se2 == 0.0 {
        return Ok(RatioCi {
            ratio,
            low: ratio,
            high: ratio,
            df: f64::INFINITY,
        });
    }
    let df = se2 * se2 / (ua * ua / (a.len() - 1) as f64 + ub * ub / (b.len() - 1) as f64);
    let t = StudentsT::new(0.0, 1.0, df)
        .map(|d| d.inverse_cdf(0.5 + level / 2.0))
        .map_err(|_| NoRatio::NotFinite)?;
    let half = t * se2.sqrt();
    Ok(RatioCi {
        ratio,
        low: ratio * (-half).exp(),
        high: ratio * half.exp(),
        df,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn equal_samples_give_one_and_an_interval_around_it() {
        let a = [10.0, 11.0, 9.0];
        let r = ratio_ci(&a, &a, 0.95).unwrap();
        assert_eq!(r.ratio, 1.0);
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        // Symmetric on the log scale.
        assert!(close(r.low * r.high, 1.0, 1e-12), "{r:?}");
    }

    /// Worked by hand: a = [2, 4] (mean 3, s² 2), b = [1, 1, 1] (mean 1, s² 0):
    /// se² = 2 / (2·9) = 1/9, df = (1/9)² / ((1/9)² / 1) = 1, t(0.975, 1) =
    /// 12.7062, so the interval is 3·e^(±12.7062/3).
    #[test]
    fn matches_a_hand_computed_interval() {
        let r = ratio_ci(&[2.0, 4.0], &[1.0, 1.0, 1.0], 0.95).unwrap();
        assert_eq!(r.ratio, 3.0);
        assert!(close(r.df, 1.0, 1e-9), "{r:?}");
        let half: f64 = 12.706_204_736 / 3.0;
        assert!(close(r.low, 3.0 * (-half).exp(), 1e-6), "{r:?}");
        assert!(close(r.high, 3.0 * half.exp(), 1e-6), "{r:?}");
    }

    #[test]
    fn swapping_the_sides_inverts_the_ratio_and_its_interval() {
        let (a, b) = ([5.0, 6.0, 7.0, 5.5], [2.0, 2.5, 3.0]);
        let ab = ratio_ci(&a, &b, 0.95).unwrap();
        let ba = ratio_ci(&b, &a, 0.95).unwrap();
        assert!(close(ab.ratio, 1.0 / ba.ratio, 1e-12));
        assert!(close(ab.low, 1.0 / ba.high, 1e-12));
        assert!(close(ab.high, 1.0 / ba.low, 1e-12));
        assert!(ab.low > 1.0, "clearly above one: {ab:?}");
    }

    #[test]
    fn a_wider_level_gives_a_wider_interval_and_more_runs_a_narrower_one() {
        let (a, b) = ([10.0, 12.0, 11.0], [9.0, 10.0, 11.0]);
        let r95 = ratio_ci(&a, &b, 0.95).unwrap();
        let r99 = ratio_ci(&a, &b, 0.99).unwrap();
        assert!(r99.low < r95.low && r99.high > r95.high);
        let (a6, b6) = (
            [10.0, 12.0, 11.0, 10.0, 12.0, 11.0],
            [9.0, 10.0, 11.0, 9.0, 10.0, 11.0],
        );
        let r6 = ratio_ci(&a6, &b6, 0.95).unwrap();
        assert!(r6.high / r6.low < r95.high / r95.low);
    }

    #[test]
    fn no_spread_gives_the_exact_ratio() {
        let r = ratio_ci(&[4.0, 4.0], &[2.0, 2.0, 2.0], 0.95).unwrap();
        assert_eq!((r.ratio, r.low, r.high), (2.0, 2.0, 2.0));
    }

    #[test]
    fn what_has_no_ratio_says_why() {
        assert_eq!(ratio_ci(&[1.0], &[1.0, 2.0], 0.95), Err(NoRatio::TooFew));
        assert_eq!(
            ratio_ci(&[0.0, 0.0], &[0.0, 0.0], 0.95),
            Err(NoRatio::BothZero)
        );
        assert_eq!(
            ratio_ci(&[1.0, 2.0], &[0.0, 0.0], 0.95),
            Err(NoRatio::OneZero)
        );
        assert_eq!(
            ratio_ci(&[1.0, f64::NAN], &[1.0, 2.0], 0.95),
            Err(NoRatio::NotFinite)
        );
        assert_eq!(
            ratio_ci(&[1.0, -2.0], &[1.0, 2.0], 0.95),
            Err(NoRatio::Negative)
        );
    }
}
