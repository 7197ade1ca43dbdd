//! What a cluster dbio makes will write, filesystem by filesystem, for the
//! free-space check before anything is made: the cluster itself (initdb's
//! files and the `dbio` database), SLOB's tables (one page per row, the key
//! index), and the WAL up to `max_wal_size`. dbio's own `max_wal_size`
//! (4 GB) is lowered to what the WAL's filesystem has room for; one given
//! with `--pg-set` is counted as given. Space a cluster already there holds
//! is counted as free (it is reused or replaced).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::PAGE;
use super::server::Paths;
use crate::workload::db::allocated;

/// initdb's cluster and the `dbio` database (PostgreSQL 15: about 30 MiB
/// of files and the first 16 MiB WAL segment), with room to spare.
pub(crate) const CLUSTER_BYTES: u64 = 48 << 20;
/// A WAL segment: the WAL goes over `max_wal_size` by up to one.
const SEGMENT: u64 = 16 << 20;
/// dbio's `max_wal_size` where there is room, and the least it lowers it to.
pub(crate) const DEFAULT_MAX_WAL: u64 = 4 << 30;
pub(crate) const LEAST_MAX_WAL: u64 = 64 << 20;
/// dbio's `min_wal_size` (WAL kept for reuse), at most half of max.
const DEFAULT_MIN_WAL: u64 = 256 << 20;

/// Bytes of SLOB's tables: a page per row and the key's index (under 1%).
pub(crate) fn tables_bytes(schemas: u32, scale: u64) -> u64 {
    let rows = scale.saturating_mul(u64::from(schemas));
    let heap = rows.saturating_mul(u64::from(PAGE));
    heap.saturating_add(heap / 100)
        .saturating_add(u64::from(schemas) * 64 * 1024)
}

/// A size setting as postgresql.conf reads `max_wal_size` (a number, then
/// kB, MB, GB or TB; MB without one), in bytes.
pub(crate) fn parse_wal_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..split].parse().ok()?;
    let unit: u64 = match v[split..].trim() {
        "" | "MB" => 1 << 20,
        "kB" => 1 << 10,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// One filesystem's share of what the cluster writes.
#[derive(Debug, Clone)]
pub struct Share {
    /// The nearest existing directory where the files land.
    pub at: PathBuf,
    pub dev: u64,
    pub free: u64,
    pub need: u64,
}

/// What the cluster will write, and where.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub tables: u64,
    pub cluster: u64,
    /// The WAL's `max_wal_size`, and whether `--pg-set` gave it.
    pub max_wal: u64,
    pub wal_given: bool,
    /// The target's filesystem first, then the WAL's when it is another.
    pub shares: Vec<Share>,
}

impl Estimate {
    /// For the cluster at `paths` with `schemas` tables of `scale` rows and
    /// the `--pg-set` settings `set`.
    pub fn new(
        paths: &Paths,
        schemas: u32,
        scale: u64,
        set: &[(String, String)],
    ) -> std::io::Result<Estimate> {
        let tables = tables_bytes(schemas, scale);
        let given = set
            .iter()
            .rev()
            .find(|(k, _)| k == "max_wal_size")
            .and_then(|(_, v)| parse_wal_size(v));
        let data = place(&paths.root)?;
        let wal_apart = !paths.wal.starts_with(&paths.root);
        let mut shares = vec![Share {
            need: (CLUSTER_BYTES + tables).saturating_sub(allocated(&paths.root)),
            ..data
        }];
        let wal_share = match wal_apart {
            true => place(&paths.wal)?,
            false => shares[0].clone(),
        };
        let reclaim = if wal_apart { allocated(&paths.wal) } else { 0 };
        let max_wal = given.unwrap_or_else(|| {
            let other = if wal_share.dev == shares[0].dev {
                shares[0].need
            } else {
                0
            };
            let room = (wal_share.free + reclaim)
                .saturating_sub(other)
                .saturating_sub(SEGMENT);
            (room / SEGMENT * SEGMENT).clamp(LEAST_MAX_WAL, DEFAULT_MAX_WAL)
        });
        let wal_need = (max_wal + SEGMENT).saturating_sub(reclaim);
        match shares.iter_mut().find(|s| s.dev == wal_share.dev) {
            Some(s) => s.need = s.need.saturating_add(wal_need),
            None => shares.push(Share {
                need: wal_need,
                ..wal_share
            }),
        }
        Ok(Estimate {
            tables,
            cluster: CLUSTER_BYTES,
            max_wal,
            wal_given: given.is_some(),
            shares,
        })
    }

    /// The first filesystem without room for its share.
    pub fn short(&self) -> Option<&Share> {
        self.shares.iter().find(|s| s.need > s.free)
    }

    /// The WAL settings dbio gives the server when `--pg-set` gives no
    /// `max_wal_size`: `max_wal_size` and `min_wal_size`, in MB.
    pub fn wal_settings(&self) -> [(String, String); 2] {
        let min = DEFAULT_MIN_WAL.min(self.max_wal / 2 / SEGMENT * SEGMENT);
        [
            ("max_wal_size".into(), format!("{}MB", self.max_wal >> 20)),
            (
                "min_wal_size".into(),
                format!("{}MB", min.max(2 * SEGMENT) >> 20),
            ),
        ]
    }
}

/// Where files under `dir` land: its nearest existing directory, that
/// filesystem's device and free bytes.
fn place(dir: &Path) -> std::io::Result<Share> {
    let at = dir
        .ancestors()
        .find(|a| a.exists())
        .unwrap_or(Path::new("/"))
        .to_path_buf();
    let dev = std::fs::metadata(&at)?.dev();
    let st = rustix::fs::statvfs(&at)?;
    Ok(Share {
        at,
        dev,
        free: st.f_bavail.saturating_mul(st.f_frsize),
        need: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wal_sizes_read_as_the_server_reads_them() {
        assert_eq!(parse_wal_size("64"), Some(64 << 20));
        assert_eq!(parse_wal_size("1GB"), Some(1 << 30));
        assert_eq!(parse_wal_size("512 MB"), Some(512 << 20));
        assert_eq!(parse_wal_size("65536kB"), Some(64 << 20));
        assert_eq!(parse_wal_size("lots"), None);
        assert_eq!(parse_wal_size("1 XB"), None);
    }

    #[test]
    fn everything_the_server_writes_is_counted_on_its_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(&dir.path().join("t"), None);
        let e = Estimate::new(&paths, 2, 1000, &[]).unwrap();
        assert_eq!(e.shares.len(), 1, "WAL beside the data: one filesystem");
        let wal = e.max_wal + SEGMENT;
        assert_eq!(
            e.shares[0].need,
            CLUSTER_BYTES + tables_bytes(2, 1000) + wal
        );
        assert!(e.tables >= 2 * 1000 * 8192);
        let given = Estimate::new(&paths, 2, 1000, &[("max_wal_size".into(), "2GB".into())]);
        let given = given.unwrap();
        assert!(given.wal_given);
        assert_eq!(given.max_wal, 2 << 30);
    }

    #[test]
    fn dbio_lowers_its_max_wal_size_to_the_room_there_is() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::new(&dir.path().join("t"), None);
        let e = Estimate::new(&paths, 1, 10, &[]).unwrap();
        let free = e.shares[0].free;
        let room = free.saturating_sub(CLUSTER_BYTES + tables_bytes(1, 10) + SEGMENT);
        let want = (room / SEGMENT * SEGMENT).clamp(LEAST_MAX_WAL, DEFAULT_MAX_WAL);
        assert_eq!(e.max_wal, want);
        let [(_, max), (_, min)] = e.wal_settings();
        assert_eq!(max, format!("{}MB", want >> 20));
        let min_mb: u64 = min.trim_end_matches("MB").parse().unwrap();
        assert!(min_mb << 20 <= want && min_mb >= 32, "{min}");
    }
}
