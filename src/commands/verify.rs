//! `dbio verify --target T`: reads every block of a target dbio laid out (a
//! directory with its manifest, or a block device dbio wrote), names every
//! damaged block's class (docs/verify.md), checks blocks against the lost
//! write map when the target keeps one, saves the findings as a run
//! (workload `verify`) and exits 1 when anything is wrong.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::CommandError;
use crate::storage::block::{SECTOR, claimed_size};
use crate::storage::lock::TargetLock;
use crate::storage::manifest::Manifest;
use crate::storage::{device, genmap_file};
use crate::store::{ImportedRun, RunRow, Store};
use crate::verify::classify::CLASSES;
use crate::verify::findings::{Findings, render};
use crate::verify::scan::{Layout, ScanStats, scan};

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A directory dbio laid out, or a block device dbio wrote.
    #[arg(long, default_value = crate::cli::DEFAULT_TARGET)]
    pub target: PathBuf,
    /// The findings as JSON on stdout (schema `dbio.verify.v1`).
    #[arg(long)]
    pub json: bool,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
    /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}

/// What was verified, and how.
struct Subject {
    layout: Layout,
    /// Why there is no map (none: the map was used).
    map: Result<genmap_file::MapInfo, NoMap>,
    _lock: TargetLock,
}

/// Why a target is verified without its lost-write map.
#[derive(Debug, thiserror::Error)]
enum NoMap {
    #[error("a device keeps no map")]
    Device,
    #[error("this layout keeps none: the SLOB model wrote it, or it predates maps")]
    NotKept,
    #[error(transparent)]
    Unreadable(#[from] genmap_file::MapError),
}

pub fn execute(
    args: &VerifyArgs,
    open_store: impl FnOnce(Option<PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<ExitCode> {
    let subject = subject(&args.target)?;
    let mut store = open_store(args.db.clone())?;
    let interrupt = super::interrupt_flag();
    let progress = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let started = now_unix_ms();
    let mut findings = Findings::default();
    let stats =
        scan(&subject.layout, &mut findings, progress, &interrupt).map_err(|e| match e {
            crate::verify::scan::ScanError::Interrupted(_) => {
                CommandError::Interrupted(e.to_string())
            }
            e => CommandError::Failed(e.to_string()),
        })?;
    let text = text(&args.target, &subject, &findings, &stats);
    let doc = json!({
        "schema": "dbio.verify.v1",
        "target": args.target,
        "block_size": subject.layout.block_size,
        "files": subject.layout.files,
        "map": match &subject.map { Ok(m) => json!(m), Err(why) => json!({"none": why.to_string()}) },
        "read": stats,
        "findings": findings,
    });
    super::output::print_anyway(&if args.json {
        serde_json::to_string_pretty(&doc).expect("findings serialize") + "\n"
    } else {
        text.clone()
    });
    let damaged = findings.damaged();
    let id = save(
        &mut store, args, &subject, &findings, &stats, doc, text, started,
    )
    .context("verified but not saved")?;
    if !args.quiet && !args.json {
        eprintln!("saved as run {id} in {}", store.path().display());
    }
    if damaged > 0 {
        let classes: Vec<String> = CLASSES
            .iter()
            .filter(|&&c| findings.tally(c).count > 0)
            .map(|&c| format!("{} {}", findings.tally(c).count, c.name()))
            .collect();
        anyhow::bail!(CommandError::Failed(format!(
            "{damaged} damaged blocks in {}: {}",
            args.target.display(),
            classes.join(", ")
        )));
    }
    Ok(ExitCode::SUCCESS)
}

/// The files, shape and map of a target, under its lock.
fn subject(target: &Path) -> Result<Subject, CommandError> {
    let usage = |e: crate::storage::TargetError| CommandError::Usage(e.to_string());
    if device::is_block_device(target) {
        let lock = TargetLock::device(target).map_err(usage)?;
        let info = device::probe(target).map_err(|e| CommandError::Usage(e.to_string()))?;
        let mut first = vec![0u8; SECTOR];
        let f = std::fs::File::open(target)
            .map_err(|e| CommandError::Failed(format!("cannot read {}: {e}", target.display())))?;
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut first, 0)
            .map_err(|e| CommandError::Failed(format!("cannot read {}: {e}", target.display())))?;
        let bs = claimed_size(&first).ok_or_else(|| {
            CommandError::Usage(format!(
                "{} does not start with a block dbio wrote: nothing to verify (give a device a dbio run wrote, or a directory dbio laid out)",
                target.display()
            ))
        })?;
        return Ok(Subject {
            layout: Layout {
                files: vec![target.to_path_buf()],
                file_size: info.size_bytes / u64::from(bs) * u64::from(bs),
                block_size: bs,
                target_id: 0,
                floors: None,
            },
            map: Err(NoMap::Device),
            _lock: lock,
        });
    }
    let no_layout = || {
        CommandError::Usage(format!(
            "{} has no dbio-manifest.json: nothing dbio laid out is there to verify; give the --target of a dbio run",
            target.display()
        ))
    };
    if !target.is_dir()
        || Manifest::load(target)
            .map_err(|e| CommandError::Usage(e.to_string()))?
            .is_none()
    {
        return Err(no_layout());
    }
    let lock = TargetLock::directory(target).map_err(usage)?;
    let m = Manifest::load(target)
        .map_err(|e| CommandError::Usage(e.to_string()))?
        .ok_or_else(no_layout)?;
    if !m.complete {
        return Err(CommandError::Usage(format!(
            "the layout in {} was never completed (laying out was interrupted); a run lays it out again",
            target.display()
        )));
    }
    let blocks = m.file_size / u64::from(m.block_size) * m.files.len() as u64;
    let (floors, map) = match genmap_file::load(target, m.target_id, blocks) {
        Ok(Some(loaded)) => (Some(loaded.floors), Ok(loaded.info)),
        Ok(None) => (None, Err(NoMap::NotKept)),
        Err(e) => (None, Err(e.into())),
    };
    Ok(Subject {
        layout: Layout {
            files: m.file_paths(target),
            file_size: m.file_size,
            block_size: m.block_size,
            target_id: m.target_id,
            floors,
        },
        map,
        _lock: lock,
    })
}

fn text(target: &Path, s: &Subject, f: &Findings, stats: &ScanStats) -> String {
    use crate::units::fmt_size;
    let mut out = format!(
        "verify   {} ({} files of {} in {} blocks)\n",
        target.display(),
        s.layout.files.len(),
        fmt_size(s.layout.file_size),
        fmt_size(u64::from(s.layout.block_size))
    );
    out.push_str(&format!(
        "read     {} in {:.2} s, {:.0} MiB/s ({}{})\n",
        fmt_size(stats.bytes),
        stats.seconds,
        stats.bytes as f64 / (1 << 20) as f64 / stats.seconds.max(1e-9),
        stats.engine,
        if stats.direct {
            ", O_DIRECT"
        } else {
            ", buffered"
        }
    ));
    out.push_str(&match &s.map {
        Ok(m) => format!(
            "map      generations as of sync point {} ({}){}\n",
            m.sync_points,
            if m.clean { "the last run ended cleanly" } else { "the last run did not reach its final sync point: blocks newer than the map were in flight" },
            if f.newer_than_map > 0 { format!("; {} blocks newer than the map (fine)", f.newer_than_map) } else { String::new() }
        ),
        Err(why) => format!("map      none ({why}): lost writes cannot be told apart\n"),
    });
    out.push_str(&render(f, &s.layout.files));
    out.push_str(if f.damaged() == 0 {
        "result   clean: every block is the block dbio last wrote there\n"
    } else {
        "result   DAMAGED\n"
    });
    out
}

fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[allow(clippy::too_many_arguments)]
fn save(
    store: &mut Store,
    args: &VerifyArgs,
    s: &Subject,
    f: &Findings,
    stats: &ScanStats,
    doc: serde_json::Value,
    text: String,
    started: i64,
) -> Result<i64, crate::store::StoreError> {
    let mut metrics = vec![
        ("verify.blocks".to_string(), f.blocks as f64),
        ("verify.damaged".to_string(), f.damaged() as f64),
        ("verify.newer_than_map".to_string(), f.newer_than_map as f64),
        (
            "verify.mib_per_s".to_string(),
            stats.bytes as f64 / 1048576.0 / stats.seconds.max(1e-9),
        ),
    ];
    for c in CLASSES {
        metrics.push((format!("verify.{}", c.name()), f.tally(c).count as f64));
    }
    let target = std::path::absolute(&args.target).unwrap_or_else(|_| args.target.clone());
    let run = ImportedRun {
        row: RunRow {
            started_unix_ms: started,
            ended_unix_ms: Some(now_unix_ms()),
            status: if f.damaged() == 0 {
                "completed"
            } else {
                "failed"
            }
            .into(),
            workload: Some("verify".into()),
            pattern: Some("seqread".into()),
            sessions: Some(1),
            block_size: Some(i64::from(s.layout.block_size)),
            engine: Some(stats.engine.into()),
            io_mode: Some(if stats.direct { "direct" } else { "buffered" }.into()),
            target: Some(target.display().to_string()),
            source: "dbio".into(),
            ..Default::default()
        },
        metrics,
        histograms: Vec::new(),
        report: doc,
        report_text: text,
        environment: json!({ "host": crate::environment::Environment::capture() }),
    };
    Ok(store.save_imports(&[run])?[0])
}
