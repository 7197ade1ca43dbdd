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
    // 4000 blocks (31 MiB) against a 16 MiB cache: both read.
    let out = dbio(&lab_dir)
        .args(TINY)
        .args(["--sessions", "1,2", "--update-pct", "25", "--runs", "3"])
        .args([
            "--time", "2", "--ramp", "0", "--scale", "4000", "--cache", "16M",
        ])
        .args([
            "--memory",
            "256M",
            "--set",
            "work_unit=16",
            "--format",
            "json",
        ])
        .args(["--image-size", "1G", "--image-dir"])
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
}

crate::tests! {
    the_model_against_postgresql_on_xfs_gives_ratios_with_intervals [Root, Postgres, Tool("mkfs.xfs")],
    bad_input_is_one_line_and_exit_2_before_anything_runs,
}
