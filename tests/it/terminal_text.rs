//! Text from users, the store and other tools reaches the terminal as text
//! (issue 26): a target path, a note, a fio `jobname`/`filename` holding
//! `ESC ] 0 ; … BEL` (retitle) or `ESC [ 2 J` (clear) shows escaped in the
//! run report, `runs list`, `runs show`, `dbio report` and the import's
//! lines; Markdown export writes a stored `<script>` as text; an error line
//! quotes at most about 200 characters of a 100 KB value.

use std::path::Path;
use std::process::Output;

use crate::common::run::dbio;
use crate::common::store::temp_store;

/// Retitles the terminal, clears it, and a C1 CSI (U+009B).
const HOSTILE: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m";
/// How the terminal shows it.
const SHOWN: &str = "\\x1b]0;pwned\\x07\\x1b[2J\\u{9b}31m";

/// Stdout and stderr hold no control character but line breaks, and show
/// `SHOWN` where `HOSTILE` was.
fn assert_escaped(what: &str, out: &Output) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let raw: Vec<char> = text
            .chars()
            .filter(|c| c.is_control() && *c != '\n')
            .collect();
        assert!(raw.is_empty(), "{what}: {name} has {raw:?}:\n{text}");
    }
    let all = [&out.stdout[..], &out.stderr[..]].concat();
    assert!(
        String::from_utf8_lossy(&all).contains(SHOWN),
        "{what} shows the escaped text:\n{}",
        String::from_utf8_lossy(&all)
    );
}

fn ok(what: &str, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A 1 s run of the null engine on `target`.
fn null_run(target: &Path, extra: &[&str]) -> Output {
    dbio()
        .args(["run", "--engine", "null", "--size", "1M", "--time", "1"])
        .arg("--target")
        .arg(target)
        .args(extra)
        .output()
        .unwrap()
}

fn a_hostile_target_and_note_show_escaped() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(format!("t{HOSTILE}"));
    let run = ok("run", null_run(&target, &[]));
    assert_escaped("dbio run (report and where line)", &run);
    ok(
        "runs note",
        dbio()
            .args(["runs", "note", "1", &format!("see {HOSTILE}\nnext line")])
            .output()
            .unwrap(),
    );
    let list = ok("runs list", dbio().args(["runs", "list"]).output().unwrap());
    assert_escaped("runs list", &list);
    let show = ok(
        "runs show",
        dbio().args(["runs", "show", "1"]).output().unwrap(),
    );
    assert_escaped("runs show", &show);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains(&format!("note     see {SHOWN}\\nnext line\n")),
        "the note is one line: {shown}"
    );
    let err = ok("run --json", null_run(&target, &["--json"]));
    assert!(
        !String::from_utf8_lossy(&err.stderr).contains('\u{1b}'),
        "the where line of a --json run"
    );
    let doc: serde_json::Value = serde_json::from_slice(&err.stdout).unwrap();
    assert!(
        doc["target"]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with(HOSTILE)),
        "JSON keeps the path exactly (its own escaping)"
    );
}

fn fio_job_and_file_names_show_escaped() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fio.json");
    let status = std::process::Command::new("fio")
        .args(["--name=jobMARK", "--size=1M", "--bs=4k", "--rw=randread"])
        .args(["--time_based", "--runtime=1", "--output-format=json"])
        .arg(format!(
            "--filename={}",
            dir.path().join("dataMARK").display()
        ))
        .arg(format!("--output={}", out.display()))
        .status()
        .unwrap();
    assert!(status.success(), "fio ran");
    // fio 3.33 writes a name's control characters into its JSON raw (not
    // JSON, refused); a fio that escapes them writes this.
    let escaped = serde_json::to_string(HOSTILE).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("jobMARK") && text.contains("dataMARK"));
    std::fs::write(&out, text.replace("MARK", escaped.trim_matches('"'))).unwrap();
    let import = ok(
        "import fio",
        dbio()
            .args(["import", "fio", "--variable", &format!("v{HOSTILE}")])
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_escaped("import fio", &import);
    let show = ok(
        "runs show",
        dbio().args(["runs", "show", "1"]).output().unwrap(),
    );
    assert_escaped("runs show of a fio run", &show);
    let report = ok(
        "report",
        dbio()
            .args(["report", "--metric", "total.iops"])
            .output()
            .unwrap(),
    );
    assert_escaped("dbio report", &report);
}

fn markdown_export_writes_html_as_text() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    ok("run", null_run(&dir.path().join("t"), &[]));
    let note = "<script>alert(1)</script><img src=x onerror=alert(2)>";
    ok(
        "runs note",
        dbio().args(["runs", "note", "1", note]).output().unwrap(),
    );
    let md = ok(
        "export",
        dbio()
            .args(["runs", "export", "--format", "markdown"])
            .output()
            .unwrap(),
    );
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(!md.contains("<script") && !md.contains("<img"), "{md}");
    assert!(
        md.contains("&lt;script>alert(1)&lt;/script>&lt;img src=x onerror=alert(2)>"),
        "{md}"
    );
    // JSON keeps the note exactly; HTML escapes it.
    let json = ok(
        "export json",
        dbio()
            .args(["runs", "export", "--format", "json"])
            .output()
            .unwrap(),
    );
    let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(rows[0]["note"], note);
}

/// An error line of a 100 KB value: one line, the value cut near 200
/// characters with its length.
fn assert_cut(what: &str, out: &Output, len: usize) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: exit 2");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{what}: one line");
    assert!(lines[0].starts_with("error: "), "{what}: {}", lines[0]);
    assert!(
        lines[0].chars().count() < 600,
        "{what}: {} characters",
        lines[0].chars().count()
    );
    assert!(
        lines[0].contains(&format!("… ({len} characters)")),
        "{what}: {}",
        lines[0]
    );
}

fn a_huge_value_is_quoted_cut_in_its_error_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let tag = "x".repeat(100_000);
    let t = dir.path().join("t");
    let run = dbio()
        .args(["run", "--size", "1M", "--time", "1", "--tag", &tag])
        .arg("--target")
        .arg(&t)
        .output()
        .unwrap();
    assert_cut("run --tag", &run, 100_000);
    assert!(!Path::new(&t).exists(), "nothing was created");
    let size = dbio()
        .args(["run", "--size", &format!("1{tag}")])
        .output()
        .unwrap();
    assert_cut("run --size", &size, 100_001);
    let spaced = "a b ".repeat(25_000);
    let import = dbio()
        .args(["import", "fio", "--tag", &spaced, "x.json"])
        .output()
        .unwrap();
    assert_cut("import --tag with spaces", &import, 100_000);
}

/// `dbio verify` (its findings, the file it names, the "saved as run"
/// line), `dbio report --html`'s "wrote" line and `dbio clean`'s "removed"
/// line show a hostile path escaped.
fn verify_report_and_clean_show_a_hostile_path_escaped() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join(format!("t{HOSTILE}"));
    ok(
        "run",
        dbio()
            .args(["run", "--size", "1M", "--time", "1", "--quiet", "--target"])
            .arg(&target)
            .output()
            .unwrap(),
    );
    let verify = || {
        dbio()
            .arg("verify")
            .arg("--target")
            .arg(&target)
            .output()
            .unwrap()
    };
    let clean = ok("verify", verify());
    assert_escaped("verify (clean)", &clean);
    assert!(
        String::from_utf8_lossy(&clean.stderr).contains("saved as run 2 in "),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    // A block of the first data file overwritten: its findings name the file.
    let file = target.join("dbio-data-0000.dat");
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &[0x5a; 8192], 65536).unwrap();
    f.sync_all().unwrap();
    let damaged = verify();
    assert_eq!(damaged.status.code(), Some(1), "damage found");
    assert_escaped("verify (damaged)", &damaged);
    assert!(
        String::from_utf8_lossy(&damaged.stdout)
            .contains(&format!("t{SHOWN}/dbio-data-0000.dat offset 65536")),
        "the damaged block's file is named, escaped:\n{}",
        String::from_utf8_lossy(&damaged.stdout)
    );
    let page = dir.path().join(format!("r{HOSTILE}.html"));
    let html = ok(
        "report --html",
        dbio()
            .args(["report", "--html"])
            .arg(&page)
            .output()
            .unwrap(),
    );
    assert_escaped("report --html", &html);
    assert!(page.is_file(), "the page was written");
    let removed = ok(
        "clean",
        dbio()
            .arg("clean")
            .arg("--target")
            .arg(&target)
            .output()
            .unwrap(),
    );
    assert_escaped("clean", &removed);
}

/// The output of `args`, with `COLUMNS` set when `columns` is.
fn text_at(args: &[&str], columns: Option<usize>) -> String {
    let mut c = dbio();
    c.args(args);
    match columns {
        Some(n) => c.env("COLUMNS", n.to_string()),
        None => c.env_remove("COLUMNS"),
    };
    let out = ok(&args.join(" "), c.output().unwrap());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Every word of `whole` is in `fitted` as often or more (rewrapped, or
/// stacked: a stacked table repeats its first column), nothing left out.
fn same_words(whole: &str, fitted: &str) {
    let count = |t: &str| {
        let mut m = std::collections::BTreeMap::new();
        for w in t.split_whitespace() {
            *m.entry(w.to_string()).or_insert(0usize) += 1;
        }
        m
    };
    let (a, b) = (count(whole), count(fitted));
    let joined: String = fitted.split_whitespace().collect();
    for (w, n) in &a {
        if w.chars().count() > 40 {
            // Longer than a line: cut across lines, its characters kept.
            assert!(joined.contains(w.as_str()), "{w:?} lost:\n{fitted}");
            continue;
        }
        assert!(
            b.get(w).is_some_and(|m| m >= n),
            "{w:?} ({n} times) not all kept:\n{fitted}"
        );
    }
}

/// Text reports fit the terminal's width (`COLUMNS`, as a terminal's own
/// width would): tables too wide go on under themselves led by their
/// first column, long lines wrap, nothing is lost; a pipe without
/// `COLUMNS` gets whole lines.
fn text_reports_fit_the_terminals_width_and_lose_nothing() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    for pattern in ["randrw", "randread"] {
        null_run(&target, &["--pattern", pattern, "--quiet"]);
    }
    let run = [
        "run",
        "--engine",
        "null",
        "--size",
        "1M",
        "--time",
        "1",
        "--pattern",
        "randrw",
        "--quiet",
        "--target",
    ];
    let run: Vec<&str> = run
        .iter()
        .copied()
        .chain([target.to_str().unwrap()])
        .collect();
    for args in [
        &run[..],
        &["runs", "list"],
        &["runs", "show", "1"],
        &["compare", "1", "2"],
        &["report", "--stats", "--workload", "randrw"],
        &["metrics"],
    ] {
        let whole = text_at(args, None);
        let fitted = text_at(args, Some(60));
        let what = args[..args.len().min(2)].join(" ");
        assert!(
            widest(&fitted) <= 60,
            "{what}: {}\n{fitted}",
            widest(&fitted)
        );
        if args[0] != "run" {
            // A new run's numbers differ from the last one's.
            same_words(&whole, &fitted);
        }
        if args[0] != "metrics" {
            assert!(
                widest(&whole) > 60,
                "{what} has lines wider than 60:\n{whole}"
            );
        }
    }
    // The run report's latency table goes on under itself: p99.99 kept.
    let fitted = text_at(&run, Some(60));
    assert!(
        fitted
            .lines()
            .any(|l| l.split_whitespace().eq(["p99.99", "max"])),
        "{fitted}"
    );
}

crate::tests! {
    text_reports_fit_the_terminals_width_and_lose_nothing,
    a_hostile_target_and_note_show_escaped,
    verify_report_and_clean_show_a_hostile_path_escaped,
    fio_job_and_file_names_show_escaped [Tool("fio")],
    markdown_export_writes_html_as_text,
    a_huge_value_is_quoted_cut_in_its_error_line,
}
