//! `dbio run --mpi --region-per-rank`: the ranks share one block device,
//! each in a byte range of its own (`target::region`). The ranks check
//! together that they name one device — the same node on each host, the
//! same size everywhere — and the first rank on each host is the one that
//! runs the device's write gate and holds the kernel's exclusive claim.

use super::world::World;
use crate::commands::CommandError;
use crate::config::RunConfig;
use crate::storage::device;
use crate::storage::region::{Region, alignment};

/// This rank's region of the device every rank names in `cfg.target`. An
/// error is every rank's (the ranks decide from the same gathered facts).
pub(super) fn region(world: &World, cfg: &RunConfig) -> Result<Region, CommandError> {
    let path = &cfg.target;
    let usage = |m: String| CommandError::Usage(m);
    let local = if device::is_block_device(path) {
        device::probe(path).map_err(|e| usage(e.to_string()))
    } else {
        Err(usage(format!(
            "--region-per-rank shares one block device among the ranks; --target {} is not a block device (give each rank a directory of its own with {{rank}} instead)",
            path.display()
        )))
    };
    let info = world.agree(local)?;
    let mine = format!(
        "{} {}:{} {}",
        info.size_bytes, info.major, info.minor, info.physical_sector
    );
    let all: Vec<(u64, String, u32)> = world
        .all_gather(mine.as_bytes())
        .iter()
        .map(|b| {
            let s = String::from_utf8_lossy(b);
            let mut f = s.split(' ');
            let size = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            let dev = f.next().unwrap_or("").to_string();
            let sector = f.next().and_then(|v| v.parse().ok()).unwrap_or(512);
            (size, dev, sector)
        })
        .collect();
    for (r, (size, dev, _)) in all.iter().enumerate() {
        if *size != all[0].0 {
            return Err(usage(format!(
                "--region-per-rank: {} sees --target as {size} bytes, {} as {} bytes; every rank must name the one device they share",
                world.name(r as u32),
                world.name(0),
                all[0].0
            )));
        }
        let host = &world.hosts[r];
        if let Some(q) = (0..r).find(|&q| world.hosts[q] == *host && all[q].1 != *dev) {
            return Err(usage(format!(
                "--region-per-rank: ranks {q} and {r} on host {host} name different devices ({} and {dev}); every rank must name the one device they share",
                all[q].1
            )));
        }
    }
    let sector = all.iter().map(|a| a.2).max().unwrap_or(512);
    let align = alignment(cfg.block_size, sector);
    let rank = world.rank;
    // The SLOB model's size is its tablespace, each rank's own.
    let what = match cfg.workload.model() {
        Some(_) => "the tablespace (--scale x --schemas) of",
        None => "--size",
    };
    let size = cfg.size_bytes;
    let region = Region::split(path, info.size_bytes, rank, world.size, size, what, align);
    let mut region = region.map_err(|e| usage(e.to_string()))?;
    let host = &world.hosts[rank as usize];
    region.first_on_host = world.hosts.iter().position(|h| h == host) == Some(rank as usize);
    Ok(region)
}
