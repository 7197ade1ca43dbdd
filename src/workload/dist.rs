//! Access distributions: which block a session touches next (uniform, zipf, pareto, and SLOB's hot spot).
//!
//! A [`BlockPicker`] is built once per run (validation and all precomputation happen in
//! [`BlockPicker::new`]), cloned into every session, and then asked for one block index per I/O
//! with [`BlockPicker::next`], which allocates nothing and takes no locks.
//!
//! # Distributions
//!
//! * `uniform` — every block equally likely (exactly: [`Rng::below`] is unbiased).
//! * `zipf:THETA` — the block of popularity rank `r` (1 = hottest) is picked with probability
//!   `r^-θ / ζ(n, θ)`, as fio defines it; θ > 0 and θ ≠ 1 (both θ < 1 and θ > 1 work).
//!   fio samples with the closed form of Gray et al., "Quickly generating billion-record
//!   synthetic databases" (SIGMOD '94): ranks 1 and 2 exactly, then
//!   `1 + ⌊n·(η·u − η + 1)^(1/(1−θ))⌋`. That closed form credits rank `k` with the mass of
//!   `x^-θ` over `[k−1, k)`, which over-weights ranks 3, 4, ... (for n = 1000, rank 3 by 15%
//!   at θ = 0.8 and by 19% at θ = 1.2). Here we keep the method's ingredients (`ζ(n, θ)` and a
//!   closed-form inversion of `x^(1−θ)`) but make it exact where it matters: ranks 1..=32 come
//!   from an exact CDF table, and larger ranks `k` get the mass of `x^-θ` over `[k−½, k+½)`,
//!   rescaled so the tail has exactly its share `1 − H(32, θ)/ζ(n, θ)`. Every rank's
//!   probability is then within 1e-4 (relative) of `r^-θ / ζ(n, θ)` for θ ≤ 1.2 (2.4e-4 at
//!   θ = 3). `ζ(n, θ)` is summed exactly for the first 2^20 terms and the rest comes from the
//!   Euler–Maclaurin formula, so building a picker over hundreds of millions of blocks takes
//!   about 20 ms (50 ms in a debug build).
//! * `pareto:H` — fio's definition: `value = ⌊n · u^p⌋` with `p = ln H / ln(1 − H)` and `u`
//!   uniform in [0, 1). (fio multiplies by `n − 1` and so never picks the last block; we use `n`.)
//!   Then `P(value < k) = (k/n)^(1/p)`, and in particular, for `H < ½`, **the hottest fraction
//!   `H` of the blocks receives exactly `1 − H` of the accesses** (when `H·n` is whole):
//!   `pareto:0.2` is the 80/20 rule and `pareto:0.1` is 90/10. `pareto:H` and `pareto:1−H`
//!   give the same split (`p` becomes `1/p`; the hottest values are then the high ones), but
//!   `H > ½` has a much flatter head. The hottest 1%, 10%, 20% and 50% of blocks receive about
//!   52.8%, 72.7%, 80.0% and 90.9% of accesses for `H = 0.2` (`p ≈ 7.21`);
//!   81.0%, 90.0%, 92.9% and 96.9% for `H = 0.1` (`p ≈ 21.9`);
//!   and 19.7%, 90.0%, 99.2% and 100% for `H = 0.9` (`p ≈ 0.046`).
//!
//! Zipf and pareto ranks are mapped to blocks by a fixed bijective scramble of `0..n` (an
//! xorshift-multiply permutation of the enclosing power of two, with cycle-walking), so the hot
//! blocks are scattered over the whole space, deterministically for a given `n`.
//!
//! # Hot spot
//!
//! With a [`Hotspot`], operation `i` of a picker (counting from 0) goes uniformly into the hot
//! spot when `i % every == 0`, and follows the distribution otherwise, like SLOB's
//! `HOTSPOT_OFFSET_MB` / `HOTSPOT_MB` / `HOTSPOT_FREQUENCY`.

use super::rng::Rng;
use std::fmt;
use std::str::FromStr;

/// The phrase returned by [`Distribution::from_str`] for anything it cannot accept.
const PARSE_HINT: &str = "expected uniform, zipf:THETA (THETA > 0, not 1, e.g. zipf:1.2) \
                          or pareto:H (0 < H < 1, e.g. pareto:0.9)";

/// Zipf ranks `1..=ZIPF_HEAD` are drawn from an exact CDF table.
const ZIPF_HEAD: usize = 32;

/// `ζ(n, θ)` sums this many terms exactly and approximates the rest (Euler–Maclaurin).
const ZETA_EXACT_TERMS: u64 = 1 << 20;

/// Which blocks are popular.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    /// Every block equally likely.
    Uniform,
    /// Rank `r` (1-based) has probability proportional to `r^-theta`; `theta > 0`, `theta != 1`.
    Zipf { theta: f64 },
    /// fio's pareto: for `h < 0.5` the hottest fraction `h` of blocks gets `1 - h` of
    /// accesses (`pareto:h` and `pareto:1-h` split alike); `0 < h < 1`.
    Pareto { h: f64 },
}

impl Distribution {
    /// Checks the parameter range.
    fn validate(self) -> Result<Self, DistError> {
        match self {
            Self::Uniform => Ok(self),
            Self::Zipf { theta } if theta.is_finite() && theta > 0.0 && theta != 1.0 => Ok(self),
            Self::Zipf { theta } => Err(DistError::ZipfTheta(theta)),
            Self::Pareto { h } if h > 0.0 && h < 1.0 => Ok(self),
            Self::Pareto { h } => Err(DistError::ParetoH(h)),
        }
    }
}

impl FromStr for Distribution {
    type Err = String;

    /// Parses `uniform`, `zipf:THETA` or `pareto:H` (names case-insensitive).
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (name, param) = match s.split_once(':') {
            Some((name, param)) => (name.trim(), Some(param.trim())),
            None => (s, None),
        };
        let number = |p: &str| p.parse::<f64>().map_err(|_| PARSE_HINT.to_string());
        let dist = match param {
            None if name.eq_ignore_ascii_case("uniform") => Self::Uniform,
            Some(p) if name.eq_ignore_ascii_case("zipf") => Self::Zipf { theta: number(p)? },
            Some(p) if name.eq_ignore_ascii_case("pareto") => Self::Pareto { h: number(p)? },
            _ => return Err(PARSE_HINT.to_string()),
        };
        dist.validate().map_err(|_| PARSE_HINT.to_string())
    }
}

impl fmt::Display for Distribution {
    /// `uniform`, `zipf:THETA` or `pareto:H`, with the shortest decimal that parses back exactly.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uniform => f.write_str("uniform"),
            Self::Zipf { theta } => write!(f, "zipf:{theta}"),
            Self::Pareto { h } => write!(f, "pareto:{h}"),
        }
    }
}

/// A region that receives every `every`-th operation of a session, uniformly inside it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hotspot {
    /// First block of the hot spot.
    pub offset_blocks: u64,
    /// Number of blocks in the hot spot (at least 1).
    pub size_blocks: u64,
    /// Operations `0, every, 2·every, ...` go to the hot spot (at least 1; 1 = all of them).
    pub every: u32,
}

/// Why a [`BlockPicker`] cannot be built.
#[derive(thiserror::Error, Debug)]
pub enum DistError {
    #[error("the block space is empty (0 blocks)")]
    NoBlocks,
    #[error("zipf theta must be finite, greater than 0 and not 1 (got {0})")]
    ZipfTheta(f64),
    #[error("pareto h must be strictly between 0 and 1 (got {0})")]
    ParetoH(f64),
    #[error("the hot spot must be at least 1 block")]
    EmptyHotspot,
    #[error(
        "the hot spot (blocks {offset}..{offset}+{size}) does not fit in the {nblocks}-block space"
    )]
    HotspotOutside {
        offset: u64,
        size: u64,
        nblocks: u64,
    },
    #[error("the hot spot frequency must be at least 1 (every Nth operation)")]
    HotspotEvery,
}

/// Picks block indices in `[0, nblocks)` for one session; clone one per session.
///
/// Cloning copies a few hundred bytes (no heap data) including the hot-spot operation counter,
/// so clone a freshly built picker for each session.
#[derive(Clone, Debug)]
pub struct BlockPicker {
    nblocks: u64,
    sampler: Sampler,
    scramble: Scramble,
    hot: Option<HotState>,
}

impl BlockPicker {
    /// Validates the parameters and precomputes everything `next` needs.
    pub fn new(
        dist: Distribution,
        nblocks: u64,
        hotspot: Option<Hotspot>,
    ) -> Result<Self, DistError> {
        if nblocks == 0 {
            return Err(DistError::NoBlocks);
        }
        let hot = hotspot.map(|h| HotState::new(h, nblocks)).transpose()?;
        let sampler = match dist.validate()? {
            Distribution::Uniform => Sampler::Uniform,
            Distribution::Zipf { theta } => Sampler::Zipf(Zipf::new(nblocks, theta)),
            Distribution::Pareto { h } => Sampler::Pareto(Pareto::new(nblocks, h)),
        };
        Ok(Self {
            nblocks,
            sampler,
            scramble: Scramble::new(nblocks),
            hot,
        })
    }

    /// The next block index, in `[0, nblocks)`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        if let Some(hot) = &mut self.hot
            && hot.tick()
        {
            return hot.offset + rng.below(hot.size);
        }
        match &self.sampler {
            Sampler::Uniform => rng.below(self.nblocks),
            Sampler::Zipf(zipf) => self.scramble.apply(zipf.rank0(rng.next_f64())),
            Sampler::Pareto(pareto) => self.scramble.apply(pareto.rank0(rng.next_f64())),
        }
    }
}

/// The per-distribution part of a picker.
///
/// The zipf table (~300 bytes) is kept inline on purpose: one picker per session, and the hot
/// path then reads it without a pointer chase.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
enum Sampler {
    Uniform,
    Zipf(Zipf),
    Pareto(Pareto),
}

/// Hot-spot geometry plus the operation counter.
#[derive(Clone, Debug)]
struct HotState {
    offset: u64,
    size: u64,
    every: u32,
    /// Operations left before the next hot one (0: this one is hot).
    countdown: u32,
}

impl HotState {
    fn new(spot: Hotspot, nblocks: u64) -> Result<Self, DistError> {
        if spot.size_blocks == 0 {
            return Err(DistError::EmptyHotspot);
        }
        if spot.every == 0 {
            return Err(DistError::HotspotEvery);
        }
        let end = spot.offset_blocks.checked_add(spot.size_blocks);
        if end.is_none_or(|end| end > nblocks) {
            return Err(DistError::HotspotOutside {
                offset: spot.offset_blocks,
                size: spot.size_blocks,
                nblocks,
            });
        }
        Ok(Self {
            offset: spot.offset_blocks,
            size: spot.size_blocks,
            every: spot.every,
            countdown: 0,
        })
    }

    /// Counts one operation; true when it goes to the hot spot (operation index % every == 0).
    #[inline]
    fn tick(&mut self) -> bool {
        if self.countdown == 0 {
            self.countdown = self.every - 1;
            true
        } else {
            self.countdown -= 1;
            false
        }
    }
}

/// Zipf sampler: exact CDF table for the head, midpoint-corrected Gray-style inversion for the
/// tail (see the module documentation).
#[derive(Clone, Debug)]
struct Zipf {
    /// `H(r, θ) / ζ(n, θ)` for ranks `r = 1..=min(n, ZIPF_HEAD)`; padding and, when there is no
    /// tail, the last entry are infinite.
    head_cdf: [f64; ZIPF_HEAD],
    /// Probability of the head (infinite when the head is everything).
    head_mass: f64,
    /// `1 / P(tail)`, to rescale `u` into `[0, 1)` within the tail.
    tail_scale: f64,
    /// `(ZIPF_HEAD + ½)^(1−θ)`.
    base: f64,
    /// `(n + ½)^(1−θ) − base`.
    span: f64,
    /// `1 / (1 − θ)`.
    alpha: f64,
    /// Smallest tail rank (1-based) and the largest rank, for clamping rounding excursions.
    first_tail_rank: u64,
    n: u64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Self {
        let zetan = zeta(n, theta);
        let head_len = n.min(ZIPF_HEAD as u64) as usize;
        let mut head_cdf = [f64::INFINITY; ZIPF_HEAD];
        let mut head_sum = 0.0;
        for (i, slot) in head_cdf[..head_len].iter_mut().enumerate() {
            head_sum += (i as f64 + 1.0).powf(-theta);
            *slot = head_sum / zetan;
        }
        let one_minus_theta = 1.0 - theta;
        let base = (head_len as f64 + 0.5).powf(one_minus_theta);
        let (head_mass, tail_scale) = if head_len as u64 == n {
            head_cdf[head_len - 1] = f64::INFINITY;
            (f64::INFINITY, 0.0)
        } else {
            (head_sum / zetan, zetan / (zetan - head_sum))
        };
        Self {
            head_cdf,
            head_mass,
            tail_scale,
            base,
            span: (n as f64 + 0.5).powf(one_minus_theta) - base,
            alpha: 1.0 / one_minus_theta,
            first_tail_rank: head_len as u64 + 1,
            n,
        }
    }

    /// The 0-based rank for a uniform `u` in `[0, 1)`.
    #[inline]
    fn rank0(&self, u: f64) -> u64 {
        if u < self.head_mass {
            return self.head_cdf.partition_point(|&c| c <= u) as u64;
        }
        let v = (u - self.head_mass) * self.tail_scale;
        let x = (self.base + v * self.span).powf(self.alpha);
        // Rank k owns [k − ½, k + ½); `as` saturates, and clamping absorbs rounding at the ends.
        let rank = (x + 0.5) as u64;
        rank.clamp(self.first_tail_rank, self.n) - 1
    }
}

/// `ζ(n, θ) = Σ_{r=1..=n} r^-θ`: exact (compensated) sum of the first 2^20 terms plus an
/// Euler–Maclaurin tail, whose truncation error is below 1e-25 relative.
fn zeta(n: u64, theta: f64) -> f64 {
    let exact_terms = n.min(ZETA_EXACT_TERMS);
    let head = compensated_sum((1..=exact_terms).rev().map(|r| (r as f64).powf(-theta)));
    if n > exact_terms {
        head + zeta_tail(exact_terms + 1, n, theta)
    } else {
        head
    }
}

/// Neumaier's compensated sum.
fn compensated_sum(terms: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for t in terms {
        let next = sum + t;
        carry += if sum.abs() >= t.abs() {
            (sum - next) + t
        } else {
            (t - next) + sum
        };
        sum = next;
    }
    sum + carry
}

/// `Σ_{r=a..=b} r^-θ` by Euler–Maclaurin with corrections up to the third derivative.
fn zeta_tail(a: u64, b: u64, theta: f64) -> f64 {
    let (a, b) = (a as f64, b as f64);
    let f = |x: f64| x.powf(-theta);
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    // ∫_a^b x^-θ dx, written with exp_m1 to stay accurate for θ near 1.
    let s = 1.0 - theta;
    let integral = a.powf(s) * (s * (b / a).ln()).exp_m1() / s;
    integral + (f(a) + f(b)) / 2.0 + (d1(b) - d1(a)) / 12.0 - (d3(b) - d3(a)) / 720.0
}

/// fio's pareto: `⌊n · u^p⌋`, `p = ln h / ln(1 − h)`.
#[derive(Clone, Debug)]
struct Pareto {
    exponent: f64,
    n: f64,
    last: u64,
}

impl Pareto {
    fn new(n: u64, h: f64) -> Self {
        Self {
            exponent: h.ln() / (-h).ln_1p(),
            n: n as f64,
            last: n - 1,
        }
    }

    /// The 0-based rank (0 = hottest for h < ½, n − 1 = hottest for h > ½) for `u` in `[0, 1)`.
    #[inline]
    fn rank0(&self, u: f64) -> u64 {
        ((self.n * u.powf(self.exponent)) as u64).min(self.last)
    }
}

/// A fixed pseudo-random permutation of `0..n`.
///
/// A bijection of `0..2^k` (the smallest power of two `>= n`), built from xorshifts and odd
/// multiplications modulo `2^k`, applied repeatedly until the value falls below `n`
/// (cycle-walking; fewer than 2 rounds on average since `2^k < 2n`).
#[derive(Clone, Copy, Debug)]
struct Scramble {
    n: u64,
    mask: u64,
    shift: u32,
}

impl Scramble {
    fn new(n: u64) -> Self {
        let bits = u64::BITS - (n - 1).leading_zeros();
        let mask = if bits == u64::BITS {
            u64::MAX
        } else {
            (1 << bits) - 1
        };
        Self {
            n,
            mask,
            shift: bits / 2 + 1,
        }
    }

    /// The image of `x < n`, also `< n`.
    #[inline]
    fn apply(&self, x: u64) -> u64 {
        let mut y = self.permute(x);
        while y >= self.n {
            y = self.permute(y);
        }
        y
    }

    /// One round of the power-of-two bijection.
    #[inline]
    fn permute(&self, mut x: u64) -> u64 {
        x ^= x >> self.shift;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9) & self.mask;
        x ^= x >> self.shift;
        x = x.wrapping_mul(0x94D0_49BB_1331_11EB) & self.mask;
        x ^ (x >> self.shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::hint::black_box;
    use std::time::Instant;

    /// Chi-square critical value at p = 0.001 (Wilson–Hilferty approximation).
    fn chi2_critical_p001(df: usize) -> f64 {
        const Z: f64 = 3.090_232;
        let k = df as f64;
        let c = 2.0 / (9.0 * k);
        k * (1.0 - c + Z * c.sqrt()).powi(3)
    }

    /// Pearson's chi-square of `observed` against `probs` (same order), pooling consecutive
    /// cells until each expects at least 5; asserts the p = 0.001 critical value is not reached.
    fn assert_fits(observed: &[u64], probs: &[f64], what: &str) {
        let total = observed.iter().sum::<u64>() as f64;
        let mut cells: Vec<(f64, f64)> = Vec::new();
        let (mut obs, mut exp) = (0.0, 0.0);
        for (&o, &p) in observed.iter().zip(probs) {
            obs += o as f64;
            exp += p * total;
            if exp >= 5.0 {
                cells.push((obs, exp));
                (obs, exp) = (0.0, 0.0);
            }
        }
        match cells.last_mut() {
            Some(last) => *last = (last.0 + obs, last.1 + exp),
            None => cells.push((obs, exp)),
        }
        let stat: f64 = cells.iter().map(|(o, e)| (o - e).powi(2) / e).sum();
        let critical = chi2_critical_p001(cells.len().max(2) - 1);
        assert!(
            stat < critical,
            "{what}: chi2 {stat:.1} >= {critical:.1} ({} cells)",
            cells.len()
        );
    }

    /// Asserts a binomial count is within 5 standard deviations of `n·p`.
    fn assert_binomial(count: u64, n: u64, p: f64, what: &str) {
        let (n, expected) = (n as f64, n as f64 * p);
        let sd = (n * p * (1.0 - p)).sqrt().max(1.0);
        let z = (count as f64 - expected) / sd;
        assert!(
            z.abs() < 5.0,
            "{what}: got {count}, expected {expected:.1} (z = {z:.1})"
        );
    }

    fn picker(dist: Distribution, n: u64) -> BlockPicker {
        BlockPicker::new(dist, n, None).expect("valid picker")
    }

    /// Picks per block for `samples` calls; also checks every pick is `< n`.
    fn block_counts(dist: Distribution, n: u64, seed: u64, samples: u64) -> Vec<u64> {
        let mut p = picker(dist, n);
        let mut rng = Rng::new(seed);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..samples {
            let b = p.next(&mut rng);
            assert!(b < n, "block {b} out of range {n}");
            counts[b as usize] += 1;
        }
        counts
    }

    /// Block counts reordered by rank (index 0 = rank 1), through the known scramble.
    fn by_rank(counts: &[u64]) -> Vec<u64> {
        let s = Scramble::new(counts.len() as u64);
        (0..counts.len() as u64)
            .map(|r| counts[s.apply(r) as usize])
            .collect()
    }

    fn sorted_desc(mut v: Vec<u64>) -> Vec<u64> {
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    }

    fn zipf_pmf(n: u64, theta: f64) -> Vec<f64> {
        let w: Vec<f64> = (1..=n).map(|r| (r as f64).powf(-theta)).collect();
        let total: f64 = w.iter().rev().sum();
        w.iter().map(|x| x / total).collect()
    }

    /// Exact pmf of `⌊n·u^p⌋` (by value, 0-based).
    fn pareto_pmf(n: u64, h: f64) -> Vec<f64> {
        let q = (1.0 - h).ln() / h.ln(); // 1/p
        let cdf = |j: u64| (j as f64 / n as f64).powf(q);
        (0..n).map(|j| cdf(j + 1) - cdf(j)).collect()
    }

    /// Share of the `k` largest probabilities.
    fn top_share(pmf: &[f64], k: usize) -> f64 {
        let mut p = pmf.to_vec();
        p.sort_unstable_by(|a, b| b.total_cmp(a));
        p[..k].iter().sum()
    }

    // ---- parsing -------------------------------------------------------------------------

    #[test]
    fn parses_good_strings() {
        let cases = [
            ("uniform", Distribution::Uniform),
            ("  Uniform ", Distribution::Uniform),
            ("zipf:1.2", Distribution::Zipf { theta: 1.2 }),
            ("ZIPF: 0.8", Distribution::Zipf { theta: 0.8 }),
            ("zipf:2", Distribution::Zipf { theta: 2.0 }),
            ("zipf:1e-3", Distribution::Zipf { theta: 0.001 }),
            ("pareto:0.9", Distribution::Pareto { h: 0.9 }),
            ("Pareto:.2", Distribution::Pareto { h: 0.2 }),
        ];
        for (s, want) in cases {
            assert_eq!(s.parse::<Distribution>(), Ok(want), "{s:?}");
        }
    }

    #[test]
    fn rejects_bad_strings() {
        let bad = [
            "",
            "uniform:1",
            "uniformly",
            "zipf",
            "zipf:",
            "zipf:1",
            "zipf:1.0",
            "zipf:0",
            "zipf:-1.2",
            "zipf:nan",
            "zipf:inf",
            "zipf:abc",
            "zipf:1.2:3",
            "pareto",
            "pareto:0",
            "pareto:1",
            "pareto:1.5",
            "pareto:-0.1",
            "pareto:NaN",
            "normal:1",
            ":1.2",
        ];
        for s in bad {
            let err = s.parse::<Distribution>().expect_err(s);
            assert_eq!(err, PARSE_HINT, "{s:?}");
        }
        assert!(!PARSE_HINT.contains('\n') && PARSE_HINT.contains("zipf:1.2"));
    }

    #[test]
    fn display_round_trips() {
        let dists = [
            Distribution::Uniform,
            Distribution::Zipf { theta: 1.2 },
            Distribution::Zipf {
                theta: 0.123_456_789_012_345_67,
            },
            Distribution::Zipf { theta: 3.0 },
            Distribution::Pareto { h: 0.9 },
            Distribution::Pareto { h: 1e-9 },
        ];
        for d in dists {
            assert_eq!(d.to_string().parse::<Distribution>(), Ok(d), "{d}");
        }
        assert_eq!(Distribution::Zipf { theta: 1.2 }.to_string(), "zipf:1.2");
        assert_eq!(Distribution::Zipf { theta: 3.0 }.to_string(), "zipf:3");
        assert_eq!(Distribution::Pareto { h: 0.9 }.to_string(), "pareto:0.9");
        assert_eq!(Distribution::Uniform.to_string(), "uniform");
    }

    // ---- validation ----------------------------------------------------------------------

    #[test]
    fn new_validates_its_arguments() {
        let spot = |offset_blocks, size_blocks, every| {
            Some(Hotspot {
                offset_blocks,
                size_blocks,
                every,
            })
        };
        let new = |dist, n, hot| BlockPicker::new(dist, n, hot).err();
        let u = Distribution::Uniform;
        assert!(matches!(new(u, 0, None), Some(DistError::NoBlocks)));
        for theta in [0.0, 1.0, -1.0, f64::NAN, f64::INFINITY] {
            let d = Distribution::Zipf { theta };
            assert!(matches!(new(d, 10, None), Some(DistError::ZipfTheta(_))));
        }
        for h in [0.0, 1.0, -0.5, 2.0, f64::NAN] {
            let d = Distribution::Pareto { h };
            assert!(matches!(new(d, 10, None), Some(DistError::ParetoH(_))));
        }
        assert!(matches!(
            new(u, 10, spot(0, 0, 2)),
            Some(DistError::EmptyHotspot)
        ));
        assert!(matches!(
            new(u, 10, spot(0, 5, 0)),
            Some(DistError::HotspotEvery)
        ));
        for (offset, size) in [(6, 5), (10, 1), (u64::MAX, 2), (0, 11)] {
            let err = new(u, 10, spot(offset, size, 2));
            assert!(
                matches!(err, Some(DistError::HotspotOutside { .. })),
                "{offset}+{size}"
            );
        }
        assert!(new(u, 10, spot(0, 10, 1)).is_none());
        assert!(new(u, 10, spot(9, 1, u32::MAX)).is_none());
        let err = new(u, 10, spot(6, 5, 2)).expect("outside");
        let text = err.to_string();
        assert!(!text.contains('\n') && text.contains("10-block"), "{text}");
    }

    // ---- scramble ------------------------------------------------------------------------

    #[test]
    fn scramble_is_a_bijection() {
        for n in [1, 2, 3, 5, 8, 9, 100, 1000, 1024, 1025, 4097, 65_537] {
            let s = Scramble::new(n);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = s.apply(x);
                assert!(y < n && !seen[y as usize], "n {n}: {x} -> {y}");
                seen[y as usize] = true;
            }
        }
        // Large spaces: stays in range and is deterministic.
        for n in [u64::MAX, (1 << 40) + 3, 300_000_000] {
            let s = Scramble::new(n);
            for x in [0, 1, 2, n / 2, n - 1] {
                assert!(s.apply(x) < n);
                assert_eq!(s.apply(x), Scramble::new(n).apply(x));
            }
        }
    }

    #[test]
    fn scramble_scatters_the_hottest_ranks() {
        // The 10 hottest ranks of a 1M-block space land in at least 8 different tenths.
        let n = 1_000_000;
        let s = Scramble::new(n);
        let mut tenths: Vec<u64> = (0..10).map(|r| s.apply(r) * 10 / n).collect();
        tenths.sort_unstable();
        tenths.dedup();
        assert!(tenths.len() >= 6, "{tenths:?}");
    }

    // ---- uniform -------------------------------------------------------------------------

    #[test]
    fn uniform_is_uniform() {
        let counts = block_counts(Distribution::Uniform, 100, 1, 500_000);
        assert_fits(&counts, &[0.01; 100], "uniform n=100");
        // A large odd space, bucketed into 100 equal-probability buckets.
        let n = 1_000_000_007u64;
        let mut p = picker(Distribution::Uniform, n);
        let mut rng = Rng::new(2);
        let mut buckets = vec![0u64; 100];
        for _ in 0..500_000 {
            let b = p.next(&mut rng);
            assert!(b < n);
            buckets[(u128::from(b) * 100 / u128::from(n)) as usize] += 1;
        }
        assert_fits(&buckets, &[0.01; 100], "uniform n=1e9+7");
        assert_eq!(block_counts(Distribution::Uniform, 1, 3, 100), vec![100]);
    }

    // ---- zipf ----------------------------------------------------------------------------

    #[test]
    fn zipf_top_ranks_match_theory() {
        let (n, samples) = (1000u64, 2_000_000u64);
        for theta in [0.8, 1.2] {
            let counts = block_counts(Distribution::Zipf { theta }, n, 7, samples);
            assert!(
                counts.iter().all(|&c| c > 0),
                "θ {theta}: some block never picked"
            );
            let pmf = zipf_pmf(n, theta);
            let sorted = sorted_desc(counts);
            for r in 0..10 {
                assert_binomial(
                    sorted[r],
                    samples,
                    pmf[r],
                    &format!("θ {theta} rank {}", r + 1),
                );
            }
            let top: u64 = sorted[..100].iter().sum();
            let share = top as f64 / samples as f64;
            let theory = top_share(&pmf, 100);
            assert!(
                (share - theory).abs() < 0.01,
                "θ {theta}: top 10% share {share:.4} vs {theory:.4}"
            );
        }
    }

    #[test]
    fn zipf_matches_the_pmf_block_by_block() {
        // Through the known scramble, every block's count against r^-θ / ζ(n, θ).
        for (n, theta, samples) in [
            (1000, 0.8, 1_000_000),
            (1000, 1.2, 1_000_000),
            (1000, 0.3, 1_000_000),
            (5000, 2.5, 1_000_000),
            (33, 1.5, 200_000),
            (20, 0.7, 200_000),
            (2, 3.0, 100_000),
        ] {
            let counts = block_counts(Distribution::Zipf { theta }, n, 11, samples);
            let what = format!("zipf n={n} θ={theta}");
            assert_fits(&by_rank(&counts), &zipf_pmf(n, theta), &what);
        }
        let one = block_counts(Distribution::Zipf { theta: 1.2 }, 1, 1, 100);
        assert_eq!(one, vec![100]);
    }

    #[test]
    fn zipf_large_space_cumulative_shares() {
        // n = 10M exercises the ζ tail approximation and the closed-form tail inversion.
        let (n, samples) = (10_000_000u64, 1_000_000u64);
        let s = Scramble::new(n);
        let rank_of: HashMap<u64, u64> = (0..10_000).map(|r| (s.apply(r), r + 1)).collect();
        for theta in [0.8, 1.2] {
            let mut p = picker(Distribution::Zipf { theta }, n);
            let mut rng = Rng::new(13);
            let mut hits = [0u64; 5]; // picks with rank <= 1, 10, 100, 1000, 10000
            for _ in 0..samples {
                let b = p.next(&mut rng);
                assert!(b < n);
                if let Some(&rank) = rank_of.get(&b) {
                    for (i, limit) in [1, 10, 100, 1000, 10_000].into_iter().enumerate() {
                        hits[i] += u64::from(rank <= limit);
                    }
                }
            }
            let zetan = zeta(n, theta);
            for (i, limit) in [1u64, 10, 100, 1000, 10_000].into_iter().enumerate() {
                let head: f64 = (1..=limit).rev().map(|r| (r as f64).powf(-theta)).sum();
                let what = format!("θ {theta} ranks <= {limit}");
                assert_binomial(hits[i], samples, head / zetan, &what);
            }
        }
    }

    #[test]
    fn zeta_matches_a_direct_sum() {
        let n = 2_000_000u64;
        for theta in [0.3, 0.8, 0.99, 1.01, 1.2, 2.0] {
            let direct: f64 = (1..=n).rev().map(|r| (r as f64).powf(-theta)).sum();
            let fast = zeta(n, theta);
            let rel = (fast - direct).abs() / direct;
            assert!(rel < 1e-9, "θ {theta}: {fast} vs {direct} (rel {rel:e})");
        }
        // Small n: plain sums.
        assert_eq!(zeta(1, 1.2), 1.0);
        assert!((zeta(2, 1.0 + 1.0) - 1.25).abs() < 1e-15);
    }

    #[test]
    fn zipf_setup_is_fast_for_300m_blocks() {
        let n = 300_000_000u64;
        for theta in [0.8, 1.2] {
            let start = Instant::now();
            let mut p = picker(Distribution::Zipf { theta }, n);
            let took = start.elapsed();
            assert!(took.as_secs_f64() < 5.0, "θ {theta}: new() took {took:?}");
            let mut rng = Rng::new(5);
            assert!((0..10_000).all(|_| p.next(&mut rng) < n));
        }
    }

    // ---- pareto --------------------------------------------------------------------------

    #[test]
    fn pareto_hottest_20_percent_share() {
        let (n, samples) = (1000u64, 1_000_000u64);
        for h in [0.2, 0.1, 0.9] {
            let pmf = pareto_pmf(n, h);
            let counts = block_counts(Distribution::Pareto { h }, n, 17, samples);
            let top: u64 = sorted_desc(counts.clone())[..200].iter().sum();
            let share = top as f64 / samples as f64;
            let theory = top_share(&pmf, 200);
            assert!(
                (share - theory).abs() < 0.01,
                "h {h}: hottest 20% share {share:.4} vs {theory:.4}"
            );
            assert_fits(&by_rank(&counts), &pmf, &format!("pareto h={h}"));
        }
    }

    #[test]
    fn pareto_documented_shares() {
        // The module docs: the hottest fraction min(h, 1-h) gets max(h, 1-h), and the quoted
        // head shares.
        let n = 1000;
        for h in [0.1f64, 0.2, 0.3, 0.7, 0.9] {
            let hot = (h.min(1.0 - h) * n as f64).round() as usize;
            let share = top_share(&pareto_pmf(n, h), hot);
            assert!((share - h.max(1.0 - h)).abs() < 1e-9, "h {h}: {share}");
        }
        let quoted = [
            (0.2, [0.528, 0.727, 0.800, 0.909]),
            (0.1, [0.810, 0.900, 0.929, 0.969]),
            (0.9, [0.197, 0.900, 0.992, 1.000]),
        ];
        for (h, shares) in quoted {
            let pmf = pareto_pmf(n, h);
            for (k, want) in [10, 100, 200, 500].into_iter().zip(shares) {
                let got = top_share(&pmf, k);
                assert!((got - want).abs() < 0.001, "h {h} top {k}: {got:.4}");
            }
        }
    }

    // ---- hot spot ------------------------------------------------------------------------

    #[test]
    fn hotspot_takes_exactly_every_nth_operation() {
        // Replays the picker with a plain picker and the same random stream.
        let spot = Hotspot {
            offset_blocks: 2000,
            size_blocks: 500,
            every: 4,
        };
        for dist in [Distribution::Uniform, Distribution::Zipf { theta: 1.2 }] {
            let mut hot = BlockPicker::new(dist, 10_000, Some(spot)).expect("valid");
            let mut plain = picker(dist, 10_000);
            let (mut a, mut b) = (Rng::new(23), Rng::new(23));
            for i in 0..100_000u32 {
                let want = if i % 4 == 0 {
                    2000 + b.below(500)
                } else {
                    plain.next(&mut b)
                };
                assert_eq!(hot.next(&mut a), want, "{dist} op {i}");
            }
        }
    }

    #[test]
    fn hotspot_share_and_uniformity() {
        let (n, samples) = (10_000u64, 400_000u64);
        let spot = Hotspot {
            offset_blocks: 2000,
            size_blocks: 500,
            every: 4,
        };
        let mut p = BlockPicker::new(Distribution::Uniform, n, Some(spot)).expect("valid");
        let mut rng = Rng::new(29);
        let (mut inside, mut hot_buckets) = (0u64, vec![0u64; 50]);
        for i in 0..samples {
            let b = p.next(&mut rng);
            let is_inside = (2000..2500).contains(&b);
            inside += u64::from(is_inside);
            if i % 4 == 0 {
                assert!(is_inside, "op {i} -> {b}");
                hot_buckets[((b - 2000) / 10) as usize] += 1;
            }
        }
        assert_binomial(
            inside,
            samples,
            0.25 + 0.75 * 500.0 / n as f64,
            "in-spot share",
        );
        assert_fits(&hot_buckets, &[0.02; 50], "inside the hot spot");

        let every_op = Hotspot { every: 1, ..spot };
        let mut p =
            BlockPicker::new(Distribution::Zipf { theta: 0.8 }, n, Some(every_op)).expect("valid");
        assert!((0..10_000).all(|_| (2000..2500).contains(&p.next(&mut rng))));
    }

    #[test]
    fn pickers_are_deterministic_and_clones_independent() {
        let dist = Distribution::Pareto { h: 0.2 };
        let spot = Hotspot {
            offset_blocks: 0,
            size_blocks: 10,
            every: 3,
        };
        let fresh = BlockPicker::new(dist, 1 << 20, Some(spot)).expect("valid");
        let (mut p, mut q) = (fresh.clone(), fresh.clone());
        let (mut a, mut b) = (Rng::for_stream(1, 0), Rng::for_stream(1, 0));
        let run = |p: &mut BlockPicker, r: &mut Rng| (0..1000).map(|_| p.next(r)).collect();
        let first: Vec<u64> = run(&mut p, &mut a);
        assert_eq!(first, run(&mut q, &mut b));
        let mut other = Rng::for_stream(1, 1);
        assert_ne!(first, run(&mut fresh.clone(), &mut other));
    }

    #[test]
    fn extreme_parameters_stay_in_range() {
        let dists = [1e-9, 1e-3, 0.999_999, 1.000_001, 7.0, 60.0, 1e6]
            .map(|theta| Distribution::Zipf { theta })
            .into_iter()
            .chain(
                [1e-300, 1e-9, 0.5, 1.0 - 1e-9, 1.0 - f64::EPSILON]
                    .map(|h| Distribution::Pareto { h }),
            );
        for dist in dists {
            for n in [1, 2, 33, 1000, 1 << 40, u64::MAX] {
                let mut p = picker(dist, n);
                let mut rng = Rng::new(n);
                assert!((0..2000).all(|_| p.next(&mut rng) < n), "{dist} n={n}");
            }
        }
    }

    // ---- micro-benchmark -----------------------------------------------------------------

    /// `cargo test --release -- --ignored --nocapture bench_next`
    #[test]
    #[ignore]
    fn bench_next_ns_per_call() {
        const CALLS: u32 = 20_000_000;
        let n = 300_000_000u64;
        let spot = Hotspot {
            offset_blocks: 1000,
            size_blocks: 1 << 20,
            every: 10,
        };
        let cases = [
            ("uniform", Distribution::Uniform, None),
            ("zipf:0.8", Distribution::Zipf { theta: 0.8 }, None),
            ("zipf:1.2", Distribution::Zipf { theta: 1.2 }, None),
            ("pareto:0.2", Distribution::Pareto { h: 0.2 }, None),
            ("pareto:0.9", Distribution::Pareto { h: 0.9 }, None),
            (
                "zipf:1.2 + hotspot/10",
                Distribution::Zipf { theta: 1.2 },
                Some(spot),
            ),
        ];
        for (name, dist, hot) in cases {
            let mut p = BlockPicker::new(dist, n, hot).expect("valid");
            let mut rng = Rng::new(1);
            let start = Instant::now();
            let mut acc = 0u64;
            for _ in 0..CALLS {
                acc = acc.wrapping_add(p.next(&mut rng));
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(CALLS);
            black_box(acc);
            println!("{name:>24}: {ns:6.2} ns/call");
        }
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 1 << 20];
        let start = Instant::now();
        for _ in 0..1000 {
            rng.fill(black_box(&mut buf));
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:>24}: {:6.2} GB/s",
            "Rng::fill",
            1000.0 * buf.len() as f64 / secs / 1e9
        );
    }
}
