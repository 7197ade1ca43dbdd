//! Throughput X over sessions N: where it peaks, where it stops scaling
//! (the knee), whether it collapses after the peak, and a Universal
//! Scalability Law fit.
//!
//! Points are `(N, X)` pairs; several X per N are allowed (repeats).
//! [`peak`], [`knee`] and [`collapse`] work on the value of each N that the
//! SLOB.R table shows for that cell ([`per_n_values`]: the trimmed mean, or
//! the plain mean where it gives none), so a peak is a number the table
//! above it has; [`fit_usl`] fits every point. Non-finite points are
//! ignored.

use super::compare::Evidence;
use super::summary::summarize;

/// The fraction of the initial slope below which [`knee`] says scaling
/// has stopped.
pub const KNEE_FRACTION: f64 = 0.5;
/// [`collapse`] flags a fall of more than this fraction below the peak.
pub const COLLAPSE_FRACTION: f64 = 0.2;

/// The highest per-N value ([`per_n_values`]) and the session count it was
/// reached at.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Peak {
    pub sessions: f64,
    pub throughput: f64,
}

/// Throughput falling well below the peak at a higher session count.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Collapse {
    /// The session count of the peak.
    pub after_sessions: f64,
    /// The first session count past the peak whose value is more than
    /// [`COLLAPSE_FRACTION`] below the peak.
    pub at_sessions: f64,
    /// The peak throughput.
    pub from: f64,
    /// The value at `at_sessions`.
    pub to: f64,
    /// (from - to) / from · 100.
    pub drop_pct: f64,
    /// Welch's t-test of the runs at `at_sessions` against the peak's;
    /// `None` with fewer than two runs on a side.
    pub evidence: Option<Evidence>,
}

impl Collapse {
    /// Whether a report should flag it: the drop is significant, or
    /// untested (a run per session count: nothing says it is noise). Two
    /// runs of 20K and 68K under a peak of 60K are not flagged.
    pub fn flagged(&self) -> bool {
        self.evidence.is_none_or(|e| e.significant)
    }
}

/// The significance level of [`Collapse::evidence`].
pub const COLLAPSE_ALPHA: f64 = 0.05;

/// A Universal Scalability Law fit, X(N) = λN / (1 + σ(N−1) + κN(N−1)).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UslFit {
    /// Throughput of one session with no contention or coherency cost.
    pub lambda: f64,
    /// Contention (serialization), >= 0.
    pub sigma: f64,
    /// Coherency (crosstalk), >= 0.
    pub kappa: f64,
    /// Coefficient of determination of the fit over all points.
    pub r2: f64,
    /// Where the fitted curve peaks, √((1−σ)/κ); `None` when κ = 0 (no
    /// peak: the curve rises forever) or σ >= 1 (it never rises).
    pub peak_n: Option<f64>,
}

/// The SLOB.R value of X per distinct N, sorted by N (non-finite points
/// ignored): [`super::slob_trimmed_mean`] of the N's repeats, or their
/// plain mean where it gives none (fewer than three distinct values), the
/// same number as the table's cell.
pub fn per_n_values(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite())
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::new();
    let mut i = 0;
    while i < pts.len() {
        let n = pts[i].0;
        let xs: Vec<f64> = pts[i..]
            .iter()
            .take_while(|p| p.0 == n)
            .map(|p| p.1)
            .collect();
        i += xs.len();
        out.push((n, summarize(&xs).map_or(0.0, |s| s.value)));
    }
    out
}

/// The highest per-N value (the lowest N on a tie); `None` without
/// points.
pub fn peak(points: &[(f64, f64)]) -> Option<Peak> {
    per_n_values(points)
        .into_iter()
        .fold(None, |best: Option<(f64, f64)>, p| match best {
            Some(b) if b.1 >= p.1 => Some(b),
            _ => Some(p),
        })
        .map(|(sessions, throughput)| Peak {
            sessions,
            throughput,
        })
}

/// The knee: the session count where adding sessions stops paying.
///
/// Definition: over the per-N values sorted by N, the initial slope s₀ is
/// the gain per added session between the first two N. The knee is the
/// start N of the first later segment whose slope, (X[i+1] − X[i]) /
/// (N[i+1] − N[i]), is below [`KNEE_FRACTION`] · s₀. When s₀ <= 0 the
/// knee is the first N (adding sessions never paid). `None` with fewer
/// than three distinct N, or when every segment keeps at least half the
/// initial slope (still scaling at the largest N measured).
pub fn knee(points: &[(f64, f64)]) -> Option<f64> {
    let m = per_n_values(points);
    if m.len() < 3 {
        return None;
    }
    let slope = |i: usize| (m[i + 1].1 - m[i].1) / (m[i + 1].0 - m[i].0);
    let s0 = slope(0);
    if s0 <= 0.0 {
        return Some(m[0].0);
    }
    (1..m.len() - 1)
        .find(|&i| slope(i) < KNEE_FRACTION * s0)
        .map(|i| m[i].0)
}

/// A collapse: the first N past the peak whose value is more than
/// [`COLLAPSE_FRACTION`] below the peak and whose runs do not refute it
/// ([`Collapse::flagged`]); else the first such N with the runs against
/// it. `None` when no N falls that far.
pub fn collapse(points: &[(f64, f64)]) -> Option<Collapse> {
    let p = peak(points)?;
    if p.throughput <= 0.0 {
        return None;
    }
    let candidates: Vec<Collapse> = per_n_values(points)
        .into_iter()
        .filter(|&(n, x)| n > p.sessions && x < (1.0 - COLLAPSE_FRACTION) * p.throughput)
        .map(|(n, x)| Collapse {
            after_sessions: p.sessions,
            at_sessions: n,
            from: p.throughput,
            to: x,
            drop_pct: (p.throughput - x) / p.throughput * 100.0,
            evidence: evidence(points, p.sessions, n),
        })
        .collect();
    candidates
        .iter()
        .find(|c| c.flagged())
        .or(candidates.first())
        .copied()
}

/// The evidence of the runs at `n` against those at `peak_n`.
fn evidence(points: &[(f64, f64)], peak_n: f64, n: f64) -> Option<Evidence> {
    let at = |k: f64| -> Vec<f64> {
        points
            .iter()
            .filter(|p| p.0 == k && p.1.is_finite())
            .map(|p| p.1)
            .collect()
    };
    super::compare::evidence(&at(peak_n), &at(n), COLLAPSE_ALPHA)
}

/// The USL curve of `fit` at `n` sessions.
pub fn usl(fit: &UslFit, n: f64) -> f64 {
    usl_at(fit.lambda, fit.sigma, fit.kappa, n)
}

fn usl_at(lambda: f64, sigma: f64, kappa: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// Why the USL cannot be fitted to a set of points (the report says it
/// where the fit would be).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NoFit {
    #[error("every point needs N >= 1 and X >= 0, got ({n}, {x})")]
    OutOfRange { n: f64, x: f64 },
    #[error("needs at least 4 distinct session counts, got {0}")]
    TooFewCounts(usize),
    #[error("all throughputs are zero")]
    AllZero,
}

/// Fits the USL by nonlinear least squares on X (every point, unweighted).
///
/// Needs at least 4 distinct N, every N >= 1 and X >= 0 and not all zero.
/// The start comes from the linearized model N/X = a + b(N−1) + cN(N−1)
/// (a = 1/λ, b = σ/λ, c = κ/λ) solved by ordinary least squares; then a
/// hand-written Levenberg–Marquardt (Marquardt's diagonal scaling)
/// refines it, projecting σ and κ onto >= 0 after every step.
pub fn fit_usl(points: &[(f64, f64)]) -> Result<UslFit, NoFit> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(n, x)| n.is_finite() && x.is_finite())
        .collect();
    if let Some(&(n, x)) = pts.iter().find(|(n, x)| *n < 1.0 || *x < 0.0) {
        return Err(NoFit::OutOfRange { n, x });
    }
    let distinct = per_n_values(&pts).len();
    if distinct < 4 {
        return Err(NoFit::TooFewCounts(distinct));
    }
    if pts.iter().all(|p| p.1 == 0.0) {
        return Err(NoFit::AllZero);
    }
    let start = linearized_start(&pts);
    let [lambda, sigma, kappa] = levenberg_marquardt(&pts, start);
    let xbar = pts.iter().map(|p| p.1).sum::<f64>() / pts.len() as f64;
    let ss_tot: f64 = pts.iter().map(|p| (p.1 - xbar).powi(2)).sum();
    let ss_res = cost(&pts, [lambda, sigma, kappa]);
    let r2 = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else if ss_res == 0.0 {
        1.0
    } else {
        0.0
    };
    let peak_n = (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    Ok(UslFit {
        lambda,
        sigma,
        kappa,
        r2,
        peak_n,
    })
}

/// The start for [`levenberg_marquardt`]: least squares on N/X (points with
/// X = 0 skipped), σ and κ clamped to >= 0. Falls back to λ = X/N of the
/// best point and small σ, κ when the linear system is degenerate.
fn linearized_start(pts: &[(f64, f64)]) -> [f64; 3] {
    let mut a = [[0.0; 3]; 3];
    let mut rhs = [0.0; 3];
    for &(n, x) in pts.iter().filter(|p| p.1 > 0.0) {
        let row = [1.0, n - 1.0, n * (n - 1.0)];
        for i in 0..3 {
            for j in 0..3 {
                a[i][j] += row[i] * row[j];
            }
            rhs[i] += row[i] * n / x;
        }
    }
    let best = pts.iter().map(|p| p.1 / p.0).fold(0.0, f64::max);
    match solve3(a, rhs) {
        Some([c0, c1, c2]) if c0 > 0.0 => {
            let lambda = 1.0 / c0;
            [lambda, (c1 * lambda).max(0.0), (c2 * lambda).max(0.0)]
        }
        _ => [best, 0.01, 1e-4],
    }
}

/// Sum of squared residuals of X.
fn cost(pts: &[(f64, f64)], p: [f64; 3]) -> f64 {
    pts.iter()
        .map(|&(n, x)| (x - usl_at(p[0], p[1], p[2], n)).powi(2))
        .sum()
}

fn project(p: [f64; 3]) -> [f64; 3] {
    [p[0].max(f64::MIN_POSITIVE), p[1].max(0.0), p[2].max(0.0)]
}

/// Levenberg–Marquardt over (λ, σ, κ) with the analytic Jacobian.
fn levenberg_marquardt(pts: &[(f64, f64)], start: [f64; 3]) -> [f64; 3] {
    let mut p = project(start);
    let mut c = cost(pts, p);
    let mut mu = 1e-3;
    for _ in 0..500 {
        // Normal equations JᵀJ δ = Jᵀr, J = ∂X̂/∂(λ, σ, κ), r = X − X̂.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for &(n, x) in pts {
            let d = 1.0 + p[1] * (n - 1.0) + p[2] * n * (n - 1.0);
            let f = p[0] * n / d;
            let g = [n / d, -f * (n - 1.0) / d, -f * n * (n - 1.0) / d];
            for i in 0..3 {
                for j in 0..3 {
                    jtj[i][j] += g[i] * g[j];
                }
                jtr[i] += g[i] * (x - f);
            }
        }
        let mut improved = None;
        while mu < 1e15 {
            let mut a = jtj;
            for (i, row) in a.iter_mut().enumerate() {
                row[i] += mu * jtj[i][i].max(1e-300);
            }
            if let Some(delta) = solve3(a, jtr) {
                let q = project([p[0] + delta[0], p[1] + delta[1], p[2] + delta[2]]);
                let cq = cost(pts, q);
                if cq < c {
                    improved = Some((q, cq));
                    mu = (mu / 10.0).max(1e-12);
                    break;
                }
            }
            mu *= 10.0;
        }
        let Some((q, cq)) = improved else { break };
        let small_step = (0..3).all(|i| (q[i] - p[i]).abs() <= 1e-12 * (p[i].abs() + 1e-12));
        let small_gain = c - cq <= 1e-15 * c;
        p = q;
        c = cq;
        if small_step || small_gain {
            break;
        }
    }
    p
}

/// Solves a 3×3 system by Gaussian elimination with partial pivoting;
/// `None` when it is singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col] == 0.0 || !a[piv][col].is_finite() {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for row in col + 1..3 {
            let pivot_row = a[col];
            let factor = a[row][col] / pivot_row[col];
            for (v, p) in a[row].iter_mut().zip(pivot_row).skip(col) {
                *v -= factor * p;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
#[path = "scaling_tests.rs"]
mod tests;
