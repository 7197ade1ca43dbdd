//! Reading the `[lab]` section of a plan into a [`LabSpec`] and the plan
//! arms it stands for; every mistake is `FILE:LINE: [lab...] key: message`.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::PlanError;
use super::lab::{
    Backing, DEFAULT_IMAGE_DIR, DEFAULT_IMAGE_SIZE, DEFAULT_SUBDIR, DEVICE_MARKER, FsKind, LabArm,
    LabSpec, slug,
};
use super::options::{self, RunOption, Val};
use super::parse::{self, Arm, Loc, RawPlan, Setting, Src};
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
const ARM_KEYS: &[&str] = &["fs", "mkfs", "mount", "scheduler"];

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

fn lab_arm(
    src: &Src,
    options: &[RunOption],
    name: &str,
    at: usize,
    v: &toml::Spanned<DeValue<'_>>,
    mount_dir: &Path,
) -> Result<(LabArm, Arm), PlanError> {
    let line = src.line(at);
    let key = format!("[lab.arms] {name}");
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
    {
        return Err(src.err(
            line,
            &key,
            "an arm name may use letters, digits and _ . + - only (it is part of every run's cell key)",
        ));
    }
    let DeValue::Table(t) = v.get_ref() else {
        return Err(src.err(
            src.line(v.span().start),
            &key,
            format!(
                "expected a table (e.g. {name} = {{ fs = \"xfs\", mount = \"noatime\" }}), found {}",
                options::type_name(v.get_ref())
            ),
        ));
    };
    let section = format!("[lab.arms.{name}]");
    let mut fs = None;
    let mut arm = LabArm {
        name: name.to_string(),
        fs: FsKind::None,
        mkfs_options: Vec::new(),
        mount_options: None,
        scheduler: None,
        mountpoint: mount_dir.join(name),
        line,
    };
    let mut settings: Vec<Setting> = Vec::new();
    for (k, v) in parse::entries(t) {
        let kname: &str = k.get_ref();
        let full = format!("{section} {kname}");
        let vline = src.line(v.span().start);
        match kname {
            "fs" => {
                let s = parse::string(src, &full, v)?;
                fs = Some(FsKind::parse(&s).ok_or_else(|| {
                    src.err(
                        vline,
                        &full,
                        format!("\"{s}\" is not one of ext4, xfs, btrfs, none"),
                    )
                })?);
            }
            "mkfs" => {
                arm.mkfs_options = match v.get_ref() {
                    DeValue::Array(items) => items
                        .iter()
                        .map(|i| parse::string(src, &full, i))
                        .collect::<Result<_, _>>()?,
                    _ => parse::string(src, &full, v)?
                        .split_whitespace()
                        .map(str::to_string)
                        .collect(),
                }
            }
            "mount" => {
                let s = parse::string(src, &full, v)?;
                if s.chars().any(char::is_whitespace) {
                    return Err(src.err(vline, &full, "mount options are one comma-separated list without spaces (e.g. \"noatime,nodiratime\")"));
                }
                arm.mount_options = (!s.is_empty()).then_some(s);
            }
            "scheduler" => arm.scheduler = Some(sched(src, &full, v)?),
            _ if options::lookup(options, kname).is_ok() => {
                let seen = settings.iter().map(|s| (s.long.as_str(), &s.loc));
                let (loc, opt) = parse::option_key(src, options, k, &section, seen, "set twice")?;
                if opt.long == "target" || opt.long == "destroy-device" {
                    return Err(src.err(
                        loc.line,
                        &loc.key,
                        "is set by the lab (the arm's mount point or device); use [lab] target = \"DIR\" for the directory under the mount",
                    ));
                }
                let val =
                    options::to_val(opt, v.get_ref()).map_err(|m| src.err(vline, &loc.key, m))?;
                if !parse::has_placeholder(&val) {
                    options::check_alone(&opt.long, &val)
                        .map_err(|m| src.err(vline, &loc.key, m))?;
                }
                settings.push(Setting {
                    long: opt.long.clone(),
                    val,
                    loc,
                });
            }
            other => {
                let line = src.line(k.span().start);
                let mut m = unknown(src, line, &full, other, ARM_KEYS);
                if let PlanError::Invalid { message, .. } = &mut m {
                    message.push_str(" or an option of dbio run");
                }
                return Err(m);
            }
        }
    }
    arm.fs = fs.ok_or_else(|| {
        src.err(
            line,
            &key,
            "needs fs = \"ext4\", \"xfs\", \"btrfs\" or \"none\" (the raw device)",
        )
    })?;
    if arm.fs == FsKind::None && (!arm.mkfs_options.is_empty() || arm.mount_options.is_some()) {
        return Err(src.err(
            line,
            &key,
            "fs = \"none\" (the raw device) takes no mkfs or mount options",
        ));
    }
    let plan_arm = Arm {
        name: name.to_string(),
        loc: Loc { line, key },
        settings,
    };
    Ok((arm, plan_arm))
}

/// Adds the lab's target (and, for the raw device, the permission to write
/// it) to an arm's run options.
fn finish_arm(mut arm: Arm, lab: &LabArm, subdir: &str) -> Arm {
    let loc = arm.loc.clone();
    let mut add = |long: &str, value: String| {
        arm.settings.push(Setting {
            long: long.to_string(),
            val: Val::Text(value),
            loc: loc.clone(),
        })
    };
    if lab.fs == FsKind::None {
        let dev = format!("{DEVICE_MARKER}{}", lab.name);
        add("target", dev.clone());
        add("destroy-device", dev);
    } else {
        add("target", lab.mountpoint.join(subdir).display().to_string());
    }
    arm
}

fn unknown(src: &Src, line: usize, full: &str, key: &str, known: &[&str]) -> PlanError {
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

fn sched(src: &Src, key: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<String, PlanError> {
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
