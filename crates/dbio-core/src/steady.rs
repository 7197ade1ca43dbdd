//! Steady state, as SNIA's Performance Test Specification judges it: a run
//! is cut into rounds of equal length, one value per round (I/O/s, MiB/s or
//! p99 latency), and the last `window` rounds are steady when both rules
//! hold — the *range* rule (the largest round minus the smallest is within
//! `range_pct` of the window's mean, so every round lies that close to the
//! mean) and the *slope* rule (the least-squares line through the window's
//! rounds rises or falls across the window by no more than `slope_pct` of
//! the mean). Pure functions over the rounds' values; the harness feeds
//! them each round as it closes (`harness/rounds.rs`).

use serde::{Deserialize, Serialize};

use crate::choice::{Choice, Named};

/// What each round is judged by (`--steady-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    /// Read and write requests completed per second.
    Iops,
    /// Read and write MiB per second.
    Bw,
    /// The 99th percentile of read and write latency.
    P99,
}

impl Choice for Metric {
    const ALL: &'static [(Self, Named)] = &[
        (
            Metric::Iops,
            Named::help("iops", "requests per second (the default)"),
        ),
        (Metric::Bw, Named::help("bw", "MiB per second")),
        (
            Metric::P99,
            Named::help("p99", "99th percentile latency of reads and writes"),
        ),
    ];
}

impl Metric {
    /// Its name on the command line and in the run document.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bw => "bw",
            Metric::P99 => "p99",
        }
    }

    /// The unit its values are given in.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Iops => "I/O/s",
            Metric::Bw => "MiB/s",
            Metric::P99 => "µs",
        }
    }
}

/// The rules a run is judged steady by (`--steady-state` and its options).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rules {
    /// Length of a round, whole seconds (`--round`, at least the 1 s of the series).
    pub round_s: u32,
    /// Rounds judged together (`--steady-window`, at least 2).
    pub window: u32,
    /// Largest minus smallest round, percent of the window's mean (`--steady-range`).
    pub range_pct: f64,
    /// The fit line's rise or fall across the window, percent of the mean (`--steady-slope`).
    pub slope_pct: f64,
    /// What each round is judged by (`--steady-on`).
    pub metric: Metric,
}

impl Default for Rules {
    /// The PTS's: rounds of a minute, five of them, 20% range, 10% slope, I/O/s.
    fn default() -> Self {
        Rules {
            round_s: 60,
            window: 5,
            range_pct: 20.0,
            slope_pct: 10.0,
            metric: Metric::Iops,
        }
    }
}

/// A run that looks for steady state: its rules, and whether the target is
/// preconditioned first (`--precondition`: written sequentially twice).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    #[serde(flatten)]
    pub rules: Rules,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub precondition: bool,
}

/// Why rules cannot be used: one line naming the option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    #[error(
        "--round {0}s is shorter than the 1 s the per-second series is sampled at; give --round 1s or more"
    )]
    RoundTooShort(f64),
    #[error("--round {0}s is not a whole number of seconds; give e.g. --round 2s or --round 60s")]
    RoundNotWhole(f64),
    #[error(
        "--steady-window {0} is fewer than 2 rounds: a slope and a range need at least two; give 2 or more (the PTS uses 5)"
    )]
    WindowTooSmall(u32),
    #[error("{option} {value}% is outside (0, 100]; give a percentage such as 20%")]
    Percent { option: &'static str, value: f64 },
}

impl Rules {
    /// Checks each setting; the first one out of bounds is named.
    pub fn check(&self) -> Result<(), RulesError> {
        if self.window < 2 {
            return Err(RulesError::WindowTooSmall(self.window));
        }
        for (option, value) in [
            ("--steady-range", self.range_pct),
            ("--steady-slope", self.slope_pct),
        ] {
            if !(value > 0.0 && value <= 100.0) {
                return Err(RulesError::Percent { option, value });
            }
        }
        Ok(())
    }

    /// `--round` in whole seconds, at least one.
    pub fn round_seconds(s: f64) -> Result<u32, RulesError> {
        if s.is_nan() || s < 1.0 {
            return Err(RulesError::RoundTooShort(s));
        }
        if s.fract() != 0.0 || s > f64::from(u32::MAX) {
            return Err(RulesError::RoundNotWhole(s));
        }
        Ok(s as u32)
    }

    /// Seconds the window of rounds takes: the shortest steady run.
    pub fn window_s(&self) -> u64 {
        u64::from(self.round_s) * u64::from(self.window)
    }
}

/// A window of rounds judged: its mean, the band the range rule allows,
/// the range and the fit line's excursion, and the verdict of each rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub mean: f64,
    /// Lowest and highest value the range rule allows around the mean
    /// (mean ∓ half the allowed range): a window inside it is range-steady.
    pub band_low: f64,
    pub band_high: f64,
    /// Largest minus smallest round.
    pub range: f64,
    /// Least-squares slope, per round.
    pub slope: f64,
    /// How far the fit line rises or falls across the window (|slope| × (n − 1)).
    pub excursion: f64,
    pub range_ok: bool,
    pub slope_ok: bool,
}

impl Judged {
    /// Both rules hold.
    pub fn steady(&self) -> bool {
        self.range_ok && self.slope_ok
    }
}

/// Least-squares slope of `values` against their index (0 for fewer than 2).
pub fn slope(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    if values.len() < 2 {
        return 0.0;
    }
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in values.iter().enumerate() {
        let dx = i as f64 - mean_x;
        sxy += dx * (y - mean_y);
        sxx += dx * dx;
    }
    sxy / sxx
}

/// Judges a window of round values by `rules` (the caller gives exactly
/// the window: the last `rules.window` rounds). A window whose mean is 0 (no
/// I/O at all) is never steady.
pub(crate) fn judge(values: &[f64], rules: &Rules) -> Judged {
    let n = values.len();
    let mean = if n == 0 {
        0.0
    } else {
        values.iter().sum::<f64>() / n as f64
    };
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let range = if n == 0 { 0.0 } else { max - min };
    let slope = slope(values);
    let excursion = slope.abs() * n.saturating_sub(1) as f64;
    let allowed_range = rules.range_pct / 100.0 * mean;
    let usable = n >= 2 && mean > 0.0;
    Judged {
        mean,
        band_low: mean - allowed_range / 2.0,
        band_high: mean + allowed_range / 2.0,
        range,
        slope,
        excursion,
        range_ok: usable && range <= allowed_range,
        slope_ok: usable && excursion <= rules.slope_pct / 100.0 * mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> Rules {
        Rules::default()
    }

    #[test]
    fn flat_rounds_are_steady() {
        let j = judge(&[1000.0, 1010.0, 990.0, 1005.0, 995.0], &rules());
        assert!(j.steady(), "{j:?}");
        assert!((j.mean - 1000.0).abs() < 1e-9);
        assert!((j.range - 20.0).abs() < 1e-9);
        assert!((j.band_low - 900.0).abs() < 1e-9 && (j.band_high - 1100.0).abs() < 1e-9);
    }

    #[test]
    fn slope_of_a_line_is_its_gradient() {
        assert!((slope(&[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-12);
        assert!((slope(&[7.0, 5.0, 3.0]) + 2.0).abs() < 1e-12);
        assert_eq!(slope(&[4.0]), 0.0);
    }

    #[test]
    fn a_wide_window_fails_the_range_rule() {
        // 800 then 400: the range (400) is far over 20% of the mean (560).
        let j = judge(&[800.0, 800.0, 400.0, 400.0, 400.0], &rules());
        assert!(!j.range_ok, "{j:?}");
        assert!(!j.steady());
    }

    #[test]
    fn a_steady_drift_fails_the_slope_rule_only() {
        // +4% of the mean per round: range 16% passes, excursion 16% fails.
        let v = [960.0, 1000.0, 1040.0, 1080.0, 1120.0];
        let j = judge(&v, &rules());
        assert!(j.range_ok, "{j:?}");
        assert!(!j.slope_ok, "{j:?}");
        // A looser slope rule lets it through.
        let loose = Rules {
            slope_pct: 20.0,
            ..rules()
        };
        assert!(judge(&v, &loose).steady());
    }

    #[test]
    fn a_window_without_io_is_never_steady() {
        assert!(!judge(&[0.0; 5], &rules()).steady());
        assert!(!judge(&[5.0], &rules()).steady());
        assert!(!judge(&[], &rules()).steady());
    }

    #[test]
    fn the_range_edge_is_inclusive() {
        // max - min = exactly 20% of the mean of 100.
        let j = judge(&[90.0, 110.0, 90.0, 110.0], &rules());
        assert!(j.range_ok, "{j:?}");
    }

    #[test]
    fn bad_settings_are_named() {
        let w = Rules {
            window: 1,
            ..rules()
        };
        assert_eq!(w.check(), Err(RulesError::WindowTooSmall(1)));
        for bad in [0.0, -5.0, 100.5, f64::NAN] {
            let r = Rules {
                range_pct: bad,
                ..rules()
            };
            assert!(
                matches!(
                    r.check(),
                    Err(RulesError::Percent {
                        option: "--steady-range",
                        ..
                    })
                ),
                "{bad}"
            );
            let s = Rules {
                slope_pct: bad,
                ..rules()
            };
            assert!(
                matches!(
                    s.check(),
                    Err(RulesError::Percent {
                        option: "--steady-slope",
                        ..
                    })
                ),
                "{bad}"
            );
        }
        assert!(rules().check().is_ok());
        assert_eq!(
            Rules::round_seconds(0.5),
            Err(RulesError::RoundTooShort(0.5))
        );
        assert_eq!(
            Rules::round_seconds(1.5),
            Err(RulesError::RoundNotWhole(1.5))
        );
        assert_eq!(Rules::round_seconds(2.0), Ok(2));
        assert!(Rules::round_seconds(f64::NAN).is_err());
    }
}
