//! `dbio curve`'s arguments: the run's own options (`RunArgs`, flattened),
//! the points of the curve as percentages of the measured maximum
//! (`--points`), or instead a latency target whose highest rate is searched
//! (`--latency-target p99=1ms`, `--precision 5%`), and the set's name.
//! Every bad value is one line naming the option and what to give.

use clap::Args;

use crate::options::{Refused, RunArgs};
use crate::units::parse_seconds;

/// The points of a curve when `--points` is not given: vdbench's.
pub const DEFAULT_POINTS: [u8; 6] = [10, 50, 70, 80, 90, 100];

/// `dbio curve`: a maximum run, then runs at rates derived from it.
#[derive(Args, Debug)]
pub struct CurveArgs {
    /// Percentages of the measured maximum to run at, open loop, comma-separated (each 1..100) [default: 10,50,70,80,90,100].
    #[arg(long, value_delimiter = ',', value_name = "PCT,...", value_parser = clap::value_parser!(u8).range(1..=100))]
    pub points: Vec<u8>,

    /// Instead of fixed points: the highest rate at which this latency holds, searched by halving from the maximum then bisecting: [read.|write.|total.][service.]pNN=LATENCY, e.g. p99=1ms, read.p99.9=2ms (due-time latency of reads and writes together unless named, of the operations or transactions for slob, pg and mysql; service. for the time from the issue).
    #[arg(long, value_name = "TARGET", value_parser = parse_latency_target, conflicts_with = "points")]
    pub latency_target: Option<LatencyTarget>,

    /// With --latency-target: stop once the boundary is known within this much of the answer (0.5%..50%).
    #[arg(long, value_name = "PCT", default_value = "5%", value_parser = parse_precision, requires = "latency_target")]
    pub precision: f64,

    /// The set's name in the store (dbio report --plan NAME) [default: curve-DATE-TIME or search-DATE-TIME].
    #[arg(long, value_name = "NAME", value_parser = parse_name)]
    pub name: Option<String>,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Which requests' latency a target is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetOp {
    Read,
    Write,
    /// Reads and writes together.
    Total,
}

impl TargetOp {
    pub fn name(self) -> &'static str {
        match self {
            TargetOp::Read => "read",
            TargetOp::Write => "write",
            TargetOp::Total => "total",
        }
    }
}

/// From when a request's latency is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Basis {
    /// From its due time: what a user of the storage waits.
    Due,
    /// From its issue: the storage's service time.
    Service,
}

/// `--latency-target`: a percentile of some requests' latency at most a limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    pub op: TargetOp,
    pub basis: Basis,
    /// One of [`KEPT`].
    pub percentile: f64,
    /// The limit in microseconds.
    pub limit_us: f64,
}

impl std::fmt::Display for LatencyTarget {
    /// "total due-time p99 ≤ 1.00ms".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let basis = match self.basis {
            Basis::Due => "due-time",
            Basis::Service => "service",
        };
        write!(
            f,
            "{} {basis} p{} ≤ {}",
            self.op.name(),
            self.percentile,
            crate::units::fmt_latency_ns(self.limit_us * 1e3)
        )
    }
}

/// The percentiles every run document keeps (`Latency`).
pub const KEPT: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];

/// `[read.|write.|total.][due.|service.]pNN=LATENCY`.
fn parse_latency_target(s: &str) -> Result<LatencyTarget, Refused> {
    let Some((what, limit)) = s.split_once('=') else {
        return Err(format!(
            "{s:?} is not PERCENTILE=LATENCY; give e.g. p99=1ms or read.p99.9=2ms"
        )
        .into());
    };
    let mut rest = what.trim();
    let mut op = TargetOp::Total;
    for o in [TargetOp::Read, TargetOp::Write, TargetOp::Total] {
        if let Some(r) = rest
            .strip_prefix(o.name())
            .and_then(|r| r.strip_prefix('.'))
        {
            (op, rest) = (o, r);
        }
    }
    let mut basis = Basis::Due;
    for (word, b) in [("due.", Basis::Due), ("service.", Basis::Service)] {
        if let Some(r) = rest.strip_prefix(word) {
            (basis, rest) = (b, r);
        }
    }
    let Some(pct) = rest.strip_prefix('p') else {
        return Err(format!(
            "{what:?} names no percentile of read, write or total latency (e.g. p99, read.p99.9); a commit or wait-event target (log file sync) is not built: for slob, pg and mysql, target their paced operations' latency (p99=1ms)"
        )
        .into());
    };
    let percentile: f64 = pct
        .parse()
        .ok()
        .filter(|p: &f64| p.is_finite())
        .ok_or_else(|| format!("p{pct} is not a percentile; give p50 to p99.99"))?;
    if !(50.0..=99.99).contains(&percentile) {
        return Err(format!("p{pct} is outside p50..p99.99").into());
    }
    if !KEPT.contains(&percentile) {
        return Err(format!(
            "p{pct}: a run keeps p50, p90, p99, p99.9 and p99.99 of its latency; target one of them"
        )
        .into());
    }
    Ok(LatencyTarget {
        op,
        basis,
        percentile,
        limit_us: parse_latency_us(limit.trim())?,
    })
}

/// A latency with its unit (`500us`, `1ms`, `0.2s`), in microseconds.
fn parse_latency_us(s: &str) -> Result<f64, Refused> {
    let bad = || {
        Refused::from(format!(
            "{s:?} is not a latency; give e.g. 500us, 1ms or 0.2s"
        ))
    };
    let us = if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        n.trim().parse::<f64>().map_err(|_| bad())?
    } else if s.ends_with('s') {
        parse_seconds(s).map_err(|_| bad())? * 1e6
    } else {
        return Err(bad());
    };
    if us.is_finite() && us > 0.0 {
        Ok(us)
    } else {
        Err(format!("{s:?}: a latency target must be above zero").into())
    }
}

/// `5%` or `5` as the fraction 0.05, from 0.5% to 50%.
fn parse_precision(s: &str) -> Result<f64, Refused> {
    let n = s.trim().strip_suffix('%').unwrap_or(s.trim());
    match n.parse::<f64>() {
        Ok(p) if (0.5..=50.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("{s:?} is not a precision from 0.5% to 50% (e.g. 5%)").into()),
    }
}

/// A set's name: 1 to 64 letters, digits, `-`, `_`, `.`.
fn parse_name(s: &str) -> Result<String, Refused> {
    let ok = (1..=64).contains(&s.chars().count())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{} is not a set name: give 1 to 64 letters, digits, '-', '_' or '.'",
            crate::terminal::quote(s)
        )
        .into())
    }
}

/// `dbio run`'s options that describe a single run, hidden from `dbio curve
/// --help` (still parsed, so that each is refused by name).
const SINGLE_RUN: [&str; 9] = [
    "ops",
    "rate",
    "json",
    "output",
    "mpi",
    "region_per_rank",
    "capture",
    "metrics_listen",
    "metrics_textfile",
];

/// `dbio curve`'s clap command without the options it refuses in its help.
pub fn arrange(curve: clap::Command) -> clap::Command {
    SINGLE_RUN
        .iter()
        .fold(curve, |c, id| c.mut_arg(*id, |a| a.hide(true)))
}

impl CurveArgs {
    /// The points asked, sorted, each once.
    pub fn points(&self) -> Vec<u8> {
        let mut p = if self.points.is_empty() {
            DEFAULT_POINTS.to_vec()
        } else {
            self.points.clone()
        };
        p.sort_unstable();
        p.dedup();
        p
    }

    /// The run options a curve sets itself or cannot take, refused by name.
    pub fn refuse_run_options(&self) -> Result<(), Refused> {
        let r = &self.run;
        let refused = [
            (
                r.ops.is_some(),
                "--ops",
                "a curve's runs are timed: use --time",
            ),
            (
                r.rate.is_some(),
                "--rate",
                "the curve sets each run's rate from the measured maximum: drop --rate",
            ),
            (
                r.json,
                "--json",
                "the curve's runs are in the store: dbio report --plan NAME --format json",
            ),
            (
                r.output.is_some(),
                "--output",
                "the curve prints its table on stdout: redirect it",
            ),
            (r.mpi, "--mpi", "a curve runs on this host"),
            (
                r.replay.capture,
                "--capture",
                "capture one run with dbio run --capture",
            ),
            (
                r.metrics.wanted() != Default::default(),
                "--metrics-listen/--metrics-textfile",
                "watch a single run with dbio run",
            ),
        ];
        match refused.iter().find(|(given, ..)| *given) {
            Some((_, opt, instead)) => {
                Err(format!("{opt} does not apply to dbio curve; {instead}").into())
            }
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_their_defaults() {
        let t = parse_latency_target("p99=1ms").unwrap();
        assert_eq!(
            t,
            LatencyTarget {
                op: TargetOp::Total,
                basis: Basis::Due,
                percentile: 99.0,
                limit_us: 1000.0
            }
        );
        let t = parse_latency_target("read.service.p99.9=250us").unwrap();
        assert_eq!(
            (t.op, t.basis, t.percentile, t.limit_us),
            (TargetOp::Read, Basis::Service, 99.9, 250.0)
        );
        let t = parse_latency_target("write.p50=0.2s").unwrap();
        assert_eq!((t.op, t.limit_us), (TargetOp::Write, 200_000.0));
        assert_eq!(t.to_string(), "write due-time p50 ≤ 200.00ms");
    }

    #[test]
    fn bad_targets_say_what_to_give() {
        let e = |s| parse_latency_target(s).unwrap_err().to_string();
        assert!(
            e("p99=abc").contains("\"abc\" is not a latency"),
            "{}",
            e("p99=abc")
        );
        assert!(e("p101=1ms").contains("p101 is outside p50..p99.99"));
        assert!(e("p49=1ms").contains("outside"));
        assert!(e("p95=1ms").contains("p95: a run keeps p50, p90"));
        assert!(e("pxx=1ms").contains("pxx is not a percentile"));
        assert!(e("p99").contains("PERCENTILE=LATENCY"));
        assert!(e("p99=1").contains("not a latency"));
        assert!(e("p99=0ms").contains("above zero"));
        assert!(e("commit.p99=1ms").contains("commit or wait-event"));
    }

    #[test]
    fn single_run_options_are_hidden_from_its_help_but_parsed() {
        let help = crate::cli::command()
            .find_subcommand_mut("curve")
            .expect("dbio curve")
            .render_long_help()
            .to_string();
        assert!(help.contains("--latency-target") && help.contains("--sessions"));
        for opt in ["--json", "--ops", "--rate", "--mpi", "--output"] {
            let listed = help
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{opt} ")));
            assert!(!listed, "{opt} listed in {help}");
        }
        let parsed = crate::cli::try_parse_from(["dbio", "curve", "--json"]);
        assert!(parsed.is_ok(), "refused later, by name");
    }

    #[test]
    fn precision_and_names_are_checked() {
        assert_eq!(parse_precision("5%").unwrap(), 0.05);
        assert_eq!(parse_precision("2.5").unwrap(), 0.025);
        assert!(parse_precision("0%").is_err());
        assert!(parse_precision("60%").is_err());
        assert!(parse_name("ssd-curve_1.a").is_ok());
        assert!(parse_name("a b").is_err());
        assert!(parse_name("").is_err());
    }
}
