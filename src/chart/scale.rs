//! Axes' arithmetic: mapping data to pixels on a linear or logarithmic
//! scale, "nice" tick positions (1, 2, 2.5, 5 × 10ⁿ, as people round), and
//! short tick labels (`950`, `12.5K`, `1.2M`, `0.25`).

/// How values are placed along an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleKind {
    Linear,
    /// log10 positions; only values > 0 can be placed.
    Log,
}

/// A data interval mapped onto a pixel interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub kind: ScaleKind,
    pub lo: f64,
    pub hi: f64,
    /// Pixel of `lo` and of `hi` (`r1 < r0` for a y axis, which grows up).
    pub r0: f64,
    pub r1: f64,
}

impl Scale {
    fn t(&self, v: f64) -> f64 {
        match self.kind {
            ScaleKind::Linear => v,
            ScaleKind::Log => v.max(f64::MIN_POSITIVE).log10(),
        }
    }

    /// The pixel of `v`.
    pub fn map(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        if b == a {
            return (self.r0 + self.r1) / 2.0;
        }
        self.r0 + (self.t(v) - a) / (b - a) * (self.r1 - self.r0)
    }

    /// Whether `v` can be placed (log scales need v > 0).
    pub fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (self.kind == ScaleKind::Linear || v > 0.0)
    }
}

/// A "nice" step near `raw`: 1, 2, 2.5 or 5 times a power of ten.
pub fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * p
}

/// Widens `[lo, hi]` to whole nice steps, about `target` intervals, and
/// returns the widened bounds with the ticks.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let pad = lo.abs() * 0.1;
        (lo - pad, hi + pad)
    };
    let step = nice_step((hi - lo) / target.max(1) as f64);
    let (a, b) = ((lo / step).floor(), (hi / step).ceil());
    let ticks = (a as i64..=b as i64).map(|i| i as f64 * step).collect();
    (a * step, b * step, ticks)
}

/// Ticks for a log axis over `[lo, hi]` (both > 0): the powers of ten,
/// with 2 and 5 between them when the range spans fewer than three
/// decades. Returns the bounds widened to the outer ticks.
pub fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let lo = if lo > 0.0 { lo } else { 1.0 };
    let hi = if hi > lo { hi } else { lo * 10.0 };
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mults: &[f64] = if d1 - d0 < 3 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    for d in d0..=d1 {
        for m in mults {
            ticks.push(m * 10f64.powi(d));
        }
    }
    // Keep one tick at or below lo and one at or above hi.
    let first = ticks
        .iter()
        .rposition(|&t| t <= lo * (1.0 + 1e-9))
        .unwrap_or(0);
    let last = ticks
        .iter()
        .position(|&t| t >= hi * (1.0 - 1e-9))
        .unwrap_or(ticks.len() - 1);
    let ticks = ticks[first..=last].to_vec();
    (ticks[0], ticks[ticks.len() - 1], ticks)
}

/// A short label for a tick or a value: SI suffixes from 10 000 up, as
/// many decimals as `step` (the distance between ticks) needs below.
pub fn label(v: f64, step: f64) -> String {
    let a = v.abs();
    if a >= crate::grid::HUGE && a.is_finite() {
        return format!("{v:.2e}");
    }
    let (scaled, suffix, step) = if a >= 1e9 {
        (v / 1e9, "G", step / 1e9)
    } else if a >= 1e6 {
        (v / 1e6, "M", step / 1e6)
    } else if a >= 1e4 {
        (v / 1e3, "K", step / 1e3)
    } else {
        (v, "", step)
    };
    let decimals = if step > 0.0 && step.is_finite() {
        let d = -(step.log10().floor()) as i32;
        // 2.5-steps need one more digit than their power of ten.
        let extra = if (step / 10f64.powi(-d) - 2.5).abs() < 1e-6 {
            1
        } else {
            0
        };
        (d + extra).clamp(0, 6) as usize
    } else {
        0
    };
    let s = format!("{scaled:.decimals$}");
    let s = if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

/// A value shown on its own (tooltips, annotations): three significant
/// digits, with SI suffixes from 10 000 up.
pub fn value_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return label(v, 1.0);
    }
    let a = v.abs();
    let base = if a >= 1e9 {
        1e9
    } else if a >= 1e6 {
        1e6
    } else if a >= 1e4 {
        1e3
    } else {
        1.0
    };
    let mag = (a / base).log10().floor();
    label(v, 10f64.powf(mag - 2.0) * base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_round_like_people() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(13.0), 20.0);
        assert_eq!(nice_step(2300.0), 2500.0);
        assert_eq!(nice_step(4100.0), 5000.0);
        assert_eq!(nice_step(7.0), 10.0);
    }

    #[test]
    fn linear_ticks_cover_the_data_in_whole_steps() {
        let (lo, hi, t) = linear_ticks(0.0, 65068.0, 5);
        assert_eq!((lo, hi), (0.0, 80000.0));
        assert_eq!(t, vec![0.0, 20000.0, 40000.0, 60000.0, 80000.0]);
        let (lo, hi, t) = linear_ticks(3.0, 3.0, 5);
        assert!(lo < 3.0 && hi > 3.0 && t.len() >= 2, "{lo} {hi} {t:?}");
        let (lo, hi, _) = linear_ticks(0.0, 0.0, 5);
        assert_eq!((lo, hi), (0.0, 1.0));
    }

    #[test]
    fn log_ticks_are_decades_with_2_and_5_on_short_ranges() {
        let (lo, hi, t) = log_ticks(0.06, 0.9);
        assert_eq!((lo, hi), (0.05, 1.0));
        assert_eq!(t, vec![0.05, 0.1, 0.2, 0.5, 1.0]);
        let (lo, hi, t) = log_ticks(3.0, 40000.0);
        assert_eq!((lo, hi), (1.0, 100000.0));
        assert_eq!(t.len(), 6);
    }

    #[test]
    fn scales_map_both_ways_up() {
        let y = Scale {
            kind: ScaleKind::Linear,
            lo: 0.0,
            hi: 100.0,
            r0: 200.0,
            r1: 0.0,
        };
        assert_eq!(y.map(25.0), 150.0);
        let x = Scale {
            kind: ScaleKind::Log,
            lo: 1.0,
            hi: 100.0,
            r0: 0.0,
            r1: 200.0,
        };
        assert!((x.map(10.0) - 100.0).abs() < 1e-9);
        assert!(!x.accepts(0.0) && y.accepts(0.0));
    }

    #[test]
    fn labels_are_short_and_precise_enough() {
        assert_eq!(label(20000.0, 10000.0), "20K");
        assert_eq!(label(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(label(0.25, 0.25), "0.25");
        assert_eq!(label(2.5, 2.5), "2.5");
        assert_eq!(label(300.0, 100.0), "300");
        assert_eq!(label(-0.0, 1.0), "0");
        assert_eq!(value_label(65068.0), "65.1K");
        assert_eq!(value_label(0.2361), "0.236");
        assert_eq!(value_label(123.4), "123");
        // An interval's bound of 30 digits stays short.
        assert_eq!(value_label(4.4436e29), "4.44e29");
    }
}
