//! One run made by several processes at once — MPI ranks, on one host or
//! many — stored as one run: each rank's target from a template
//! (`template`), what a rank sends to rank 0 (`wire`), the exact merge of
//! the ranks' measurements (`merge`) and the per-rank table (`text`). With
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
pub mod text;
#[cfg(feature = "mpi")]
mod watch;
pub mod wire;
#[cfg(feature = "mpi")]
mod world;

pub use merge::{MpiSummary, RankSummary};

#[cfg(test)]
mod merge_tests;
