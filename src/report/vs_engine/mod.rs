//! The model held against the engines (`dbio lab vs-engine`): per cell
//! (update percentage × sessions) and per flavor of the model paired with
//! its engine, the ratio model / engine of each per-operation quantity
//! with a 95% interval over the runs (`analysis::ratio_ci`).
//!
//! Which engine a flavor imitates is [`PAIRS`], keyed by the flavor's name
//! in `Flavor`'s `Choice` list: the flavors the table knows are that
//! list's, so a flavor added there with a pair here joins every table and
//! the command's default without other edits. `measure.rs` reads one run's
//! quantities; `render.rs` writes the table as text, Markdown and JSON.

mod facts;
mod findings;
mod measure;
mod render;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::analysis::{NoRatio, RatioCi, ratio_ci};
use crate::choice::Choice;
use crate::workload::slob::flavor::Flavor;

pub use facts::{Host, RunFacts};
pub use findings::{Context, OPS, PER_OP};
pub use measure::{Cell, Engine, Measured, Quantity, Side};
pub use render::{json, markdown, text};

/// The interval's level.
pub const LEVEL: f64 = 0.95;
/// Runs a side of a cell needs for an interval.
pub const MIN_RUNS: usize = 3;

/// A flavor of the model and the engine it imitates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The flavor's name in `Flavor`'s `Choice` list (`--flavor`).
    pub flavor: &'static str,
    pub engine: Engine,
    /// The engine's page size, given to both sides (`--bs`).
    pub page: &'static str,
}

/// Every flavor that has an engine to be held against.
pub const PAIRS: &[Pair] = &[
    Pair {
        flavor: "postgres",
        engine: Engine::Pg,
        page: "8k",
    },
    Pair {
        flavor: "innodb",
        engine: Engine::Mysql,
        page: "16k",
    },
];

/// The name `--flavor` knows `f` by.
pub fn flavor_name(f: Flavor) -> &'static str {
    Flavor::ALL
        .iter()
        .find(|(v, _)| *v == f)
        .map(|(_, n)| n.name)
        .unwrap_or("?")
}

/// The engine `f` is held against, if it has one.
pub fn pair_of(f: Flavor) -> Option<Pair> {
    let name = flavor_name(f);
    PAIRS.iter().copied().find(|p| p.flavor == name)
}

/// The flavors of `Flavor`'s list that have an engine, in its order.
pub fn paired_flavors() -> Vec<(Flavor, Pair)> {
    Flavor::ALL
        .iter()
        .filter_map(|(f, _)| pair_of(*f).map(|p| (*f, p)))
        .collect()
}

/// The findings of `t`, a Markdown document per pair: (file name, text).
pub fn findings(t: &VsEngine, cx: &Context) -> Vec<(String, String)> {
    t.pairs
        .iter()
        .map(|p| (findings::file_name(p, cx), findings::markdown(t, p, cx)))
        .collect()
}

/// One quantity of one cell: both sides' means and their ratio.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Compared {
    pub quantity: &'static str,
    pub model_mean: Option<f64>,
    pub engine_mean: Option<f64>,
    /// Model / engine with its interval, or why there is none.
    #[serde(flatten)]
    pub ratio: Ratio,
}

/// A ratio, or why a cell has none.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Ratio {
    Known(RatioCi),
    None { no_ratio: String },
}

/// One cell of one pair.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CellRow {
    pub update_pct: u8,
    pub sessions: u32,
    pub model_runs: usize,
    pub engine_runs: usize,
    pub quantities: Vec<Compared>,
}

/// A flavor against its engine, cell by cell.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairTable {
    pub flavor: &'static str,
    pub engine: Engine,
    pub cells: Vec<CellRow>,
}

/// The whole table of a set of runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct VsEngine {
    pub schema: &'static str,
    /// The plan whose runs these are.
    pub plan: String,
    pub level: f64,
    pub pairs: Vec<PairTable>,
    /// Completed runs in no cell of the table, each with why.
    pub left_out: Vec<String>,
}

/// The table's JSON schema name.
pub const SCHEMA: &str = "dbio.vs_engine.v1";

impl VsEngine {
    /// The table over `runs` (every completed, counted run of the plan that
    /// has its quantities: what the run is — its id and arm — and them);
    /// `left_out` names the runs that had none, and why.
    pub fn build(plan: &str, runs: &[(String, Measured)], left_out: Vec<String>) -> VsEngine {
        let mut used = vec![false; runs.len()];
        let mut pairs = Vec::new();
        for (flavor, pair) in paired_flavors() {
            // Per cell, the indexes of the model's runs and the engine's.
            let mut cells: BTreeMap<Cell, (Vec<usize>, Vec<usize>)> = BTreeMap::new();
            for (i, (_, m)) in runs.iter().enumerate() {
                let slot = cells.entry(m.cell);
                match m.side {
                    Side::Model(f) if f == flavor => slot.or_default().0.push(i),
                    Side::Engine(e) if e == pair.engine => slot.or_default().1.push(i),
                    Side::Model(_) | Side::Engine(_) => {}
                }
            }
            cells.retain(|_, (m, e)| !m.is_empty() && !e.is_empty());
            if cells.is_empty() {
                continue;
            }
            let pick = |ix: &[usize]| ix.iter().map(|&i| &runs[i].1).collect::<Vec<_>>();
            let rows = cells
                .iter()
                .map(|(cell, (m, e))| compare_cell(*cell, &pick(m), &pick(e)))
                .collect();
            for &i in cells.values().flat_map(|(m, e)| m.iter().chain(e)) {
                used[i] = true;
            }
            pairs.push(PairTable {
                flavor: pair.flavor,
                engine: pair.engine,
                cells: rows,
            });
        }
        let unpaired = runs
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|((what, _), _)| format!("{what}: no cell with both the model and its engine"));
        VsEngine {
            schema: SCHEMA,
            plan: plan.to_string(),
            level: LEVEL,
            pairs,
            left_out: left_out.into_iter().chain(unpaired).collect(),
        }
    }
}

fn compare_cell(cell: Cell, model: &[&Measured], engine: &[&Measured]) -> CellRow {
    let quantities = Quantity::ALL
        .iter()
        .map(|&q| {
            let m: Vec<f64> = model.iter().filter_map(|r| r.value(q)).collect();
            let e: Vec<f64> = engine.iter().filter_map(|r| r.value(q)).collect();
            let ratio = match ratio_ci(&m, &e, LEVEL) {
                Ok(r) => Ratio::Known(r),
                Err(why) => Ratio::None {
                    no_ratio: no_ratio_words(why).to_string(),
                },
            };
            Compared {
                quantity: q.name(),
                model_mean: crate::analysis::summary::mean(&m),
                engine_mean: crate::analysis::summary::mean(&e),
                ratio,
            }
        })
        .collect();
    CellRow {
        update_pct: cell.update_pct,
        sessions: cell.sessions,
        model_runs: model.len(),
        engine_runs: engine.len(),
        quantities,
    }
}

fn no_ratio_words(why: NoRatio) -> &'static str {
    match why {
        NoRatio::TooFew => "fewer than 2 runs a side",
        NoRatio::NotFinite => "not finite",
        NoRatio::Negative => "negative",
        NoRatio::BothZero => "both zero",
        NoRatio::OneZero => "one side zero",
    }
}
