//! Experiments end to end: a plan of 2 variables x 3 session counts x 3
//! repeats + 1 warm-up per arm runs to completion, is kept in the store
//! (listed, exported, queryable with the sqlite3 shell), and a plan killed
//! with -9 mid-way finishes on the next run with exactly its 18 counted runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::cli::dbio;

fn write_plan(dir: &Path, name: &str, run_args: &str) -> std::path::PathBuf {
    let p = dir.join(format!("{name}.toml"));
    let a = dir.join("a");
    let b = dir.join("b");
    std::fs::write(
        &p,
        format!(
            r#"name = "{name}"
repeats = 3
warmup = 1

[workload]
size = "2M"
pattern = "randread"
io = "buffered"
{run_args}

[sweep]
sessions = [1, 2, 4]

[variables]
A = {{ target = "{}" }}
B = {{ target = "{}" }}
"#,
            a.display(),
            b.display()
        ),
    )
    .unwrap();
    p
}

fn counted(db: &Path, plan: &str) -> u64 {
    let out = Command::new("sqlite3")
        .arg(db)
        .arg(format!(
            "select count(*) from runs where plan = '{plan}' and warmup = 0 and status = 'completed'"
        ))
        .output()
        .expect("the sqlite3 shell");
    // A store still being created has no runs table yet.
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

fn a_plan_runs_is_stored_listed_exported_and_queryable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let plan = write_plan(dir.path(), "fs-compare", "ops = 200");
    let out = dbio(&db, &["plan", "run", plan.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = String::from_utf8_lossy(&out.stdout).lines().count();
    assert_eq!(
        lines,
        20,
        "one line per run:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Off a terminal (stderr is a pipe here, as in a log or CI) every run
    // still gets one plain progress line: i/N, elapsed and ETA.
    let err = String::from_utf8_lossy(&out.stderr);
    let progress: Vec<&str> = err.lines().filter(|l| l.contains(": run ")).collect();
    assert_eq!(progress.len(), 20, "{err}");
    for (i, line) in progress.iter().enumerate() {
        assert!(
            line.starts_with(&format!("dbio plan fs-compare: run {}/20 ", i + 1))
                && line.contains(", elapsed ")
                && line.contains(", ETA "),
            "{line}"
        );
    }
    assert!(
        err.lines().any(|l| l.contains("20 run(s) completed now")),
        "{err}"
    );

    let list = dbio(&db, &["runs", "list", "--plan", "fs-compare"]);
    assert!(list.status.success());
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.contains("fs-compare") && text.matches("completed").count() >= 20,
        "{text}"
    );

    let csv = dbio(
        &db,
        &["runs", "export", "--format", "csv", "--plan", "fs-compare"],
    );
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(
        csv.lines().count(),
        1 + 20,
        "header + one row per run:\n{csv}"
    );

    if Command::new("sqlite3").arg("-version").output().is_ok() {
        assert_eq!(counted(&db, "fs-compare"), 18);
    }
    // The SLOB.R table: each cell is the trimmed mean of its three repeats.
    let rep = dbio(
        &db,
        &[
            "report",
            "--plan",
            "fs-compare",
            "--metric",
            "read.iops",
            "--format",
            "json",
        ],
    );
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let t: serde_json::Value = serde_json::from_slice(&rep.stdout).unwrap();
    assert_eq!(t["sessions"], serde_json::json!([1, 2, 4]));
    assert_eq!(t["rows"].as_array().unwrap().len(), 2);
    let a2 = &t["rows"][0]["cells"][1];
    assert_eq!(
        (t["rows"][0]["variable"].as_str(), a2["n"].as_u64()),
        (Some("A"), Some(3))
    );
    let out = Command::new("sqlite3")
        .arg(&db)
        .arg(
            "select m.value from runs r join metrics m on m.run_id = r.id and m.name = 'read.iops' \
              where r.plan = 'fs-compare' and r.variable = 'A' and r.sessions = 2 and r.warmup = 0",
        )
        .output();
    if let Ok(out) = out {
        let z: Vec<f64> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(z.len(), 3);
        // SLOB.R: mean(z[!z %in% c(min(z), max(z))]), else (marked) the plain mean.
        let (lo, hi) = z
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
        let kept: Vec<f64> = z.iter().copied().filter(|v| *v != lo && *v != hi).collect();
        let want = if kept.is_empty() {
            z.iter().sum::<f64>() / 3.0
        } else {
            kept.iter().sum::<f64>() / kept.len() as f64
        };
        assert!(
            (a2["value"].as_f64().unwrap() - want).abs() < 1e-6 * want,
            "{a2} vs {want}"
        );
    }
    let text = dbio(
        &db,
        &["report", "--plan", "fs-compare", "--relative-to", "A"],
    );
    assert!(String::from_utf8_lossy(&text.stdout).contains("relative to A = 1"));

    // Running it again does nothing: every run is done.
    let again = dbio(&db, &["plan", "run", plan.to_str().unwrap()]);
    assert!(again.status.success());
    assert_eq!(String::from_utf8_lossy(&again.stdout).lines().count(), 0);
    let status = dbio(&db, &["plan", "status", plan.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("18"),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
}

fn a_plan_killed_mid_way_finishes_with_exactly_its_counted_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let plan = write_plan(dir.path(), "killed", "time = 0.3");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["plan", "run", plan.to_str().unwrap(), "--db"])
        .arg(&db)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once it has counted a run (however loaded the machine is).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while (!db.exists() || counted(&db, "killed") == 0) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = counted(&db, "killed");
    assert!(
        before > 0 && before < 18,
        "killed after {before} counted runs"
    );
    let out = dbio(&db, &["plan", "run", plan.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(counted(&db, "killed"), 18);
    let check = Command::new("sqlite3")
        .arg(&db)
        .arg("pragma integrity_check")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&check.stdout).trim(), "ok");
}

crate::tests! {
    a_plan_runs_is_stored_listed_exported_and_queryable,
    a_plan_killed_mid_way_finishes_with_exactly_its_counted_runs [Tool("sqlite3")],
}
