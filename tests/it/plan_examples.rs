//! Every plan shipped in examples/ loads (each run validated by the real
//! `dbio run` parser) and expands to the runs its comments promise.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use dbio::plan::{self, Order};

/// (file, arms, cells, repeats, counted runs, warm-ups)
const EXPECTED: &[(&str, usize, usize, u32, usize, usize)] = &[
    ("iobench-files.toml", 2, 16, 3, 96, 2),
    ("iobench-files-quick.toml", 10, 3, 3, 90, 10),
    ("innodb-flush.toml", 4, 3, 3, 36, 4),
    ("innodb-lab.toml", 8, 3, 3, 72, 8),
    ("iobench-randwrite.toml", 2, 16, 3, 96, 2),
    ("quick-engines.toml", 2, 2, 2, 8, 2),
    ("slob-fs-compare.toml", 9, 3, 3, 81, 9),
];

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("examples/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn every_example_plan_loads_with_the_promised_run_counts() {
    let files = examples();
    assert!(!files.is_empty());
    for path in &files {
        let file = path.file_name().unwrap().to_str().unwrap();
        let Some(&(_, arms, cells, repeats, counted, warmups)) =
            EXPECTED.iter().find(|e| e.0 == file)
        else {
            panic!("examples/{file} has no expected run counts in tests/plan.rs");
        };
        let p = plan::load(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.arms.len(), arms, "{file}: arms");
        assert_eq!(p.cells.len(), cells, "{file}: cells");
        assert_eq!(p.repeats, repeats, "{file}: repeats");
        assert_eq!(p.counted(), counted, "{file}: counted runs");
        assert_eq!(p.runs.len() - p.counted(), warmups, "{file}: warm-ups");
        assert_eq!(counted, arms * cells * repeats as usize, "{file}");
        let keys: HashSet<&str> = p.runs.iter().map(|r| r.cell_key.as_str()).collect();
        assert_eq!(keys.len(), p.runs.len(), "{file}: cell keys are unique");
        assert!(p.warnings.is_empty(), "{file}: {:?}", p.warnings);
        // The dry run names every run and an estimate.
        let text = plan::dry_run(&p, &HashSet::new());
        assert!(text.contains(&format!(
            "{} of {} run(s) to make",
            p.runs.len(),
            p.runs.len()
        )));
    }
    for (file, ..) in EXPECTED {
        assert!(
            files.iter().any(|p| p.file_name().unwrap() == *file),
            "examples/{file} is missing"
        );
    }
}

fn the_iobench_example_reproduces_the_sweep() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let p = plan::load(&dir.join("iobench-randwrite.toml")).unwrap();
    assert_eq!(p.order, Order::Shuffled);
    assert_eq!(p.arms, ["XFS", "EXT4"]);
    let r = p
        .runs
        .iter()
        .find(|r| r.cell_key == "EXT4|bs=16k|files=8|sessions=64|rep=3")
        .expect("the cell exists");
    let cmd = r.args.join(" ");
    for part in [
        "--target /mnt/ext4/dbio-8x16k",
        "--files 8",
        "--bs 16k",
        "--pattern randwrite",
        "--sessions 64",
        "--io direct",
        "--time 60",
        "--ramp 10",
    ] {
        assert!(cmd.contains(part), "{part} in {cmd}");
    }
    assert_eq!(r.sessions, Some(64));
    assert_eq!(p.steps.before_run.len(), 1);
}

crate::tests! {
    every_example_plan_loads_with_the_promised_run_counts,
    the_iobench_example_reproduces_the_sweep,
}
