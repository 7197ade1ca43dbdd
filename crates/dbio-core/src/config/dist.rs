//! Which blocks are popular (`--dist`): the setting, parsed and written
//! back; `workload::dist` picks the blocks.

use std::fmt;
use std::str::FromStr;

/// The phrase returned by [`Distribution::from_str`] for anything it cannot accept.
pub(crate) const PARSE_HINT: &str = "expected uniform, zipf:THETA (THETA > 0, not 1, e.g. zipf:1.2) \
                          or pareto:H (0 < H < 1, e.g. pareto:0.9)";

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
    /// The parameter is in its range: θ finite, above 0 and not 1; 0 < h < 1.
    pub(crate) fn in_range(self) -> bool {
        match self {
            Self::Uniform => true,
            Self::Zipf { theta } => theta.is_finite() && theta > 0.0 && theta != 1.0,
            Self::Pareto { h } => h > 0.0 && h < 1.0,
        }
    }
}

/// A `--dist` value that is not a distribution dbio knows (the message lists them).
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{PARSE_HINT}")]
pub struct ParseDistError;

impl FromStr for Distribution {
    type Err = ParseDistError;

    /// Parses `uniform`, `zipf:THETA` or `pareto:H` (names case-insensitive).
    fn from_str(s: &str) -> Result<Self, ParseDistError> {
        let s = s.trim();
        let (name, param) = match s.split_once(':') {
            Some((name, param)) => (name.trim(), Some(param.trim())),
            None => (s, None),
        };
        let number = |p: &str| p.parse::<f64>().map_err(|_| ParseDistError);
        let dist = match param {
            None if name.eq_ignore_ascii_case("uniform") => Self::Uniform,
            Some(p) if name.eq_ignore_ascii_case("zipf") => Self::Zipf { theta: number(p)? },
            Some(p) if name.eq_ignore_ascii_case("pareto") => Self::Pareto { h: number(p)? },
            _ => return Err(ParseDistError),
        };
        if dist.in_range() {
            Ok(dist)
        } else {
            Err(ParseDistError)
        }
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
