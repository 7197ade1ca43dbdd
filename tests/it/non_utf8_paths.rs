//! Paths that are not UTF-8 (issue 26): a run records its `--target`,
//! `--redo-dir` and `--db` as text (the report, the store, a kept run), so
//! every workload refuses such a path in one line before anything is
//! created (exit 2), where a raw or slob run used to lay out its files,
//! run, and panic serializing the report. `dbio verify` likewise refuses a
//! target it could not name in its findings.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output};

/// A name with a byte that is not UTF-8.
const BAD: &[u8] = b"t\xff\xfe";

fn dbio(dir: &Path, args: &[&OsStr]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", dir.join("store.sqlite"))
        .args(args)
        .output()
        .unwrap()
}

/// Exit 2, one `error:` line naming `option` and the cause.
fn assert_refused(out: &Output, option: &str, case: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{case}: {err}");
    assert_eq!(err.lines().count(), 1, "{case}: one line: {err}");
    assert!(
        err.starts_with(&format!("error: {option} "))
            && err.contains("is not valid UTF-8")
            && err.contains("give a UTF-8 path"),
        "{case}: {err}"
    );
}

fn non_utf8_paths_are_refused_for_every_workload_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join(OsStr::from_bytes(BAD));
    let good = dir.path().join("t");
    let arg = |s: &str| OsString::from(s);
    let small = |w: &str| -> Vec<OsString> {
        let mut a = vec![
            arg("run"),
            arg("--workload"),
            arg(w),
            arg("--time"),
            arg("1"),
        ];
        match w {
            "raw" => a.extend([arg("--size"), arg("1M"), arg("--engine"), arg("null")]),
            "slob" => a.extend([arg("--scale"), arg("1M"), arg("--sessions"), arg("1")]),
            _ => a.extend([arg("--scale"), arg("200"), arg("--sessions"), arg("1")]),
        }
        a
    };
    let mut cases: Vec<(String, &str, Vec<OsString>)> = Vec::new();
    for w in ["raw", "slob", "pg", "mysql", "replay"] {
        let mut a = small(w);
        a.extend([arg("--target"), bad.clone().into()]);
        cases.push((format!("{w} --target"), "--target", a));
    }
    let mut a = small("slob");
    a.extend([arg("--target"), good.clone().into()]);
    a.extend([arg("--redo-dir"), bad.clone().into()]);
    cases.push(("slob --redo-dir".into(), "--redo-dir", a));
    let mut a = vec![arg("run"), arg("--workload"), arg("replay")];
    a.extend([arg("--target"), good.clone().into()]);
    a.extend([arg("--trace"), bad.clone().into()]);
    cases.push(("replay --trace".into(), "--trace", a));
    let mut a = small("raw");
    a.extend([arg("--target"), good.clone().into()]);
    a.extend([arg("--db"), bad.clone().into()]);
    cases.push(("raw --db".into(), "--db", a));
    for (case, option, args) in &cases {
        let args: Vec<&OsStr> = args.iter().map(OsString::as_os_str).collect();
        let out = dbio(dir.path(), &args);
        assert_refused(&out, option, case);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert!(left.is_empty(), "{case}: nothing created: {left:?}");
    }
}

fn verify_refuses_a_target_it_cannot_name() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("t");
    let out = dbio(
        dir.path(),
        &["run", "--size", "1M", "--time", "1", "--quiet", "--target"]
            .map(OsStr::new)
            .iter()
            .copied()
            .chain([good.as_os_str()])
            .collect::<Vec<_>>(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bad = dir.path().join(OsStr::from_bytes(BAD));
    std::fs::rename(&good, &bad).unwrap();
    let out = dbio(
        dir.path(),
        &[
            OsStr::new("verify"),
            OsStr::new("--target"),
            bad.as_os_str(),
        ],
    );
    assert_refused(&out, "--target", "verify");
}

crate::tests! {
    non_utf8_paths_are_refused_for_every_workload_before_anything_is_made,
    verify_refuses_a_target_it_cannot_name,
}
