//! `dbio verify --target T`: reads every block of a target dbio laid out (a
//! directory with its manifest, or a block device dbio wrote), names every
//! damaged block's class (docs/verify.md), checks blocks against the lost
//! write map when the target keeps one (and says so when it does not),
//! tells blocks an interrupted run was writing from damage, names files
//! missing or cut short, saves the findings as a run (workload `verify`)
//! and exits 1 when anything is wrong.

use crate::cli::verify::VerifyArgs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::json;

use super::CommandError;
use crate::storage::block::{SECTOR, claimed_size};
use crate::storage::lock::TargetLock;
use crate::storage::manifest::Manifest;
use crate::storage::{device, genmap_file};
use crate::store::unsaved::Unsaved;
use crate::store::{ImportedRun, RunRow, Store};
use crate::terminal;
use crate::verify::classify::CLASSES;
use crate::verify::findings::{Findings, missing_text, render};
use crate::verify::interrupted::{Interruption, Known};
use crate::verify::scan::{Layout, ScanStats, scan};

/// What was verified, and how.
struct Subject {
    layout: Layout,
    /// Why there is no map (none: the map was used).
    map: Result<genmap_file::MapInfo, NoMap>,
    /// What is known of writes in flight at an interruption.
    known: Known,
    _lock: TargetLock,
}

/// Why a target is verified without its lost-write map.
#[derive(Debug, thiserror::Error)]
enum NoMap {
    #[error("a block device target keeps no lost-write map")]
    Device,
    #[error(
        "there is no {} in the target: dbio leaves a note there whenever it stops keeping one, so it was deleted, or the layout was made by a dbio that kept no maps",
        genmap_file::MAP_NAME
    )]
    Missing,
    #[error("{0}")]
    Unreadable(#[from] genmap_file::MapError),
}

pub fn execute(
    args: &VerifyArgs,
    open_store: impl FnOnce(Option<PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<ExitCode> {
    // Its findings and saved run name the target as text.
    crate::options::utf8_path("--target", &args.target)
        .map_err(|e| CommandError::Usage(e.to_string()))?;
    if let Some(db) = &args.db {
        crate::options::utf8_path("--db", db).map_err(|e| CommandError::Usage(e.to_string()))?;
    }
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
        "lost_writes_checked": subject.map.is_ok(),
        "interrupted": subject.known,
        "read": stats,
        "findings": findings,
    });
    super::output::print_anyway(&if args.json {
        serde_json::to_string_pretty(&doc).expect("findings serialize") + "\n"
    } else {
        // Paths are escaped in the text already; any other control
        // character in it too.
        terminal::text(&text).into_owned()
    });
    let damaged = findings.damaged();
    let missing = findings.missing.blocks;
    let run = imported_run(args, &subject, &findings, &stats, doc, text, started);
    let id = save_or_keep(&mut store, &run)?;
    if !args.quiet && !args.json {
        eprintln!("saved as run {id} in {}", terminal::path(store.path()));
    }
    if damaged > 0 {
        let classes: Vec<String> = CLASSES
            .iter()
            .filter(|&&c| findings.tally(c).count > 0)
            .map(|&c| format!("{} {}", findings.tally(c).count, c.name()))
            .collect();
        let and_missing = if missing > 0 {
            format!("; {missing} blocks missing")
        } else {
            String::new()
        };
        anyhow::bail!(CommandError::Failed(format!(
            "{damaged} damaged blocks in {}: {}{and_missing}",
            args.target.display(),
            classes.join(", ")
        )));
    }
    if missing > 0 {
        let first = missing_text(&findings.missing.files[0], &subject.layout.files);
        let more = findings.missing.files.len() - 1;
        let more = if more > 0 {
            format!(" (and {more} more files)")
        } else {
            String::new()
        };
        anyhow::bail!(CommandError::Failed(format!(
            "{missing} blocks missing in {}: {first}{more}",
            args.target.display()
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
                interrupted: Interruption::default(),
            },
            map: Err(NoMap::Device),
            known: Known::Nothing,
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
    let (floors, map, (interrupted, known)) = match genmap_file::load(target, m.target_id, blocks) {
        Ok(Some(loaded)) => {
            let i = Interruption::of(target, m.target_id, &loaded);
            (Some(loaded.floors), Ok(loaded.info), i)
        }
        Ok(None) => (None, Err(NoMap::Missing), Default::default()),
        Err(e) => (None, Err(e.into()), Default::default()),
    };
    let (interrupted, known) = interrupted.with_slob_mark(target, known);
    Ok(Subject {
        layout: Layout {
            files: m.file_paths(target),
            file_size: m.file_size,
            block_size: m.block_size,
            target_id: m.target_id,
            floors,
            interrupted,
        },
        map,
        known,
        _lock: lock,
    })
}

fn text(target: &Path, s: &Subject, f: &Findings, stats: &ScanStats) -> String {
    use crate::units::fmt_size;
    let mut out = format!(
        "verify   {} ({} files of {} in {} blocks)\n",
        terminal::path(target),
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
    out.push_str(&map_line(s, f));
    out.push_str(&render(f, &s.layout.files, s.known.torn_text()));
    out.push_str(&result_line(s, f));
    out
}

/// What the map says, and what is known of an interrupted run.
fn map_line(s: &Subject, f: &Findings) -> String {
    let m = match &s.map {
        Err(why) => {
            return format!(
                "map      none: {why}; lost writes were not checked\n{}",
                known_line(&s.known)
            );
        }
        Ok(m) => m,
    };
    let state = if m.clean {
        "the last run ended cleanly".to_string()
    } else {
        "the last run was interrupted before its final sync point".to_string()
    };
    let newer = if f.newer_than_map > 0 {
        format!("; {} blocks newer than the map (fine)", f.newer_than_map)
    } else {
        String::new()
    };
    format!(
        "map      generations as of sync point {} ({state}){newer}\n{}",
        m.sync_points,
        known_line(&s.known)
    )
}

/// What is known of writes in flight at an interruption: a line, or none.
fn known_line(known: &Known) -> String {
    match known {
        Known::Nothing => String::new(),
        Known::Writes { count } => format!(
            "inflight {count} writes may have been in flight when a run was interrupted: their blocks may be torn or stale (not damage)\n"
        ),
        Known::Blind { why } => format!(
            "inflight not known ({why}): any torn block written since its last sync point counts as interrupted, not damage\n"
        ),
        Known::Slob { why } => format!(
            "inflight not known ({why}): any torn block counts as that run's interruption, not damage\n"
        ),
    }
}

/// The verdict, saying what was not checked.
fn result_line(s: &Subject, f: &Findings) -> String {
    if f.failed() {
        return "result   DAMAGED\n".into();
    }
    let (torn, stale) = (f.in_flight.torn.count, f.in_flight.stale.count);
    match (&s.map, torn + stale) {
        (Ok(_), 0) => "result   clean: every block is the block dbio last wrote there\n".into(),
        (Ok(_), _) => format!(
            "result   clean: no damage; {torn} blocks torn and {stale} stale by writes in flight when a run was interrupted, every other block is the block dbio last wrote there\n"
        ),
        (Err(why), 0) => format!(
            "result   no damage found in stamps, places and tearing; lost writes were not checked ({why})\n"
        ),
        (Err(why), _) => format!(
            "result   no damage found in stamps, places and tearing; {}; lost writes were not checked ({why})\n",
            match s.known {
                // A SLOB run's blocks have no floor to be stale against.
                Known::Slob { .. } => format!(
                    "{torn} blocks torn by the SLOB run writing them, which was interrupted"
                ),
                _ => format!(
                    "{torn} blocks torn and {stale} stale by writes in flight when a run was interrupted"
                ),
            }
        ),
    }
}

fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Saves the verify run in `store`; a run the store cannot take is kept
/// whole in a side file that the error line names, for `dbio import run`.
fn save_or_keep(store: &mut Store, run: &ImportedRun) -> Result<i64, CommandError> {
    match store.save_imports(std::slice::from_ref(run)) {
        Ok(ids) => Ok(ids[0]),
        Err(e) => Err(super::run::kept_or_lost(
            "the target was verified",
            &e,
            &Unsaved::of_import(store.path(), run, &e),
        )),
    }
}

/// The verify run as the store keeps it: its columns and metrics.
fn imported_run(
    args: &VerifyArgs,
    s: &Subject,
    f: &Findings,
    stats: &ScanStats,
    doc: serde_json::Value,
    text: String,
    started: i64,
) -> ImportedRun {
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
    metrics.extend([
        (
            "verify.in_flight_torn".to_string(),
            f.in_flight.torn.count as f64,
        ),
        (
            "verify.in_flight_stale".to_string(),
            f.in_flight.stale.count as f64,
        ),
        ("verify.missing".to_string(), f.missing.blocks as f64),
        (
            "verify.lost_writes_checked".to_string(),
            f64::from(u8::from(s.map.is_ok())),
        ),
    ]);
    let target = std::path::absolute(&args.target).unwrap_or_else(|_| args.target.clone());
    ImportedRun {
        row: RunRow {
            started_unix_ms: started,
            ended_unix_ms: Some(now_unix_ms()),
            status: if !f.failed() { "completed" } else { "failed" }.into(),
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
    }
}
