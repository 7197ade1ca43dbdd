//! Signals and pipes with real processes (issue 13): a second and third
//! Ctrl-C while a run stops still give its report and save it; SIGTERM is
//! named in the report; a reader that closes stdout early (`| head -1`) ends
//! every command that writes to stdout with exit 0 and nothing on stderr,
//! and a run whose report nobody reads is still saved.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::run::wait_for_cpu;
use crate::common::store::{store_path, temp_store};
use serde_json::Value;

fn dbio() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store_path());
    c
}

/// The stored runs, newest first, as `dbio runs export --format json` gives them.
fn stored_runs() -> Vec<Value> {
    let out = dbio()
        .args(["runs", "export", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v.as_array().cloned().unwrap_or_default()
}

/// Starts a 60 s run on a small directory, sends `signals` (with a short gap
/// between them) once it has used a second of CPU, and returns its exit code, stdout and stderr.
fn interrupted_run(dir: &std::path::Path, json: bool, signals: &[i32]) -> (i32, String, String) {
    let mut args = vec![
        "run",
        "--target",
        dir.to_str().unwrap(),
        "--size",
        "4M",
        "--pattern",
        "randread",
        "--io",
        "buffered",
        "--time",
        "60",
        "--quiet",
    ];
    if json {
        args.push("--json");
    }
    let child = dbio()
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_cpu(&child, Duration::from_secs(1));
    for s in signals {
        unsafe { libc::kill(child.id() as i32, *s) };
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn more_ctrl_c_while_stopping_still_reports_and_saves_the_run() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = interrupted_run(
        dir.path(),
        true,
        &[libc::SIGINT, libc::SIGINT, libc::SIGINT],
    );
    assert_eq!(code, 130, "{stderr}");
    let r: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["interrupted_by"], "Ctrl-C (SIGINT)");
    assert!(r["read"]["requests"].as_u64().unwrap() > 0);
    let runs = stored_runs();
    assert_eq!(runs.len(), 1, "the interrupted run was saved");
    assert_eq!(runs[0]["status"], "interrupted");
}

fn sigterm_is_named_in_the_report() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = interrupted_run(dir.path(), false, &[libc::SIGTERM]);
    assert_eq!(code, 130, "{stderr}");
    assert!(
        stdout.contains("INTERRUPTED by SIGTERM: results so far"),
        "{stdout}"
    );
    assert!(!stdout.contains("Ctrl-C"), "{stdout}");
    assert_eq!(stored_runs().len(), 1);
}

/// Runs dbio with stdout a pipe whose reader is already gone.
fn closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = dbio()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn a_closed_pipe_ends_every_command_quietly() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let t = t.to_str().unwrap();
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"p\"\nrepeats = 1\n[workload]\nsize = \"2M\"\nops = 100\nsessions = 1\n[variables]\nA = {{ target = \"{t}\" }}\nB = {{ target = \"{t}\" }}\n"
        ),
    )
    .unwrap();
    let ok = dbio()
        .args(["plan", "run", plan.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let plan = plan.to_str().unwrap();
    let (first, second) = {
        let runs = stored_runs();
        assert_eq!(runs.len(), 2);
        (runs[0]["id"].to_string(), runs[1]["id"].to_string())
    };
    let fio = format!(
        "{}/tests/corpus/fio/group_reporting.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let cases: Vec<Vec<&str>> = vec![
        vec!["runs", "list"],
        vec!["runs", "show", &first],
        vec!["runs", "export", "--format", "csv"],
        vec!["runs", "export", "--format", "json"],
        vec!["runs", "export", "--format", "markdown"],
        vec!["report", "--plan", "p"],
        vec!["report", "--plan", "p", "--format", "json"],
        vec!["compare", &first, &second],
        vec!["compare", "A", "B", "--format", "json"],
        vec!["plan", "run", plan, "--dry-run"],
        vec!["plan", "status", plan],
        vec!["lab", "status"],
        vec!["import", "fio", "--dry-run", &fio],
    ];
    for args in &cases {
        let (code, stderr) = closed_stdout(args);
        assert_eq!(code, Some(0), "dbio {}: {stderr}", args.join(" "));
        assert_eq!(stderr, "", "dbio {}", args.join(" "));
    }
    // A run whose report nobody reads is still saved, and ends with 0.
    for json in [false, true] {
        let mut args = vec![
            "run", "--target", t, "--size", "2M", "--ops", "100", "--quiet",
        ];
        if json {
            args.push("--json");
        }
        let before = stored_runs().len();
        let (code, stderr) = closed_stdout(&args);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stderr, "");
        assert_eq!(stored_runs().len(), before + 1, "the run was saved");
    }
}

crate::tests! {
    more_ctrl_c_while_stopping_still_reports_and_saves_the_run,
    sigterm_is_named_in_the_report,
    a_closed_pipe_ends_every_command_quietly,
}
