//! fio's latency histograms (`json+` "bins": bucket value in ns → count):
//! merging them across jobs and hosts, their percentiles computed exactly as
//! fio computes them, and their conversion into dbio's HDR histograms.
//!
//! fio (stat.c, `calc_clat_percentiles`) walks its buckets in order and
//! gives percentile p the value of the first bucket where the running count
//! reaches `(long double) p / 100.0 * n`. On x86-64 that is x87 80-bit
//! arithmetic (64-bit mantissa, round to nearest even), which [`Ext`]
//! reproduces, so percentiles of merged bins are the numbers fio itself
//! prints for a group (tested against real fio output).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

/// Bucket value (ns) → samples, ascending.
pub type Bins = BTreeMap<u64, u64>;

/// Adds `other`'s counts into `into` (fio's buckets are the same for every
/// job, so equal values are the same bucket).
pub fn merge(into: &mut Bins, other: &Bins) {
    for (&v, &n) in other {
        let c = into.entry(v).or_insert(0);
        *c = c.saturating_add(n);
    }
}

/// A positive x87 extended-precision value `m · 2^e` (`m` has its top bit
/// set, or is 0 for zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ext {
    m: u64,
    e: i32,
}

impl Ext {
    /// Exact: every finite, non-negative double is an extended value.
    fn from_f64(x: f64) -> Ext {
        if x <= 0.0 || !x.is_finite() {
            return Ext { m: 0, e: 0 };
        }
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (mant, e) = if exp == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp - 1075)
        };
        Ext::round(u128::from(mant), e)
    }

    /// `v · 2^e` rounded to a 64-bit mantissa, nearest even.
    fn round(v: u128, e: i32) -> Ext {
        if v == 0 {
            return Ext { m: 0, e: 0 };
        }
        let bits = 128 - v.leading_zeros() as i32;
        if bits <= 64 {
            let shift = 64 - bits;
            return Ext {
                m: (v << shift) as u64,
                e: e - shift,
            };
        }
        let shift = bits - 64;
        let mut m = v >> shift;
        let rem = v & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rem > half || (rem == half && m & 1 == 1) {
            m += 1;
        }
        if m >> 64 != 0 {
            Ext {
                m: 1 << 63,
                e: e + shift + 1,
            }
        } else {
            Ext {
                m: m as u64,
                e: e + shift,
            }
        }
    }

    /// `self / d`, rounded once.
    fn div(self, d: u64) -> Ext {
        let num = u128::from(self.m) << 64;
        let q = num / u128::from(d);
        let sticky = u128::from(num % u128::from(d) != 0);
        // One more bit below the quotient keeps the rounding exact.
        Ext::round((q << 1) | sticky, self.e - 65)
    }

    /// `self · n`, rounded once.
    fn mul(self, n: u64) -> Ext {
        Ext::round(u128::from(self.m) * u128::from(n), self.e)
    }

    /// `k >= self`, exactly.
    fn le_count(self, k: u64) -> bool {
        if self.m == 0 {
            return true;
        }
        if self.e >= 0 {
            if self.e >= 64 {
                return false;
            }
            return u128::from(k) >= u128::from(self.m) << self.e;
        }
        let s = -self.e;
        if s > 64 {
            // self < 1: any k >= 1 reaches it.
            return k >= 1;
        }
        (u128::from(k) << s) >= u128::from(self.m)
    }
}

/// The running count percentile `p` (0..=100) of `n` samples must reach:
/// `(long double) p / 100.0 * n`, as fio computes it.
fn threshold(p: f64, n: u64) -> Ext {
    Ext::from_f64(p).div(100).mul(n)
}

/// Percentile `p` of `bins` exactly as fio prints it; `None` without
/// samples.
pub fn percentile(bins: &Bins, p: f64) -> Option<u64> {
    let n: u64 = bins.values().fold(0u64, |a, &c| a.saturating_add(c));
    if n == 0 {
        return None;
    }
    let t = threshold(p, n);
    if t.m == 0 {
        // fio's first bucket (value 0) already reaches a zero threshold.
        return Some(0);
    }
    let mut sum = 0u64;
    for (&v, &c) in bins {
        sum = sum.saturating_add(c);
        if t.le_count(sum) {
            return Some(v);
        }
    }
    bins.keys().next_back().copied()
}

/// The lowest and highest latency dbio's histograms hold (ns), as the runner's.
pub const HDR_MAX_NS: u64 = 60_000_000_000;

/// The bins as a dbio latency histogram (1 ns .. 60 s, 2 significant digits;
/// longer latencies count as 60 s).
pub fn to_hdr(bins: &Bins) -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, HDR_MAX_NS, 2).expect("valid histogram bounds");
    for (&v, &c) in bins {
        h.saturating_record_n(v.min(HDR_MAX_NS), c);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bins(pairs: &[(u64, u64)]) -> Bins {
        pairs.iter().copied().collect()
    }

    /// (p, n, the smallest count k with k >= (long double) p / 100.0 * n),
    /// computed by gcc's x87 long double on x86-64. The first five are where
    /// exact arithmetic gives one less.
    const X87: &[(f64, u64, u64)] = &[
        (30.0, 100, 31),
        (30.0, 100_000, 30_001),
        (60.0, 100, 61),
        (60.0, 12_345, 7_408),
        (60.0, 100_000, 60_001),
        (1.0, 100, 1),
        (1.0, 1721, 18),
        (5.0, 99_999, 5_000),
        (10.0, 3, 1),
        (20.0, 1721, 345),
        (40.0, 12_345, 4_938),
        (50.0, 7, 4),
        (50.0, 8751, 4376),
        (90.0, 7, 7),
        (99.0, 12_345, 12_222),
        (99.5, 8751, 8708),
        (99.9, 2000, 1999),
        (99.95, 12_345, 12_339),
        (99.99, 8751, 8751),
    ];

    #[test]
    fn thresholds_round_like_x87_long_double() {
        for &(p, n, k) in X87 {
            let t = threshold(p, n);
            assert!(t.le_count(k) && !t.le_count(k - 1), "p {p} n {n}: {t:?}");
        }
        assert_eq!(Ext::from_f64(1.0), Ext { m: 1 << 63, e: -63 });
        assert_eq!(Ext::from_f64(0.5).mul(2), Ext::from_f64(1.0));
        assert!(threshold(1.0, 10).le_count(1) && !threshold(1.0, 10).le_count(0));
    }

    #[test]
    fn percentiles_are_the_first_bucket_reaching_the_threshold() {
        let b = bins(&[(100, 50), (200, 40), (300, 9), (400, 1)]);
        assert_eq!(percentile(&b, 50.0), Some(100));
        assert_eq!(percentile(&b, 50.000001), Some(200));
        assert_eq!(percentile(&b, 90.0), Some(200));
        assert_eq!(percentile(&b, 99.0), Some(300));
        assert_eq!(percentile(&b, 99.5), Some(400));
        assert_eq!(percentile(&b, 100.0), Some(400));
        assert_eq!(percentile(&Bins::new(), 50.0), None);
        assert_eq!(percentile(&b, 0.0), Some(0));
    }

    #[test]
    fn merging_adds_counts_of_equal_buckets() {
        let mut a = bins(&[(100, 1), (200, 2)]);
        merge(&mut a, &bins(&[(200, 3), (300, 4)]));
        assert_eq!(a, bins(&[(100, 1), (200, 5), (300, 4)]));
        let h = to_hdr(&a);
        assert_eq!(h.len(), 10);
        assert_eq!(h.max(), h.highest_equivalent(300));
    }
}
