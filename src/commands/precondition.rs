//! `--precondition` (SNIA PTS's preconditioning, docs/steady-state.md):
//! before a steady-state raw run's rounds, the target the user gave — the
//! data files dbio laid out, or the device named in `--target`, which the
//! write gate already let through because the run writes — is written
//! sequentially twice over, through the harness like any run (the same
//! engine, I/O mode and block size; stamped blocks, the lost-write map
//! kept). It is not part of the measured result; how long it took is.

use super::CommandError;
use super::measure::{How, setup_error};
use crate::config::{Pattern, RawConfig, RunConfig, RunLength, WorkloadConfig};
use crate::document::steady::Preconditioned;
use crate::harness::{self, Status};
use crate::storage::Target;
use crate::workload::Shared;
use crate::workload::dist::Distribution;
use crate::workload::raw::Raw;

/// Passes over the whole target (the PTS's "twice the user capacity").
const PASSES: u64 = 2;

/// The fill's raw settings: sequential writes, nothing checked on read.
fn fill_raw(raw: &RawConfig) -> RawConfig {
    RawConfig {
        pattern: Pattern::Seqwrite,
        read_pct: 0,
        distribution: Distribution::Uniform,
        uring: raw.uring,
        verify: crate::verify::online::VerifyOpts {
            reads: false,
            after_write: false,
            ..raw.verify
        },
    }
}

/// The sequential fill's settings: the run's target, engine and block
/// size, every block written `PASSES` times, nothing paced.
fn fill_config(cfg: &RunConfig, raw: RawConfig, target: &Target) -> RunConfig {
    let blocks = target.total_blocks();
    // Each session streams its own slice: whole passes need equal slices.
    let sessions = if blocks.is_multiple_of(u64::from(cfg.sessions)) {
        cfg.sessions
    } else {
        1
    };
    RunConfig {
        sessions,
        length: RunLength::Ops {
            ops: blocks * PASSES,
        },
        hotspot: None,
        rate_iops: None,
        arrival: None,
        steady: None,
        workload: WorkloadConfig::Raw(raw),
        ..cfg.clone()
    }
}

/// Writes `target` sequentially twice, saying so on stderr.
pub fn fill(
    cfg: &RunConfig,
    raw: &RawConfig,
    target: &Target,
    how: &How,
) -> Result<Preconditioned, CommandError> {
    let pre_raw = fill_raw(raw);
    let pre = fill_config(cfg, pre_raw, target);
    let bytes = target.size_bytes() * PASSES;
    if how.notes {
        eprintln!(
            "precondition: writing {} sequentially {PASSES} times ({} in all) before the rounds",
            crate::terminal::field(&target.path.display().to_string()),
            crate::units::fmt_size(bytes)
        );
    }
    let shared = Shared::new(0.0);
    let mut work = Raw::new(&pre, &pre_raw, target, &shared).map_err(setup_error)?;
    let opts = harness::Options {
        time_s: None,
        interval_s: cfg.interval_s,
        interrupt: how.interrupt,
        status: None,
        observer: None,
        window: None,
        steady: None,
    };
    let result = harness::run(&work, &shared, opts).result;
    if let Err(e) = work.finish() {
        eprintln!(
            "warning: the lost-write map was not saved after preconditioning: {}",
            crate::terminal::line(&e.to_string())
        );
    }
    match result.status {
        Status::Completed => {}
        Status::Interrupted => {
            return Err(CommandError::Interrupted(
                "interrupted while preconditioning the target; nothing was measured".into(),
            ));
        }
        Status::Failed => {
            return Err(CommandError::Failed(format!(
                "preconditioning (the sequential fill) failed: {}",
                result.error.as_deref().unwrap_or("unknown error")
            )));
        }
    }
    let done = Preconditioned {
        passes: PASSES as u32,
        bytes,
        seconds: result.measured_s,
        mib_per_s: bytes as f64 / (1 << 20) as f64 / result.measured_s.max(1e-9),
    };
    if how.notes {
        eprintln!(
            "precondition: done in {:.1} s ({:.0} MiB/s)",
            done.seconds, done.mib_per_s
        );
    }
    Ok(done)
}
