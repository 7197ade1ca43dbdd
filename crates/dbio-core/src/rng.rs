//! Fast, seedable pseudo-random numbers for offsets and incompressible data (not cryptographic).
//!
//! The generator is **xoshiro256++** (Blackman & Vigna, 2019): 256 bits of state, period
//! 2^256 − 1, a few cycles per 64-bit output, and no detectable statistical flaws in BigCrush
//! or PractRand. Its state is seeded with **SplitMix64**, so neighbouring seeds (0, 1, 2, ...)
//! give unrelated streams and the all-zero state can never occur.
//!
//! Nothing here allocates or locks; a session owns its `Rng` and calls it directly.

/// Increment of the SplitMix64 Weyl sequence (2^64 / golden ratio, odd).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Salt that separates stream numbers from seeds in [`Rng::for_stream`].
const STREAM_SALT: u64 = 0xD1B5_4A32_D192_ED03;

/// A xoshiro256++ generator seeded through SplitMix64.
///
/// Cloning copies the state: the clone repeats the original's future outputs.
#[derive(Clone)]
pub struct Rng {
    state: [u64; 4],
}

impl Rng {
    /// A generator whose four state words are the first four SplitMix64 outputs for `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let state = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        // SplitMix64's output function is a bijection, so at most one of four consecutive
        // outputs is zero: the forbidden all-zero xoshiro state cannot arise.
        Self { state }
    }

    /// An independent stream for session `stream` of a run seeded with `seed`.
    ///
    /// The stream number is hashed (bijectively) and xored into the seed, so for one seed every
    /// stream starts from a different state, unrelated to its neighbours'. The chance that two
    /// of `k` streams overlap within their first 2^64 outputs is about `k² · 2^-192`.
    pub(crate) fn for_stream(seed: u64, stream: u64) -> Self {
        Self::new(stream_key(seed, stream))
    }

    /// The next 64 uniformly distributed bits (xoshiro256++ step).
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = self.state;
        let result = s0.wrapping_add(s3).rotate_left(23).wrapping_add(s0);
        let t = s1 << 17;
        let s2 = s2 ^ s0;
        let s3 = s3 ^ s1;
        let s1 = s1 ^ s2;
        let s0 = s0 ^ s3;
        let s2 = s2 ^ t;
        let s3 = s3.rotate_left(45);
        self.state = [s0, s1, s2, s3];
        result
    }

    /// A uniform `f64` in `[0, 1)` with 53 random bits (every multiple of 2^-53 equally likely).
    #[inline]
    pub(crate) fn next_f64(&mut self) -> f64 {
        const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
        (self.next_u64() >> 11) as f64 * SCALE
    }

    /// A uniform integer in `[0, n)`, exactly unbiased (Lemire's multiply-shift with rejection).
    ///
    /// Costs one multiply in the common case; a retry happens with probability `< n / 2^64`.
    /// `below(0)` returns 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // Rare path: reject the (2^64 mod n) low values that would over-represent some results.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }

    /// Fills `buf` with random bytes: one `next_u64` per 8 bytes (little-endian), and the first
    /// bytes of one more word for a tail shorter than 8. Output is incompressible.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut words = buf.chunks_exact_mut(8);
        for word in &mut words {
            word.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            let bytes = self.next_u64().to_le_bytes();
            tail.copy_from_slice(&bytes[..tail.len()]);
        }
    }
}

/// The key of stream `stream` of a run seeded with `seed` (what [`Rng::for_stream`] seeds from).
pub(crate) fn stream_key(seed: u64, stream: u64) -> u64 {
    seed ^ mix64(stream ^ STREAM_SALT)
}

/// A uniform `f64` in `(0, 1]` (53 random bits) that depends on `key` and `n` alone: a
/// counter-based draw (two rounds of SplitMix64's bijective output function), for a sequence
/// whose next value is a function of where it is rather than of a generator's state.
#[inline]
pub(crate) fn unit_at(key: u64, n: u64) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    let bits = mix64(key ^ mix64(n.wrapping_mul(GOLDEN_GAMMA)));
    ((bits >> 11) + 1) as f64 * SCALE
}

/// One SplitMix64 step: advances `state` and returns its mixed output.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    mix64(*state)
}

/// SplitMix64's output function, a bijection on `u64`.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Chi-square critical value at p = 0.001 (Wilson–Hilferty; within ~0.5% of the exact value
    /// for df >= 2, slightly conservative for small df).
    fn chi2_critical_p001(df: usize) -> f64 {
        const Z: f64 = 3.090_232; // upper 0.001 quantile of N(0, 1)
        let k = df as f64;
        let c = 2.0 / (9.0 * k);
        k * (1.0 - c + Z * c.sqrt()).powi(3)
    }

    /// Pearson's statistic for counts against equal expected counts.
    fn chi2_uniform(counts: &[u64]) -> f64 {
        let total: u64 = counts.iter().sum();
        let expected = total as f64 / counts.len() as f64;
        counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    fn assert_uniform(counts: &[u64], what: &str) {
        let stat = chi2_uniform(counts);
        let critical = chi2_critical_p001(counts.len() - 1);
        assert!(stat < critical, "{what}: chi2 {stat:.1} >= {critical:.1}");
    }

    #[test]
    fn chi2_critical_matches_tables() {
        // Exact p = 0.001 critical values: df 15 -> 37.697, df 255 -> 330.52, df 999 -> 1143.92.
        assert!((chi2_critical_p001(15) - 37.697).abs() < 0.3);
        assert!((chi2_critical_p001(255) - 330.52).abs() < 0.5);
        assert!((chi2_critical_p001(999) - 1143.92).abs() < 1.5);
    }

    #[test]
    fn matches_reference_vectors() {
        let mut sm = 1_234_567;
        let expected = [
            6457827717110365317,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for e in expected {
            assert_eq!(splitmix64(&mut sm), e);
        }
        // xoshiro256plusplus.c reference outputs for the state [1, 2, 3, 4].
        let mut rng = Rng {
            state: [1, 2, 3, 4],
        };
        let expected: [u64; 10] = [
            41943041,
            58720359,
            3588806011781223,
            3591011842654386,
            9228616714210784205,
            9973669472204895162,
            14011001112246962877,
            12406186145184390807,
            15849039046786891736,
            10450023813501588000,
        ];
        for e in expected {
            assert_eq!(rng.next_u64(), e);
        }
    }

    #[test]
    fn seeding_goes_through_splitmix() {
        let rng = Rng::new(0);
        assert_eq!(rng.state[0], 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.state[1], 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Rng::new(42), Rng::new(42));
        assert!((0..1000).all(|_| a.next_u64() == b.next_u64()));
        let (mut a, mut b) = (Rng::for_stream(42, 7), Rng::for_stream(42, 7));
        assert!((0..1000).all(|_| a.next_u64() == b.next_u64()));
    }

    /// The first 1000 outputs of every generator, pooled: any shared value means two streams
    /// are the same or shifted copies of each other.
    fn assert_disjoint(rngs: Vec<Rng>) {
        let mut seen = HashSet::new();
        let count = rngs.len() * 1000;
        for mut rng in rngs {
            seen.extend((0..1000).map(|_| rng.next_u64()));
        }
        assert_eq!(seen.len(), count, "streams share outputs");
    }

    #[test]
    fn seeds_and_streams_are_unrelated() {
        assert_disjoint((0..16).map(Rng::new).collect());
        let mut rngs: Vec<Rng> = (0..16).map(|s| Rng::for_stream(1, s)).collect();
        rngs.push(Rng::new(1));
        rngs.extend((0..4).map(|s| Rng::for_stream(2, s)));
        assert_disjoint(rngs);
    }

    #[test]
    fn next_f64_in_unit_interval_and_uniform() {
        let mut rng = Rng::new(3);
        let mut counts = vec![0u64; 64];
        for _ in 0..200_000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
            counts[(x * 64.0) as usize] += 1;
        }
        assert_uniform(&counts, "next_f64");
    }

    fn below_counts(rng: &mut Rng, n: u64, samples: usize) -> Vec<u64> {
        let mut counts = vec![0u64; n as usize];
        for _ in 0..samples {
            let x = rng.below(n);
            assert!(x < n);
            counts[x as usize] += 1;
        }
        counts
    }

    #[test]
    fn below_is_unbiased() {
        let mut rng = Rng::new(11);
        assert_uniform(&below_counts(&mut rng, 16, 160_000), "below(16)");
        assert_uniform(&below_counts(&mut rng, 1000, 1_000_000), "below(1000)");
        assert_uniform(&below_counts(&mut rng, 7, 70_000), "below(7)");
        assert_eq!(rng.below(1), 0);
        assert_eq!(rng.below(0), 0);
    }

    #[test]
    fn below_rejects_the_biased_values() {
        // For n = 3·2^62, plain multiply-shift maps 4 inputs onto 3 outputs and hits results
        // ≡ 0 (mod 3) twice as often as the others (50/25/25); the rejection step must fix that.
        let n = 3u64 << 62;
        let mut rng = Rng::new(5);
        let mut counts = [0u64; 3];
        for _ in 0..60_000 {
            let x = rng.below(n);
            assert!(x < n);
            counts[(x % 3) as usize] += 1;
        }
        assert_uniform(&counts, "below(3<<62) mod 3");
        // A huge n hits the top half as often as the bottom half.
        let mut halves = [0u64; 2];
        for _ in 0..20_000 {
            halves[usize::from(rng.below(u64::MAX) > u64::MAX / 2)] += 1;
        }
        assert_uniform(&halves, "below(u64::MAX) halves");
    }

    #[test]
    fn fill_uses_the_word_stream_for_any_length() {
        for len in 0..=33 {
            let mut a = Rng::new(9);
            let mut b = a.clone();
            let mut buf = vec![0u8; len];
            a.fill(&mut buf);
            let words: Vec<u8> = (0..len.div_ceil(8))
                .flat_map(|_| b.next_u64().to_le_bytes())
                .collect();
            assert_eq!(buf, words[..len], "len {len}");
            // Both generators consumed the same number of words.
            assert_eq!(a.next_u64(), b.next_u64(), "len {len}");
        }
    }

    #[test]
    fn fill_output_looks_incompressible() {
        let mut rng = Rng::new(2024);
        let mut buf = vec![0u8; 8 << 20];
        rng.fill(&mut buf);

        let mut bytes = vec![0u64; 256];
        for &b in &buf {
            bytes[usize::from(b)] += 1;
        }
        assert_uniform(&bytes, "byte histogram");

        let mut pairs = vec![0u64; 1 << 16];
        for p in buf.chunks_exact(2) {
            pairs[usize::from(u16::from_le_bytes([p[0], p[1]]))] += 1;
        }
        assert_uniform(&pairs, "byte-pair histogram");

        let chunks: HashSet<&[u8]> = buf.chunks_exact(4096).collect();
        assert_eq!(chunks.len(), buf.len() / 4096, "repeated 4 KiB chunk");
    }
}
