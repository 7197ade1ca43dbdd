//! `dbio runs …`: list, show, delete, export, tag and note stored runs. The
//! CLI parses [`RunsCommand`], opens the store (`--db`, `DBIO_DB`, default
//! path) and calls [`execute`]; everything is written to `out`.

use crate::cli::runs::{FilterArgs, RunsCommand, ShowFormat};
use std::io::Write;

use crate::report::export::runs::{self as export};
use crate::report::export::{Exporter, FioJson, Html, Json, Text};
use crate::store::{RunFilter, RunRow, Store, StoreError, fmt_utc};
use crate::terminal;
use crate::units::{fmt_count, fmt_size};

impl FilterArgs {
    pub fn to_filter(&self) -> RunFilter {
        RunFilter {
            plan: self.plan.clone(),
            variable: self.variable.clone(),
            tags: self.tags.clone(),
            workload: self.workload.clone(),
            since_unix_ms: self.since,
            limit: self.limit,
            source: self.source.clone(),
        }
    }
}

/// Runs one `dbio runs` subcommand against `store`, writing to `out`.
pub fn execute(store: &mut Store, cmd: RunsCommand, out: &mut dyn Write) -> Result<(), StoreError> {
    match cmd {
        RunsCommand::List { filter } => {
            let rows = store.list(&filter.to_filter())?;
            if rows.is_empty() {
                writeln!(
                    out,
                    "no stored runs match (store: {})",
                    terminal::field(&store.path().display().to_string())
                )?;
            } else {
                let width = crate::grid::terminal_width();
                out.write_all(crate::grid::fit(&list_table(&rows), width).as_bytes())?;
            }
        }
        RunsCommand::Show {
            id,
            json,
            environment,
            html,
            format,
        } => {
            let run = store.get(id)?;
            let shown = if format == Some(ShowFormat::FioJson) {
                Shown::FioJson
            } else if let Some(path) = html {
                Shown::Html(path)
            } else if json {
                Shown::Json
            } else if environment {
                Shown::Environment
            } else {
                Shown::Text
            };
            show(&run, shown, out)?;
        }
        RunsCommand::Delete { ids } => {
            // All or nothing: a mistyped id deletes nothing.
            for &id in &ids {
                if !store.contains(id)? {
                    return Err(StoreError::NoSuchRun {
                        path: store.path().to_path_buf(),
                        id,
                    });
                }
            }
            let n = store.delete(&ids)?;
            writeln!(out, "deleted {n} run{}", if n == 1 { "" } else { "s" })?;
        }
        RunsCommand::Export {
            format,
            metrics,
            long,
            filter,
        } => export_runs(store, format, metrics, long, &filter, out)?,
        RunsCommand::Tag { id, tags } => {
            store.add_tags(id, &tags)?;
            let row = store.get(id)?.row;
            writeln!(out, "run {id} tags: {}", row.tags.join(" "))?;
        }
        RunsCommand::Note { id, text } => {
            let note = text.join(" ");
            store.set_note(id, &note)?;
            if note.trim().is_empty() {
                writeln!(out, "run {id} note cleared")?;
            } else {
                writeln!(out, "run {id} note set")?;
            }
        }
    }
    Ok(())
}

/// How `dbio runs show` shows a run.
enum Shown {
    /// fio's JSON (`--format fio-json`).
    FioJson,
    /// The run's page, written to this file (`--html FILE`).
    Html(std::path::PathBuf),
    /// The run document (`--json`).
    Json,
    /// The host it ran on (`--environment`).
    Environment,
    /// The terminal report and what the store adds under it.
    Text,
}

/// `dbio runs show`: one stored run as asked.
fn show(
    run: &crate::store::StoredRun,
    shown: Shown,
    out: &mut dyn Write,
) -> Result<(), StoreError> {
    match shown {
        Shown::FioJson => FioJson.write(run, out)?,
        Shown::Html(path) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let mut page = Vec::new();
            let html = Html {
                generated: fmt_utc(now),
            };
            html.write(run, &mut page)?;
            std::fs::write(&path, page).map_err(|e| StoreError::Output {
                source: std::io::Error::new(e.kind(), format!("{}: {e}", path.display())),
            })?;
            writeln!(
                out,
                "wrote {}",
                terminal::field(&path.display().to_string())
            )?;
        }
        Shown::Json => Json.write(run, out)?,
        Shown::Environment => {
            let text =
                serde_json::to_string_pretty(&run.environment).expect("JSON values serialize");
            writeln!(out, "{text}")?;
        }
        Shown::Text => {
            let mut text = Vec::new();
            Text.write(run, &mut text)?;
            text.extend_from_slice(show_footer(&run.row).as_bytes());
            let width = crate::grid::terminal_width();
            let text = crate::grid::fit(&String::from_utf8_lossy(&text), width);
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

/// `dbio runs export`: the selected runs in `format`, refused when a
/// `--metrics` pattern matches nothing stored with them.
fn export_runs(
    store: &Store,
    format: crate::report::export::runs::Format,
    metrics: Vec<String>,
    long: bool,
    filter: &FilterArgs,
    out: &mut dyn Write,
) -> Result<(), StoreError> {
    let rows = store.list(&filter.to_filter())?;
    let sel = export::Selection {
        patterns: metrics,
        long,
    };
    let mut stored = std::collections::BTreeMap::new();
    if long || !sel.patterns.is_empty() {
        for r in &rows {
            stored.insert(r.id, store.metrics(r.id)?);
        }
    }
    let none = export::unmatched(&sel, &stored);
    if !rows.is_empty() && !none.is_empty() {
        return Err(StoreError::Selection {
            msg: format!(
                "--metrics {} matches no metric stored with the {} run{} selected; `dbio runs export --long` lists them",
                none.join(","),
                rows.len(),
                if rows.len() == 1 { "" } else { "s" }
            ),
        });
    }
    export::write(format, &rows, &sel, &stored, out)?;
    Ok(())
}

/// What the store adds under a shown report: plan, tags and note (nothing
/// when the run has none of them).
fn show_footer(r: &RunRow) -> String {
    let f = |s: &str| terminal::field(s).into_owned();
    let mut lines = String::new();
    let mut stored = Vec::new();
    if let Some(plan) = &r.plan {
        stored.push(format!("plan {}", f(plan)));
    }
    if let Some(v) = &r.variable {
        stored.push(format!("variable {}", f(v)));
    }
    if let Some(c) = &r.cell_key {
        stored.push(format!("cell {}", f(c)));
    }
    if r.warmup {
        stored.push("warmup".to_string());
    }
    if !r.tags.is_empty() {
        stored.push(format!("tags {}", r.tags.join(" ")));
    }
    if !stored.is_empty() {
        lines += &format!("stored   run {}: {}\n", r.id, stored.join(", "));
    }
    if let Some(note) = &r.note {
        lines += &format!("note     {}\n", f(note));
    }
    if let Some(file) = &r.source_file {
        let model = r
            .model
            .as_deref()
            .map(|m| format!(" (model {m} given at import)"))
            .unwrap_or_default();
        lines += &format!("imported from {} output {}{model}\n", r.source, f(file));
    }
    lines
}

/// The IOPS `list` shows: `total.iops`, or for a run imported from
/// awr_info.sh (which has none) AWR's physical read + write requests per
/// second.
fn list_iops(r: &RunRow) -> Option<f64> {
    let m = &r.metrics;
    m.total_iops.or(
        match (m.db_physical_reads_per_s, m.db_physical_writes_per_s) {
            (None, None) => None,
            (rd, wr) if r.source == "awr-info" => Some(rd.unwrap_or(0.0) + wr.unwrap_or(0.0)),
            _ => None,
        },
    )
}

/// The `list` table: one line per run, columns padded to fit.
pub fn list_table(rows: &[RunRow]) -> String {
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_string());
    let header = [
        "id",
        "started",
        "status",
        "workload",
        "sessions",
        "bs",
        "engine/io",
        "target",
        "plan/variable",
        "tags",
        "IOPS",
        "p99 ms",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
    for r in rows {
        let status = if r.warmup {
            format!("{} (warmup)", r.status)
        } else {
            r.status.clone()
        };
        let plan = match (&r.plan, &r.variable) {
            (None, None) => "-".to_string(),
            (p, v) => format!("{}/{}", dash(p), dash(v)),
        };
        let tags = if r.tags.is_empty() {
            "-".to_string()
        } else {
            r.tags.join(",")
        };
        table.push(vec![
            r.id.to_string(),
            fmt_utc(r.started_unix_ms),
            status,
            if r.source == "dbio" {
                format!("{} {}", dash(&r.workload), dash(&r.pattern))
            } else {
                format!("{}:{} {}", r.source, dash(&r.workload), dash(&r.pattern))
            },
            r.sessions.map_or("-".into(), |s| s.to_string()),
            r.block_size
                .map_or("-".into(), |b| fmt_size(b.max(0) as u64).replace(' ', "")),
            format!("{}/{}", dash(&r.engine), dash(&r.io_mode)),
            dash(&r.target),
            plan,
            tags,
            list_iops(r).map_or("-".into(), fmt_count),
            r.metrics
                .total_p99_us
                .map_or("-".into(), |us| crate::grid::readable(us / 1000.0)),
        ]);
    }
    crate::grid::text(&table, "rlllrrllllrr")
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;
