//! What is sampled every second while a run goes on: the run's own counters
//! (the per-second series and the live status line). Device and host
//! telemetry will join here.

pub mod diskstats;
pub mod host;
pub mod progress;
pub mod series;
pub mod status;
pub mod telemetry;
