//! The command line as a new user meets it: a typo keeps clap's "a similar
//! argument exists" in dbio's one error line, fio's option names are
//! answered with dbio's, a subcommand of a subcommand typed at the top is
//! named — exit 2, one line, nothing created; `run -h` is short and
//! `run --help` grouped under headings with examples.

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

/// The headings of a help text, in order (lines ending in `:` at column 0).
fn headings(help: &str) -> Vec<&str> {
    help.lines()
        .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
        .collect()
}

fn run_help_is_grouped_and_short_help_is_short() {
    let long = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    assert!(long.status.success());
    let long = String::from_utf8_lossy(&long.stdout);
    let want = [
        "Options:",
        "Target:",
        "Workload:",
        "Engine:",
        "Engine: io_uring tuning:",
        "Timing:",
        "Output:",
        "Content and verify:",
        "MPI (several hosts):",
        "SLOB model (--workload slob):",
        "PostgreSQL (--workload pg):",
        "MariaDB (--workload mysql):",
        "Live metrics:",
        "Traces (--capture, --workload replay; docs/replay.md):",
        "Steady state:",
        "Examples:",
    ];
    assert_eq!(headings(&long), want, "{long}");
    // Each option under its heading: the lines from a heading to the next.
    let section = |h: &str| -> String {
        long.lines()
            .skip_while(|l| *l != h)
            .skip(1)
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (h, opt) in [
        ("Target:", "--target <TARGET>"),
        ("Workload:", "--pattern <PATTERN>"),
        ("Engine:", "--iodepth <IODEPTH>"),
        ("Engine: io_uring tuning:", "--sqthread-poll <MS>"),
        ("Timing:", "--ramp <RAMP>"),
        ("Output:", "--progress <HOW>"),
        ("Content and verify:", "--compress-pct <N>"),
        ("MPI (several hosts):", "--mpi-grace"),
    ] {
        assert!(
            section(h).contains(opt),
            "{opt} not under {h}:\n{}",
            section(h)
        );
    }
    // Every example is a command line dbio parses.
    let examples = &long[long.find("\nExamples:\n").unwrap()..];
    let lines: Vec<&str> = examples
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("dbio run "))
        .collect();
    assert!(lines.len() >= 4, "{examples}");
    for l in lines {
        let args: Vec<&str> = l
            .split(" > ")
            .next()
            .unwrap()
            .split_whitespace()
            .skip(2)
            .chain(["--help"])
            .collect();
        let (code, err) = refused_or_help(&args);
        assert_eq!(code, Some(0), "{l}: {err}");
    }

    let short = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["run", "-h"])
        .output()
        .unwrap();
    let short = String::from_utf8_lossy(&short.stdout);
    assert!(
        short.lines().count() <= 70,
        "-h is {} lines:\n{short}",
        short.lines().count()
    );
    assert!(long.lines().count() > 3 * short.lines().count());
    for common in [
        "--target",
        "--pattern",
        "--sessions",
        "--time",
        "--json",
        "--progress",
    ] {
        assert!(short.contains(common), "-h lacks {common}");
    }
    for rare in [
        "--sqthread-poll",
        "--mpi-grace",
        "--verify-sync-interval",
        "--pg-set",
    ] {
        assert!(!short.contains(rare), "-h shows {rare}");
    }
    assert!(short.contains("--help shows all"), "{short}");
}

/// dbio with `args` (ending in `--help`): parsed, it prints help and exits 0.
fn refused_or_help(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

crate::tests! {
    run_help_is_grouped_and_short_help_is_short,
    typos_keep_clap_suggestions_on_the_one_line,
    fio_option_names_are_answered_with_dbios,
}
