//! The real thing on loop devices (root only): mounted, unmounted,
//! partitioned, swap, stacked and exclusively opened devices.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::loopdev::LoopDev;
use dbio::storage::device::*;

const MIB: u64 = 1 << 20;

fn ext4_sig() -> Refusal {
    Refusal::Signature {
        kind: "ext4",
        offset: 1080,
    }
}

fn refused(result: Result<(), DeviceError>) -> String {
    match result {
        Err(DeviceError::Refused(msg)) => msg,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn overridable_only(path: &Path) {
    let msg = refused(check_writable(path, None));
    let suffix = format!(
        "; to overwrite it anyway repeat the device path: --destroy-device {}",
        path.display()
    );
    assert!(msg.ends_with(&suffix), "{msg}");
    assert!(check_writable(path, Some(path)).is_ok());
}

fn never_overridable(path: &Path) -> String {
    let msg = refused(check_writable(path, Some(path)));
    assert!(msg.contains("unmount/deactivate it first"), "{msg}");
    assert!(!msg.contains("to overwrite it anyway"), "{msg}");
    msg
}

fn zeroed_device_is_writable_and_probed_right() {
    let dev = LoopDev::new(64 * MIB, false);
    let info = probe(&dev.path).expect("probe");
    assert_eq!(info.name, dev.name());
    assert_eq!(info.major, 7);
    assert_eq!(info.size_bytes, 64 * MIB);
    assert_eq!(info.logical_sector, 512);
    assert!(info.physical_sector >= 512);
    assert!(info.rotational.is_some());
    assert!(is_block_device(&dev.path));
    assert_eq!(refusals(&dev.path).expect("refusals"), []);
    assert!(check_writable(&dev.path, None).is_ok());
    assert!(check_writable(&dev.path, Some(Path::new("/dev/whatever"))).is_ok());
}

fn probe_sees_4k_sectors() {
    let dev = LoopDev::with_sector_size(64 * MIB, true, 4096);
    let info = probe(&dev.path).expect("probe");
    assert_eq!((info.logical_sector, info.size_bytes), (4096, 64 * MIB));
    assert!(info.physical_sector >= 4096, "{info:?}");
}

fn mounted_ext4_is_never_overridable_then_overridable_by_exact_path() {
    let mut dev = LoopDev::new(64 * MIB, false);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let mountpoint = mnt.display().to_string();
    assert_eq!(
        refusals(&dev.path).expect("refusals"),
        [
            Refusal::Mounted {
                mountpoint: mountpoint.clone()
            },
            ext4_sig()
        ]
    );
    let msg = never_overridable(&dev.path);
    assert!(
        msg.contains(&format!("is mounted at {mountpoint}")),
        "{msg}"
    );

    dev.umount();
    assert_eq!(refusals(&dev.path).expect("refusals"), [ext4_sig()]);
    overridable_only(&dev.path);
    let same = dev.path.display().to_string();
    assert!(check_writable(&dev.path, Some(Path::new(&format!(" {same}\n")))).is_ok());
    let respelled = same.replace("/dev/", "/dev//");
    assert!(Path::new(&respelled).exists());
    refused(check_writable(&dev.path, Some(Path::new(&respelled))));
    assert!(
        dev.fsck_clean(),
        "the checks must not have written anything"
    );
}

fn mounted_btrfs_is_found_despite_its_anonymous_devno() {
    let mut dev = LoopDev::new(256 * MIB, false);
    dev.mkfs("btrfs");
    let mountpoint = dev.mount().display().to_string();
    let found = refusals(&dev.path).expect("refusals");
    assert_eq!(
        found,
        [
            Refusal::Mounted { mountpoint },
            Refusal::Signature {
                kind: "btrfs",
                offset: 65600
            }
        ]
    );
    never_overridable(&dev.path);
    dev.umount();
    assert_eq!(
        refusals(&dev.path).expect("refusals"),
        [Refusal::Signature {
            kind: "btrfs",
            offset: 65600
        }]
    );
}

fn every_member_of_a_mounted_multi_device_btrfs_is_refused() {
    let mut first = LoopDev::new(256 * MIB, false);
    let second = LoopDev::new(256 * MIB, false);
    let out = Command::new("mkfs.btrfs")
        .args(["-q", "-f", "-K", "-d", "single", "-m", "single"])
        .args([&first.path, &second.path])
        .output()
        .expect("run mkfs.btrfs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    first.mount();
    for dev in [&first.path, &second.path] {
        never_overridable(dev);
    }
    // mountinfo names only one device; the other is known from /sys/fs/btrfs.
    let found = refusals(&second.path).expect("refusals");
    let in_use = found.iter().any(|r| {
        matches!(r, Refusal::InUse { by } if by.starts_with("a mounted btrfs filesystem (uuid "))
    });
    let mounted = found.iter().any(|r| matches!(r, Refusal::Mounted { .. }));
    assert!(in_use || mounted, "{found:?}");
    first.umount();
    for dev in [&first.path, &second.path] {
        overridable_only(dev);
    }
}

fn mounted_xfs_is_never_overridable() {
    let mut dev = LoopDev::new(320 * MIB, true);
    dev.mkfs("xfs");
    let mountpoint = dev.mount().display().to_string();
    assert_eq!(
        refusals(&dev.path).expect("refusals"),
        [
            Refusal::Mounted { mountpoint },
            Refusal::Signature {
                kind: "xfs",
                offset: 0
            }
        ]
    );
    never_overridable(&dev.path);
}

fn partitioned_device_then_mounted_and_swapped_partitions() {
    let mut dev = LoopDev::new(64 * MIB, false);
    let parts = dev.partition(2);
    let names: Vec<String> = parts
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        refusals(&dev.path).expect("refusals"),
        [
            Refusal::Signature {
                kind: "dos",
                offset: 510
            },
            Refusal::HasPartitions {
                partitions: names.clone()
            },
        ]
    );
    overridable_only(&dev.path);
    assert_eq!(refusals(&parts[0]).expect("refusals"), []);

    // An exclusive claim on a partition (a mount in another namespace
    // looks the same) makes the whole disk unclaimable too.
    let holder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&parts[1])
        .expect("exclusive open of a partition");
    let found = refusals(&dev.path).expect("refusals");
    assert!(
        matches!(&found[0], Refusal::InUse { by } if by.starts_with("another exclusive opener")),
        "{found:?}"
    );
    never_overridable(&dev.path);
    drop(holder);

    dev.mkfs_on(&parts[0], "ext4");
    let mountpoint = dev.mount_device(&parts[0]).display().to_string();
    dev.swapon(&parts[1]);
    let found = refusals(&dev.path).expect("refusals");
    assert_eq!(
        found,
        [
            Refusal::PartitionMounted {
                partition: names[0].clone(),
                mountpoint: mountpoint.clone()
            },
            Refusal::PartitionSwap {
                partition: names[1].clone()
            },
            Refusal::Signature {
                kind: "dos",
                offset: 510
            },
            Refusal::HasPartitions {
                partitions: names.clone()
            },
        ]
    );
    never_overridable(&dev.path);
    // The partitions themselves, pointed at directly.
    assert_eq!(
        refusals(&parts[0]).expect("refusals"),
        [Refusal::Mounted { mountpoint }, ext4_sig()]
    );
    let swap = refusals(&parts[1]).expect("refusals");
    assert_eq!(swap[0], Refusal::Swap, "{swap:?}");
    never_overridable(&parts[1]);
    let info = probe(&parts[0]).expect("probe partition");
    assert_eq!(info.name, names[0]);
    assert!(
        info.rotational.is_some(),
        "partition rotational comes from its disk"
    );
}

fn active_swap_is_never_overridable() {
    let mut dev = LoopDev::new(64 * MIB, false);
    let path = dev.path.clone();
    dev.swapon(&path);
    assert_eq!(
        refusals(&path).expect("refusals"),
        [
            Refusal::Swap,
            Refusal::Signature {
                kind: "swap",
                offset: 4086
            }
        ]
    );
    never_overridable(&path);
    dev.swapoff();
    overridable_only(&path);
}

fn exclusive_opener_blocks_writes() {
    let dev = LoopDev::new(64 * MIB, false);
    let holder = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&dev.path)
        .expect("exclusive open");
    let found = refusals(&dev.path).expect("refusals");
    assert!(
        matches!(&found[..], [Refusal::InUse { by }] if by.starts_with("another exclusive opener")),
        "{found:?}"
    );
    never_overridable(&dev.path);
    drop(holder);
    // The kernel lets go of the claim at close, but a busy machine may take a
    // moment (udev probing the device after the exclusive opener left).
    let t = std::time::Instant::now();
    let mut left = refusals(&dev.path).expect("refusals");
    while !left.is_empty() && t.elapsed() < std::time::Duration::from_secs(5) {
        std::thread::sleep(std::time::Duration::from_millis(20));
        left = refusals(&dev.path).expect("refusals");
    }
    assert_eq!(left, []);
}

/// A loop device stacked on another device, detached on drop.
struct Stacked(PathBuf);

impl Drop for Stacked {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

fn loop_device_on_top_blocks_writes() {
    let dev = LoopDev::new(64 * MIB, false);
    let out = Command::new("losetup")
        .args(["-f", "--show"])
        .arg(&dev.path)
        .output()
        .expect("losetup");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let upper = Stacked(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let found = refusals(&dev.path).expect("refusals");
    let by = format!("loop device {}", upper.0.display());
    assert_eq!(found, [Refusal::InUse { by }]);
    never_overridable(&dev.path);
    assert_eq!(refusals(&upper.0).expect("refusals"), []);
}

fn symlinks_to_a_device_work_but_do_not_count_as_the_exact_path() {
    let dev = LoopDev::new(64 * MIB, false);
    dev.mkfs("ext4");
    let dir = tempfile::TempDir::new().expect("temp dir");
    let link = dir.path().join("disk");
    std::os::unix::fs::symlink(&dev.path, &link).expect("symlink");
    assert!(is_block_device(&link));
    assert_eq!(probe(&link).expect("probe").name, dev.name());
    assert_eq!(refusals(&link).expect("refusals"), [ext4_sig()]);
    refused(check_writable(&link, Some(&dev.path)));
    assert!(check_writable(&link, Some(&link)).is_ok());
}

crate::tests! {
    zeroed_device_is_writable_and_probed_right [Root],
    probe_sees_4k_sectors [Root],
    mounted_ext4_is_never_overridable_then_overridable_by_exact_path [Root, Tool("mkfs.ext4")],
    mounted_btrfs_is_found_despite_its_anonymous_devno [Root, Tool("mkfs.btrfs")],
    every_member_of_a_mounted_multi_device_btrfs_is_refused [Root, Tool("mkfs.btrfs")],
    mounted_xfs_is_never_overridable [Root, Tool("mkfs.xfs")],
    partitioned_device_then_mounted_and_swapped_partitions [Root, Tool("mkfs.ext4"), Tool("mkswap")],
    active_swap_is_never_overridable [Root, Tool("mkswap")],
    exclusive_opener_blocks_writes [Root],
    loop_device_on_top_blocks_writes [Root],
    symlinks_to_a_device_work_but_do_not_count_as_the_exact_path [Root, Tool("mkfs.ext4")],
}
