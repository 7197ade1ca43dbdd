//! On-disk signatures: filesystems, volume managers, RAID members, swap,
//! encrypted volumes, Oracle ASM disks and partition tables, found by their
//! magic numbers in the first and last [`SCAN_BYTES`] of a device or file,
//! with blkid's names. This is dbio's own table: for block devices `wipefs`
//! (libblkid) is asked as well, and this table is what remains where
//! util-linux is absent.
//!
//! [`Sample`] holds the two ends; [`MAGICS`] are fixed strings at fixed
//! offsets and [`DETECTORS`] the signatures whose place or name depends on the
//! contents or the size.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::{DeviceError, Refusal, io_err};

/// How many bytes at each end of a device are examined for signatures.
const SCAN_BYTES: u64 = 1 << 20;

pub(super) fn signature_refusals(path: &Path, size: u64) -> Result<Vec<Refusal>, DeviceError> {
    let file = File::open(path).map_err(io_err("open", path))?;
    let sample = Sample::read(&file, size).map_err(io_err("read", path))?;
    Ok(detect_signatures(&sample)
        .into_iter()
        .map(|(kind, offset)| Refusal::Signature { kind, offset })
        .collect())
}

/// The first and last [`SCAN_BYTES`] of a device or file.
struct Sample {
    size: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
    tail_start: u64,
}

impl Sample {
    fn read(file: &File, size: u64) -> io::Result<Sample> {
        let tail_start = size.saturating_sub(SCAN_BYTES);
        Ok(Sample {
            size,
            head: read_up_to(file, 0, size.min(SCAN_BYTES))?,
            tail: read_up_to(file, tail_start, size - tail_start)?,
            tail_start,
        })
    }

    /// `len` bytes at absolute `offset`, if they lie inside the sampled ends.
    fn at(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let end = offset.checked_add(len as u64)?;
        if end > self.size {
            return None;
        }
        if end <= self.head.len() as u64 {
            return self.head.get(offset as usize..end as usize);
        }
        let start = usize::try_from(offset.checked_sub(self.tail_start)?).ok()?;
        self.tail.get(start..start + len)
    }

    fn has(&self, offset: u64, magic: &[u8]) -> bool {
        self.at(offset, magic.len()) == Some(magic)
    }

    fn le32(&self, offset: u64) -> Option<u32> {
        let bytes = self.at(offset, 4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// pread until `len` bytes or end of file.
pub(super) fn read_up_to(file: &File, offset: u64, len: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    buf.truncate(done);
    Ok(buf)
}

/// A signature kind and the byte offset where it was found.
type Found = (&'static str, u64);

/// A fixed magic string at a fixed offset from the start: (kind, offset, bytes).
type Magic = (&'static str, u64, &'static [u8]);

const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();
const F2FS_MAGIC: [u8; 4] = 0xf2f5_2010_u32.to_le_bytes();
const EROFS_MAGIC: [u8; 4] = 0xe0f5_e1e2_u32.to_le_bytes();
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

const MAGICS: &[Magic] = &[
    ("xfs", 0, b"XFSB"),
    ("btrfs", 65536 + 64, b"_BHRfS_M"),
    // md v1.1 at 0, v1.2 at 4 KiB; v0.90 and v1.0 live near the end.
    ("linux_raid_member", 0, &MD_MAGIC),
    ("linux_raid_member", 4096, &MD_MAGIC),
    ("crypto_LUKS", 0, b"LUKS\xba\xbe"),
    ("gpt", 512, b"EFI PART"),
    ("gpt", 4096, b"EFI PART"),
    ("ntfs", 3, b"NTFS    "),
    ("exfat", 3, b"EXFAT   "),
    ("vfat", 54, b"FAT12   "),
    ("vfat", 54, b"FAT16   "),
    ("vfat", 82, b"FAT32   "),
    ("iso9660", 32769, b"CD001"),
    ("f2fs", 1024, &F2FS_MAGIC),
    ("erofs", 1024, &EROFS_MAGIC),
    ("squashfs", 0, b"hsqs"),
    ("bcache", 4096 + 24, &BCACHE_MAGIC),
    ("ceph_bluestore", 0, b"bluestore block device"),
    // Oracle ASM disk label (ASMLib's and ASM's own): "ORCLDISK" at byte 32.
    ("oracleasm", 32, b"ORCLDISK"),
    ("ocfs2", 1024, b"OCFSV2"),
    ("ocfs2", 2048, b"OCFSV2"),
    ("ocfs2", 4096, b"OCFSV2"),
    ("ocfs2", 8192, b"OCFSV2"),
    ("jfs", 32768, b"JFS1"),
    ("reiserfs", 65536 + 52, b"ReIsErFs"),
    ("reiserfs", 65536 + 52, b"ReIsEr2Fs"),
    ("reiserfs", 65536 + 52, b"ReIsEr3Fs"),
    ("reiserfs", 8192 + 52, b"ReIsErFs"),
    ("vdo", 0, b"dmvdo001"),
];

/// Detectors whose offset or verdict depends on the contents or the size.
const DETECTORS: &[fn(&Sample) -> Option<Found>] = &[
    ext,
    lvm2,
    swap,
    luks2_secondary,
    md_0_90,
    md_1_0,
    gpt_backup,
    zfs,
];

/// Signatures whose boot sector explains a 0x55AA at byte 510.
const BOOT_SECTOR_OWNERS: &[&str] = &["gpt", "vfat", "ntfs", "exfat"];

/// Every signature found, lowest offset first, one per kind.
fn detect_signatures(sample: &Sample) -> Vec<Found> {
    let mut found: Vec<Found> = MAGICS
        .iter()
        .filter(|(_, offset, bytes)| sample.has(*offset, bytes))
        .map(|&(kind, offset, _)| (kind, offset))
        .collect();
    found.extend(DETECTORS.iter().filter_map(|detect| detect(sample)));
    let explained = found.iter().any(|(k, _)| BOOT_SECTOR_OWNERS.contains(k));
    if !explained && sample.has(510, &[0x55, 0xaa]) {
        found.push(("dos", 510));
    }
    found.sort_by_key(|&(_, offset)| offset);
    let mut unique: Vec<Found> = Vec::new();
    for f in found {
        if !unique.iter().any(|(k, _)| *k == f.0) {
            unique.push(f);
        }
    }
    unique
}

/// ext2/3/4: magic 0xEF53 at byte 1080, named by feature flags as blkid does.
fn ext(s: &Sample) -> Option<Found> {
    const SB: u64 = 1024;
    const HAS_JOURNAL: u32 = 0x4;
    const JOURNAL_DEV: u32 = 0x8;
    // Incompat: filetype, recover, meta_bg; ro_compat: sparse_super, large_file, btree_dir.
    const EXT3_INCOMPAT: u32 = 0x2 | 0x4 | 0x10;
    const EXT3_RO_COMPAT: u32 = 0x1 | 0x2 | 0x4;
    if !s.has(SB + 56, &[0x53, 0xef]) {
        return None;
    }
    let compat = s.le32(SB + 0x5c)?;
    let incompat = s.le32(SB + 0x60)?;
    let ro_compat = s.le32(SB + 0x64)?;
    let kind = if incompat & JOURNAL_DEV != 0 {
        "jbd"
    } else if incompat & !EXT3_INCOMPAT != 0 || ro_compat & !EXT3_RO_COMPAT != 0 {
        "ext4"
    } else if compat & HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    };
    Some((kind, SB + 56))
}

/// LVM2 PV label: "LABELONE" in one of the first four 512-byte sectors, "LVM2 001" 24 bytes in.
fn lvm2(s: &Sample) -> Option<Found> {
    (0..4u64)
        .map(|sector| sector * 512)
        .find(|&o| s.has(o, b"LABELONE") && s.has(o + 24, b"LVM2 001"))
        .map(|o| ("LVM2_member", o))
}

/// Swap: "SWAPSPACE2" (or the old "SWAP-SPACE") ending at the first page, for any page size.
fn swap(s: &Sample) -> Option<Found> {
    [4096u64, 8192, 16384, 65536]
        .iter()
        .map(|page| page - 10)
        .find(|&o| s.has(o, b"SWAPSPACE2") || s.has(o, b"SWAP-SPACE"))
        .map(|o| ("swap", o))
}

/// LUKS2 keeps a second header copy at a power-of-two offset from 16 KiB.
fn luks2_secondary(s: &Sample) -> Option<Found> {
    (14..20)
        .map(|shift| 1u64 << shift)
        .find(|&o| s.has(o, b"SKUL\xba\xbe"))
        .map(|o| ("crypto_LUKS", o))
}

/// md v0.90: superblock in the last 64 KiB-aligned 64 KiB block.
fn md_0_90(s: &Sample) -> Option<Found> {
    let offset = (s.size & !65535).checked_sub(65536)?;
    s.has(offset, &MD_MAGIC)
        .then_some(("linux_raid_member", offset))
}

/// md v1.0: superblock 8 KiB before the end, 4 KiB aligned.
fn md_1_0(s: &Sample) -> Option<Found> {
    let offset = s.size.checked_sub(8192)? & !4095;
    s.has(offset, &MD_MAGIC)
        .then_some(("linux_raid_member", offset))
}

/// GPT backup header in the last sector (512-byte or 4 KiB sectors).
fn gpt_backup(s: &Sample) -> Option<Found> {
    [512u64, 4096]
        .iter()
        .filter_map(|sector| s.size.checked_sub(*sector))
        .find(|&o| s.has(o, b"EFI PART"))
        .map(|o| ("gpt", o))
}

/// ZFS: uberblock magic in the uberblock ring (second half) of any of the four 256 KiB labels.
fn zfs(s: &Sample) -> Option<Found> {
    const LABEL: u64 = 256 * 1024;
    let end_labels = (s.size & !(LABEL - 1)).checked_sub(2 * LABEL);
    [
        Some(0),
        Some(LABEL),
        end_labels,
        end_labels.map(|o| o + LABEL),
    ]
    .into_iter()
    .flatten()
    .find_map(|label| zfs_uberblock(s, label))
}

fn zfs_uberblock(s: &Sample, label: u64) -> Option<Found> {
    let ring = label + 128 * 1024;
    (0..128u64)
        .map(|i| ring + i * 1024)
        .find(|&o| {
            s.has(o, &ZFS_UBERBLOCK_MAGIC.to_le_bytes())
                || s.has(o, &ZFS_UBERBLOCK_MAGIC.to_be_bytes())
        })
        .map(|o| ("zfs_member", o))
}

#[cfg(test)]
#[path = "tests_signatures.rs"]
mod tests;
