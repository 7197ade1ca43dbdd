//! `--steady-state` and `--precondition` (docs/steady-state.md): the
//! options, their checks, and what they make of the run — the PTS's rules
//! in a `steady::Steady`, and `--time` turned into the cap.

use crate::config::{RunConfig, RunLength, WorkloadConfig};
use crate::options::Refused;
use crate::options::choice::choice;
use crate::steady::{Metric, Rules, Steady};

/// Rounds the run is capped at when `--time` is not given (the PTS's 25).
const DEFAULT_CAP_ROUNDS: u32 = 25;

#[derive(clap::Args, Debug, Clone, Default, PartialEq)]
#[command(next_help_heading = "Steady state")]
pub struct SteadyArgs {
    /// Run in rounds until the last window of rounds is steady (SNIA PTS: every round within --steady-range of the window's mean, the least-squares line across the window within --steady-slope of it), then stop and report that window; --time is the cap [default cap: 25 rounds].
    #[arg(long)]
    pub steady_state: bool,

    /// Length of a steady-state round, whole seconds (e.g. 60s, 2m) [default: 60s].
    #[arg(long, value_name = "DURATION", value_parser = parse_round)]
    pub round: Option<f64>,

    /// Rounds judged together [default: 5].
    #[arg(long, value_name = "N")]
    pub steady_window: Option<u32>,

    /// Largest minus smallest round of the window, at most this percent of its mean [default: 20%].
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub steady_range: Option<f64>,

    /// The least-squares line's rise or fall across the window, at most this percent of its mean [default: 10%].
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    pub steady_slope: Option<f64>,

    /// What each round is judged by [default: iops].
    #[arg(long, value_name = "METRIC", value_parser = choice::<Metric>())]
    pub steady_on: Option<Metric>,

    /// Before the steady-state rounds, write the whole target sequentially twice (the PTS's preconditioning; raw workload, the --target given, devices through the usual write gate); implies --steady-state.
    #[arg(long)]
    pub precondition: bool,
}

/// `--round`: a duration (`60`, `2m`, `1500ms`), checked by the rules later.
fn parse_round(s: &str) -> Result<f64, Refused> {
    crate::units::parse_seconds(s).map_err(|e| e.to_string().into())
}

/// `20%` or `20`: a number of percent (bounds checked by the rules).
fn parse_pct(s: &str) -> Result<f64, Refused> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    n.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{s:?} is not a percentage; give e.g. 20% or 20").into())
}

impl SteadyArgs {
    /// The rule options given without `--steady-state` (the first one).
    fn first_rule_option(&self) -> Option<&'static str> {
        [
            (self.round.is_some(), "--round"),
            (self.steady_window.is_some(), "--steady-window"),
            (self.steady_range.is_some(), "--steady-range"),
            (self.steady_slope.is_some(), "--steady-slope"),
            (self.steady_on.is_some(), "--steady-on"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The rules asked for, each checked.
    fn rules(&self) -> Result<Rules, Refused> {
        let d = Rules::default();
        let round_s = match self.round {
            Some(s) => Rules::round_seconds(s).map_err(|e| e.to_string())?,
            None => d.round_s,
        };
        let rules = Rules {
            round_s,
            window: self.steady_window.unwrap_or(d.window),
            range_pct: self.steady_range.unwrap_or(d.range_pct),
            slope_pct: self.steady_slope.unwrap_or(d.slope_pct),
            metric: self.steady_on.unwrap_or(d.metric),
        };
        rules.check().map_err(|e| e.to_string())?;
        Ok(rules)
    }

    /// Sets `cfg` up for steady state if it was asked: its rules, and its
    /// length's `time_s` the cap (`time`: `--time` as given). Refuses a run
    /// of fixed work, MPI, a replay, and `--precondition` off raw.
    pub fn apply(&self, cfg: &mut RunConfig, time: Option<f64>, mpi: bool) -> Result<(), Refused> {
        if !self.steady_state && !self.precondition {
            return match self.first_rule_option() {
                Some(opt) => Err(format!(
                    "{opt} is a rule of --steady-state; add --steady-state or drop {opt}"
                )
                .into()),
                None => Ok(()),
            };
        }
        let asked = if self.steady_state {
            "--steady-state"
        } else {
            "--precondition"
        };
        let rules = self.rules()?;
        refuse_workload(cfg, asked, self.precondition)?;
        if mpi {
            return Err(format!(
                "{asked} is not supported with --mpi yet: each rank would stop at its own steady state; drop one"
            )
            .into());
        }
        let RunLength::Time { ramp_s, .. } = cfg.length else {
            return Err(format!(
                "{asked} runs until its rounds are steady, capped by --time; it cannot be a run of a fixed amount of work: drop --ops (or --work-loop)"
            )
            .into());
        };
        let cap = time.unwrap_or(
            f64::from(rules.round_s) * f64::from(DEFAULT_CAP_ROUNDS.max(2 * rules.window)),
        );
        let window_s = rules.window_s() as f64;
        if cap < window_s {
            return Err(format!(
                "--time {cap}s is shorter than one window of rounds (--steady-window {} x --round {}s = {window_s}s), so it could never be steady; give --time {window_s}s or more",
                rules.window, rules.round_s
            )
            .into());
        }
        cfg.length = RunLength::Time {
            time_s: cap,
            ramp_s,
        };
        cfg.steady = Some(Steady {
            rules,
            precondition: self.precondition,
        });
        Ok(())
    }
}

/// The workloads steady state is for: those with a per-second series
/// (raw, the model, the servers; not a replay, whose trace sets its
/// length); preconditioning writes the target, so raw only.
fn refuse_workload(cfg: &RunConfig, asked: &str, precondition: bool) -> Result<(), Refused> {
    match &cfg.workload {
        WorkloadConfig::Replay(_) => Err(format!(
            "{asked} does not apply to --workload replay: a replay lasts as long as its trace; drop {asked}"
        )
        .into()),
        WorkloadConfig::Raw(_) => Ok(()),
        WorkloadConfig::Slob(_) | WorkloadConfig::Pg(_) | WorkloadConfig::Mysql(_)
            if precondition =>
        {
            Err("--precondition writes the whole target sequentially, which only --workload raw may do (a database's files are its own); drop --precondition or use --workload raw".into())
        }
        WorkloadConfig::Slob(_) | WorkloadConfig::Pg(_) | WorkloadConfig::Mysql(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(parse_pct("20%").unwrap(), 20.0);
        assert_eq!(parse_pct("7.5").unwrap(), 7.5);
        for bad in ["abc", "%", "", "inf%", "NaN"] {
            assert!(parse_pct(bad).is_err(), "{bad}");
        }
    }
}
