//! Signature detection on image files, crafted and made by real mkfs tools.

use super::super::{kind_phrase, refusals};
use super::*;
use std::fs::{self, OpenOptions};
use std::path::PathBuf;
use std::process::Command;
use tempfile::TempDir;

const MIB: u64 = 1 << 20;

/// (offset, bytes) to write into an image.
type Writes<'a> = Vec<(u64, &'a [u8])>;

/// A zero-filled sparse image of `size` bytes in a fresh temp dir.
fn image(size: u64) -> (TempDir, PathBuf) {
    let dir = TempDir::new().expect("temp dir");
    let path = dir.path().join("disk.img");
    File::create(&path)
        .and_then(|f| f.set_len(size))
        .expect("create image");
    (dir, path)
}

fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open image");
    file.write_all_at(bytes, offset).expect("write image");
}

fn signatures(path: &Path) -> Vec<Found> {
    refusals(path)
        .expect("refusals")
        .into_iter()
        .map(|r| match r {
            Refusal::Signature { kind, offset } => (kind, offset),
            other => panic!("a regular file got {other:?}"),
        })
        .collect()
}

fn crafted(size: u64, writes: &[(u64, &[u8])]) -> Vec<Found> {
    let (_dir, path) = image(size);
    for (offset, bytes) in writes {
        write_at(&path, *offset, bytes);
    }
    signatures(&path)
}

#[test]
fn zeroed_image_has_no_refusal() {
    let (_dir, path) = image(64 * MIB);
    assert_eq!(refusals(&path).expect("refusals"), Vec::new());
}

#[test]
fn tiny_and_empty_files_are_fine() {
    for size in [0, 1, 511, 4096, 70_000] {
        let (_dir, path) = image(size);
        assert!(signatures(&path).is_empty(), "size {size}");
    }
    assert_eq!(crafted(600, &[(510, &[0x55, 0xaa])]), [("dos", 510)]);
}

#[test]
fn crafted_signatures_are_found_where_they_live() {
    // An odd size, so the end-relative offsets depend on the alignment rules.
    let size = 64 * MIB + 12_345;
    let md_0_90 = (size & !65535) - 65536;
    let md_1_0 = (size - 8192) & !4095;
    let zfs_l2 = (size & !(256 * 1024 - 1)) - 512 * 1024;
    let zfs_le = ZFS_UBERBLOCK_MAGIC.to_le_bytes();
    let zfs_be = ZFS_UBERBLOCK_MAGIC.to_be_bytes();
    let cases: Vec<(&str, u64, Writes)> = vec![
        ("xfs", 0, vec![(0, b"XFSB")]),
        ("btrfs", 65600, vec![(65600, b"_BHRfS_M")]),
        (
            "LVM2_member",
            512,
            vec![(512, b"LABELONE"), (536, b"LVM2 001")],
        ),
        (
            "LVM2_member",
            1536,
            vec![(1536, b"LABELONE"), (1560, b"LVM2 001")],
        ),
        ("linux_raid_member", 0, vec![(0, &MD_MAGIC)]),
        ("linux_raid_member", 4096, vec![(4096, &MD_MAGIC)]),
        ("linux_raid_member", md_0_90, vec![(md_0_90, &MD_MAGIC)]),
        ("linux_raid_member", md_1_0, vec![(md_1_0, &MD_MAGIC)]),
        ("swap", 4086, vec![(4086, b"SWAPSPACE2")]),
        ("swap", 65526, vec![(65526, b"SWAP-SPACE")]),
        ("crypto_LUKS", 0, vec![(0, b"LUKS\xba\xbe")]),
        ("crypto_LUKS", 16384, vec![(16384, b"SKUL\xba\xbe")]),
        ("gpt", 512, vec![(512, b"EFI PART"), (510, &[0x55, 0xaa])]),
        ("gpt", 4096, vec![(4096, b"EFI PART")]),
        ("gpt", size - 512, vec![(size - 512, b"EFI PART")]),
        ("dos", 510, vec![(510, &[0x55, 0xaa])]),
        ("ntfs", 3, vec![(3, b"NTFS    "), (510, &[0x55, 0xaa])]),
        ("exfat", 3, vec![(3, b"EXFAT   ")]),
        ("vfat", 82, vec![(82, b"FAT32   "), (510, &[0x55, 0xaa])]),
        ("iso9660", 32769, vec![(32769, b"CD001")]),
        ("zfs_member", 131072 + 3072, vec![(131072 + 3072, &zfs_le)]),
        (
            "zfs_member",
            zfs_l2 + 131072,
            vec![(zfs_l2 + 131072, &zfs_be)],
        ),
        ("f2fs", 1024, vec![(1024, &F2FS_MAGIC)]),
        ("erofs", 1024, vec![(1024, &EROFS_MAGIC)]),
        ("squashfs", 0, vec![(0, b"hsqs")]),
        ("bcache", 4120, vec![(4120, &BCACHE_MAGIC)]),
        ("ceph_bluestore", 0, vec![(0, b"bluestore block device")]),
        ("oracleasm", 32, vec![(32, b"ORCLDISK")]),
        ("ocfs2", 2048, vec![(2048, b"OCFSV2")]),
        ("jfs", 32768, vec![(32768, b"JFS1")]),
        ("reiserfs", 65588, vec![(65588, b"ReIsEr2Fs")]),
        ("vdo", 0, vec![(0, b"dmvdo001")]),
    ];
    for (kind, offset, writes) in cases {
        assert_eq!(
            crafted(size, &writes),
            [(kind, offset)],
            "{kind} at {offset}"
        );
    }
}

#[test]
fn near_misses_are_not_signatures() {
    let size = 64 * MIB + 12_345;
    let cases: Vec<(&str, Writes)> = vec![
        ("LVM label without LVM2 type", vec![(512, b"LABELONE")]),
        (
            "LVM label past sector 3",
            vec![(2048, b"LABELONE"), (2072, b"LVM2 001")],
        ),
        (
            "md magic at size - 64 KiB, unaligned",
            vec![(size - 65536, &MD_MAGIC)],
        ),
        (
            "md magic at size - 8 KiB, unaligned",
            vec![(size - 8192, &MD_MAGIC)],
        ),
        ("btrfs magic at 64 KiB", vec![(65536, b"_BHRfS_M")]),
        ("swap magic off by one", vec![(4087, b"SWAPSPACE2")]),
        ("0xAA55 swapped", vec![(510, &[0xaa, 0x55])]),
    ];
    for (what, writes) in cases {
        assert_eq!(crafted(size, &writes), [], "{what}");
    }
}

#[test]
fn ext_flavour_follows_feature_flags() {
    let magic: (u64, &[u8]) = (1080, &[0x53, 0xef]);
    assert_eq!(crafted(8 * MIB, &[magic]), [("ext2", 1080)]);
    let journal = 0x4u32.to_le_bytes();
    assert_eq!(
        crafted(8 * MIB, &[magic, (1024 + 0x5c, &journal)]),
        [("ext3", 1080)]
    );
    let extents = 0x40u32.to_le_bytes();
    let ext4 = [magic, (1024 + 0x5c, &journal), (1024 + 0x60, &extents)];
    assert_eq!(crafted(8 * MIB, &ext4), [("ext4", 1080)]);
    let journal_dev = 0x8u32.to_le_bytes();
    assert_eq!(
        crafted(8 * MIB, &[magic, (1024 + 0x60, &journal_dev)]),
        [("jbd", 1080)]
    );
}

#[test]
fn several_signatures_are_all_reported_in_offset_order() {
    let found = crafted(
        64 * MIB,
        &[
            (65600, b"_BHRfS_M"),
            (0, b"XFSB"),
            (1080, &[0x53, 0xef]),
            (510, &[0x55, 0xaa]),
        ],
    );
    assert_eq!(
        found,
        [("xfs", 0), ("dos", 510), ("ext2", 1080), ("btrfs", 65600)]
    );
}

/// Fails the test when `tool` is missing: these tests run the real tools
/// (scripts/test.sh installs them); a missing one must not look like a pass.
fn need(tool: &str) {
    let found = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .any(|d| std::path::Path::new(d).join(tool).exists());
    assert!(
        found,
        "{tool} is not installed: run scripts/test.sh (it installs the test tools)"
    );
}

/// Runs `tool args.. image` on a fresh sparse image (always `Some`).
fn made_by(tool: &str, args: &[&str], size: u64, stdin: Option<&str>) -> Option<Vec<Found>> {
    need(tool);
    let (_dir, path) = image(size);
    run_tool(tool, args, &path, stdin);
    Some(signatures(&path))
}

fn run_tool(tool: &str, args: &[&str], path: &Path, stdin: Option<&str>) {
    use std::io::Write;
    let tool_path = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(tool));
    let mut child = Command::new(tool_path)
        .args(args)
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {tool}: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    input
        .write_all(stdin.unwrap_or("").as_bytes())
        .expect("feed stdin");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    assert!(
        out.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn real_ext_filesystems() {
    let quiet = &["-q", "-F"][..];
    for (tool, kind) in [
        ("mkfs.ext2", "ext2"),
        ("mkfs.ext3", "ext3"),
        ("mkfs.ext4", "ext4"),
    ] {
        if let Some(found) = made_by(tool, quiet, 64 * MIB, None) {
            assert_eq!(found, [(kind, 1080)], "{tool}");
        }
    }
}

#[test]
fn real_xfs() {
    // Current xfsprogs refuses filesystems below 300 MiB.
    if let Some(found) = made_by("mkfs.xfs", &["-q", "-f"], 320 * MIB, None) {
        assert_eq!(found, [("xfs", 0)]);
    }
}

#[test]
fn real_btrfs() {
    if let Some(found) = made_by("mkfs.btrfs", &["-q", "-f"], 256 * MIB, None) {
        assert_eq!(found, [("btrfs", 65600)]);
    }
}

#[test]
fn real_swap() {
    if let Some(found) = made_by("mkswap", &[], 64 * MIB, None) {
        // mkswap uses the machine's page size: 4 KiB here, up to 64 KiB elsewhere.
        let pages = [4096u64, 8192, 16384, 65536].map(|p| ("swap", p - 10));
        assert!(found.len() == 1 && pages.contains(&found[0]), "{found:?}");
    }
}

#[test]
fn real_dos_partition_table() {
    if let Some(found) = made_by("sfdisk", &["-q"], 64 * MIB, Some(",,83\n")) {
        assert_eq!(found, [("dos", 510)]);
    }
}

#[test]
fn real_gpt_hides_its_protective_mbr() {
    if let Some(found) = made_by("sgdisk", &["-o", "-n", "1:0:0"], 64 * MIB, None) {
        assert_eq!(found, [("gpt", 512)]);
    }
}

#[test]
fn real_vfat_is_not_called_a_partition_table() {
    if let Some(found) = made_by("mkfs.vfat", &[], 64 * MIB, None) {
        let kinds: Vec<_> = found.iter().map(|f| f.0).collect();
        assert_eq!(kinds, ["vfat"]);
    }
}

#[test]
fn real_luks() {
    let args = [
        "luksFormat",
        "-q",
        "--type",
        "luks2",
        "--pbkdf",
        "pbkdf2",
        "--pbkdf-force-iterations",
        "1000",
        "--key-file=-",
    ];
    if let Some(found) = made_by("cryptsetup", &args, 64 * MIB, Some("not a secret")) {
        assert_eq!(found, [("crypto_LUKS", 0)]);
    }
}

#[test]
fn real_jfs() {
    if let Some(found) = made_by("mkfs.jfs", &["-q"], 64 * MIB, None) {
        assert_eq!(found, [("jfs", 32768)]);
    }
}

#[test]
fn wiped_filesystem_is_fine_again() {
    need("mkfs.ext4");
    need("wipefs");
    let (_dir, path) = image(64 * MIB);
    run_tool("mkfs.ext4", &["-q", "-F"], &path, None);
    assert_eq!(signatures(&path), [("ext4", 1080)]);
    run_tool("wipefs", &["-q", "-a"], &path, None);
    assert_eq!(signatures(&path), []);
}

#[test]
fn refusals_does_not_modify_the_file() {
    let (_dir, path) = image(4 * MIB);
    write_at(&path, 1080, &[0x53, 0xef]);
    let before = fs::read(&path).expect("read");
    let mtime = fs::metadata(&path)
        .expect("stat")
        .modified()
        .expect("mtime");
    refusals(&path).expect("refusals");
    assert_eq!(fs::read(&path).expect("read"), before);
    assert_eq!(
        fs::metadata(&path)
            .expect("stat")
            .modified()
            .expect("mtime"),
        mtime
    );
}

#[test]
fn every_detected_kind_has_a_phrase() {
    let mut kinds: Vec<&str> = MAGICS.iter().map(|m| m.0).collect();
    kinds.extend([
        "ext2",
        "ext3",
        "ext4",
        "jbd",
        "LVM2_member",
        "swap",
        "zfs_member",
        "dos",
    ]);
    for kind in kinds {
        assert_ne!(kind_phrase(kind), kind_phrase("no such kind"), "{kind}");
    }
}
