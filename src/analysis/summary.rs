//! One cell of a results table: the repeats of one configuration.
//!
//! [`slob_trimmed_mean`] is SLOB.R's `myavg` transcribed exactly, so tables
//! built here agree with SLOB.R's to the last digit. [`summarize`] wraps it
//! with what SLOB.R does not report: spread, a Student t interval, a
//! percentile bootstrap interval and Tukey outliers. [`readwrite`] and
//! [`readwrite_cell`] are SLOB.R's READWRITE model.
//!
//! All inputs are expected to be finite; a slice holding NaN or infinity
//! gives `None`.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Resamples drawn by the bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// The fixed seed of the bootstrap, so a table is the same every time.
pub const BOOTSTRAP_SEED: u64 = 0x5EED_DB10_0000_0005;
/// The bootstrap runs for cells with this many values or more ...
pub const BOOTSTRAP_MIN_N: usize = 3;
/// ... and this many or fewer (beyond, the t interval is good enough).
pub const BOOTSTRAP_MAX_N: usize = 30;

/// SLOB.R's `myavg`: `mean(z[!z %in% c(min(z), max(z))])`.
///
/// Every value equal to the minimum and every value equal to the maximum is
/// dropped (not just one of each) and the rest is averaged. `None` when
/// nothing is left, which is whenever there are fewer than three distinct
/// values (n = 1 or 2, all equal, only two distinct values: R would give
/// `NaN`), or when the slice holds a non-finite value.
pub fn slob_trimmed_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let kept: Vec<f64> = values
        .iter()
        .copied()
        .filter(|&v| v != min && v != max)
        .collect();
    mean(&kept)
}

/// Everything a results table shows about one cell.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSummary {
    /// Number of values (runs) in the cell.
    pub n: usize,
    /// [`slob_trimmed_mean`]; `None` with fewer than three distinct values.
    pub trimmed_mean: Option<f64>,
    /// The plain arithmetic mean.
    pub mean: f64,
    /// The value to show: the trimmed mean, or the plain mean when there is
    /// no trimmed mean.
    pub value: f64,
    /// `false` when `value` fell back to the plain mean: mark the cell.
    pub trimmed: bool,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (divisor n - 1); 0 for a single value.
    pub stddev: f64,
    /// Coefficient of variation, stddev / mean; `None` for n < 2 or a zero
    /// mean.
    pub cv: Option<f64>,
    /// Student t 95% interval of the mean, for n >= 2.
    pub ci95: Option<(f64, f64)>,
    /// Percentile bootstrap 95% interval of the mean ([`BOOTSTRAP_RESAMPLES`]
    /// resamples, fixed seed), for 3 <= n <= 30.
    pub bootstrap_ci95: Option<(f64, f64)>,
    /// [`lognormal_mean_ci95`]: a 95% interval of the mean that stays
    /// positive, for n >= 2 values all above zero.
    pub lognormal_ci95: Option<(f64, f64)>,
    /// Indices (into the input) of values outside the Tukey fences
    /// Q1 - 1.5 IQR and Q3 + 1.5 IQR (quartiles as R's default, type 7), for
    /// n >= 4; empty otherwise.
    pub outliers: Vec<usize>,
}

/// Summarizes one cell. `None` for an empty slice or a non-finite value.
pub fn summarize(values: &[f64]) -> Option<CellSummary> {
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let n = values.len();
    let mean = mean(values)?;
    let trimmed_mean = slob_trimmed_mean(values);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let stddev = sample_variance(values).map_or(0.0, f64::sqrt);
    let cv = (n >= 2 && mean != 0.0).then(|| stddev / mean);
    let ci95 = t_interval(mean, stddev, n);
    let bootstrap_ci95 = (BOOTSTRAP_MIN_N..=BOOTSTRAP_MAX_N)
        .contains(&n)
        .then(|| bootstrap_mean_ci95(values, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED));
    let lognormal_ci95 = lognormal_mean_ci95(values);
    Some(CellSummary {
        n,
        trimmed_mean,
        mean,
        value: trimmed_mean.unwrap_or(mean),
        trimmed: trimmed_mean.is_some(),
        min,
        max,
        stddev,
        cv,
        ci95,
        bootstrap_ci95,
        lognormal_ci95,
        outliers: tukey_outliers(values),
    })
}

/// A cell is skewed, for [`ci95`], when its sample skewness is at least
/// this many standard errors of skewness from 0 (the usual test; a fixed
/// threshold would call most 3-run cells of normal data skewed).
pub const SKEWED_SES: f64 = 2.0;

/// How a 95% interval of the mean was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CiMethod {
    /// mean ± t(0.975, n − 1) · s / √n.
    StudentT,
    /// The percentile bootstrap of the mean.
    Bootstrap,
    /// [`lognormal_mean_ci95`], for positive values whose Student t
    /// interval would reach zero or below.
    LogNormal,
}

impl CiMethod {
    /// The short name a table prints.
    pub fn short(self) -> &'static str {
        match self {
            CiMethod::StudentT => "t",
            CiMethod::Bootstrap => "bootstrap",
            CiMethod::LogNormal => "log-normal",
        }
    }
}

/// The adjusted Fisher–Pearson sample skewness G1 (what most statistics
/// packages call skewness); `None` for n < 3 or no spread.
pub fn skewness(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 3 {
        return None;
    }
    let m = mean(values)?;
    let nf = n as f64;
    let m2 = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / nf;
    let m3 = values.iter().map(|v| (v - m).powi(3)).sum::<f64>() / nf;
    if m2 == 0.0 {
        return None;
    }
    let g1 = m3 / m2.powf(1.5);
    Some(g1 * (nf * (nf - 1.0)).sqrt() / (nf - 2.0))
}

/// The standard error of [`skewness`] for n values under normality,
/// √(6n(n−1) / ((n−2)(n+1)(n+3))); `None` for n < 3.
pub fn skewness_se(n: usize) -> Option<f64> {
    let n = n as f64;
    (n >= 3.0).then(|| (6.0 * n * (n - 1.0) / ((n - 2.0) * (n + 1.0) * (n + 3.0))).sqrt())
}

/// Whether the values are skewed: |[`skewness`]| >= [`SKEWED_SES`] ·
/// [`skewness_se`]. Never for fewer than 4 values (the bound exceeds the
/// largest skewness 3 values can have).
pub fn is_skewed(values: &[f64]) -> bool {
    match (skewness(values), skewness_se(values.len())) {
        (Some(g), Some(se)) => g.abs() >= SKEWED_SES * se,
        _ => false,
    }
}

/// The 95% interval a table shows for a cell: the Student t interval,
/// which is exact for normal data at any n; the percentile bootstrap
/// instead where the cell is small (3 to 30 values, where the t interval
/// leans on normality most) and [`is_skewed`], since the t interval's
/// symmetry is then visibly wrong; and [`lognormal_mean_ci95`] where every
/// value is positive (a rate, a latency) but the t interval reaches zero
/// or below, which a positive quantity cannot (2 or 3 runs far apart: the
/// t interval's symmetry is impossible there). `None` for n < 2.
pub fn ci95(values: &[f64], s: &CellSummary) -> Option<(f64, f64, CiMethod)> {
    let skewed = is_skewed(values);
    match (s.bootstrap_ci95, s.ci95, s.lognormal_ci95) {
        (Some((lo, hi)), _, _) if skewed => Some((lo, hi, CiMethod::Bootstrap)),
        (_, Some((tlo, _)), Some((lo, hi))) if tlo <= 0.0 => Some((lo, hi, CiMethod::LogNormal)),
        (_, Some((lo, hi)), _) => Some((lo, hi, CiMethod::StudentT)),
        _ => None,
    }
}

/// A 95% interval of the mean of positive values that stays positive: the
/// data are taken as log-normal and the interval is the modified Cox
/// interval of a log-normal mean (Armstrong 1992; Zhou & Gao 1997):
/// with ȳ and s² the mean and sample variance of ln x,
///
/// exp(ȳ + s²/2 ± t(0.975, n − 1) · √(s²/n + s⁴ / (2(n − 1)))).
///
/// ȳ + s²/2 estimates the log of the arithmetic mean, so this is an
/// interval of the same mean the Student t interval covers, only
/// asymmetric (longer above) as a positive quantity's is. `None` for n < 2
/// or any value at or below zero.
pub fn lognormal_mean_ci95(values: &[f64]) -> Option<(f64, f64)> {
    let n = values.len();
    if n < 2 || values.iter().any(|&v| v <= 0.0 || !v.is_finite()) {
        return None;
    }
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let (ybar, s2) = (mean(&logs)?, sample_variance(&logs)?);
    let nf = n as f64;
    let se = (s2 / nf + s2 * s2 / (2.0 * (nf - 1.0))).sqrt();
    let t = StudentsT::new(0.0, 1.0, nf - 1.0).ok()?.inverse_cdf(0.975);
    let centre = ybar + s2 / 2.0;
    Some(((centre - t * se).exp(), (centre + t * se).exp()))
}

/// SLOB.R's READWRITE model: reads and writes are trimmed separately with
/// [`slob_trimmed_mean`] and then added, exactly as SLOB.R does.
///
/// `None` when either side has no trimmed mean (SLOB.R would print `NaN`).
/// For the value a table shows in that case, use [`readwrite_cell`], which
/// falls back to plain means and says so.
pub fn readwrite(reads: &[f64], writes: &[f64]) -> Option<f64> {
    Some(slob_trimmed_mean(reads)? + slob_trimmed_mean(writes)?)
}

/// A READWRITE cell with its fallback made visible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadWrite {
    /// Reads plus writes.
    pub value: f64,
    /// `true` when both sides are trimmed means ([`readwrite`]'s value);
    /// `false` when either side had no trimmed mean and both sides were
    /// replaced by their plain means (so the two halves stay comparable):
    /// mark the cell.
    pub trimmed: bool,
}

/// [`readwrite`] with a fallback: when either side has no trimmed mean,
/// the plain means of both sides are added instead and `trimmed` is false.
/// `None` only when either side is empty or holds a non-finite value.
pub fn readwrite_cell(reads: &[f64], writes: &[f64]) -> Option<ReadWrite> {
    if let Some(value) = readwrite(reads, writes) {
        return Some(ReadWrite {
            value,
            trimmed: true,
        });
    }
    let finite = |s: &[f64]| s.iter().all(|v| v.is_finite());
    if !finite(reads) || !finite(writes) {
        return None;
    }
    Some(ReadWrite {
        value: mean(reads)? + mean(writes)?,
        trimmed: false,
    })
}

/// The arithmetic mean; `None` for an empty slice.
pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample variance (divisor n - 1); `None` for n < 2.
pub(crate) fn sample_variance(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    Some(ss / (values.len() - 1) as f64)
}

/// mean ± t(0.975, n - 1) · s / √n, for n >= 2.
fn t_interval(mean: f64, stddev: f64, n: usize) -> Option<(f64, f64)> {
    if n < 2 {
        return None;
    }
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(0.975);
    let half = t * stddev / (n as f64).sqrt();
    Some((mean - half, mean + half))
}

/// The p-quantile of sorted values, linear interpolation between order
/// statistics (R's default, type 7). `sorted` must not be empty.
pub(crate) fn quantile_sorted(sorted: &[f64], p: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

/// Indices of values outside the Tukey fences Q1 − 1.5 IQR and Q3 + 1.5
/// IQR (quartiles type 7), for n >= 4; empty otherwise. Call it on one
/// cell's values only: over runs of several configurations the fences
/// describe no population.
pub fn tukey_outliers(values: &[f64]) -> Vec<usize> {
    if values.len() < 4 {
        return Vec::new();
    }
    let s = sorted(values);
    let (q1, q3) = (quantile_sorted(&s, 0.25), quantile_sorted(&s, 0.75));
    let iqr = q3 - q1;
    let (lo, hi) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    values
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v < lo || v > hi)
        .map(|(i, _)| i)
        .collect()
}

/// The percentile bootstrap 95% interval of the mean: `resamples` resamples
/// with replacement of the same size, the 2.5% and 97.5% quantiles (type 7)
/// of their means. Deterministic for a given seed. `values` must not be
/// empty.
pub(crate) fn bootstrap_mean_ci95(values: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let mut rng = SplitMix64::new(seed);
    let n = values.len();
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| values[rng.below(n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    (
        quantile_sorted(&means, 0.025),
        quantile_sorted(&means, 0.975),
    )
}

/// splitmix64 (Steele, Lea, Flood 2014): small, fast and good enough for
/// resampling indices; no external RNG crate.
#[derive(Debug, Clone)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (multiply-high; the bias is below 2^-32 for any
    /// cell size).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
