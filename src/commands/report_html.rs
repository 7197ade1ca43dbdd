//! `dbio report --html FILE`: the selection's HTML report (report::html),
//! written to the one file named.

use std::path::Path;

use super::CommandError;
use crate::cli::report::ReportArgs;
use crate::cli::runs::FilterArgs;
use crate::report::html::{self, Options, data};
use crate::store::Store;

/// The selection as the user would type it again.
fn describe(f: &FilterArgs) -> String {
    let mut parts = Vec::new();
    if let Some(p) = &f.plan {
        parts.push(format!("--plan {p}"));
    }
    if let Some(v) = &f.variable {
        parts.push(format!("--variable {v}"));
    }
    for t in &f.tags {
        parts.push(format!("--tag {t}"));
    }
    if let Some(w) = &f.workload {
        parts.push(format!("--workload {w}"));
    }
    if let Some(s) = f.since {
        parts.push(format!("--since {}", crate::store::fmt_utc(s)));
    }
    if let Some(n) = f.limit {
        parts.push(format!("--limit {n}"));
    }
    if parts.is_empty() {
        "all runs".into()
    } else {
        format!("selected by {}", parts.join(" "))
    }
}

fn now_utc() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    crate::store::fmt_utc(ms)
}

/// Loads the selection, renders the page and writes it to `path`.
pub fn execute(args: &ReportArgs, path: &Path, store: &Store) -> anyhow::Result<()> {
    let plan = match &args.plan_file {
        Some(p) => Some(crate::plan::load(p).map_err(|e| CommandError::Usage(e.to_string()))?),
        None => None,
    };
    let mut filter = args.filter.clone();
    if let Some(p) = &plan {
        match &filter.plan {
            None => filter.plan = Some(p.name.clone()),
            Some(name) if *name != p.name => {
                anyhow::bail!(CommandError::Usage(format!(
                    "--plan {name} but --plan-file {} is plan {:?}; drop one of them",
                    args.plan_file.as_deref().unwrap_or(Path::new("")).display(),
                    p.name
                )));
            }
            Some(_) => {}
        }
    }
    let measure = args.measure();
    measure
        .check()
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    let d = data::load(store, &filter.to_filter(), &measure)?;
    if args.model.is_none() {
        let ids: Vec<i64> = d.runs.iter().map(|r| r.id).collect();
        super::report::one_kind(&store.list(&filter.to_filter())?, &ids)?;
    }
    if d.runs.is_empty() {
        anyhow::bail!(CommandError::Usage(format!(
            "no completed run of the selection has {} ({} runs selected){}",
            if measure.model.is_some() {
                measure.label()
            } else {
                format!("the metric {:?}", args.metric)
            },
            d.left_out,
            if measure.model.is_none() {
                super::metrics::hint(store, &args.metric)
            } else {
                "; see docs/import.md for the models".to_string()
            }
        )));
    }
    let plan_file = plan.as_ref().map(crate::plan::Plan::file_facts);
    let opts = Options {
        relative_to: args.relative_to.as_deref(),
        plan: plan_file.as_ref(),
        selection: describe(&filter),
        store: store.path().display().to_string(),
        generated: now_utc(),
    };
    let page = html::report_page(&d, &opts).map_err(|e| CommandError::Usage(e.to_string()))?;
    html::write(path, &page)?;
    eprintln!(
        "wrote {} ({} runs, {} KiB)",
        crate::terminal::path(path),
        d.runs.len(),
        page.len().div_ceil(1024)
    );
    Ok(())
}
