//! `dbio compare A B`: two runs, or two selections of stored runs, side by
//! side in AWR's compare period layout (see `report::compare`). A side is a
//! run id (`12`), a list of ids (`12,14,15`), or a variable name (`XFS`),
//! narrowed by `--plan` and `--sessions`; a selection averages its completed,
//! counted runs and enables Welch's test per load profile line.

use clap::{Args, ValueEnum};

use super::CommandError;
use crate::report::compare::{Side, render};
use crate::store::{RunFilter, Store};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The 1st side: a run id, ids separated by commas, or a variable name.
    #[arg(value_name = "A")]
    pub a: String,
    /// The 2nd side, the same way.
    #[arg(value_name = "B")]
    pub b: String,
    /// Take variables from this plan.
    #[arg(long)]
    pub plan: Option<String>,
    /// Only runs with this many sessions (for variables).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub sessions: Option<u32>,
    /// text (side by side, as AWR's compare period report) or json.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

fn side(store: &Store, spec: &str, args: &CompareArgs) -> Result<Side, CommandError> {
    let failed = |e: crate::store::StoreError| CommandError::Failed(e.to_string());
    let ids: Option<Vec<i64>> = spec
        .split(',')
        .map(|p| p.trim().parse::<i64>().ok())
        .collect();
    let (label, ids) = match ids {
        Some(ids) => {
            for id in &ids {
                if !store.contains(*id).map_err(failed)? {
                    return Err(CommandError::Usage(format!(
                        "no run {id} in {}; `dbio runs list` shows the ids",
                        store.path().display()
                    )));
                }
            }
            (format!("run {spec}"), ids)
        }
        None => {
            let filter = RunFilter {
                plan: args.plan.clone(),
                variable: Some(spec.to_string()),
                ..Default::default()
            };
            let rows = store.list(&filter).map_err(failed)?;
            let ids: Vec<i64> = rows
                .iter()
                .filter(|r| r.status == "completed" && !r.warmup)
                .filter(|r| {
                    args.sessions
                        .is_none_or(|s| r.sessions == Some(i64::from(s)))
                })
                .map(|r| r.id)
                .collect();
            if ids.is_empty() {
                return Err(CommandError::Usage(format!(
                    "no completed run of variable {spec:?}{}{}; give run ids or a variable `dbio runs list` shows",
                    args.plan
                        .as_ref()
                        .map(|p| format!(" in plan {p:?}"))
                        .unwrap_or_default(),
                    args.sessions
                        .map(|s| format!(" with {s} sessions"))
                        .unwrap_or_default(),
                )));
            }
            let mut label = spec.to_string();
            if let Some(s) = args.sessions {
                label.push_str(&format!(" @ {s} sessions"));
            }
            (label, ids)
        }
    };
    let mut reports = Vec::with_capacity(ids.len());
    for id in &ids {
        reports.push(store.get(*id).map_err(failed)?.report);
    }
    Ok(Side::from_reports(label, ids, &reports))
}

pub fn execute(args: &CompareArgs, store: &Store) -> Result<(), CommandError> {
    let a = side(store, &args.a, args)?;
    let b = side(store, &args.b, args)?;
    super::output::print(&match args.format {
        Format::Text => render(&a, &b),
        Format::Json => {
            serde_json::to_string_pretty(&serde_json::json!({ "first": a, "second": b }))
                .expect("sides serialize")
                + "\n"
        }
    })
}
