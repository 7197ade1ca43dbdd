//! A mistyped command line as a new user types it: clap's "a similar
//! argument exists" kept in dbio's one error line, fio's option names
//! answered with dbio's, a subcommand of a subcommand typed at the top —
//! exit 2, one line, nothing created.

use std::process::Command;

/// dbio with `args` in a fresh directory whose store does not exist: the
/// exit code and stderr; the directory must be left empty.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        .current_dir(dir.path())
        .env("DBIO_DB", dir.path().join("store.sqlite"))
        .output()
        .unwrap();
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    assert!(left.is_empty(), "{args:?} left {left:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), err)
}

fn typos_keep_clap_suggestions_on_the_one_line() {
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["run", "--sesions", "4"],
            &["'--sesions'", "a similar argument exists: '--sessions'"],
        ),
        (&["rnu"], &["'rnu'", "a similar subcommand exists: 'run"]),
        (
            &["runs", "lst"],
            &["'lst'", "a similar subcommand exists: 'list'"],
        ),
        (
            &["report", "--metrik", "read.iops"],
            &["'--metrik'", "a similar argument exists: '--metric'"],
        ),
        (
            &["run", "--read_pct", "70"],
            &["'--read_pct'", "dbio spells it --read-pct"],
        ),
    ];
    for (args, needles) in cases {
        let (code, err) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
        }
    }
}

fn fio_option_names_are_answered_with_dbios() {
    let cases: [(&[&str], &str); 7] = [
        (
            &["run", "--runtime", "60"],
            "fio's --runtime is dbio's --time",
        ),
        (&["run", "--runtime=60"], "fio's --runtime is dbio's --time"),
        (
            &["run", "--numjobs", "8"],
            "fio's --numjobs is dbio's --sessions",
        ),
        (
            &["run", "--rw", "randread"],
            "fio's --rw is dbio's --pattern",
        ),
        (
            &["run", "--ioengine", "io_uring"],
            "fio's --ioengine is dbio's --engine",
        ),
        (
            &["run", "--direct", "1"],
            "fio's --direct is dbio's --io direct",
        ),
        (
            &["run", "--filename", "/dev/sdx"],
            "fio's --filename is dbio's --target",
        ),
    ];
    for (args, want) in cases {
        let (code, err) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err:?} lacks {want:?}");
    }
    // A subcommand of `runs` typed at the top.
    let (code, err) = refused(&["show", "3"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("dbio calls this `dbio runs show`"), "{err}");
}

crate::tests! {
    typos_keep_clap_suggestions_on_the_one_line,
    fio_option_names_are_answered_with_dbios,
}
