//! Two sets of runs against each other: Welch's unequal-variance t-test, a
//! ratio of two values and a one-line verdict.
//!
//! Welch's test does not assume the two sides have the same variance, which
//! matters here: two filesystems or two devices rarely spread alike.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::summary::{mean, sample_variance};

/// The result of Welch's t-test of `a` against `b`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Welch {
    /// (mean(a) - mean(b)) / √(s²a/na + s²b/nb); negative when `a` is lower.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value, 2 · P(T > |t|).
    pub p_two_sided: f64,
}

/// Welch's t-test. `None` unless both sides have at least two values, all
/// finite.
///
/// When both sides have zero variance the statistic is undefined; the answer
/// is then exact: identical means give t = 0, p = 1, different means give
/// t = ±∞, p = 0 (df is then na + nb - 2).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    let (va, vb) = (sample_variance(a)?, sample_variance(b)?);
    let (ma, mb) = (mean(a)?, mean(b)?);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        let df = na + nb - 2.0;
        return Some(if ma == mb {
            Welch {
                t: 0.0,
                df,
                p_two_sided: 1.0,
            }
        } else {
            Welch {
                t: (ma - mb).signum() * f64::INFINITY,
                df,
                p_two_sided: 0.0,
            }
        });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    // 2 · cdf(-|t|) keeps precision for tiny p (1 - cdf would round to 0).
    let p_two_sided = (2.0 * dist.cdf(-t.abs())).min(1.0);
    Some(Welch { t, df, p_two_sided })
}

/// `a / b`; `None` when `b` is zero or either is not finite.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (a.is_finite() && b.is_finite() && b != 0.0).then(|| a / b)
}

/// "significant difference" when p < `alpha`, otherwise
/// "no significant difference".
pub fn verdict(w: &Welch, alpha: f64) -> &'static str {
    if w.p_two_sided < alpha {
        "significant difference"
    } else {
        "no significant difference"
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
