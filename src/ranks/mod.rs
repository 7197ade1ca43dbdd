//! One run made by several processes at once — MPI ranks, on one host or
//! many — stored as one run: each rank's target from a template
//! (`template`), what a rank sends to rank 0 (`wire`), the exact merge of
//! the ranks' measurements (`merge`; the per-rank table is
//! `report::run::ranks_text`). `run` and `plan` are `dbio run --mpi` and
//! `dbio plan run --mpi`, which `main` calls instead of `commands`. With
//! the `mpi` cargo feature, the MPI side: `world` (start barrier, errors
//! agreed by every rank, gathering), `command` (`dbio run --mpi`) `plan`
//! (`dbio plan run --mpi`: every rank walks the plan, rank 0 stores) and
//! `shared_device` (`--region-per-rank`: one device, a region per rank),
//! `watch` (the heartbeats that end a job whose rank hangs before the
//! start) and `live` (each rank's live metrics, `--metrics-listen`).

#[cfg(feature = "mpi")]
pub mod command;
#[cfg(feature = "mpi")]
mod live;
pub mod merge;
#[cfg(feature = "mpi")]
pub mod plan;
#[cfg(feature = "mpi")]
mod shared_device;
pub mod template;
#[cfg(feature = "mpi")]
mod watch;
pub mod wire;
#[cfg(feature = "mpi")]
mod world;

pub use merge::{MpiSummary, RankSummary};

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::commands::CommandError;
use crate::options::RunArgs;
use crate::store::Store;

/// `dbio run --mpi`: this process is one rank of an MPI job.
pub fn run(
    args: RunArgs,
    open_store: impl FnOnce(Option<PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<ExitCode> {
    let open_store = |db| open_store(db).map_err(CommandError::from);
    #[cfg(feature = "mpi")]
    return Ok(command::execute(args, open_store)?);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (args, open_store);
        Err(CommandError::Usage(NO_MPI.into()).into())
    }
}

/// `dbio plan run PLAN --mpi`: this process is one rank of an MPI job.
pub fn plan(
    path: &Path,
    db: (Option<PathBuf>, crate::metrics::Wanted),
    open_store: impl FnOnce(Option<PathBuf>) -> anyhow::Result<Store>,
) -> anyhow::Result<ExitCode> {
    let open_store = |db| open_store(db).map_err(CommandError::from);
    #[cfg(feature = "mpi")]
    return Ok(plan::execute(path, db, open_store)?);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = (path, db, open_store);
        Err(CommandError::Usage(NO_MPI.into()).into())
    }
}

/// The error of `--mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
const NO_MPI: &str = "--mpi: this dbio was built without MPI; build it with `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev) and start it under mpirun";

#[cfg(test)]
mod merge_tests;
