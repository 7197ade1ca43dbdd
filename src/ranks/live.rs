//! Live metrics under MPI (`--metrics-listen`, `--metrics-textfile` with
//! `--mpi`; docs/metrics.md, "Under MPI"): every rank serves its own view —
//! its sessions' per-second data, its host's devices and CPU — with a
//! `rank` label, on the given port plus its rank (any free port for 0), and
//! writes `dbio-rank-N.prom`; nothing crosses between ranks while the run
//! goes (a live merge would be a collective a second beside the measured
//! work). Every rank binds before anything is laid out, the ranks agree
//! (one rank that cannot bind ends the job, named), and rank 0 says where
//! every rank serves.

use super::world::World;
use crate::commands::CommandError;
use crate::metrics::{Live, Wanted};

/// Starts this rank's live view, or `None` when `wanted` asks nothing.
pub(super) fn start(world: &World, wanted: &Wanted) -> Result<Option<Live>, CommandError> {
    let mine =
        Live::start_as(wanted, Some(world.rank)).map_err(|e| CommandError::Usage(e.to_string()));
    let live = world.agree(mine)?;
    let addr = live
        .as_ref()
        .and_then(|l| l.addr)
        .map(|a| a.to_string())
        .unwrap_or_default();
    let all = world.all_gather(addr.as_bytes());
    if world.rank == 0 {
        for (r, a) in all.iter().enumerate().filter(|(_, a)| !a.is_empty()) {
            let a = String::from_utf8_lossy(a);
            eprintln!(
                "live metrics at http://{a}/metrics, live page at http://{a}/ ({})",
                world.name(r as u32)
            );
        }
    }
    Ok(live)
}
