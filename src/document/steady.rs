//! A steady-state run's section (`steady_state`, written by the harness's
//! rounds: `harness::rounds::SteadyState`) said in words, the same for the
//! terminal report and the HTML run page: whether and after how long the
//! run was steady, or why its last window was not when the cap ended it;
//! and what `--precondition` wrote before the rounds.

use serde::{Deserialize, Serialize};

use crate::harness::rounds::SteadyState;
use crate::steady::Metric;

/// What `--precondition` wrote before the rounds (`precondition` in the
/// run document): the whole target, sequentially, `passes` times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preconditioned {
    pub passes: u32,
    pub bytes: u64,
    pub seconds: f64,
    pub mib_per_s: f64,
}

/// A value of `metric` as the report shows it (no unit).
pub fn value(metric: Metric, v: f64) -> String {
    match metric {
        Metric::Iops => format!("{v:.0}"),
        Metric::Bw => format!("{v:.1}"),
        Metric::P99 => format!("{v:.0}"),
    }
}

/// What preconditioning wrote, in words.
pub fn preconditioned(p: &Preconditioned) -> String {
    format!(
        "the whole target written sequentially {} times ({}) in {:.1} s ({:.0} MiB/s) before the rounds",
        p.passes,
        crate::units::fmt_size(p.bytes),
        p.seconds,
        p.mib_per_s
    )
}

/// Percent of `mean` that `part` is (0 for an empty mean).
fn pct(part: f64, mean: f64) -> f64 {
    if mean > 0.0 { part / mean * 100.0 } else { 0.0 }
}

/// One line: steady after how long and on which rounds, or not steady and
/// which rule failed on the last window (or too few rounds to judge).
pub fn verdict(s: &SteadyState) -> String {
    let r = &s.rules;
    let m = r.metric;
    let Some(j) = s.judged else {
        return format!(
            "not steady: the run ended after {} round(s) of {} s, fewer than the window of {} needed to judge",
            s.rounds.len(),
            r.round_s,
            r.window
        );
    };
    let (range, slope) = (pct(j.range, j.mean), pct(j.excursion, j.mean));
    let rounds = s
        .window
        .as_ref()
        .map(|w| format!("rounds {}-{}", w.first_round, w.last_round))
        .unwrap_or_default();
    let figures = format!(
        "{} mean {} {}, range {range:.1}% (rule {}%), slope {slope:.1}% (rule {}%)",
        m.name(),
        value(m, j.mean),
        m.unit(),
        r.range_pct,
        r.slope_pct
    );
    match s.reached_after_s {
        Some(after) if s.reached => format!(
            "steady after {after} s ({rounds} of {} s: {figures})",
            r.round_s
        ),
        _ => {
            let failed = match (j.range_ok, j.slope_ok) {
                (false, false) => "range and slope rules",
                (false, true) => "range rule",
                (true, false) => "slope rule",
                (true, true) => "rules (never judged steady)",
            };
            format!(
                "not steady: the cap ended the run after {} rounds; the last window ({rounds}) failed the {failed}: {figures}",
                s.rounds.len()
            )
        }
    }
}

/// A steady-state result fed one round a second of `values` reads (1 s
/// rounds, a window of 3), for the tests of the verdict and of the page.
#[cfg(test)]
pub(crate) fn fed(values: &[u64]) -> SteadyState {
    use crate::harness::rounds::Rounds;
    use crate::samplers::series::{BUCKETS, KindPoint, SecondHists, SecondPoint};
    use crate::steady::Rules;
    let mut r = Rounds::new(Rules {
        round_s: 1,
        window: 3,
        ..Rules::default()
    });
    for (t, &ops) in values.iter().enumerate() {
        let p = SecondPoint {
            t_s: t as u32,
            ramp: false,
            read: KindPoint {
                ops,
                bytes: ops * 4096,
                lat_mean_us: 10.0,
                lat_p99_us: 10.0,
            },
            write: KindPoint::default(),
            sync: KindPoint::default(),
        };
        let h: SecondHists = [[0; BUCKETS]; 3];
        if r.second(&p, &h) {
            break;
        }
    }
    r.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_run_says_when_and_which_rounds() {
        let v = verdict(&fed(&[800, 400, 400, 400, 400]));
        assert!(
            v.starts_with("steady after 4 s (rounds 2-4 of 1 s: iops mean 400 I/O/s"),
            "{v}"
        );
    }

    #[test]
    fn an_unsteady_run_names_the_failed_rule() {
        let v = verdict(&fed(&[100, 300, 100, 300, 100]));
        assert!(
            v.starts_with("not steady: the cap ended the run after 5 rounds"),
            "{v}"
        );
        assert!(v.contains("failed the range rule"), "{v}");
        let short = verdict(&fed(&[100, 100]));
        assert!(short.contains("fewer than the window of 3"), "{short}");
    }
}
