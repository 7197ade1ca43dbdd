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

use crate::rng::Rng;

pub use crate::config::dist::{Distribution, ParseDistError};

/// Zipf ranks `1..=ZIPF_HEAD` are drawn from an exact CDF table.
const ZIPF_HEAD: usize = 32;

/// `ζ(n, θ)` sums this many terms exactly and approximates the rest (Euler–Maclaurin).
const ZETA_EXACT_TERMS: u64 = 1 << 20;

impl Distribution {
    /// Checks the parameter range.
    fn validate(self) -> Result<Self, DistError> {
        match self {
            _ if self.in_range() => Ok(self),
            Self::Zipf { theta } => Err(DistError::ZipfTheta(theta)),
            Self::Pareto { h } => Err(DistError::ParetoH(h)),
            Self::Uniform => Ok(self),
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
#[path = "dist_tests.rs"]
mod tests;
