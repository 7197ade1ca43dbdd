//! `dbio compare A B`: two runs, or two selections of stored runs, side by
//! side in AWR's compare period layout (see `report::compare`). A side is a
//! run id (`12`), a list of ids (`12,14,15`), or a variable name (`XFS`),
//! narrowed by `--plan` and `--sessions`; a selection averages its completed,
//! counted runs and enables Welch's test per load profile line. Sides whose
//! runs span several session counts are compared cell by cell, one block
//! per session count both have (never pooled), or refused when they share
//! none.

use crate::cli::compare::{CompareArgs, Format};
use std::collections::{BTreeMap, BTreeSet};

use super::CommandError;
use crate::report::compare::{Cell, Comparison, Side};
use crate::report::export::{Exporter, Html, Json, Text};
use crate::store::{RunFilter, Store};

/// The runs one side names: (id, session count), and its label.
struct Picked {
    label: String,
    runs: Vec<(i64, Option<u32>)>,
    /// A variable (narrowed by --plan/--sessions), not a list of ids.
    variable: bool,
    /// Report documents already read, by run id.
    read: BTreeMap<i64, serde_json::Value>,
}

fn pick(store: &Store, spec: &str, args: &CompareArgs) -> anyhow::Result<Picked> {
    let ids: Option<Vec<i64>> = spec
        .split(',')
        .map(|p| p.trim().parse::<i64>().ok())
        .collect();
    let sessions = |s: Option<i64>| s.and_then(|s| u32::try_from(s).ok());
    if let Some(ids) = ids {
        let mut runs = Vec::with_capacity(ids.len());
        let mut read = BTreeMap::new();
        for id in ids {
            if !store.contains(id)? {
                anyhow::bail!(CommandError::Usage(format!(
                    "no run {id} in {}; `dbio runs list` shows the ids",
                    store.path().display()
                )));
            }
            let run = store.get(id)?;
            runs.push((id, sessions(run.row.sessions)));
            read.insert(id, run.report);
        }
        return Ok(Picked {
            label: format!("run {spec}"),
            runs,
            variable: false,
            read,
        });
    }
    let filter = RunFilter {
        plan: args.plan.clone(),
        variable: Some(spec.to_string()),
        ..Default::default()
    };
    let rows = store.list(&filter)?;
    let runs: Vec<(i64, Option<u32>)> = rows
        .iter()
        .filter(|r| r.status == "completed" && !r.warmup)
        .filter(|r| {
            args.sessions
                .is_none_or(|s| r.sessions == Some(i64::from(s)))
        })
        .map(|r| (r.id, sessions(r.sessions)))
        .collect();
    if runs.is_empty() {
        anyhow::bail!(CommandError::Usage(format!(
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
    Ok(Picked {
        label,
        runs,
        variable: true,
        read: BTreeMap::new(),
    })
}

/// The session counts of a side's runs, in order.
fn counts(p: &Picked) -> BTreeSet<Option<u32>> {
    p.runs.iter().map(|r| r.1).collect()
}

fn show_counts(c: &BTreeSet<Option<u32>>) -> String {
    let v: Vec<String> = c
        .iter()
        .map(|s| s.map_or("?".into(), |s| s.to_string()))
        .collect();
    v.join(", ")
}

/// The side of `p`'s runs at `only` session count (all of them for `None`).
fn side(
    store: &Store,
    p: &Picked,
    only: Option<Option<u32>>,
    label: String,
) -> anyhow::Result<Side> {
    let ids: Vec<i64> = p
        .runs
        .iter()
        .filter(|r| only.is_none_or(|s| r.1 == s))
        .map(|r| r.0)
        .collect();
    let mut reports = Vec::with_capacity(ids.len());
    for id in &ids {
        reports.push(match p.read.get(id) {
            Some(r) => r.clone(),
            None => store.get(*id)?.report,
        });
    }
    Ok(Side::from_reports(label, ids, &reports)?)
}

/// One comparison when each side has one session count; otherwise one per
/// session count both sides have (runs of different session counts are
/// not one population), or a refusal when they share none.
pub fn execute(args: &CompareArgs, store: &Store) -> anyhow::Result<()> {
    let a = pick(store, &args.a, args)?;
    let b = pick(store, &args.b, args)?;
    let (ca, cb) = (counts(&a), counts(&b));
    if ca.len() <= 1 && cb.len() <= 1 {
        let sessions = ca.first().copied().flatten().filter(|_| ca == cb);
        let cell = Cell::new(
            sessions,
            side(store, &a, None, a.label.clone())?,
            side(store, &b, None, b.label.clone())?,
        );
        return write(args, &Comparison::One(Box::new(cell)));
    }
    let common: Vec<Option<u32>> = ca.intersection(&cb).copied().collect();
    if common.is_empty() {
        let fix = if a.variable && b.variable {
            "choose one with --sessions N"
        } else {
            "give runs of one session count on each side"
        };
        anyhow::bail!(CommandError::Usage(format!(
            "{} has runs at sessions {} and {} at {}: no session count on both sides to compare; {fix}",
            a.label,
            show_counts(&ca),
            b.label,
            show_counts(&cb),
        )));
    }
    let mut notes = Vec::new();
    if a.variable && b.variable {
        notes.push("one session count only: --sessions N".to_string());
    }
    let mut left_out = Vec::new();
    for (p, mine, theirs) in [(&a, &ca, &cb), (&b, &cb, &ca)] {
        let only: BTreeSet<Option<u32>> = mine.difference(theirs).copied().collect();
        if !only.is_empty() {
            left_out.push(format!(
                "left out: {} at sessions {} (no runs of the other side there)",
                p.label,
                show_counts(&only)
            ));
        }
    }
    let mut cells = Vec::with_capacity(common.len());
    for s in common {
        let at = |p: &Picked| match s {
            Some(n) => format!("{} @ {n} sessions", p.label),
            None => p.label.clone(),
        };
        cells.push(Cell::new(
            s,
            side(store, &a, Some(s), at(&a))?,
            side(store, &b, Some(s), at(&b))?,
        ));
    }
    write(
        args,
        &Comparison::PerSessions {
            cells,
            notes,
            left_out,
        },
    )
}

/// The comparison in the format asked for: `--html FILE`, else text or
/// JSON on stdout.
fn write(args: &CompareArgs, c: &Comparison) -> anyhow::Result<()> {
    if let Some(path) = &args.html {
        return write_page(path, c);
    }
    let mut out = Vec::new();
    match args.format {
        Format::Text => Text.write(c, &mut out)?,
        Format::Json => Json.write(c, &mut out)?,
    }
    super::output::print(&String::from_utf8_lossy(&out))
}

/// Writes the comparison's HTML page to `path` and says so on stderr.
fn write_page(path: &std::path::Path, c: &Comparison) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut page = Vec::new();
    let html = Html {
        generated: crate::store::fmt_utc(now),
    };
    html.write(c, &mut page)?;
    let page = String::from_utf8_lossy(&page);
    crate::report::html::write(path, &page)?;
    eprintln!(
        "wrote {} ({} KiB)",
        path.display(),
        page.len().div_ceil(1024)
    );
    Ok(())
}
