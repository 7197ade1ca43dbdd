//! `dbio plan run PLAN --mpi` under the real Open MPI: every rank walks the
//! plan, each run is a run under MPI stored once by rank 0 with its ranks;
//! running the plan again skips what rank 0's store has; a run that fails
//! on one rank fails on every rank and the job ends instead of hanging.
//! Compiled only with `--features mpi`.

use std::path::Path;

use crate::common::store::{store_path, temp_store};
use crate::mpi::{alone, launch, stderr};

crate::tests! {
    a_plan_under_mpi_stores_each_run_once_with_every_rank [Tool("mpirun")],
    a_run_failing_on_one_rank_fails_the_plan_on_every_rank [Tool("mpirun")],
}

/// A plan of one arm on `target`, two cells (sessions 1 and 2), one repeat.
fn write_plan(dir: &Path, target: &str) -> String {
    let plan = dir.join("two.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "two"
repeats = 1

[workload]
target = "{target}"
size = "4M"
ops = 1500

[sweep]
sessions = [1, 2]
"#
        ),
    )
    .unwrap();
    plan.display().to_string()
}

fn a_plan_under_mpi_stores_each_run_once_with_every_rank() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = write_plan(dir.path(), &format!("{}/r{{rank}}", dir.path().display()));
    let ((out, again), left) = alone(|| {
        let first = launch(2, &["plan", "run", &plan, "--mpi"])
            .output()
            .unwrap();
        let again = launch(2, &["plan", "run", &plan, "--mpi"])
            .output()
            .unwrap();
        (first, again)
    });
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    // Rank 0 alone prints: one progress line per run and the summary.
    assert_eq!(err.matches("dbio plan two: run ").count(), 2, "{err}");
    assert!(
        err.contains("plan two: 2 runs completed now, 0 already done"),
        "{err}"
    );
    for r in ["r0", "r1"] {
        assert!(dir.path().join(r).is_dir(), "rank {r}'s target");
    }

    let store = dbio::store::Store::open(&store_path()).unwrap();
    let rows = store.list(&Default::default()).unwrap();
    let mut keys: Vec<String> = rows.iter().filter_map(|r| r.cell_key.clone()).collect();
    keys.sort();
    assert_eq!(
        keys,
        ["default|sessions=1|rep=1", "default|sessions=2|rep=1"],
        "exactly the plan's runs"
    );
    for row in &rows {
        assert_eq!(row.status, "completed");
        assert_eq!(row.plan.as_deref(), Some("two"));
        let r = store.get(row.id).unwrap().report;
        let per_rank: u64 = if row.cell_key.as_deref().unwrap().contains("sessions=1") {
            1
        } else {
            2
        };
        assert_eq!(r["mpi"]["ranks"], 2, "{}", row.id);
        let ranks = r["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2);
        for k in ranks {
            assert_eq!(k["sessions"].as_u64(), Some(per_rank));
            assert_eq!(k["total"]["requests"], 1500, "each rank did its --ops");
        }
        assert_eq!(r["config"]["sessions"].as_u64(), Some(2 * per_rank));
        assert_eq!(r["total"]["requests"], 3000);
    }

    // Again: rank 0's store says both are done, and every rank skips them.
    let err = stderr(&again);
    assert!(again.status.success(), "{err}");
    assert!(
        err.contains("0 runs completed now, 2 already done"),
        "{err}"
    );
    assert_eq!(store.list(&Default::default()).unwrap().len(), 2);
}

fn a_run_failing_on_one_rank_fails_the_plan_on_every_rank() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    // Rank 0's directory's parent exists, rank 1's does not.
    std::fs::create_dir(dir.path().join("p0")).unwrap();
    let plan = write_plan(
        dir.path(),
        &format!("{}/p{{rank}}/data", dir.path().display()),
    );
    let (out, left) = alone(|| {
        launch(2, &["plan", "run", &plan, "--mpi"])
            .output()
            .unwrap()
    });
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    assert!(err.contains("rank 1 ("), "the failed rank is named: {err}");
    assert!(err.contains("plan two:"), "{err}");
    assert!(!dir.path().join("p1").exists());
    let runs = dbio::store::Store::open(&store_path())
        .unwrap()
        .list(&Default::default())
        .unwrap();
    assert!(
        runs.iter().all(|r| r.status != "completed"),
        "nothing completed: {runs:?}"
    );
}
