//! One block device shared by the ranks of an MPI run
//! (`dbio run --mpi --region-per-rank`): each rank works in a byte range of
//! its own, rank r at `r × bytes`, every region starting and ending on a
//! block and on the device's physical sector, so that no request of one
//! rank touches a sector of another's. `--size` is each rank's region;
//! without it the device is shared out equally.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Why the ranks' regions of a shared device cannot be laid out.
#[derive(Debug, thiserror::Error)]
pub enum RegionError {
    #[error(
        "{what} {size} is not a multiple of {align} bytes (the block size and {device}'s physical sector): each rank's region must start and end on one; give --size {fix}"
    )]
    Unaligned {
        what: String,
        size: u64,
        align: u64,
        device: String,
        fix: u64,
    },
    #[error(
        "--region-per-rank: {ranks} regions of {what} {size} do not fit in {device} ({device_bytes} bytes); {fix}"
    )]
    DoNotFit {
        ranks: u32,
        what: String,
        size: u64,
        device: String,
        device_bytes: u64,
        fix: String,
    },
    #[error(
        "--region-per-rank: {device} ({device_bytes} bytes) is too small for {ranks} regions of one {align}-byte block"
    )]
    TooSmall {
        device: String,
        device_bytes: u64,
        ranks: u32,
        align: u64,
    },
}

/// A rank's byte range of a shared block device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Region {
    /// The rank, and how many ranks share the device.
    pub rank: u32,
    pub ranks: u32,
    /// The region's first byte on the device (`rank × bytes`).
    #[serde(rename = "offset_bytes")]
    pub offset: u64,
    /// The region's length: a multiple of the block size and sector.
    pub bytes: u64,
    /// This rank is the first on its host to name the device: it runs the
    /// write gate (once per host, before any rank opens the device) and its
    /// writes hold the kernel's exclusive claim, keeping mounts out.
    #[serde(skip)]
    pub first_on_host: bool,
}

impl Region {
    /// Rank `rank`'s region of `device` (`device_bytes` long) shared by
    /// `ranks` ranks: `size` bytes each (`what`: the option or the setting
    /// it comes from, for errors), or an equal share. `align` is what
    /// every region starts and ends on (see [`alignment`]). One line naming
    /// the fix when the regions do not fit or `size` is not aligned.
    pub fn split(
        device: &Path,
        device_bytes: u64,
        rank: u32,
        ranks: u32,
        size: Option<u64>,
        what: &str,
        align: u64,
    ) -> Result<Region, RegionError> {
        let n = u64::from(ranks.max(1));
        let bytes = match size {
            Some(s) if s % align != 0 || s == 0 => {
                return Err(RegionError::Unaligned {
                    what: what.to_string(),
                    size: s,
                    align,
                    device: device.display().to_string(),
                    fix: (s / align).max(1) * align,
                });
            }
            Some(s) if s.checked_mul(n).is_none_or(|t| t > device_bytes) => {
                let most = device_bytes / n / align * align;
                let fix = match what {
                    "--size" => {
                        format!("give --size {most} or less, or no --size for an equal share")
                    }
                    _ => format!("make it {most} bytes or less"),
                };
                return Err(RegionError::DoNotFit {
                    ranks,
                    what: what.to_string(),
                    size: s,
                    device: device.display().to_string(),
                    device_bytes,
                    fix,
                });
            }
            Some(s) => s,
            None => device_bytes / n / align * align,
        };
        if bytes == 0 {
            return Err(RegionError::TooSmall {
                device: device.display().to_string(),
                device_bytes,
                ranks,
                align,
            });
        }
        Ok(Region {
            rank,
            ranks,
            offset: u64::from(rank) * bytes,
            bytes,
            first_on_host: false,
        })
    }
}

/// What a region starts and ends on: the block size and the device's
/// physical sector (their least common multiple).
pub fn alignment(block_size: u32, physical_sector: u32) -> u64 {
    let (a, b) = (
        u64::from(block_size.max(1)),
        u64::from(physical_sector.max(1)),
    );
    let gcd = |mut x: u64, mut y: u64| {
        while y != 0 {
            (x, y) = (y, x % y);
        }
        x
    };
    a / gcd(a, b) * b
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn ranks_get_disjoint_aligned_regions_that_fit() {
        let dev = Path::new("/dev/sdx");
        // An equal share, rounded down to the alignment.
        let a = 8192;
        let dev_bytes = 100 * MIB + 4096;
        let rs: Vec<Region> = (0..3)
            .map(|r| Region::split(dev, dev_bytes, r, 3, None, "--size", a).unwrap())
            .collect();
        for (i, r) in rs.iter().enumerate() {
            assert_eq!(r.bytes % a, 0);
            assert_eq!(r.offset % a, 0);
            assert_eq!(r.offset, i as u64 * r.bytes);
            if i > 0 {
                assert_eq!(rs[i - 1].offset + rs[i - 1].bytes, r.offset);
            }
        }
        assert!(rs[2].offset + rs[2].bytes <= dev_bytes);
        assert!(dev_bytes - (rs[2].offset + rs[2].bytes) < 3 * a);
        // --size each.
        let r = Region::split(dev, dev_bytes, 1, 4, Some(16 * MIB), "--size", a).unwrap();
        assert_eq!((r.offset, r.bytes), (16 * MIB, 16 * MIB));
    }

    #[test]
    fn regions_that_do_not_fit_or_are_not_aligned_are_refused_in_one_line() {
        let dev = Path::new("/dev/sdx");
        let e = Region::split(dev, 64 * MIB, 0, 2, Some(40 * MIB), "--size", 8192)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("do not fit") && e.contains("--size 33554432"),
            "{e}"
        );
        let e = Region::split(dev, 64 * MIB, 0, 2, Some(10_000), "--size", 8192)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not a multiple of 8192") && e.contains("--size 8192"),
            "{e}"
        );
        let e = Region::split(dev, 8192, 0, 2, None, "--size", 8192)
            .unwrap_err()
            .to_string();
        assert!(e.contains("too small"), "{e}");
        let e = Region::split(
            dev,
            64 * MIB,
            0,
            2,
            Some(u64::MAX / 8192 * 8192),
            "--size",
            8192,
        );
        assert!(e.unwrap_err().to_string().contains("do not fit"));
        for e in [
            Region::split(dev, 64 * MIB, 0, 2, Some(40 * MIB), "--size", 8192)
                .unwrap_err()
                .to_string(),
            Region::split(dev, 8192, 0, 2, None, "--size", 8192)
                .unwrap_err()
                .to_string(),
        ] {
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn alignment_is_the_block_and_the_sector() {
        assert_eq!(alignment(8192, 512), 8192);
        assert_eq!(alignment(512, 4096), 4096);
        assert_eq!(alignment(12288, 8192), 24576);
    }
}
