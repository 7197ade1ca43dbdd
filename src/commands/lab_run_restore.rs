//! `restore = true` arms of `dbio lab run` (docs/lab.md): every run starts
//! from the state the data was loaded in. Before an arm's first run on a
//! new filesystem, a load run (the arm's options for 1 s, no updates, no
//! ramp; stored as the warm-up `ARM|load`, not counted) makes the data —
//! initdb or the instance, the tables, the model's datafiles — and stops
//! the server; the target is then copied beside itself (`lab::snapshot`).
//! Before every run the target is made again from that copy, and the run
//! records the copy's fingerprint and the restored one's (`lab.restore`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::plan::run_args;
use super::run::{Output, RunMeta};
use crate::lab::LabInfo;
use crate::lab::snapshot::{self, Fingerprint};
use crate::plan::{ExecError, PlannedRun, RunStatus};
use crate::store::Store;

/// The load run's options over the arm's own: as short as a run can be,
/// reading only, so it changes nothing the load made (`--update-pct` and
/// `--window` only where the arm has them: not every workload takes them).
const LOAD_RUN: [(&str, &str, bool); 4] = [
    ("--time", "1", true),
    ("--ramp", "0", true),
    ("--update-pct", "0", false),
    ("--window", "any", false),
];

/// The cell key the load run is stored under.
pub(super) fn load_key(arm: &str) -> String {
    format!("{arm}|load")
}

/// `args` with each of `over` set: replaced where given, else added if
/// its third field says so.
fn with_options(args: &[String], over: &[(&str, &str, bool)]) -> Vec<String> {
    let mut out = args.to_vec();
    for (flag, value, add) in over {
        match out.iter().position(|a| a == flag) {
            Some(i) if i + 1 < out.len() => out[i + 1] = value.to_string(),
            _ if *add => out.extend([flag.to_string(), value.to_string()]),
            _ => {}
        }
    }
    out
}

/// The run's `--target`.
fn target_of(args: &[String]) -> Option<PathBuf> {
    let i = args.iter().position(|a| a == "--target")?;
    args.get(i + 1).map(PathBuf::from)
}

/// What restoring needs from the lab's executor.
pub(super) struct Restorer<'a> {
    pub store: &'a mut Store,
    pub interrupt: &'a AtomicBool,
    pub output: Output,
    /// Each target's loaded state, once kept (this command's filesystems).
    pub kept: &'a mut HashMap<PathBuf, Fingerprint>,
}

impl Restorer<'_> {
    /// Makes `r`'s target the loaded state (loading and keeping it first if
    /// this filesystem has none) and notes it in `info`. `Err(status)`: the
    /// load run did not complete, and the run is not made.
    pub fn before_run(
        &mut self,
        r: &PlannedRun,
        plan_name: &str,
        (args, mount): (&[String], &Path),
        info: &mut LabInfo,
    ) -> Result<Result<(), RunStatus>, ExecError> {
        let Some(target) = target_of(args).filter(|t| t.starts_with(mount)) else {
            return Err(format!(
                "arm {}: restore = true needs a target under the arm's mount {} (a dbio bug)",
                r.variable,
                mount.display()
            )
            .into());
        };
        if !self.kept.contains_key(&target) {
            if let Err(status) = self.load(r, plan_name, args, info) {
                return Ok(Err(status));
            }
            let loaded = snapshot::keep(&target, &r.variable).map_err(|e| e.to_string())?;
            eprintln!(
                "lab {plan_name}: arm {}: the loaded data kept in {} ({} files, {})",
                r.variable,
                snapshot::kept_dir(&target).display(),
                loaded.files,
                crate::units::fmt_size(loaded.bytes)
            );
            self.kept.insert(target.clone(), loaded);
        }
        let loaded = self.kept[&target];
        let t0 = Instant::now();
        let restored = snapshot::restore(&target).map_err(|e| e.to_string())?;
        let seconds = t0.elapsed().as_secs_f64();
        if restored != loaded {
            return Err(format!(
                "arm {}: {} as restored ({} files, {} bytes, crc32c {:08x}) is not the loaded data kept in {} ({} files, {} bytes, crc32c {:08x})",
                r.variable,
                target.display(),
                restored.files,
                restored.bytes,
                restored.crc32c,
                snapshot::kept_dir(&target).display(),
                loaded.files,
                loaded.bytes,
                loaded.crc32c
            )
            .into());
        }
        info.detail["restore"] = serde_json::json!({
            "kept": snapshot::kept_dir(&target),
            "loaded": loaded,
            "restored": restored,
            "seconds": seconds,
        });
        info.summary.push_str(&format!(
            "; {} restored as loaded ({} files, {}, crc32c {:08x}) in {seconds:.1} s",
            target.display(),
            restored.files,
            crate::units::fmt_size(restored.bytes),
            restored.crc32c
        ));
        Ok(Ok(()))
    }

    /// The load run: the arm's options, 1 s without updates; stored as a
    /// warm-up so no table counts it.
    fn load(
        &mut self,
        r: &PlannedRun,
        plan_name: &str,
        args: &[String],
        info: &LabInfo,
    ) -> Result<(), RunStatus> {
        eprintln!(
            "lab {plan_name}: arm {}: loading the data once (a 1 s run without updates, stored as warm-up {})",
            r.variable,
            load_key(&r.variable)
        );
        let meta = RunMeta {
            plan: Some(plan_name.to_string()),
            variable: Some(r.variable.clone()),
            cell_key: Some(load_key(&r.variable)),
            warmup: true,
            tags: Vec::new(),
            lab: Some(info.clone()),
            live: None,
            capture: false,
        };
        let load_args = with_options(args, &LOAD_RUN);
        match run_args(self.store, self.interrupt, &load_args, (&meta, self.output)) {
            Ok(RunStatus::Completed) => Ok(()),
            Ok(RunStatus::Failed(why)) => Err(RunStatus::Failed(format!(
                "arm {}: loading the data failed: {why}",
                r.variable
            ))),
            Ok(other) => Err(other),
            Err(e) => Err(RunStatus::Failed(format!(
                "arm {}: loading the data failed: {e}",
                r.variable
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_load_run_replaces_the_arms_length_and_updates() {
        let args: Vec<String> = [
            "--target",
            "/m/pg/dbio",
            "--time",
            "60",
            "--update-pct",
            "25",
        ]
        .map(String::from)
        .to_vec();
        let got = with_options(&args, &LOAD_RUN).join(" ");
        assert_eq!(got, "--target /m/pg/dbio --time 1 --update-pct 0 --ramp 0");
        assert_eq!(target_of(&args), Some(PathBuf::from("/m/pg/dbio")));
    }
}
