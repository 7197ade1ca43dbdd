//! The `[lab]` section: arms become plan arms with the lab's targets, and
//! every mistake is one line with the file, the line and the key.

use std::path::{Path, PathBuf};

use super::lab::{DEVICE_MARKER, FsKind, slug};
use super::*;

const LAB: &str = r#"name = "fs"
repeats = 2

[workload]
pattern = "randwrite"
size = "1G"

[sweep]
files = [1, 8]

[lab]
image_dir = "/var/tmp"
image_size = "6G"
mount_dir = "/mnt/lab"
target = "dbio-{files}"
scheduler = "none"

[lab.arms]
EXT4 = { fs = "ext4", mkfs = "-E nodiscard", mount = "noatime,nodiratime", io = "fsync" }
XFS = { fs = "xfs", mkfs = ["-K", "-m", "crc=1"], scheduler = "mq-deadline" }
RAW = { fs = "none", files = 1 }
"#;

fn load(text: &str) -> Result<Plan, String> {
    load_str(Path::new("lab.toml"), text).map_err(|e| e.to_string())
}

#[test]
fn lab_arms_become_plan_arms_on_their_mounts_and_devices() {
    // RAW sets files = 1 but files is swept: refused (see below); drop the sweep here.
    let text = LAB
        .replace("[sweep]\nfiles = [1, 8]\n", "")
        .replace("dbio-{files}", "dbio");
    let p = load(&text).unwrap();
    let lab = p.lab.as_ref().unwrap();
    assert_eq!(p.arms, ["EXT4", "XFS", "RAW"]);
    assert_eq!(
        lab.backing,
        Backing::Images {
            dir: PathBuf::from("/var/tmp"),
            size: 6 << 30,
            direct_io: true
        }
    );
    let xfs = &lab.arms[1];
    assert_eq!(xfs.fs, FsKind::Xfs);
    assert_eq!(xfs.mkfs_options, ["-K", "-m", "crc=1"]);
    assert_eq!(xfs.scheduler.as_deref(), Some("mq-deadline"));
    assert_eq!(
        lab.arms[0].scheduler.as_deref(),
        Some("none"),
        "the lab's default"
    );
    assert_eq!(
        lab.arms[0].mount_options.as_deref(),
        Some("noatime,nodiratime")
    );
    let args = |arm: &str| {
        p.runs
            .iter()
            .find(|r| r.variable == arm)
            .unwrap()
            .args
            .join(" ")
    };
    assert!(
        args("EXT4").contains("--target /mnt/lab/EXT4/dbio"),
        "{}",
        args("EXT4")
    );
    assert!(args("EXT4").contains("--io fsync"));
    let raw = args("RAW");
    let marker = format!("{DEVICE_MARKER}RAW");
    assert!(raw.contains(&format!("--target {marker}")), "{raw}");
    assert!(raw.contains(&format!("--destroy-device {marker}")), "{raw}");
    assert!(!lab.same_device);
    assert_eq!(lab.devices_needed(), 3);
}

#[test]
fn the_lab_target_may_use_swept_placeholders() {
    let text = LAB.replace("RAW = { fs = \"none\", files = 1 }\n", "");
    let p = load(&text).unwrap();
    let r = p
        .runs
        .iter()
        .find(|r| r.cell_key == "XFS|files=8|rep=1")
        .unwrap();
    assert!(r.args.join(" ").contains("--target /mnt/lab/XFS/dbio-8"));
}

#[test]
fn lab_mistakes_are_located() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "image_size = \"6G\"",
            "image_size = \"6Q\"",
            "lab.toml:13: [lab] image_size:",
        ),
        (
            "scheduler = \"none\"",
            "schedulr = \"none\"",
            "lab.toml:16: [lab] schedulr: unknown key (did you mean scheduler?)",
        ),
        (
            "fs = \"xfs\"",
            "fs = \"zfs\"",
            "lab.toml:20: [lab.arms.XFS] fs: \"zfs\" is not one of ext4, xfs, btrfs, none",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { files = 1 }",
            "lab.toml:21: [lab.arms] RAW: needs fs =",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { fs = \"none\", mount = \"noatime\" }",
            "takes no mkfs or mount options",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { fs = \"none\", restore = true }",
            "takes no mkfs or mount options and no restore",
        ),
        (
            "fs = \"xfs\"",
            "fs = \"xfs\", restore = \"yes\"",
            "restore: expected true or false, found a string",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { fs = \"none\", target = \"/x\" }",
            "lab.toml:21: [lab.arms.RAW] target: is set by the lab",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { fs = \"none\", sesions = 4 }",
            "[lab.arms.RAW] sesions: unknown key",
        ),
        (
            "RAW = { fs = \"none\", files = 1 }",
            "RAW = { fs = \"none\" }",
            "",
        ),
        (
            "target = \"dbio-{files}\"",
            "target = \"/abs\"",
            "lab.toml:15: [lab] target: must be a relative path",
        ),
        (
            "pattern = \"randwrite\"",
            "pattern = \"randwrite\"\ntarget = \"/x\"",
            "lab.toml:6: [workload] target: is set by the lab",
        ),
        (
            "mount = \"noatime,nodiratime\"",
            "mount = \"noatime, nodiratime\"",
            "without spaces",
        ),
    ];
    for (from, to, want) in cases {
        let text = LAB.replace(*from, to);
        assert_ne!(text, LAB, "{from}");
        match load(&text) {
            Ok(_) if want.is_empty() => {}
            Ok(_) => panic!("{to}: loaded"),
            Err(e) => {
                assert!(!want.is_empty() && e.contains(want), "{to}: {e}");
                assert!(!e.contains('\n'), "{e}");
            }
        }
    }
    // files is swept and RAW sets it.
    let e = load(LAB).unwrap_err();
    assert!(e.contains("[lab.arms.RAW] files: is swept"), "{e}");
}

#[test]
fn named_devices_must_be_repeated_and_counted() {
    let base = "name = \"d\"\n[lab]\ndevices = [\"/dev/sdx\", \"/dev/sdy\"]\ndestroy_devices = [\"/dev/sdx\", \"/dev/sdy\"]\n[lab.arms]\nA = { fs = \"ext4\" }\nB = { fs = \"xfs\" }\n";
    let p = load(base).unwrap();
    assert_eq!(
        p.lab.unwrap().backing,
        Backing::Devices {
            devices: vec!["/dev/sdx".into(), "/dev/sdy".into()]
        }
    );
    let e = load(&base.replace(
        "destroy_devices = [\"/dev/sdx\", \"/dev/sdy\"]",
        "destroy_devices = [\"/dev/sdx\"]",
    ))
    .unwrap_err();
    assert!(
        e.starts_with("lab.toml:3: [lab] devices: /dev/sdy is not repeated in destroy_devices"),
        "{e}"
    );
    let e = load(&base.replace("B = { fs = \"xfs\" }\n", "")).unwrap_err();
    assert!(e.contains("1 arms need 1 devices"), "{e}");
    let e = load(&base.replace("[lab]\n", "[lab]\nsame_device = true\n")).unwrap_err();
    assert!(
        e.contains("same_device = true takes exactly one device"),
        "{e}"
    );
    let e = load(&base.replace("[lab]\n", "[lab]\nimage_size = \"1G\"\n")).unwrap_err();
    assert!(e.contains("not both"), "{e}");
    let e = load(&base.replace(
        "\"/dev/sdx\", \"/dev/sdy\"]\ndestroy",
        "\"sdx\", \"/dev/sdy\"]\ndestroy",
    ))
    .unwrap_err();
    assert!(e.contains("\"sdx\" is not a device path"), "{e}");
}

#[test]
fn a_lab_owns_the_arms() {
    let e = load("name = \"v\"\n[variables]\nA = {}\n[lab]\n[lab.arms]\nX = { fs = \"xfs\" }\n")
        .unwrap_err();
    assert!(
        e.starts_with("lab.toml:2: [variables]: a plan with [lab] takes its arms from [lab.arms]"),
        "{e}"
    );
    let e = load("name = \"v\"\n[lab]\nimage_size = \"1G\"\n").unwrap_err();
    assert!(e.contains("[lab]: has no arms"), "{e}");
    let e = load("name = \"v\"\n[lab.arms]\n").unwrap_err();
    assert!(e.contains("[lab.arms]: is empty"), "{e}");
}

#[test]
fn mount_dirs_default_to_the_lab_dir_and_differ_per_plan() {
    let p = load("name = \"a b\"\n[lab.arms]\nX = { fs = \"xfs\" }\n").unwrap();
    let lab = p.lab.unwrap();
    assert!(lab.mount_dir.starts_with(super::lab::lab_dir()));
    assert!(lab.mount_dir.ends_with(slug("a b")));
    assert_eq!(lab.arms[0].mountpoint, lab.mount_dir.join("X"));
    assert!(slug("a b").starts_with("a_b-"));
    assert_ne!(slug("a b"), slug("a_b"), "the hash tells them apart");
    assert_eq!(lab.subdir, "dbio");
}
