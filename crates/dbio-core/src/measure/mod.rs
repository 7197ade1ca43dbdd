//! What a run measures: latency histograms and counters per operation kind,
//! kept per session thread without locks and merged at the end; the outlier
//! list; dbio's own CPU time; and for an open-loop run (`--rate`) the
//! schedule requests fall due on, the pacing of one-at-a-time sessions,
//! and their latency from the due time.

pub mod clock;
pub mod cpu;
pub mod due;
pub mod pace;
pub(crate) mod schedule;
pub mod stats;
