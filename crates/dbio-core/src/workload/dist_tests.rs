//! Statistical tests of the access distributions: chi-square and quantile
//! checks against the exact laws, with fixed seeds.

use super::*;
use crate::config::dist::PARSE_HINT;
use std::collections::HashMap;
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
        assert_eq!(err.to_string(), PARSE_HINT, "{s:?}");
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
            [1e-300, 1e-9, 0.5, 1.0 - 1e-9, 1.0 - f64::EPSILON].map(|h| Distribution::Pareto { h }),
        );
    for dist in dists {
        for n in [1, 2, 33, 1000, 1 << 40, u64::MAX] {
            let mut p = picker(dist, n);
            let mut rng = Rng::new(n);
            assert!((0..2000).all(|_| p.next(&mut rng) < n), "{dist} n={n}");
        }
    }
}
