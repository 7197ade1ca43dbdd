//! The harness's seam for watching a run while it goes: an [`Observer`] the
//! control thread calls with what the samplers already made — each second's
//! series point with its latency histograms, each telemetry interval's
//! device and host rates. Sessions never see it: it is called only from the
//! control thread, after a second is over, so the hot path is unchanged
//! (a live endpoint, a textfile, a test's recorder are observers).

use crate::samplers::series::{DueHists, SecondHists, SecondPoint};
use crate::samplers::telemetry::TelemetryPoint;
use crate::workload::live::LiveDb;

/// Watches one run from the control thread. Calls come in this order:
/// `started` once, then `second` and `telemetry` as they are made (seconds
/// in order, each once, the tail after the sessions ended included), then
/// `ended` once. Each call should return quickly: the control loop waits.
pub trait Observer: Sync {
    /// The sessions were released at `start_unix_ns` (UNIX ns).
    fn started(&self, start_unix_ns: u64);
    /// Second `point.t_s` is over: its point, its latency histograms per
    /// operation kind (the series' compact buckets, see `series::bucket`),
    /// and its paced requests' due-time latency and lateness (all zero in a
    /// closed-loop run).
    fn second(&self, point: &SecondPoint, hists: &SecondHists, due: &DueHists);
    /// One telemetry interval: the devices under the target and the host.
    fn telemetry(&self, point: &TelemetryPoint);
    /// What a database run (slob, pg, mysql) has counted so far — waits,
    /// commits, writer I/O — after each second once there is something
    /// (other workloads never call it).
    fn db(&self, _db: &LiveDb) {}
    /// The control loop is over (every session ended, or the run was interrupted).
    fn ended(&self, interrupted: bool);
}
