//! Reading the `[lab]` section of a plan into a [`LabSpec`] and the plan
//! arms it stands for; every mistake is `FILE:LINE: [lab...] key: message`.

use std::path::PathBuf;

use toml::de::{DeTable, DeValue};

use super::PlanError;
use super::lab::{Backing, DEFAULT_IMAGE_DIR, DEFAULT_IMAGE_SIZE, DEFAULT_SUBDIR, LabSpec, slug};
use super::lab_arm::{finish_arm, lab_arm};
use super::parse::{self, Arm, RawPlan, Src};
use crate::cli::run_options::{self as options, RunOption};
use crate::units::parse_size;

const LAB_KEYS: &[&str] = &[
    "image_dir",
    "image_size",
    "direct_io",
    "devices",
    "destroy_devices",
    "same_device",
    "discard",
    "scheduler",
    "mount_dir",
    "target",
    "arms",
];

/// Reads `[lab]` and returns it with the plan arms it stands for.
pub(super) fn parse(
    src: &Src,
    options: &[RunOption],
    t: &DeTable<'_>,
    line: usize,
    plan_name: &str,
) -> Result<(LabSpec, Vec<Arm>), PlanError> {
    let mut image_dir = None;
    let mut image_size = None;
    let mut direct_io = true;
    let mut devices: Option<(usize, Vec<PathBuf>)> = None;
    let mut destroy: Vec<PathBuf> = Vec::new();
    let mut same_device = false;
    let mut discard = true;
    let mut scheduler = None;
    let mut mount_dir = None;
    let mut subdir = DEFAULT_SUBDIR.to_string();
    let mut arms_table = None;
    for (k, v) in parse::entries(t) {
        let key: &str = k.get_ref();
        let full = format!("[lab] {key}");
        let vline = src.line(v.span().start);
        match key {
            "image_dir" => image_dir = Some(PathBuf::from(parse::string(src, &full, v)?)),
            "image_size" => {
                let s = size_text(src, &full, v)?;
                let n = parse_size(&s).map_err(|m| src.err(vline, &full, m))?;
                if n < 1 << 20 {
                    return Err(src.err(vline, &full, "must be at least 1M"));
                }
                image_size = Some(n);
            }
            "direct_io" => direct_io = boolean(src, &full, v)?,
            "same_device" => same_device = boolean(src, &full, v)?,
            "discard" => discard = boolean(src, &full, v)?,
            "devices" => devices = Some((vline, paths(src, &full, v)?)),
            "destroy_devices" => destroy = paths(src, &full, v)?,
            "scheduler" => scheduler = Some(sched(src, &full, v)?),
            "mount_dir" => mount_dir = Some(PathBuf::from(parse::string(src, &full, v)?)),
            "target" => {
                let s = parse::string(src, &full, v)?;
                if s.is_empty() || s.starts_with('/') || s.split('/').any(|c| c == "..") {
                    return Err(src.err(
                        vline,
                        &full,
                        "must be a relative path under the arm's mount point (e.g. \"dbio-{files}x{bs}\"), without ..",
                    ));
                }
                subdir = s;
            }
            "arms" => arms_table = Some((src.line(k.span().start), parse::table(src, &full, v)?)),
            other => {
                return Err(unknown(
                    src,
                    src.line(k.span().start),
                    &full,
                    other,
                    LAB_KEYS,
                ));
            }
        }
    }
    let backing = match devices {
        Some((dline, devs)) => {
            if image_dir.is_some() || image_size.is_some() {
                return Err(src.err(
                    dline,
                    "[lab] devices",
                    "give either devices (named block devices) or image_dir/image_size (loop devices over images), not both",
                ));
            }
            if devs.is_empty() {
                return Err(src.err(dline, "[lab] devices", "is empty: name a block device"));
            }
            for d in &devs {
                if !destroy.iter().any(|x| x == d) {
                    return Err(src.err(
                        dline,
                        "[lab] devices",
                        format!(
                            "{} is not repeated in destroy_devices: the lab makes a filesystem on it, destroying what it holds; add destroy_devices = [\"{}\"] to allow that",
                            d.display(),
                            d.display()
                        ),
                    ));
                }
            }
            Backing::Devices { devices: devs }
        }
        None => Backing::Images {
            dir: image_dir.unwrap_or_else(|| PathBuf::from(DEFAULT_IMAGE_DIR)),
            size: image_size.unwrap_or(DEFAULT_IMAGE_SIZE),
            direct_io,
        },
    };
    let Some((arms_line, arms_t)) = arms_table else {
        return Err(src.err(
            line,
            "[lab]",
            "has no arms: add [lab.arms] with e.g. XFS = { fs = \"xfs\" } and EXT4 = { fs = \"ext4\" }",
        ));
    };
    let mount_dir = mount_dir.unwrap_or_else(|| {
        crate::lab::state::lab_dir()
            .join("mnt")
            .join(slug(plan_name))
    });
    let mut arms = Vec::new();
    let mut plan_arms = Vec::new();
    for (k, v) in parse::entries(arms_t) {
        let (arm, plan_arm) = lab_arm(src, options, k.get_ref(), k.span().start, v, &mount_dir)?;
        let plan_arm = finish_arm(plan_arm, &arm, &subdir);
        arms.push(arm);
        plan_arms.push(plan_arm);
    }
    if arms.is_empty() {
        return Err(src.err(
            arms_line,
            "[lab.arms]",
            "is empty: add an arm, e.g. XFS = { fs = \"xfs\" }",
        ));
    }
    if let Backing::Devices { devices } = &backing {
        let want = if same_device { 1 } else { arms.len() };
        if devices.len() != want {
            let msg = if same_device {
                format!(
                    "same_device = true takes exactly one device, not {}",
                    devices.len()
                )
            } else {
                format!(
                    "{} arms need {} devices (one per arm, in arm order), not {}; or set same_device = true to re-make one device between arms",
                    arms.len(),
                    arms.len(),
                    devices.len()
                )
            };
            return Err(src.err(line, "[lab] devices", msg));
        }
    }
    for a in &mut arms {
        if a.scheduler.is_none() {
            a.scheduler = scheduler.clone();
        }
    }
    let spec = LabSpec {
        backing,
        same_device,
        discard,
        mount_dir,
        subdir,
        arms,
        line,
    };
    Ok((spec, plan_arms))
}

/// Checks between `[lab]` and the rest of the plan: the lab owns the arms
/// and the targets.
pub(super) fn cross_check(
    src: &Src,
    plan: &RawPlan,
    variables_line: Option<usize>,
) -> Result<(), PlanError> {
    if let Some(line) = variables_line {
        return Err(src.err(
            line,
            "[variables]",
            "a plan with [lab] takes its arms from [lab.arms]; put each arm's options there (e.g. XFS = { fs = \"xfs\", io = \"fsync\" })",
        ));
    }
    let owned = ["target", "destroy-device"];
    let set = plan
        .workload
        .iter()
        .map(|s| (&s.long, &s.loc))
        .chain(plan.sweep.iter().map(|s| (&s.long, &s.loc)));
    for (long, loc) in set {
        if owned.contains(&long.as_str()) {
            return Err(src.err(
                loc.line,
                &loc.key,
                "is set by the lab (each arm's mount point or device); use [lab] target = \"DIR\" for the directory under the mount",
            ));
        }
    }
    Ok(())
}

pub(super) fn unknown(src: &Src, line: usize, full: &str, key: &str, known: &[&str]) -> PlanError {
    let mut m = "unknown key".to_string();
    match options::suggest(key, known.iter().copied()) {
        Some(s) => m.push_str(&format!(" (did you mean {s}?)")),
        None => m.push_str(&format!(" (keys: {})", known.join(", "))),
    }
    src.err(line, full, m)
}

fn boolean(src: &Src, key: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<bool, PlanError> {
    match v.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        other => Err(src.err(
            src.line(v.span().start),
            key,
            format!(
                "expected true or false, found {}",
                options::type_name(other)
            ),
        )),
    }
}

/// A size written as a string (`"4G"`) or an integer of bytes.
fn size_text(src: &Src, key: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<String, PlanError> {
    match v.get_ref() {
        DeValue::Integer(i) => Ok(i.as_str().to_string()),
        _ => parse::string(src, key, v),
    }
}

fn paths(src: &Src, key: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<Vec<PathBuf>, PlanError> {
    let items: Vec<&toml::Spanned<DeValue<'_>>> = match v.get_ref() {
        DeValue::Array(a) => a.iter().collect(),
        _ => vec![v],
    };
    let mut out = Vec::new();
    for i in items {
        let s = parse::string(src, key, i)?;
        if !s.starts_with("/dev/") {
            return Err(src.err(
                src.line(i.span().start),
                key,
                format!("\"{s}\" is not a device path (e.g. /dev/sdb)"),
            ));
        }
        out.push(PathBuf::from(s));
    }
    Ok(out)
}

pub(super) fn sched(
    src: &Src,
    key: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<String, PlanError> {
    let s = parse::string(src, key, v)?;
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(src.err(
            src.line(v.span().start),
            key,
            format!("\"{s}\" is not a scheduler name (e.g. none, mq-deadline, kyber, bfq)"),
        ));
    }
    Ok(s)
}
