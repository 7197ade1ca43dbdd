//! `dbio run --mpi --region-per-rank` under the real Open MPI: two ranks
//! share one loop device, each writing only its own region (read back from
//! the device: every stamped block carries its own offset, and each region
//! holds exactly its rank's blocks); regions that do not fit, a directory
//! target, and a device another dbio command holds (a whole-device lock, or
//! an overlapping region) are refused in one line with nothing written.
//! Compiled only with `--features mpi`.

use std::collections::BTreeSet;
use std::path::Path;

use dbio::storage::block::verify;
use dbio::storage::lock::TargetLock;
use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};
use crate::mpi::{alone, launch, mpirun, stderr};

crate::tests! {
    two_ranks_write_only_their_own_region_of_one_loop_device [Root, Tool("mpirun"), Tool("losetup")],
    regions_that_do_not_fit_or_are_held_are_refused_in_one_line [Root, Tool("mpirun"), Tool("losetup")],
    a_plan_under_mpi_runs_in_regions [Root, Tool("mpirun"), Tool("losetup")],
}

const MIB: u64 = 1 << 20;
const BS: usize = 8192;

/// The block numbers of every block on the image with valid dbio stamps;
/// each must name its own place on the device.
fn stamped_blocks(image: &Path) -> BTreeSet<u64> {
    let data = std::fs::read(image).unwrap();
    let mut found = BTreeSet::new();
    for (i, b) in data.chunks_exact(BS).enumerate() {
        if b.iter().all(|&x| x == 0) {
            continue;
        }
        let h = verify(b, Some((0, i as u64)))
            .unwrap_or_else(|e| panic!("block {i} holds data that is not its own: {e:?}"));
        assert_eq!(h.block, i as u64);
        found.insert(h.block);
    }
    found
}

fn two_ranks_write_only_their_own_region_of_one_loop_device() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, false);
    let target = dev.path.display().to_string();
    let ops = 1000u64;
    let (out, left) = mpirun(
        2,
        &[
            "--region-per-rank",
            "--target",
            &target,
            "--size",
            "16m",
            "--pattern",
            "seqwrite",
            "--bs",
            "8k",
            "--sessions",
            "1",
            "--ops",
            &ops.to_string(),
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON document from rank 0");
    let region = &r["target"]["region"];
    assert_eq!(region["ranks"], 2);
    assert_eq!(region["offset_bytes"], 0);
    assert_eq!(region["bytes"], 16 * MIB);
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    for k in ranks {
        assert_eq!(k["write"]["requests"], ops);
    }
    assert_eq!(
        r["write"]["requests"],
        2 * ops,
        "the merged run sums the ranks"
    );
    // Read back: rank r's one sequential session wrote the first `ops`
    // blocks of its region, at r × 16 MiB, and nothing else is written.
    let per_region = 16 * MIB / BS as u64;
    let want: BTreeSet<u64> = (0..2)
        .flat_map(|r| r * per_region..r * per_region + ops)
        .collect();
    assert_eq!(stamped_blocks(dev.image()), want);
}

/// Runs a 2-rank write job on `dev` with `extra` and checks it was refused
/// with exit 2 and one line containing every one of `expect`.
fn refused(target: &str, extra: &[&str], expect: &[&str]) {
    let mut args = vec![
        "--target",
        target,
        "--pattern",
        "randwrite",
        "--ops",
        "100",
        "--sessions",
        "1",
    ];
    args.extend_from_slice(extra);
    let (out, left) = mpirun(2, &args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    for e in expect {
        assert!(lines[0].contains(e), "{e:?} not in: {err}");
    }
}

fn regions_that_do_not_fit_or_are_held_are_refused_in_one_line() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, false);
    let target = dev.path.display().to_string();
    let region = ["--region-per-rank"];
    refused(
        &target,
        &["--region-per-rank", "--size", "40m"],
        &[
            "2 regions of --size 41943040 do not fit",
            "--size 33554432 or less",
        ],
    );
    refused(
        &target,
        &["--region-per-rank", "--size", "1001k"],
        &["is not a whole number of --bs"],
    );
    // Two ranks on one device without --region-per-rank.
    refused(&target, &[], &["would share", "--region-per-rank"]);
    let dir = tempfile::tempdir().unwrap();
    refused(
        &format!("{}/r{{rank}}", dir.path().display()),
        &region,
        &["is not a block device"],
    );
    // Another dbio command on the device: a whole-device lock (this
    // process, as a plain `dbio run` takes it) refuses the ranks, naming it.
    let whole = TargetLock::device(&dev.path).unwrap();
    refused(
        &target,
        &region,
        &[
            "rank 0 (",
            "in use by another dbio command",
            &format!("pid {}", std::process::id()),
        ],
    );
    drop(whole);
    // A region held by another run that overlaps rank 1's (32..64 MiB).
    // mpirun may return once a rank has failed, before the other rank has
    // died and let go of its region: wait for that, a few seconds at most.
    let t0 = std::time::Instant::now();
    let other = loop {
        match TargetLock::device_region(&dev.path, 40 * MIB, MIB) {
            Ok(lock) => break lock,
            Err(_) if t0.elapsed() < std::time::Duration::from_secs(10) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => panic!("the refused job's ranks still hold the device after 10 s: {e}"),
        }
    };
    refused(
        &target,
        &region,
        &["rank 1 (", "overlaps bytes 41943040..42991616"],
    );
    // And a plain run of the whole device is refused while that region is held.
    let single = crate::common::run::dbio()
        .args([
            "run",
            "--target",
            &target,
            "--pattern",
            "randwrite",
            "--ops",
            "10",
        ])
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(2), "{}", stderr(&single));
    assert!(stderr(&single).contains("in use by another dbio command"));
    drop(other);
    assert!(
        stamped_blocks(dev.image()).is_empty(),
        "a refused run wrote to the device"
    );
}

fn a_plan_under_mpi_runs_in_regions() {
    let _store = temp_store();
    let dev = LoopDev::new(32 * MIB, false);
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("reg.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"reg\"\nrepeats = 1\n\n[workload]\ntarget = \"{}\"\nregion_per_rank = true\nsize = \"8M\"\npattern = \"seqwrite\"\nops = 300\n\n[sweep]\nsessions = [1]\n",
            dev.path.display()
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let (out, left) = alone(|| {
        launch(2, &["plan", "run", &plan, "--mpi"])
            .output()
            .unwrap()
    });
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1);
    let r = store.get(runs[0].id).unwrap().report;
    assert_eq!(r["target"]["region"]["ranks"], 2);
    assert_eq!(r["target"]["region"]["bytes"], 8 * MIB);
    let per_region = 8 * MIB / BS as u64;
    let want: BTreeSet<u64> = (0..2)
        .flat_map(|r| r * per_region..r * per_region + 300)
        .collect();
    assert_eq!(stamped_blocks(dev.image()), want);
    // Without --mpi (in a store of its own, where nothing is done yet),
    // each run of the plan is refused in one line.
    let _fresh = temp_store();
    let single = crate::common::run::dbio()
        .args(["plan", "run", &plan])
        .output()
        .unwrap();
    assert!(!single.status.success());
    assert!(stderr(&single).contains("add --mpi"), "{}", stderr(&single));
}
