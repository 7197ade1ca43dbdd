//! Two sets of runs against each other: Welch's unequal-variance t-test, a
//! ratio of two values, the effect size, how many runs a test would need to
//! detect the difference seen, and verdicts in words that match the
//! evidence.
//!
//! Welch's test does not assume the two sides have the same variance, which
//! matters here: two filesystems or two devices rarely spread alike.
//!
//! "Not significant" is not "the same": with three runs a side a large
//! difference often fails the test because the spread is estimated from
//! three values. [`Evidence::words`] therefore says "not significant at
//! 3+3 runs", the effect size, and how many runs per side
//! ([`runs_needed`]) would detect the observed difference.

use statrs::distribution::{ContinuousCDF, StudentsT};
use statrs::function::{erf::erfc, gamma::ln_gamma};

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

/// Cohen's d of `b` against `a`: (mean(b) − mean(a)) / s_pooled, with
/// s²_pooled = ((na − 1)s²a + (nb − 1)s²b) / (na + nb − 2). `None` unless
/// both sides have two values or more and there is some spread (with none,
/// the difference is exact and d is infinite).
pub fn cohens_d(a: &[f64], b: &[f64]) -> Option<f64> {
    let (va, vb) = (sample_variance(a)?, sample_variance(b)?);
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let pooled = ((na - 1.0) * va + (nb - 1.0) * vb) / (na + nb - 2.0);
    let diff = mean(b)? - mean(a)?;
    (pooled > 0.0).then(|| diff / pooled.sqrt())
}

/// The power [`runs_needed`] aims for.
pub const POWER: f64 = 0.8;
/// The most runs per side [`runs_needed`] considers.
pub const MAX_RUNS: usize = 1000;

/// How many runs per side a test would need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunsNeeded {
    /// This many on each side.
    Runs(usize),
    /// More than this many ([`MAX_RUNS`]): the difference is small against
    /// the spread.
    MoreThan(usize),
}

/// The power of the two-sided Welch test at level `alpha` with `n` runs on
/// each side, when the true means differ by `diff` and the true variances
/// are `var_a` and `var_b`.
///
/// The statistic is then noncentral t with noncentrality
/// δ = |diff| / √((var_a + var_b) / n) and (Welch–Satterthwaite) degrees of
/// freedom ν = (var_a + var_b)²(n − 1) / (var_a² + var_b²). The power,
/// P(|T| > t(1 − α/2, ν)), is computed from T = (Z + δ) / √(V/ν),
/// Z normal and V χ²(ν), as E_V[Φ(−c√(V/ν) + δ) + Φ(−c√(V/ν) − δ)]: the
/// expectation over V is integrated numerically (trapezoids over ln V,
/// where the integrand is smooth), so the result is the noncentral t's,
/// not a normal approximation. For equal variances this is the pooled
/// two-sample t-test's power (R's `power.t.test`).
pub fn welch_power(diff: f64, var_a: f64, var_b: f64, n: usize, alpha: f64) -> f64 {
    let nf = n as f64;
    let v = var_a + var_b;
    if n < 2 || !(diff.is_finite() && v.is_finite()) {
        return f64::NAN;
    }
    if v == 0.0 {
        return if diff == 0.0 { alpha } else { 1.0 };
    }
    let delta = diff.abs() / (v / nf).sqrt();
    let df = v * v * (nf - 1.0) / (var_a * var_a + var_b * var_b);
    let Ok(t) = StudentsT::new(0.0, 1.0, df) else {
        return f64::NAN;
    };
    let c = t.inverse_cdf(1.0 - alpha / 2.0);
    let phi = |x: f64| 0.5 * erfc(-x / std::f64::consts::SQRT_2);
    // ln V = w; the density of w is f(e^w) e^w for V's density f.
    let k = df / 2.0;
    let log_norm = k * 2f64.ln() + ln_gamma(k);
    let density = |w: f64| (k * w - w.exp() / 2.0 - log_norm).exp();
    let (lo, hi) = (-60.0, (df + 40.0 * (2.0 * df).sqrt() + 100.0).ln());
    const STEPS: usize = 4000;
    let h = (hi - lo) / STEPS as f64;
    let mut sum = 0.0;
    for i in 0..=STEPS {
        let w = lo + i as f64 * h;
        let s = (w.exp() / df).sqrt();
        let f = density(w) * (phi(-c * s + delta) + phi(-c * s - delta));
        sum += if i == 0 || i == STEPS { f / 2.0 } else { f };
    }
    (sum * h).clamp(0.0, 1.0)
}

/// How many runs per side the two-sided Welch test at level `alpha` needs
/// to detect the difference between the means of `a` and `b` with the
/// given `power`, taking the observed difference and the observed
/// variances as the truth ([`welch_power`]; the smallest n, by doubling
/// then bisection, power growing with n).
///
/// A guide, not a promise: the difference and the spread are themselves
/// estimates from the runs at hand, which with 2 or 3 runs a side are
/// rough. `None` without two values a side, or when the means are equal
/// (no difference to detect).
pub fn runs_needed(a: &[f64], b: &[f64], alpha: f64, power: f64) -> Option<RunsNeeded> {
    let (va, vb) = (sample_variance(a)?, sample_variance(b)?);
    let diff = mean(b)? - mean(a)?;
    if diff == 0.0 || !diff.is_finite() {
        return None;
    }
    let enough = |n: usize| welch_power(diff, va, vb, n, alpha) >= power;
    let mut hi = 2;
    while !enough(hi) {
        if hi >= MAX_RUNS {
            return Some(RunsNeeded::MoreThan(MAX_RUNS));
        }
        hi = (hi * 2).min(MAX_RUNS);
    }
    // enough(hi); find the smallest such n above hi / 2.
    let mut lo = hi / 2; // not enough (or 1)
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if enough(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(RunsNeeded::Runs(hi.max(2)))
}

/// What two sets of runs say about a difference: Welch's test, the effect
/// size and, when the test is not significant, the runs that would detect
/// the difference seen.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Evidence {
    pub n_first: usize,
    pub n_second: usize,
    pub welch: Welch,
    pub alpha: f64,
    /// p < alpha.
    pub significant: bool,
    /// [`cohens_d`] of the second side against the first.
    pub cohens_d: Option<f64>,
    /// [`runs_needed`] at [`POWER`], when not significant.
    pub runs_needed: Option<RunsNeeded>,
}

/// The evidence of `second` against `first`; `None` unless both sides have
/// two finite values or more.
pub fn evidence(first: &[f64], second: &[f64], alpha: f64) -> Option<Evidence> {
    let welch = welch(second, first)?;
    let significant = welch.p_two_sided < alpha;
    Some(Evidence {
        n_first: first.len(),
        n_second: second.len(),
        welch,
        alpha,
        significant,
        cohens_d: cohens_d(first, second),
        runs_needed: if significant {
            None
        } else {
            runs_needed(first, second, alpha, POWER)
        },
    })
}

impl Evidence {
    /// One line: "significant at 3+3 runs (p=0.003, d=+4.1)", or "not
    /// significant at 3+3 runs (p=0.420, d=+0.8): ~12 runs per side to
    /// detect it".
    pub fn words(&self) -> String {
        let p = self.welch.p_two_sided;
        let p = if p < 0.001 {
            "p<0.001".to_string()
        } else {
            format!("p={p:.3}")
        };
        let d = self
            .cohens_d
            .map(|d| format!(", d={d:+.1}"))
            .unwrap_or_default();
        let at = format!("{}+{} runs", self.n_first, self.n_second);
        if self.significant {
            return format!("significant at {at} ({p}{d})");
        }
        let need = match self.runs_needed {
            Some(RunsNeeded::Runs(n)) => format!(": ~{n} runs per side to detect it"),
            Some(RunsNeeded::MoreThan(n)) => format!(": over {n} runs per side to detect it"),
            None => ": no difference seen".to_string(),
        };
        format!("not significant at {at} ({p}{d}){need}")
    }
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
