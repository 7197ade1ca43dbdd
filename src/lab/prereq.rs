//! What a lab needs before it makes anything, each missing piece one line:
//! root, the tools (with the Debian package that ships them), free space
//! for the images, named devices that pass the write gate, and room on each
//! arm's filesystem for the data its runs lay out.

use std::collections::BTreeMap;
use std::path::Path;

use super::LabError;
use super::sys::find_tool;
use crate::plan::{Backing, FsKind, LabArm, LabSpec, Plan};
use crate::units::{fmt_size, parse_size};

/// Share of an image or device the data sets of one arm may fill
/// (filesystem metadata, journal and reserved blocks take the rest).
pub const FILL_LIMIT: f64 = 0.9;

/// Root, or a one-line refusal.
pub fn check_root(is_root: bool, what: &str) -> Result<(), LabError> {
    if is_root {
        Ok(())
    } else {
        Err(LabError::Prereq(format!(
            "dbio lab {what} needs root (it attaches loop devices, makes filesystems and mounts them): run it as root, e.g. sudo dbio lab {what} ..."
        )))
    }
}

/// The first missing tool among those `arms` need, with its package.
pub fn check_tools(arms: &[&LabArm], images: bool) -> Result<(), LabError> {
    let mut need: Vec<(&str, &str, Option<&str>)> =
        vec![("mount", "mount", None), ("umount", "mount", None)];
    if images {
        need.push(("losetup", "mount", None));
    }
    for a in arms {
        if let (Some(tool), Some(pkg)) = (a.fs.mkfs_tool(), a.fs.package()) {
            need.push((tool, pkg, Some(a.name.as_str())));
        }
    }
    for (tool, pkg, arm) in need {
        if find_tool(tool).is_none() {
            let which = arm.map(|a| format!(" (arm {a})")).unwrap_or_default();
            return Err(LabError::Prereq(format!(
                "{tool} not found{which}: install the Debian package {pkg} (apt-get install {pkg})"
            )));
        }
    }
    Ok(())
}

/// Bytes available (to root) in the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> Result<u64, LabError> {
    let st = rustix::fs::statvfs(dir).map_err(|e| LabError::io("examine", dir, e.into()))?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// `images` images of `size` bytes fit in `dir`.
pub fn check_space(dir: &Path, size: u64, images: usize) -> Result<(), LabError> {
    if !dir.is_dir() {
        return Err(LabError::Prereq(format!(
            "image_dir {} is not a directory: create it or set image_dir in [lab] to an existing directory",
            dir.display()
        )));
    }
    let need = size.saturating_mul(images as u64);
    let free = free_bytes(dir)?;
    if need > free {
        return Err(LabError::Prereq(format!(
            "{} has {} free, but the lab's {images} image(s) of {} need {}: free some space, lower image_size, set same_device = true or choose another image_dir",
            dir.display(),
            fmt_size(free),
            fmt_size(size),
            fmt_size(need)
        )));
    }
    Ok(())
}

/// The value of `--NAME` in a run's argument list.
pub fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let flag = format!("--{name}");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == flag {
            return it.next().map(String::as_str);
        }
    }
    None
}

/// What one run of a plan lays out under its target: its data set (for the
/// SLOB model the whole tablespace, from --scale and the schemas) plus the
/// redo logs when they live beside it. None when the arguments do not parse
/// (the plan's own checks say why).
fn run_footprint(args: &[String]) -> Option<u64> {
    let cfg = crate::options::table::parse_run(args).ok()?;
    let data = cfg.size_bytes.unwrap_or(crate::plan::DEFAULT_DIR_SIZE);
    let redo = cfg.workload.model().map_or(0, |s| {
        if s.redo_dir.starts_with(&cfg.target) {
            u64::from(s.redo_files) * s.redo_file_size
        } else {
            0
        }
    });
    Some(data + redo)
}

/// Each arm's data fits its device: a filesystem arm holds one data set per
/// distinct target directory its runs use (the largest run's, since a layout
/// is reused and grown); a raw arm's data must not exceed the device.
pub fn check_data_fits(plan: &Plan, arms: &[&LabArm], capacity: u64) -> Result<(), LabError> {
    for a in arms {
        let mut sets: BTreeMap<&str, u64> = BTreeMap::new();
        for r in plan.runs.iter().filter(|r| r.variable == a.name) {
            let size = run_footprint(&r.args)
                .or_else(|| arg(&r.args, "size").and_then(|s| parse_size(s).ok()))
                .unwrap_or(if a.fs == FsKind::None {
                    0
                } else {
                    crate::plan::DEFAULT_DIR_SIZE
                });
            let target = arg(&r.args, "target").unwrap_or_default();
            let e = sets.entry(target).or_default();
            *e = (*e).max(size);
        }
        let total: u64 = sets.values().sum();
        if a.fs == FsKind::None {
            if total > capacity {
                return Err(LabError::Prereq(format!(
                    "arm {} uses {} of a raw device of {}: raise image_size or lower size (or scale)",
                    a.name,
                    fmt_size(total),
                    fmt_size(capacity)
                )));
            }
        } else if total as f64 > capacity as f64 * FILL_LIMIT {
            return Err(LabError::Prereq(format!(
                "arm {} lays out {} data set(s) (one per target directory) totalling {}, more than {:.0}% of its {} device: raise image_size, lower size (or scale), or use fewer {{placeholders}} in [lab] target",
                a.name,
                sets.len(),
                fmt_size(total),
                FILL_LIMIT * 100.0,
                fmt_size(capacity)
            )));
        }
    }
    Ok(())
}

/// Everything `dbio lab run` checks before it makes anything, for the arms
/// it will build.
pub fn check(plan: &Plan, lab: &LabSpec, arms: &[&LabArm], is_root: bool) -> Result<(), LabError> {
    check_root(is_root, "run")?;
    let images = matches!(lab.backing, Backing::Images { .. });
    check_tools(arms, images)?;
    let capacity = match &lab.backing {
        Backing::Images { dir, size, .. } => {
            let n = if lab.same_device { 1 } else { arms.len() };
            check_space(dir, *size, n)?;
            *size
        }
        Backing::Devices { devices } => {
            let mut smallest = u64::MAX;
            for d in devices {
                super::backing::named(d, "destroy_devices")?;
                let info = crate::storage::device::probe(d)
                    .map_err(|e| LabError::Refused(e.to_string()))?;
                smallest = smallest.min(info.size_bytes);
            }
            smallest
        }
    };
    check_data_fits(plan, arms, capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_root_is_one_line_that_says_what_to_do() {
        let m = check_root(false, "run").unwrap_err().to_string();
        assert!(m.contains("needs root") && m.contains("sudo"), "{m}");
        assert!(!m.contains('\n'));
        assert!(check_root(true, "run").is_ok());
    }

    #[test]
    fn too_little_space_names_the_numbers_and_the_ways_out() {
        let dir = tempfile::tempdir().unwrap();
        let free = free_bytes(dir.path()).unwrap();
        assert!(check_space(dir.path(), 1 << 20, 1).is_ok());
        let m = check_space(dir.path(), free / 2 + (1 << 30), 2)
            .unwrap_err()
            .to_string();
        assert!(m.contains("free") && m.contains("image_size"), "{m}");
        let m = check_space(&dir.path().join("nope"), 1, 1)
            .unwrap_err()
            .to_string();
        assert!(m.contains("not a directory"), "{m}");
    }

    #[test]
    fn finds_option_values_in_argument_lists() {
        let args: Vec<String> = ["--target", "/m/x", "--size", "2G"]
            .map(String::from)
            .into();
        assert_eq!(arg(&args, "size"), Some("2G"));
        assert_eq!(arg(&args, "target"), Some("/m/x"));
        assert_eq!(arg(&args, "bs"), None);
    }

    /// A lab plan with `workload` settings over one ext4 arm.
    fn lab_plan(workload: &str) -> Plan {
        let text = format!(
            "name = \"fits\"\nrepeats = 1\nwarmup = 0\n[workload]\n{workload}\n[sweep]\nsessions = [1, 4]\n[lab]\nimage_dir = \"/var/tmp\"\nimage_size = \"1G\"\n[lab.arms]\nEXT4 = {{ fs = \"ext4\" }}\n"
        );
        crate::plan::load_str(Path::new("p.toml"), &text).unwrap()
    }

    /// Why the plan's data does not fit `capacity` (None: it fits).
    fn refusal(plan: &Plan, capacity: u64) -> Option<String> {
        let arms: Vec<&LabArm> = plan.lab.as_ref().unwrap().arms.iter().collect();
        check_data_fits(plan, &arms, capacity)
            .err()
            .map(|e| e.to_string())
    }

    #[test]
    fn a_slob_arm_needs_its_tablespace_and_redo_not_a_raw_size() {
        // 4 schemas x 2000 blocks of 8 KiB, rounded up to whole extents of
        // 128 blocks (8064 blocks, 63 MiB), and 3 redo logs beside them.
        let p = lab_plan("workload = \"slob\"\nscale = \"2000\"\ntime = 1");
        let redo = 3 * crate::options::slob::DEFAULT_REDO_FILE_SIZE;
        let need = 8064 * 8192 + redo;
        assert_eq!(refusal(&p, 1 << 30), None, "a 1 GiB image holds it");
        let small = (need as f64 / FILL_LIMIT) as u64 - (1 << 20);
        let m = refusal(&p, small).unwrap();
        assert!(m.contains(&fmt_size(need)) && m.contains("scale"), "{m}");
        // Redo elsewhere does not count against the arm's device.
        let p = lab_plan(
            "workload = \"slob\"\nscale = \"2000\"\ntime = 1\nredo_dir = \"/var/tmp/elsewhere\"",
        );
        assert_eq!(refusal(&p, small), None);
        // A raw workload still counts --size.
        let p = lab_plan("size = \"2G\"\ntime = 1");
        assert!(refusal(&p, 1 << 30).unwrap().contains("2 GiB"));
    }
}
