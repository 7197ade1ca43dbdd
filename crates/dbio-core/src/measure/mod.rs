//! What a run measures: latency histograms and counters per operation kind,
//! kept per session thread without locks and merged at the end; the outlier
//! list; dbio's own CPU time.

pub mod clock;
pub mod cpu;
pub mod stats;
