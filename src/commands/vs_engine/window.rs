//! Where `dbio lab vs-engine` places each pair's windows in the checkpoint
//! cycle (`--window`), given to both arms of a pair so that their windows
//! sit alike, and the settings that make both sides' cycles the same
//! length in WAL (`--cycle-wal`): PostgreSQL checkpoints every SIZE of WAL
//! (its `max_wal_size` set so), the model begins one at each switch of its
//! SIZE redo files. InnoDB's checkpoint moves after every flush batch
//! (several times a second), so it has no cycle to place a window in: the
//! innodb pair's window is `any`.

use toml::Value;

use super::usage;
use crate::plan::vs_engine::{engine_arm, model_arm};
use crate::report::vs_engine::{Engine, Pair};
use crate::workload::db::cycle::CycleWindow;

/// The postgres pair's window when `--window` is not given: from a
/// checkpoint until three more complete.
pub const DEFAULT: CycleWindow = CycleWindow::Cycles(3);

/// A WAL segment (PostgreSQL 15's default `wal_segment_size`).
const SEGMENT: u64 = 16 << 20;
/// The largest `--cycle-wal`.
const MOST: u64 = 64 << 30;

/// The window of a pair whose engine is `e`.
fn of(e: Engine, asked: Option<CycleWindow>) -> CycleWindow {
    match e {
        Engine::Pg => asked.unwrap_or(DEFAULT),
        Engine::Mysql => CycleWindow::Any,
    }
}

/// PostgreSQL 15's `max_wal_size` for a checkpoint every `cycle` bytes of
/// WAL: it requests one when the segments since the last redo point reach
/// `floor(max_wal_size / segment / (1 + checkpoint_completion_target))`
/// (`CalculateCheckpointSegments`, the target at its default 0.9), so
/// `floor(1.9 k) + 1` segments give exactly k.
pub fn max_wal_size(cycle: u64) -> u64 {
    let k = cycle / SEGMENT;
    (19 * k / 10 + 1) * SEGMENT
}

/// `--cycle-wal`: whole WAL segments.
fn check_cycle(cycle: u64) -> anyhow::Result<()> {
    if (SEGMENT..=MOST).contains(&cycle) && cycle.is_multiple_of(SEGMENT) {
        return Ok(());
    }
    Err(usage(format!(
        "--cycle-wal {}: give a multiple of 16M (PostgreSQL's WAL segment) from 16M to 64G, e.g. --cycle-wal 32M",
        crate::units::fmt_size(cycle)
    )))
}

/// Each arm's window, and the cycle's settings where the window is placed:
/// (arm, key, value) entries for the plan.
pub fn per_arm(
    asked: Option<CycleWindow>,
    cycle: u64,
    pairs: &[Pair],
) -> anyhow::Result<Vec<(String, String, Value)>> {
    check_cycle(cycle)?;
    if let Some(w) = asked
        && w != CycleWindow::Any
        && pairs.iter().all(|p| p.engine == Engine::Mysql)
    {
        return Err(usage(format!(
            "--window {}: InnoDB's checkpoint moves after every flush batch (several times a second), so it has no cycle to place a window in and the innodb pair always runs --window any; drop --window (it places the postgres pair's)",
            w.words()
        )));
    }
    let mut out = Vec::new();
    let s = |v: String| Value::String(v);
    for p in pairs {
        let w = of(p.engine, asked);
        let (model, engine) = (model_arm(p), engine_arm(p));
        for arm in [&model, &engine] {
            out.push((arm.clone(), "window".into(), s(w.words())));
        }
        if w == CycleWindow::Any || p.engine != Engine::Pg {
            continue;
        }
        out.push((
            model.clone(),
            "redo_file_size".into(),
            s(format!("{}M", cycle >> 20)),
        ));
        out.push((
            engine.clone(),
            "pg_set".into(),
            s(format!("max_wal_size={}MB", max_wal_size(cycle) >> 20)),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_wal_size_gives_one_checkpoint_per_cycle() {
        // PostgreSQL's own arithmetic: floor(segments / 1.9), at least 1.
        let checkpoint_segments = |max: u64| ((max / SEGMENT) as f64 / 1.9).floor().max(1.0) as u64;
        for k in 1..=4096 {
            let max = max_wal_size(k * SEGMENT);
            assert_eq!(checkpoint_segments(max), k, "k={k}: max_wal_size {max}");
        }
        assert_eq!(max_wal_size(16 << 20), 32 << 20);
        assert_eq!(max_wal_size(32 << 20), 64 << 20);
    }
}
