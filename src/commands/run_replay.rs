//! The replay arm of the run path: the workload over the prepared target,
//! and its report with the faithfulness section beside the capture.

use super::CommandError;
use super::measure::{Peers, setup_error};
use super::run::histograms;
use crate::config::RunConfig;
use crate::environment::Environment;
use crate::harness;
use crate::report::Report;
use crate::storage::Target;
use crate::workload::Shared;
use crate::workload::replay::faith::Faithfulness;
use crate::workload::replay::{Replay, ReplayConfig};

/// Runs the replay `rc` of `cfg` on `target` among `peers`; its report and
/// histograms.
pub fn run<P: Peers>(
    cfg: &RunConfig,
    rc: &ReplayConfig,
    target: &Target,
    shared: &Shared,
    opts: harness::Options,
    peers: &P,
) -> Result<(Report, super::run_db::Histograms), CommandError> {
    let work = peers.agree(Replay::new(cfg, rc, target, shared).map_err(setup_error))?;
    let out = harness::run_synced(&work, shared, opts, peers.start_sync());
    let faith = Faithfulness::of(rc, &out.parts);
    let histograms = histograms(&out.result);
    let mut report = Report::new(cfg, target, out.result, Environment::capture());
    report.replay = Some(faith);
    Ok((report, histograms))
}
