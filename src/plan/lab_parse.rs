//! Reading the `[lab]` section of a plan into a [`LabSpec`] and the plan
//! arms it stands for; every mistake is `FILE:LINE: [lab...] key: message`.

use std::path::PathBuf;

use toml::de::{DeTable, DeValue};

use super::PlanError;
use super::lab::{Backing, DEFAULT_IMAGE_SIZE, DEFAULT_SUBDIR, LabSpec, slug};
use super::lab_arm::{finish_arm, lab_arm};
use super::parse::{self, Arm, RawPlan, Src};
use crate::options::table::{self as options, RunOption};
use crate::plan::lab::DEFAULT_IMAGE_DIR;
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
    let keys = LabKeys::read(src, t)?;
    let backing = keys.backing(src)?;
    let Some((arms_line, arms_t)) = keys.arms else {
        return Err(src.err(
            line,
            "[lab]",
            "has no arms: add [lab.arms] with e.g. XFS = { fs = \"xfs\" } and EXT4 = { fs = \"ext4\" }",
        ));
    };
    let mount_dir = keys
        .mount_dir
        .unwrap_or_else(|| super::lab::lab_dir().join("mnt").join(slug(plan_name)));
    let mut arms = Vec::new();
    let mut plan_arms = Vec::new();
    for (k, v) in parse::entries(arms_t) {
        let (arm, plan_arm) = lab_arm(src, options, k.get_ref(), k.span().start, v, &mount_dir)?;
        let plan_arm = finish_arm(plan_arm, &arm, &keys.subdir);
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
    check_device_count(src, line, &backing, keys.same_device, arms.len())?;
    for a in &mut arms {
        if a.scheduler.is_none() {
            a.scheduler = keys.scheduler.clone();
        }
    }
    let spec = LabSpec {
        backing,
        same_device: keys.same_device,
        discard: keys.discard,
        mount_dir,
        subdir: keys.subdir,
        arms,
        line,
    };
    Ok((spec, plan_arms))
}

/// The keys of `[lab]` as given (defaults where not).
struct LabKeys<'t, 'de> {
    image_dir: Option<PathBuf>,
    image_size: Option<u64>,
    direct_io: bool,
    /// The line of `devices`, and the devices.
    devices: Option<(usize, Vec<PathBuf>)>,
    destroy: Vec<PathBuf>,
    same_device: bool,
    discard: bool,
    scheduler: Option<String>,
    mount_dir: Option<PathBuf>,
    subdir: String,
    /// The line of `[lab.arms]`, and its table.
    arms: Option<(usize, &'t DeTable<'de>)>,
}

impl<'t, 'de> LabKeys<'t, 'de> {
    fn read(src: &Src, t: &'t DeTable<'de>) -> Result<LabKeys<'t, 'de>, PlanError> {
        let mut keys = LabKeys {
            image_dir: None,
            image_size: None,
            direct_io: true,
            devices: None,
            destroy: Vec::new(),
            same_device: false,
            discard: true,
            scheduler: None,
            mount_dir: None,
            subdir: DEFAULT_SUBDIR.to_string(),
            arms: None,
        };
        for (k, v) in parse::entries(t) {
            let key: &str = k.get_ref();
            let full = format!("[lab] {key}");
            let vline = src.line(v.span().start);
            match key {
                "image_dir" => keys.image_dir = Some(PathBuf::from(parse::string(src, &full, v)?)),
                "image_size" => keys.image_size = Some(image_size(src, &full, v)?),
                "direct_io" => keys.direct_io = boolean(src, &full, v)?,
                "same_device" => keys.same_device = boolean(src, &full, v)?,
                "discard" => keys.discard = boolean(src, &full, v)?,
                "devices" => keys.devices = Some((vline, paths(src, &full, v)?)),
                "destroy_devices" => keys.destroy = paths(src, &full, v)?,
                "scheduler" => keys.scheduler = Some(sched(src, &full, v)?),
                "mount_dir" => keys.mount_dir = Some(PathBuf::from(parse::string(src, &full, v)?)),
                "target" => keys.subdir = target_subdir(src, &full, v)?,
                "arms" => {
                    keys.arms = Some((src.line(k.span().start), parse::table(src, &full, v)?))
                }
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
        Ok(keys)
    }

    /// Named devices (each repeated in `destroy_devices`) or images.
    fn backing(&self, src: &Src) -> Result<Backing, PlanError> {
        let Some((dline, devs)) = &self.devices else {
            return Ok(Backing::Images {
                dir: self
                    .image_dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(DEFAULT_IMAGE_DIR)),
                size: self.image_size.unwrap_or(DEFAULT_IMAGE_SIZE),
                direct_io: self.direct_io,
            });
        };
        let dline = *dline;
        if self.image_dir.is_some() || self.image_size.is_some() {
            return Err(src.err(
                dline,
                "[lab] devices",
                "give either devices (named block devices) or image_dir/image_size (loop devices over images), not both",
            ));
        }
        if devs.is_empty() {
            return Err(src.err(dline, "[lab] devices", "is empty: name a block device"));
        }
        for d in devs {
            if !self.destroy.iter().any(|x| x == d) {
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
        Ok(Backing::Devices {
            devices: devs.clone(),
        })
    }
}

/// `image_size`: a size of at least 1 MiB.
fn image_size(src: &Src, full: &str, v: &toml::Spanned<DeValue<'_>>) -> Result<u64, PlanError> {
    let vline = src.line(v.span().start);
    let s = size_text(src, full, v)?;
    let n = parse_size(&s).map_err(|m| src.err(vline, full, m))?;
    if n < 1 << 20 {
        return Err(src.err(vline, full, "must be at least 1M"));
    }
    Ok(n)
}

/// `target`: a relative path under the arm's mount point, without `..`.
fn target_subdir(
    src: &Src,
    full: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<String, PlanError> {
    let s = parse::string(src, full, v)?;
    if s.is_empty() || s.starts_with('/') || s.split('/').any(|c| c == "..") {
        return Err(src.err(
            src.line(v.span().start),
            full,
            "must be a relative path under the arm's mount point (e.g. \"dbio-{files}x{bs}\"), without ..",
        ));
    }
    Ok(s)
}

/// Named devices: one per arm, or exactly one with `same_device`.
fn check_device_count(
    src: &Src,
    line: usize,
    backing: &Backing,
    same_device: bool,
    arms: usize,
) -> Result<(), PlanError> {
    let Backing::Devices { devices } = backing else {
        return Ok(());
    };
    let want = if same_device { 1 } else { arms };
    if devices.len() == want {
        return Ok(());
    }
    let msg = if same_device {
        format!(
            "same_device = true takes exactly one device, not {}",
            devices.len()
        )
    } else {
        format!(
            "{arms} arms need {arms} devices (one per arm, in arm order), not {}; or set same_device = true to re-make one device between arms",
            devices.len()
        )
    };
    Err(src.err(line, "[lab] devices", msg))
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

pub(super) fn boolean(
    src: &Src,
    key: &str,
    v: &toml::Spanned<DeValue<'_>>,
) -> Result<bool, PlanError> {
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
