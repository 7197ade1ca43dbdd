//! One arm of a lab: its device (a new image with a loop device over it,
//! or the named device), scheduler, mkfs and mount, what the runs record
//! about it (tags, the report line, the environment), and how `--dry-run`
//! describes the arms.

use std::collections::HashMap;
use std::path::PathBuf;

use super::LabError;
use super::LabInfo;
use super::backing::{self, Backing};
use super::fs::{self, ToolVersion};
use super::state::State;
use crate::plan::lab::slug;
use crate::plan::{self, FsKind, LabArm, LabSpec, Plan};

/// An arm ready for runs.
pub(crate) struct Built {
    pub device: PathBuf,
    pub info: LabInfo,
    pub tags: Vec<String>,
}

/// Each filesystem's mkfs tool version, asked once.
pub(crate) fn versions(arms: &[&LabArm]) -> Result<HashMap<FsKind, ToolVersion>, LabError> {
    let mut out = HashMap::new();
    for a in arms {
        if a.fs != FsKind::None && !out.contains_key(&a.fs) {
            out.insert(a.fs, fs::tool_version(a.fs)?);
        }
    }
    Ok(out)
}

/// The device for arm `index` (or for all arms): a new image and its loop
/// device, or the named device.
pub(crate) fn make_backing(
    state: &mut State,
    plan: &Plan,
    lab: &LabSpec,
    index: usize,
    name: &str,
) -> Result<Backing, LabError> {
    match &lab.backing {
        plan::Backing::Images {
            dir,
            size,
            direct_io,
        } => {
            let file = format!(
                "dbio-lab-{}-{name}-{}.img",
                slug(&plan.name),
                std::process::id()
            );
            backing::loop_over_new_image(state, &dir.join(file), *size, *direct_io)
        }
        plan::Backing::Devices { devices } => backing::named(
            &devices[if lab.same_device { 0 } else { index }],
            "destroy_devices",
        ),
    }
}

/// Scheduler, mkfs and mount for one arm on `dev`; with `discard_first`,
/// the whole device is discarded before (a device used before this arm).
pub(crate) fn build_arm(
    state: &mut State,
    lab: &LabSpec,
    arm: &LabArm,
    dev: &Backing,
    versions: &HashMap<FsKind, ToolVersion>,
    discard_first: bool,
) -> Result<Built, LabError> {
    let discarded = if discard_first {
        let d = backing::discard_all(&dev.device)?;
        match d {
            Some(s) => eprintln!("lab: discarded all of {} in {s:.1} s", dev.device.display()),
            None => eprintln!(
                "lab: {} takes no discards: arm {} starts on what the arm before left",
                dev.device.display(),
                arm.name
            ),
        }
        Some(d)
    } else {
        None
    };
    if let Some(s) = &arm.scheduler {
        backing::set_scheduler(state, &dev.device, s)?;
    }
    let scheduler = backing::schedulers(&dev.device).ok().and_then(|(_, a)| a);
    let mut tags = vec!["lab".to_string(), format!("fs={}", arm.fs.name())];
    let mut detail = serde_json::json!({
        "arm": arm.name,
        "fs": arm.fs.name(),
        "device": dev.to_json(),
        "same_device": lab.same_device,
        "scheduler": scheduler,
        "discarded_s": discarded.flatten(),
    });
    let mut summary = format!("{}: ", arm.name);
    if let Some(v) = versions.get(&arm.fs) {
        let made = fs::mkfs(arm.fs, &arm.mkfs_options, &dev.device)?;
        let point = fs::make_dirs(state, &arm.mountpoint)?;
        fs::mount(
            state,
            arm.fs,
            &dev.device,
            &point,
            arm.mount_options.as_deref(),
        )?;
        detail["mkfs"] = serde_json::json!({
            "command": made.command,
            "options": arm.mkfs_options,
            "seconds": made.seconds,
            "tool": v.tool,
            "version": v.version,
            "version_line": v.line,
        });
        detail["mount"] = serde_json::json!({
            "point": point,
            "options": arm.mount_options,
        });
        let tag = format!("{}={}", v.tool, v.version);
        if crate::store::validate_tag(&tag).is_ok() {
            tags.push(tag);
        }
        summary.push_str(&format!(
            "{} by {} {} (`{}`), mounted{} on {}",
            arm.fs.name(),
            v.tool,
            v.version,
            made.command,
            arm.mount_options
                .as_deref()
                .map(|o| format!(" -o {o}"))
                .unwrap_or_default(),
            point.display()
        ));
    } else {
        summary.push_str("raw device");
    }
    summary.push_str(&format!(
        "; {}{}",
        dev.describe(),
        scheduler
            .map(|s| format!(", scheduler {s}"))
            .unwrap_or_default()
    ));
    if let Some(s) = discarded.flatten() {
        summary.push_str(&format!("; discarded before the arm ({s:.1} s)"));
    }
    Ok(Built {
        device: dev.device.clone(),
        info: LabInfo { summary, detail },
        tags,
    })
}

/// What `--dry-run` shows before the run list: the arms and their storage.
pub(crate) fn describe(lab: &LabSpec, pending: &[&LabArm]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let backing = match &lab.backing {
        plan::Backing::Images {
            dir,
            size,
            direct_io,
        } => format!(
            "loop devices (direct-io {}) over {} image(s) of {} in {}",
            if *direct_io { "on" } else { "off" },
            lab.devices_needed(),
            crate::units::fmt_size(*size),
            dir.display()
        ),
        plan::Backing::Devices { devices } => format!(
            "the named device(s) {} (their contents are destroyed)",
            devices
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let how = match (lab.same_device, lab.discard) {
        (true, true) => "one device discarded and re-made between arms",
        (true, false) => "one device re-made between arms (no discard: discard = false)",
        (false, _) => "one device per arm",
    };
    let _ = writeln!(out, "lab: {} arm(s) on {backing}; {how}", lab.arms.len());
    for a in &lab.arms {
        let what = match a.fs.mkfs_tool() {
            Some(tool) => {
                let mut args: Vec<&str> = a.fs.force_flags().to_vec();
                args.extend(a.mkfs_options.iter().map(String::as_str));
                let mut s = format!("{tool} {} DEVICE; mount", args.join(" "));
                if let Some(o) = &a.mount_options {
                    s.push_str(&format!(" -o {o}"));
                }
                format!("{s} on {}", a.mountpoint.display())
            }
            None => "the raw device".to_string(),
        };
        let sched = a
            .scheduler
            .as_deref()
            .map(|s| format!("; scheduler {s}"))
            .unwrap_or_default();
        let restore = match a.restore {
            true => "; its data loaded once, kept and restored before each run",
            false => "",
        };
        let state = if pending.iter().any(|p| p.name == a.name) {
            ""
        } else {
            " (all runs done: not built)"
        };
        let _ = writeln!(
            out,
            "  {:<10} {:<6} {what}{sched}{restore}{state}",
            a.name,
            a.fs.name()
        );
    }
    out
}
