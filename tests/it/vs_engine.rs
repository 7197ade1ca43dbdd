//! `dbio lab vs-engine`: the model against a real PostgreSQL in one
//! command, on XFS over direct-io loop devices the lab builds — every run
//! stored under the plan, the table's ratios finite with intervals around
//! them, the table again from the store alone, nothing left behind — and
//! its bad input refused in one line before anything is made.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Output;

use serde_json::Value;

use crate::common::store::{store_path, temp_store};
use crate::lab::{assert_nothing_left, dbio, root_case, text};

/// The command and plan of the PostgreSQL test.
const TINY: [&str; 6] = [
    "lab",
    "vs-engine",
    "--name",
    "vs-tiny",
    "--flavor",
    "postgres",
];

/// The runs of the PostgreSQL test: 4000 blocks (31 MiB) against a
/// 16 MiB cache, so both read.
const TINY_RUNS: [&str; 20] = [
    "--sessions",
    "1,2",
    "--update-pct",
    "25",
    "--runs",
    "3",
    "--time",
    "2",
    "--ramp",
    "0",
    "--scale",
    "4000",
    "--cache",
    "16M",
    "--memory",
    "256M",
    "--set",
    "work_unit=16",
    "--image-size",
    "1G",
];

fn completed_runs(plan: &str) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let mut q = conn
        .prepare(
            "SELECT variable, cell_key FROM runs \
             WHERE plan = ?1 AND status = 'completed' AND warmup = 0 ORDER BY id",
        )
        .unwrap();
    q.query_map([plan], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ratio, low and high of `quantity` in a cell, all finite and ordered.
fn finite_ratio(cell: &Value, quantity: &str) -> (f64, f64, f64) {
    let q = cell["quantities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["quantity"] == quantity)
        .unwrap_or_else(|| panic!("no {quantity} in {cell}"));
    let f = |k: &str| {
        q[k].as_f64()
            .unwrap_or_else(|| panic!("{quantity}: no {k} in {q}"))
    };
    let (r, lo, hi) = (f("ratio"), f("low"), f("high"));
    assert!(r.is_finite() && lo.is_finite() && hi.is_finite(), "{q}");
    assert!(0.0 < lo && lo <= r && r <= hi, "{quantity}: {q}");
    (r, lo, hi)
}

fn the_model_against_postgresql_on_xfs_gives_ratios_with_intervals() {
    let _one = crate::pg::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    // The server runs as postgres, who must reach the mounts under it.
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
    let out = dbio(&lab_dir)
        .args(TINY)
        .args(TINY_RUNS)
        .args(["--format", "json", "--image-dir"])
        .arg(&tmp)
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert_nothing_left(&tmp, &lab_dir);
    assert!(
        crate::common::server::processes_left(&tmp).is_empty(),
        "a postgres left"
    );

    // Every run stored under the plan: 2 arms x 2 cells x 3 runs.
    let runs = completed_runs("vs-tiny");
    assert_eq!(runs.len(), 12, "{runs:?}");
    for arm in ["model-postgres", "pg"] {
        assert_eq!(runs.iter().filter(|(v, _)| v == arm).count(), 6, "{arm}");
    }

    let t: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(t["schema"], "dbio.vs_engine.v1");
    assert_eq!(t["left_out"], serde_json::json!([]), "{t}");
    let pairs = t["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{t}");
    assert_eq!(
        (&pairs[0]["flavor"], &pairs[0]["engine"]),
        (&"postgres".into(), &"pg".into())
    );
    let cells = pairs[0]["cells"].as_array().unwrap();
    let sessions: Vec<u64> = cells
        .iter()
        .map(|c| c["sessions"].as_u64().unwrap())
        .collect();
    assert_eq!(sessions, [1, 2], "{t}");
    for c in cells {
        assert_eq!(
            (c["model_runs"].as_u64(), c["engine_runs"].as_u64()),
            (Some(3), Some(3)),
            "{c}"
        );
        assert_eq!(c["update_pct"], 25);
        for q in [
            "ops_per_s",
            "reads_per_op",
            "redo_bytes_per_op",
            "device_writes_per_op",
            "device_bytes_per_op",
            "fsyncs_per_commit",
        ] {
            finite_ratio(c, q);
        }
    }

    // The table again from the store alone, in Markdown: no run made.
    let md = ok(&dbio(&lab_dir)
        .args(TINY)
        .args(["--report-only", "--format", "markdown"])
        .output()
        .unwrap());
    assert!(
        md.contains("### `--flavor postgres against --workload pg`"),
        "{md}"
    );
    assert!(
        md.contains("| 25 | 1 | 3/3 |") && md.contains("| 25 | 2 | 3/3 |"),
        "{md}"
    );
    assert_eq!(
        completed_runs("vs-tiny").len(),
        12,
        "--report-only made runs"
    );
    eprintln!("{md}");
    findings_from_the_store(&lab_dir, &tmp);
}

/// `--findings DIR` from the stored runs alone: the pair's document with
/// every section, each run's load average and window, the departures.
fn findings_from_the_store(lab_dir: &std::path::Path, tmp: &std::path::Path) {
    let dir = tmp.join("findings");
    // Options other than the runs': refused, nothing written.
    let other_cycle = [&TINY_RUNS[..], &["--cycle-wal", "32M"]].concat();
    for (other, why) in [
        (&[][..], "--findings: run "),
        (&other_cycle[..], "; --cycle-wal)"),
    ] {
        let out = dbio(lab_dir)
            .args(TINY)
            .args(other)
            .args(["--report-only", "--findings"])
            .arg(&dir)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(why), "{err}");
        assert!(!dir.exists(), "findings written from other options");
    }
    let out = dbio(lab_dir)
        .args(TINY)
        .args(TINY_RUNS)
        .args(["--report-only", "--findings"])
        .arg(&dir)
        .arg("--image-dir")
        .arg(tmp)
        .output()
        .unwrap();
    ok(&out);
    let doc = fs::read_to_string(dir.join("vs-engine-postgres.md")).unwrap();
    for section in [
        "## `--flavor postgres against --workload pg`, one table every session shares (generated)",
        "dbio lab vs-engine --name vs-tiny --fs xfs --image-dir ",
        "--flavor postgres --sessions 1,2 --update-pct 25 --runs 3",
        "* Host: ",
        "* Load average (1 minute, the mean over each run's window): ",
        "* Window of model-postgres: `--window cycles:3`",
        "* Window of pg: `--window cycles:3`",
        "its data reused from run to run.\n* Window of pg",
        "; each run started from the data as loaded, ",
        "### At a glance",
        "### Settings",
        "| model-postgres | `--workload slob ",
        "--flavor postgres",
        "--time 2 --ramp 0",
        "--redo-file-size 16M",
        "--pg-set max_wal_size=32MB",
        "| max_wal_size | 32MB | 1GB |",
        "### Model / engine",
        "### Per operation, model / engine",
        "### Within range",
        "### Runs",
    ] {
        assert!(doc.contains(section), "no {section:?} in\n{doc}");
    }
    // Every counted run in the runs table, with its load average.
    let runs: Vec<&str> = doc
        .lines()
        .filter(|l| l.contains("| model-postgres | 25 |") || l.contains("| pg | 25 |"))
        .collect();
    assert_eq!(runs.len(), 12, "{doc}");
    for r in runs {
        let cells: Vec<&str> = r.split(" | ").collect();
        let load: f64 = cells[5]
            .parse()
            .unwrap_or_else(|_| panic!("no load in {r}"));
        assert!(load >= 0.0, "{r}");
        assert_eq!(cells[6], "cycles:3", "{r}");
    }
    assert!(doc.contains("| 25 | 1 | "), "{doc}");
    assert!(!dir.join("vs-engine-innodb.md").exists(), "no innodb runs");
}

/// `(variable, warmup, cell_key, environment.lab.restore)` of the plan's
/// completed runs, in order.
fn restore_records(plan: &str) -> Vec<(String, bool, String, Value)> {
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let mut q = conn
        .prepare(
            "SELECT variable, warmup, cell_key, environment_json FROM runs \
             WHERE plan = ?1 AND status = 'completed' ORDER BY id",
        )
        .unwrap();
    q.query_map([plan], |r| {
        let env: String = r.get(3)?;
        let env: Value = serde_json::from_str(&env).unwrap();
        Ok((
            r.get(0)?,
            r.get::<_, i64>(1)? == 1,
            r.get(2)?,
            env["lab"]["restore"].clone(),
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Every PostgreSQL run starts from the tables as they were loaded, not as
/// the runs before it left them: the data is loaded once (a warm-up run
/// the table does not count), kept, and restored before each run — the
/// restored files equal to the kept ones, the same for every run. The
/// model reuses its datafiles (nothing restored).
fn every_engine_run_starts_from_the_loaded_tables() {
    let _one = crate::pg::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
    let tmp_s = tmp.display().to_string();
    let out = dbio(&lab_dir)
        .args([
            "lab",
            "vs-engine",
            "--name",
            "vs-restore",
            "--flavor",
            "postgres",
        ])
        .args([
            "--sessions",
            "2",
            "--update-pct",
            "50",
            "--runs",
            "3",
            "--time",
            "2",
        ])
        .args([
            "--ramp", "0", "--scale", "2000", "--cache", "16M", "--memory", "256M",
        ])
        .args([
            "--set",
            "work_unit=16",
            "--image-size",
            "1G",
            "--format",
            "json",
        ])
        .args(["--window", "any", "--image-dir", &tmp_s])
        .output()
        .unwrap();
    let stdout = ok(&out);
    assert_nothing_left(&tmp, &lab_dir);

    let runs = restore_records("vs-restore");
    let loads: Vec<_> = runs.iter().filter(|r| r.1).collect();
    assert_eq!(loads.len(), 1, "one load run: {runs:?}");
    assert_eq!(
        (loads[0].0.as_str(), loads[0].2.as_str()),
        ("pg", "pg|load")
    );
    let pg: Vec<&Value> = runs
        .iter()
        .filter(|r| r.0 == "pg" && !r.1)
        .map(|r| &r.3)
        .collect();
    assert_eq!(pg.len(), 3, "{runs:?}");
    let loaded = &pg[0]["loaded"];
    // The cluster and its 2000-row table (one 8 KiB page a row): more
    // than 16 MiB of files.
    assert!(loaded["bytes"].as_u64().unwrap() > 16 << 20, "{loaded}");
    for r in &pg {
        assert_eq!(&r["loaded"], loaded, "another loaded state: {runs:?}");
        assert_eq!(&r["restored"], loaded, "restored differs: {runs:?}");
        assert!(r["seconds"].as_f64().unwrap() >= 0.0, "{r}");
    }
    for r in runs.iter().filter(|r| r.0 == "model-postgres") {
        assert!(r.3.is_null(), "the model restores nothing: {r:?}");
    }
    // The load run is not counted: 3 runs a side.
    let t: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let cell = &t["pairs"][0]["cells"][0];
    assert_eq!(
        (cell["model_runs"].as_u64(), cell["engine_runs"].as_u64()),
        (Some(3), Some(3)),
        "{t}"
    );
}

/// One line, exit 2, and nothing made or stored.
fn refused(args: &[&str], want: &str) {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("runs");
    let out = dbio(&tmp.path().join("state"))
        .args(["lab", "vs-engine", "--target"])
        .arg(&target)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(want), "{err}");
    assert!(!target.exists(), "{} was made", target.display());
    assert!(!store_path().exists() || completed_runs("vs-engine").is_empty());
}

fn bad_input_is_one_line_and_exit_2_before_anything_runs() {
    refused(
        &["--flavor", "oracle"],
        "--flavor oracle: the model's oracle flavor has no engine to be held against",
    );
    refused(
        &["--runs", "1"],
        "--runs 1: the ratios' intervals need at least 3 runs",
    );
    refused(
        &["--set", "flavor=postgres"],
        "--set flavor: dbio lab vs-engine sets flavor itself",
    );
    refused(
        &["--set", "scael=3"],
        "--set scael: is not an option of dbio run (did you mean scale?)",
    );
    refused(&["--time", "0"], "--time: invalid value '0'");
    refused(&["--name", "../x"], "--name ../x: use 1 to 64 letters");
    refused(
        &["--arm-set", "oracle:x=1"],
        "--arm-set oracle:x=1: no arm oracle in this plan (its arms: model-postgres, pg, model-innodb, mysql)",
    );
    refused(
        &["--arm-set", "pg:pg_sett=x=1"],
        "--arm-set pg:pg_sett: is not an option of dbio run",
    );
    refused(
        &["--window", "cycles:0"],
        "give any, after-checkpoint, or cycles:N",
    );
    refused(
        &["--window", "sometimes"],
        "give any, after-checkpoint, or cycles:N",
    );
    refused(
        &["--cycle-wal", "10M"],
        "--cycle-wal 10 MiB: give a multiple of 16M",
    );
    refused(
        &["--flavor", "innodb", "--window", "cycles:2"],
        "--window cycles:2: InnoDB's checkpoint moves after every flush batch",
    );
    refused(
        &["--set", "window=any"],
        "--set window: dbio lab vs-engine sets window itself (use --window)",
    );
}

/// The printed plan's arms: `key = value` lines of `[SECTION]`.
fn arm_keys(plan: &str, section: &str) -> Vec<String> {
    plan.split("\n\n")
        .find(|s| s.starts_with(&format!("[{section}]")))
        .unwrap_or_else(|| panic!("no [{section}] in\n{plan}"))
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn printed_plan(args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let out = dbio(&tmp.path().join("state"))
        .args(["lab", "vs-engine", "--print-plan"])
        .args(args)
        .output()
        .unwrap();
    ok(&out)
}

/// Arm `arm` of a printed plan has each line of `want` and no key the
/// cycle sets (`redo_file_size`, `pg_set`) unless `want` has it.
fn arm_has(plan: &str, arm: &str, want: &[&str]) {
    let keys = arm_keys(plan, &format!("lab.arms.{arm}"));
    for w in want {
        assert!(keys.iter().any(|k| k == w), "{arm}: no {w} in {keys:?}");
    }
    for cycle_key in ["redo_file_size", "pg_set"] {
        let set = keys.iter().any(|k| k.starts_with(cycle_key));
        let wanted = want.iter().any(|w| w.starts_with(cycle_key));
        assert_eq!(set, wanted, "{arm}: {cycle_key} in {keys:?}");
    }
}

fn the_window_is_given_to_both_arms_of_a_pair_with_cycles_alike() {
    let _store = temp_store();
    // The default: whole cycles for the postgres pair, one checkpoint per
    // 16 MiB of WAL on both sides; the innodb pair's window any.
    let plan = printed_plan(&[]);
    let cycles = r#"window = "cycles:3""#;
    arm_has(
        &plan,
        "model-postgres",
        &[cycles, r#"redo_file_size = "16M""#],
    );
    arm_has(&plan, "pg", &[cycles, r#"pg_set = "max_wal_size=32MB""#]);
    for arm in ["model-innodb", "mysql"] {
        arm_has(&plan, arm, &[r#"window = "any""#]);
    }

    // Given: after a checkpoint, cycles of 32 MiB (max_wal_size 64MB).
    let plan = printed_plan(&[
        "--flavor",
        "postgres",
        "--window",
        "after-checkpoint",
        "--cycle-wal",
        "32M",
    ]);
    let after = r#"window = "after-checkpoint""#;
    arm_has(
        &plan,
        "model-postgres",
        &[after, r#"redo_file_size = "32M""#],
    );
    arm_has(&plan, "pg", &[after, r#"pg_set = "max_wal_size=64MB""#]);

    // Anywhere: no cycle settings, dbio's own (no checkpoint in a window).
    let plan = printed_plan(&["--flavor", "postgres", "--window", "any"]);
    for arm in ["model-postgres", "pg"] {
        arm_has(&plan, arm, &[r#"window = "any""#]);
    }
    // An --arm-set of the same key wins over the window's.
    let plan = printed_plan(&["--arm-set", "pg:pg_set=max_wal_size=96MB"]);
    arm_has(&plan, "pg", &[cycles, r#"pg_set = "max_wal_size=96MB""#]);
}

/// A dbio started by a test, killed if the test fails before it ends.
struct Running(Option<std::process::Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Ctrl-C after two runs: exit 130, nothing left mounted; the same command
/// again makes only the runs left, and the table holds each run once.
fn an_interrupted_vs_engine_resumes_where_it_stopped() {
    let _one = crate::pg::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
    let tmp_s = tmp.display().to_string();
    let args = [
        "lab",
        "vs-engine",
        "--name",
        "vs-resume",
        "--flavor",
        "postgres",
        "--sessions",
        "1",
        "--update-pct",
        "25",
        "--runs",
        "3",
        "--time",
        "2",
        "--ramp",
        "0",
        "--scale",
        "2000",
        "--cache",
        "16M",
        "--memory",
        "256M",
        "--set",
        "work_unit=16",
        "--image-size",
        "1G",
        "--image-dir",
        &tmp_s,
    ];
    let mut running = Running(Some(
        dbio(&lab_dir)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    // The store is made by the first run: until then it has no table.
    let done = || {
        let conn = rusqlite::Connection::open(store_path()).ok()?;
        conn.query_row(
            "SELECT count(*) FROM runs WHERE plan = 'vs-resume' AND status = 'completed' AND warmup = 0",
            [],
            |r| r.get::<_, i64>(0),
        )
        .ok()
    };
    while done().unwrap_or(0) < 2 {
        assert!(std::time::Instant::now() < deadline, "no 2 runs in 300 s");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let child = running.0.take().unwrap();
    // SAFETY: kill(2) on the pid of a child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_nothing_left(&tmp, &lab_dir);
    let before = completed_runs("vs-resume");
    assert!((2..6).contains(&before.len()), "{before:?}");

    let stdout = ok(&dbio(&lab_dir)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap());
    assert_nothing_left(&tmp, &lab_dir);
    let after = completed_runs("vs-resume");
    assert_eq!(after.len(), 6, "{after:?}");
    assert_eq!(after[..before.len()], before[..], "the first runs kept");
    let mut keys: Vec<&String> = after.iter().map(|(_, k)| k).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 6, "a cell's run made twice: {after:?}");
    let t: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    let cell = &t["pairs"][0]["cells"][0];
    assert_eq!(
        (cell["model_runs"].as_u64(), cell["engine_runs"].as_u64()),
        (Some(3), Some(3)),
        "{t}"
    );
}

crate::tests! {
    the_model_against_postgresql_on_xfs_gives_ratios_with_intervals [Root, Postgres, Tool("mkfs.xfs")],
    bad_input_is_one_line_and_exit_2_before_anything_runs,
    the_window_is_given_to_both_arms_of_a_pair_with_cycles_alike,
    an_interrupted_vs_engine_resumes_where_it_stopped [Root, Postgres, Tool("mkfs.xfs")],
    every_engine_run_starts_from_the_loaded_tables [Root, Postgres, Tool("mkfs.xfs")],
}
