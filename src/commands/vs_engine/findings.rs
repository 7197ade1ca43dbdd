//! What `--findings DIR` needs from the command: the command line that
//! makes (and resumes) the runs, written out in full so a reader can run
//! it again; each arm's `dbio run` options from the plan; and the files.

use std::path::Path;

use anyhow::Context as _;

use crate::cli::vs_engine::{LayoutArg, VsEngineArgs};
use crate::plan::Plan;
use crate::plan::vs_engine::{Layout, Spec, Storage};
use crate::report::html::run_summary::shell_word;
use crate::report::vs_engine::RunFacts;

/// `dbio lab vs-engine` with every option that shapes the runs, defaults
/// included (not `--format`, `--findings`, `--db` or `--report-only`).
pub fn command_line(a: &VsEngineArgs, spec: &Spec) -> String {
    let mut w: Vec<String> = vec!["dbio".into(), "lab".into(), "vs-engine".into()];
    let mut opt = |name: &str, value: String| {
        w.push(format!("--{name}"));
        w.push(shell_word(&value));
    };
    let list = |v: &[String]| v.join(",");
    opt("name", a.name.clone());
    match &spec.storage {
        Storage::Dir(dir) => opt("target", dir.display().to_string()),
        Storage::Lab {
            fs,
            image_dir,
            image_size,
            ..
        } => {
            opt("fs", fs.name().to_string());
            opt("image-dir", image_dir.display().to_string());
            opt("image-size", image_size.clone());
            if let Some(m) = &a.mount_dir {
                opt("mount-dir", m.display().to_string());
            }
        }
    }
    let flavors: Vec<String> = spec.pairs.iter().map(|p| p.flavor.to_string()).collect();
    opt("flavor", list(&flavors));
    let n: Vec<String> = a.sessions.iter().map(u32::to_string).collect();
    opt("sessions", list(&n));
    let u: Vec<String> = a.update_pct.iter().map(u8::to_string).collect();
    opt("update-pct", list(&u));
    opt("runs", a.runs.to_string());
    if a.warmup > 0 {
        opt("warmup", a.warmup.to_string());
    }
    let layout = match a.layout {
        LayoutArg::Shared => "shared",
        LayoutArg::PerSession => "per-session",
    };
    opt("layout", layout.into());
    opt("time", a.time.clone());
    opt("ramp", a.ramp.clone());
    opt("scale", a.scale.clone());
    opt("cache", a.cache.clone());
    opt("memory", a.memory.clone());
    if let Some(win) = a.window {
        opt("window", win.words());
    }
    opt("cycle-wal", format!("{}M", a.cycle_wal >> 20));
    for kv in &a.set {
        opt("set", kv.clone());
    }
    for kv in &a.arm_set {
        opt("arm-set", kv.clone());
    }
    w.join(" ")
}

/// Refuses findings whose command line and settings would not be the
/// runs' own (`--report-only` with other options than the runs were made
/// with): each stored run's cell, `--time`, `--ramp` and window must be
/// the plan's.
pub fn check_runs_match(spec: &Spec, runs: &[RunFacts]) -> anyhow::Result<()> {
    let secs = |key: &str| {
        spec.shared
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_str())
            .and_then(|v| crate::units::parse_seconds(v).ok())
    };
    let own = |arm: &str, key: &str| {
        spec.per_arm
            .iter()
            .rev()
            .find(|(a, k, _)| a == arm && k == key)
            .and_then(|(_, _, v)| v.as_str().map(str::to_string))
    };
    let window_of = |arm: &str| own(arm, "window");
    for r in runs {
        let what = if !spec.sessions.contains(&r.cell.sessions) {
            Some(format!("--sessions {}", r.cell.sessions))
        } else if !spec.update_pcts.contains(&r.cell.update_pct) {
            Some(format!("--update-pct {}", r.cell.update_pct))
        } else if r.time_s != secs("time") {
            Some(format!("--time {}", r.time_s.unwrap_or(0.0)))
        } else if r.ramp_s != secs("ramp") {
            Some(format!("--ramp {}", r.ramp_s.unwrap_or(0.0)))
        } else if window_of(&r.arm).is_some_and(|w| w != r.window()) {
            Some(format!("--window {} (arm {})", r.window(), r.arm))
        } else {
            cycle_differs(r, &own)
        };
        if let Some(what) = what {
            return Err(super::usage(format!(
                "--findings: run {} of plan {} was made with {what}, which these options do not give; give the options the runs were made with, so the findings' command line and settings are theirs",
                r.id, spec.name
            )));
        }
    }
    Ok(())
}

/// The cycle's setting of a run where it is not the plan's: the model's
/// redo file size, PostgreSQL's `max_wal_size` (`--cycle-wal`).
fn cycle_differs(r: &RunFacts, own: &dyn Fn(&str, &str) -> Option<String>) -> Option<String> {
    if let (Some(want), Some(have)) = (own(&r.arm, "redo_file_size"), r.redo_file_size)
        && crate::units::parse_size(&want).ok() != Some(have)
    {
        return Some(format!(
            "redo files of {} (arm {}; --cycle-wal)",
            crate::units::fmt_size(have),
            r.arm
        ));
    }
    let want = own(&r.arm, "pg_set")?;
    let want = want.strip_prefix("max_wal_size=")?;
    let have = r.departure("max_wal_size").unwrap_or("dbio's own");
    (have != want).then(|| format!("max_wal_size {have} (arm {}; --cycle-wal)", r.arm))
}

/// Each arm's `dbio run` options, from its first run in the plan, without
/// what differs run to run (the target, sessions, update percentage).
pub fn arm_options(plan: &Plan, layout: Layout) -> Vec<(String, String)> {
    let swept = match layout {
        Layout::Shared => "--threads-per-schema",
        Layout::PerSession => "--schemas",
    };
    let drop = ["--target", "--update-pct", swept];
    plan.arms
        .iter()
        .filter_map(|arm| {
            let run = plan.runs.iter().find(|r| &r.variable == arm)?;
            let mut words = Vec::new();
            let mut args = run.args.iter();
            while let Some(a) = args.next() {
                if drop.contains(&a.as_str()) {
                    args.next();
                    continue;
                }
                words.push(shell_word(a));
            }
            Some((arm.clone(), words.join(" ")))
        })
        .collect()
}

/// Writes each pair's findings into `dir` (made if missing), saying which.
pub fn write_findings(dir: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    if files.is_empty() {
        eprintln!("dbio lab vs-engine: no findings written: no cell has both sides' runs");
        return Ok(());
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot make --findings {}", crate::terminal::path(dir)))?;
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .with_context(|| format!("cannot write {}", crate::terminal::path(&path)))?;
        eprintln!("findings: {}", crate::terminal::path(&path));
    }
    Ok(())
}
