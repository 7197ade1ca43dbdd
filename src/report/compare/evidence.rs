//! What a comparison's runs say: Welch's test, the effect size and the
//! runs per side that would detect the difference, per load profile line
//! ([`load_tests`]); and a comparison of one session count ([`Cell`]), since
//! `dbio compare` never pools runs of different session counts.

use serde::Serialize;

use super::Side;
use crate::analysis::compare::{Evidence, evidence};
use crate::report::plan::stats::ALPHA;

/// The evidence of one load profile line: Welch's test of the 2nd side's
/// runs against the 1st's, the effect size and, when not significant, the
/// runs per side that would detect the difference seen.
#[derive(Clone, Debug, Serialize)]
pub struct LoadTest {
    pub name: String,
    #[serde(flatten)]
    pub evidence: Evidence,
}

/// [`LoadTest`]s of the lines both sides have with two runs or more.
pub fn load_tests(a: &Side, b: &Side) -> Vec<LoadTest> {
    a.load
        .iter()
        .filter_map(|la| {
            let lb = b.load.iter().find(|l| l.name == la.name)?;
            Some(LoadTest {
                name: la.name.clone(),
                evidence: evidence(&la.per_second, &lb.per_second, ALPHA)?,
            })
        })
        .collect()
}

/// One session count's comparison: both sides narrowed to it.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The session count; `None` when the runs do not say.
    pub sessions: Option<u32>,
    pub first: Side,
    pub second: Side,
    #[serde(serialize_with = "super::json::tests")]
    pub tests: Vec<LoadTest>,
}

impl Cell {
    pub fn new(sessions: Option<u32>, first: Side, second: Side) -> Cell {
        let tests = load_tests(&first, &second);
        Cell {
            sessions,
            first,
            second,
            tests,
        }
    }
}
