//! `dbio metrics`: the metric names of the stored runs with their units,
//! how many runs have each and what they mean — the names `report
//! --metric`, `report --html` and `runs export --metrics` take — and the
//! nearest names to one that was not found.

use crate::cli::metric_names::MetricsArgs;

use super::CommandError;
use crate::report::plan::metric_names::{meaning, nearest, unit};
use crate::store::Store;

/// Lists the store's metric names (those containing `args.filter`).
pub fn execute(args: &MetricsArgs, store: &Store) -> anyhow::Result<()> {
    let all = store
        .metric_names()
        .map_err(|e| CommandError::Failed(e.to_string()))?;
    if all.is_empty() {
        eprintln!(
            "the store at {} holds no runs yet: every run stores its metrics (read.iops, read.latency.p99_us, …); dbio run first",
            store.path().display()
        );
        return Ok(());
    }
    let shown: Vec<&(String, u64)> = all
        .iter()
        .filter(|(n, _)| args.filter.as_deref().is_none_or(|f| n.contains(f)))
        .collect();
    if shown.is_empty() {
        let f = args.filter.as_deref().unwrap_or_default();
        anyhow::bail!(CommandError::Usage(format!(
            "no stored metric name contains {f:?}{}",
            hint_from(f, &all)
        )));
    }
    let mut rows = vec![
        ["metric", "unit", "runs", "meaning"]
            .map(String::from)
            .to_vec(),
    ];
    for (name, runs) in shown {
        rows.push(vec![
            name.clone(),
            unit(name).to_string(),
            runs.to_string(),
            meaning(name),
        ]);
    }
    super::output::print_text(&crate::grid::text(&rows, "llrl"))
}

/// What to add to "no run has METRIC": the nearest stored names, and
/// where the whole list is.
pub fn hint(store: &Store, typed: &str) -> String {
    match store.metric_names() {
        Ok(names) => hint_from(typed, &names),
        Err(_) => "; dbio metrics lists the stored names".into(),
    }
}

fn hint_from(typed: &str, names: &[(String, u64)]) -> String {
    let names: Vec<String> = names.iter().map(|(n, _)| n.clone()).collect();
    let near = nearest(typed, &names, 5, crate::options::table::edit_distance);
    match near.is_empty() {
        true => format!("; dbio metrics lists the {} stored names", names.len()),
        false => format!(
            "; nearest stored names: {} (dbio metrics lists all {})",
            near.join(", "),
            names.len()
        ),
    }
}
