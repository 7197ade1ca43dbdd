//! One arm of a plan's `[lab.arms]`: its filesystem, mkfs and mount options
//! and scheduler (a [`LabArm`]), and the plan arm whose runs use it.

use std::path::Path;

use toml::de::DeValue;

use super::PlanError;
use super::lab::{DEVICE_MARKER, FsKind, LabArm};
use super::lab_parse::{boolean, sched, unknown};
use super::parse::{self, Arm, Loc, Setting, Src};
use crate::options::table::{self as options, RunOption, Val};

const ARM_KEYS: &[&str] = &["fs", "mkfs", "mount", "scheduler", "restore"];

pub(super) fn lab_arm(
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
        restore: false,
        line,
    };
    let mut settings: Vec<Setting> = Vec::new();
    for (k, v) in parse::entries(t) {
        let kname: &str = k.get_ref();
        let full = format!("{section} {kname}");
        match kname {
            "fs" => fs = Some(fs_kind(src, &full, v)?),
            "mkfs" => arm.mkfs_options = mkfs_options(src, &full, v)?,
            "mount" => arm.mount_options = mount_options(src, &full, v)?,
            "scheduler" => arm.scheduler = Some(sched(src, &full, v)?),
            "restore" => arm.restore = boolean(src, &full, v)?,
            _ if options::lookup(options, kname).is_ok() => {
                let setting = run_option(src, options, (k, v), &section, &settings)?;
                settings.push(setting);
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
    if arm.fs == FsKind::None
        && (!arm.mkfs_options.is_empty() || arm.mount_options.is_some() || arm.restore)
    {
        return Err(src.err(
            line,
            &key,
            "fs = \"none\" (the raw device) takes no mkfs or mount options and no restore",
        ));
    }
    let plan_arm = Arm {
        name: name.to_string(),
        loc: Loc { line, key },
        settings,
    };
    Ok((arm, plan_arm))
}

/// `fs`: ext4, xfs, btrfs or none.
fn fs_kind(src: &Src, full: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<FsKind, PlanError> {
    let s = parse::string(src, full, v)?;
    FsKind::parse(&s).ok_or_else(|| {
        src.err(
            src.line(v.span().start),
            full,
            format!("\"{s}\" is not one of ext4, xfs, btrfs, none"),
        )
    })
}

/// `mkfs`: a list of arguments, or one string split at whitespace.
fn mkfs_options(
    src: &Src,
    full: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<Vec<String>, PlanError> {
    Ok(match v.get_ref() {
        DeValue::Array(items) => items
            .iter()
            .map(|i| parse::string(src, full, i))
            .collect::<Result<_, _>>()?,
        _ => parse::string(src, full, v)?
            .split_whitespace()
            .map(str::to_string)
            .collect(),
    })
}

/// `mount`: one comma-separated list without spaces (empty: none).
fn mount_options(
    src: &Src,
    full: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<Option<String>, PlanError> {
    let s = parse::string(src, full, v)?;
    if s.chars().any(char::is_whitespace) {
        return Err(src.err(src.line(v.span().start), full, "mount options are one comma-separated list without spaces (e.g. \"noatime,nodiratime\")"));
    }
    Ok((!s.is_empty()).then_some(s))
}

/// An option of `dbio run` in an arm (not one the lab sets, not twice).
fn run_option(
    src: &Src,
    options: &[RunOption],
    (k, v): parse::Entry<'_, '_>,
    section: &str,
    settings: &[Setting],
) -> Result<Setting, PlanError> {
    let vline = src.line(v.span().start);
    let seen = settings.iter().map(|s| (s.long.as_str(), &s.loc));
    let (loc, opt) = parse::option_key(src, options, k, section, seen, "set twice")?;
    if opt.long == "target" || opt.long == "destroy-device" {
        return Err(src.err(
            loc.line,
            &loc.key,
            "is set by the lab (the arm's mount point or device); use [lab] target = \"DIR\" for the directory under the mount",
        ));
    }
    let val = options::to_val(opt, v.get_ref()).map_err(|m| src.err(vline, &loc.key, m))?;
    if !parse::has_placeholder(&val) {
        options::check_alone(&opt.long, &val).map_err(|m| src.err(vline, &loc.key, m))?;
    }
    Ok(Setting {
        long: opt.long.clone(),
        val,
        loc,
    })
}

/// Adds the lab's target (and, for the raw device, the permission to write
/// it) to an arm's run options.
pub(super) fn finish_arm(mut arm: Arm, lab: &LabArm, subdir: &str) -> Arm {
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
