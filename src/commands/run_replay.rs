//! The replay arm of `dbio run`: the workload over the prepared target,
//! and its report with the faithfulness section beside the capture.

use super::CommandError;
use super::run::histograms;
use crate::config::RunConfig;
use crate::environment::Environment;
use crate::harness;
use crate::report::Report;
use crate::storage::Target;
use crate::workload::replay::Replay;
use crate::workload::replay::faith::Faithfulness;
use crate::workload::{SetupError, Shared};

/// Runs the replay of `cfg.replay` on `target`; its report and histograms.
pub fn run(
    cfg: &RunConfig,
    target: &Target,
    shared: &Shared,
    opts: harness::Options,
) -> Result<(Report, super::run_db::Histograms), CommandError> {
    let rc = cfg.replay.as_ref().expect("a replay run");
    let work = Replay::new(cfg, rc, target, shared).map_err(|e| match e {
        SetupError::Target(e) => CommandError::Failed(e.to_string()),
        e => CommandError::Usage(e.to_string()),
    })?;
    let out = harness::run(&work, shared, opts);
    let faith = Faithfulness::of(rc, &out.parts);
    let histograms = histograms(&out.result);
    let mut report = Report::new(cfg, target, out.result, Environment::capture());
    report.replay = Some(faith);
    Ok((report, histograms))
}
