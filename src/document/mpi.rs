//! A run of several processes under MPI in the run document: the job
//! (`mpi`) and each rank's own sections in the run's shape (`ranks`).
//! `ranks/merge.rs` builds them on rank 0.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{CpuSummary, OpSummary};
use crate::harness::Status;
use crate::workload::slob::instance::Counters;

/// The job of a run under MPI.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MpiSummary {
    pub ranks: u32,
    /// Distinct host names among the ranks.
    pub hosts: u32,
    /// The MPI library (`MPI_Get_library_version`'s first line).
    pub library: String,
    /// Microseconds between the first and the last rank starting its clock
    /// after the start barrier (wall clocks: across hosts this includes the
    /// offset between their clocks).
    pub start_skew_us: f64,
    /// Seconds after the earliest start when the first and the last rank
    /// ended their measurement window (ramp included).
    pub first_done_s: f64,
    pub last_done_s: f64,
    /// The fastest rank's IOPS over the slowest's (1.0: balanced; null when
    /// a rank completed nothing).
    pub imbalance: Option<f64>,
    /// Ranks that never reported (hung past `--mpi-grace`): the run holds
    /// the others' results and is failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_ranks: Vec<u32>,
}

/// One rank of a run under MPI: its host and its own sections.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RankSummary {
    pub rank: u32,
    pub host: String,
    pub status: Status,
    pub error: Option<String>,
    pub sessions: u32,
    /// Microseconds after the earliest rank's start that this one started.
    pub start_offset_us: f64,
    /// Between this rank's first and last session leaving its start gate.
    pub start_skew_us: f64,
    pub measured_s: f64,
    /// Seconds after the earliest start when its window ended (ramp included).
    pub done_s: f64,
    pub peak_rss_bytes: u64,
    pub read: Option<OpSummary>,
    pub write: Option<OpSummary>,
    pub sync: Option<OpSummary>,
    pub total: OpSummary,
    pub cpu: CpuSummary,
    /// The SLOB model's counters over its window (all its threads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slob: Option<Counters>,
    /// Its latency histograms by kind: HDR V2 + deflate, base64.
    pub histograms: BTreeMap<String, String>,
    pub environment: serde_json::Value,
    pub storage: serde_json::Value,
    pub telemetry_window: serde_json::Value,
}
