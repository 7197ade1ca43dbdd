//! The override gate ([`decide`], [`check_writable`]), the refusal messages,
//! and paths that are not block devices.

use std::fs::File;

use tempfile::TempDir;

use super::*;

const MIB: u64 = 1 << 20;

fn sig() -> Refusal {
    Refusal::Signature {
        kind: "ext4",
        offset: 1080,
    }
}

fn refused(result: Result<(), DeviceError>) -> String {
    match result {
        Err(DeviceError::Refused(msg)) => {
            assert!(!msg.contains('\n'), "one line: {msg:?}");
            msg
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn nothing_found_means_go() {
    let dev = Path::new("/dev/loop3");
    assert!(decide(dev, &[], None).is_ok());
    assert!(decide(dev, &[], Some(Path::new("/dev/other"))).is_ok());
}

#[test]
fn signature_needs_the_exact_path_repeated() {
    let dev = Path::new("/dev/loop3");
    let msg = refused(decide(dev, &[sig()], None));
    assert_eq!(
        msg,
        "refusing to write to /dev/loop3: it carries an ext4 filesystem (signature at byte 1080); \
         to overwrite it anyway repeat the device path: --destroy-device /dev/loop3"
    );
    for same in ["/dev/loop3", " /dev/loop3", "/dev/loop3\n", "\t/dev/loop3 "] {
        assert!(
            decide(dev, &[sig()], Some(Path::new(same))).is_ok(),
            "{same:?}"
        );
    }
    for other in [
        "/dev/loop30",
        "/dev//loop3",
        "/dev/./loop3",
        "loop3",
        "/dev/loop4",
        "",
    ] {
        let msg = refused(decide(dev, &[sig()], Some(Path::new(other))));
        assert!(
            msg.ends_with(
                "; to overwrite it anyway repeat the device path: --destroy-device /dev/loop3"
            ),
            "{msg}"
        );
        assert!(
            msg.contains("does not repeat the device path exactly"),
            "{msg}"
        );
    }
}

#[test]
fn partitions_are_overridable() {
    let dev = Path::new("/dev/vdb");
    let found = [
        Refusal::Signature {
            kind: "dos",
            offset: 510,
        },
        Refusal::HasPartitions {
            partitions: vec!["vdb1".into(), "vdb2".into()],
        },
    ];
    let msg = refused(decide(dev, &found, None));
    assert!(msg.contains("it carries a dos partition table or boot sector (signature at byte 510); it has partitions vdb1, vdb2;"), "{msg}");
    assert!(decide(dev, &found, Some(dev)).is_ok());
}

#[test]
fn live_use_is_never_overridable() {
    let dev = Path::new("/dev/loop3");
    let live = [
        Refusal::Mounted {
            mountpoint: "/mnt/db".into(),
        },
        Refusal::PartitionMounted {
            partition: "loop3p1".into(),
            mountpoint: "/mnt/p".into(),
        },
        Refusal::Held {
            holders: vec!["dm-0".into(), "md0".into()],
        },
        Refusal::PartitionHeld {
            partition: "loop3p2".into(),
            holders: vec!["md1".into()],
        },
        Refusal::Swap,
        Refusal::PartitionSwap {
            partition: "loop3p3".into(),
        },
        Refusal::InUse {
            by: "loop device /dev/loop5".into(),
        },
        Refusal::PartitionInUse {
            partition: "loop3p1".into(),
            by: "x".into(),
        },
    ];
    for r in live {
        assert!(!r.overridable());
        for destroy in [None, Some(dev)] {
            let msg = refused(decide(dev, &[r.clone(), sig()], destroy));
            assert!(
                msg.starts_with(&format!(
                    "refusing to write to /dev/loop3: it {r}; it carries"
                )),
                "{msg}"
            );
            assert!(msg.contains("unmount/deactivate it first"), "{msg}");
            assert!(!msg.contains("to overwrite it anyway"), "{msg}");
        }
    }
}

#[test]
fn refusals_read_as_sentences() {
    let dev = Path::new("/dev/loop3");
    let cases = [
        (
            sig(),
            "/dev/loop3 carries an ext4 filesystem (signature at byte 1080)",
        ),
        (
            Refusal::Mounted {
                mountpoint: "/mnt/a b".into(),
            },
            "/dev/loop3 is mounted at /mnt/a b",
        ),
        (
            Refusal::Held {
                holders: vec!["dm-0".into()],
            },
            "/dev/loop3 is held by dm-0",
        ),
        (Refusal::Swap, "/dev/loop3 is an active swap device"),
        (
            Refusal::HasPartitions {
                partitions: vec!["loop3p1".into()],
            },
            "/dev/loop3 has partition loop3p1",
        ),
        (
            Refusal::PartitionMounted {
                partition: "loop3p1".into(),
                mountpoint: "/m".into(),
            },
            "/dev/loop3 has partition loop3p1 mounted at /m",
        ),
        (
            Refusal::Signature {
                kind: "LVM2_member",
                offset: 512,
            },
            "/dev/loop3 carries an LVM2 physical volume (signature at byte 512)",
        ),
    ];
    for (r, text) in cases {
        assert_eq!(r.describe(dev), text);
    }
}

/// A zero-filled sparse regular file of `size` bytes in a fresh temp dir.
fn image(size: u64) -> (TempDir, PathBuf) {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("disk.img");
    File::create(&path)
        .and_then(|f| f.set_len(size))
        .expect("create image");
    (dir, path)
}

#[test]
fn regular_files_and_missing_paths_are_not_devices() {
    let (_dir, path) = image(MIB);
    assert!(!is_block_device(&path));
    assert!(!is_block_device(Path::new("/dev/null")));
    assert!(!is_block_device(Path::new("/nonexistent/dbio")));
    assert!(matches!(
        probe(&path),
        Err(DeviceError::NotBlockDevice { .. })
    ));
    assert!(matches!(
        check_writable(&path, None),
        Err(DeviceError::NotBlockDevice { .. })
    ));
    assert!(matches!(
        refusals(Path::new("/dev/null")),
        Err(DeviceError::NotBlockDevice { .. })
    ));
    let missing = check_writable(Path::new("/nonexistent/dbio"), None).expect_err("missing");
    assert!(matches!(missing, DeviceError::Io { .. }));
    assert_eq!(
        missing.to_string(),
        "cannot stat /nonexistent/dbio: No such file or directory (os error 2)"
    );
    assert_eq!(
        check_writable(Path::new("/dev/null"), None)
            .expect_err("char dev")
            .to_string(),
        "/dev/null is not a block device"
    );
}
