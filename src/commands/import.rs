//! `dbio import awr-info FILE` and `dbio import fio FILE`: read another
//! tool's output, turn it into runs and save them all in one transaction
//! (docs/import.md). A malformed file is refused with one line naming the
//! line and field; nothing of it is stored. `dbio import run FILE`: a run
//! dbio kept in a side file when the store could not take it
//! (`store::unsaved`).

use crate::cli::import::{AwrInfoArgs, FioArgs, ImportCommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::CommandError;
use crate::analysis::models::Facts;
use crate::import::{ImportError, awr_info, awr_runs, fio, fio_runs, naming};
use crate::store::{ImportedRun, Store, unsaved};

/// Runs one `dbio import` subcommand.
pub fn execute(cmd: ImportCommand, store: &mut Store, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        ImportCommand::AwrInfo(a) => import_tool(&Tool::AwrInfo(a), store, out),
        ImportCommand::Fio(a) => import_tool(&Tool::Fio(a), store, out),
        ImportCommand::Run(a) => import_kept(&a.files, store, out),
    }
}

/// Another tool's output.
enum Tool {
    AwrInfo(AwrInfoArgs),
    Fio(FioArgs),
}

/// Imports one file of another tool's output in one transaction.
fn import_tool(cmd: &Tool, store: &mut Store, out: &mut dyn Write) -> anyhow::Result<()> {
    let (common, source) = match cmd {
        Tool::AwrInfo(a) => (&a.common, "awr-info"),
        Tool::Fio(a) => (&a.common, "fio"),
    };
    for t in &common.tags {
        crate::store::validate_tag(t).map_err(|e| CommandError::Usage(e.to_string()))?;
    }
    let (text, path, mtime_ms) = read(&common.file)?;
    let shown = common.file.display().to_string();
    let bad = |e: ImportError| CommandError::Usage(format!("{shown}: {e}"));
    let mut warnings = Vec::new();
    let runs = match cmd {
        Tool::AwrInfo(a) => {
            let variable_regex = a
                .variable_regex
                .as_deref()
                .map(naming::compile)
                .transpose()
                .map_err(|e| CommandError::Usage(e.to_string()))?;
            // Rows with errors are reported together with the importer's own.
            let parsed = awr_info::parse_all(&text).map_err(bad)?;
            for col in &parsed.ignored {
                warnings.push(format!(
                    "column {col:?} is not an awr_info.sh column dbio knows; ignored"
                ));
            }
            let opts = awr_runs::Options {
                variable_regex,
                plan: common.plan.clone(),
                model: a.model,
                tags: common.tags.clone(),
            };
            awr_runs::runs(&parsed, &opts, &path, mtime_ms, &mut warnings).map_err(bad)?
        }
        Tool::Fio(a) => {
            let parsed = fio::parse(&text).map_err(bad)?;
            let opts = fio_runs::Options {
                plan: common.plan.clone(),
                variable: a.variable.clone(),
                tags: common.tags.clone(),
            };
            fio_runs::runs(&parsed, &opts, &path, mtime_ms, &mut warnings).map_err(bad)?
        }
    };
    for w in &warnings {
        eprintln!(
            "warning: {}",
            crate::terminal::line(&format!("{shown}: {w}"))
        );
    }
    if common.dry_run {
        out.write_all(crate::terminal::text(&summary(&runs)).as_bytes())
            .map_err(io)?;
        writeln!(out, "dry run: nothing stored").map_err(io)?;
        return Ok(());
    }
    let before = store.imported_from(source, &path)?;
    if !before.is_empty() && !common.again {
        anyhow::bail!(CommandError::Usage(format!(
            "{shown} was imported already (runs {}); delete them with `dbio runs delete {}` or pass --again to import it once more",
            id_ranges(&before),
            before
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        )));
    }
    let ids = store.save_imports(&runs)?;
    // Variables come from file names and --variable: shown escaped.
    out.write_all(crate::terminal::text(&summary(&runs)).as_bytes())
        .map_err(io)?;
    writeln!(
        out,
        "imported {} run{} from {} as runs {} into {}",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        crate::terminal::field(&shown),
        id_ranges(&ids),
        crate::terminal::field(&store.path().display().to_string())
    )
    .map_err(io)?;
    Ok(())
}

/// `dbio import run FILE...`: every file is read before anything is saved;
/// each run is saved in its own transaction and its file removed after.
fn import_kept(files: &[PathBuf], store: &mut Store, out: &mut dyn Write) -> anyhow::Result<()> {
    let runs = files
        .iter()
        .map(|f| unsaved::read(f).map_err(|e| CommandError::Usage(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    for (file, run) in files.iter().zip(&runs) {
        let (id, how) = match store.save_unsaved(run)? {
            unsaved::Saved::New(id) => (id, "saved"),
            unsaved::Saved::Already(id) => (id, "was stored already"),
        };
        std::fs::remove_file(file)
            .with_context(|| format!("run {id} is stored; removing {}", file.display()))?;
        unsaved::remove_dir_if_empty(file);
        let line = format!(
            "{} (measured for {}, not saved at {}): {how} as run {id} in {}; file removed",
            file.display(),
            run.store.display(),
            crate::store::fmt_utc(run.saved_unix_ms),
            store.path().display()
        );
        writeln!(out, "{}", crate::terminal::field(&line)).map_err(io)?;
    }
    Ok(())
}

fn io(e: std::io::Error) -> CommandError {
    super::output::write_error(e)
}

/// The file's text, its absolute path and its modification time (ms).
fn read(file: &Path) -> anyhow::Result<(String, String, i64)> {
    let usage =
        |what: String| CommandError::Usage(format!("cannot read {}: {what}", file.display()));
    let bytes = std::fs::read(file).map_err(|e| usage(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        CommandError::Usage(format!(
            "{}: line {line}: not UTF-8 text (byte {at}); is this the right file?",
            file.display()
        ))
    })?;
    let path = std::fs::canonicalize(file)
        .unwrap_or_else(|_| file.to_path_buf())
        .display()
        .to_string();
    let mtime_ms = std::fs::metadata(file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    Ok((text, path, mtime_ms))
}

/// `3-7, 9` for ids 3, 4, 5, 6, 7, 9.
fn id_ranges(ids: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            ids[i].to_string()
        } else {
            format!("{}-{}", ids[i], ids[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// Per variable: session counts with their runs, and the models the runs
/// fall into.
fn summary(runs: &[ImportedRun]) -> String {
    type Counts = (BTreeMap<i64, usize>, BTreeMap<&'static str, usize>);
    let mut by_var: BTreeMap<&str, Counts> = BTreeMap::new();
    for r in runs {
        let e = by_var
            .entry(r.row.variable.as_deref().unwrap_or("-"))
            .or_default();
        *e.0.entry(r.row.sessions.unwrap_or(0)).or_default() += 1;
        let facts = Facts {
            model: r.row.model.as_deref(),
            metrics: &r.metrics,
        };
        let models = facts.models();
        if models.is_empty() {
            *e.1.entry("no model").or_default() += 1;
        }
        for m in models {
            let name = match m {
                crate::analysis::models::Model::Reads => "reads",
                crate::analysis::models::Model::Redo => "redo",
                _ => "writes",
            };
            *e.1.entry(name).or_default() += 1;
        }
    }
    let mut o = String::new();
    for (var, (sessions, models)) in by_var {
        let s: Vec<String> = sessions
            .iter()
            .map(|(s, n)| format!("{s} sessions x{n}"))
            .collect();
        let m: Vec<String> = models.iter().map(|(m, n)| format!("{m} {n}")).collect();
        o += &format!("{var}: {}; models: {}\n", s.join(", "), m.join(", "));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_ranges_are_compact() {
        assert_eq!(id_ranges(&[3, 4, 5, 6, 7, 9]), "3-7, 9");
        assert_eq!(id_ranges(&[1]), "1");
        assert_eq!(id_ranges(&[]), "");
    }
}
