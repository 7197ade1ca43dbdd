//! `--progress` as a run shows it where no terminal is (a log, a pipe, CI):
//! plain lines per second by default, JSON lines a script reads (on
//! stderr or appended to a file) that agree with the stored run, and the
//! stored run's id in `--json`.

use serde_json::Value;

use crate::common::run::{Run, dbio};
use crate::common::store::temp_store;

/// `dbio run` on a 4 MiB raw layout in `dir` with `extra` options.
fn run(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let t = dir.join("t");
    dbio()
        .args(["run", "--target", t.to_str().unwrap(), "--size", "4M"])
        .args([
            "--pattern",
            "randread",
            "--io",
            "buffered",
            "--sessions",
            "2",
        ])
        .args(["--rate", "400"])
        .args(extra)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn stderr_piped_gets_a_plain_line_per_second() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // stderr is a pipe here: `auto` is plain.
    let out = run(dir.path(), &["--time", "3"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        !err.contains('\r') && !err.contains('\x1b'),
        "no terminal codes in a log: {err:?}"
    );
    let seconds: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert!(seconds.len() >= 2, "a line per second of a 3 s run: {err}");
    assert!(seconds[0].contains("s/3s eta"), "{err}");
    assert!(
        seconds[0].contains("read") && seconds[0].contains("IOPS"),
        "{err}"
    );
    assert!(err.contains("saved as run 1 in "), "{err}");
    // --quiet and `none` keep stderr free of them.
    for quiet in [&["--quiet"][..], &["--progress", "none"]] {
        let out = run(dir.path(), &[&["--time", "2"][..], quiet].concat());
        assert!(out.status.success());
        let err = text(&out.stderr);
        assert!(!err.lines().any(|l| l.starts_with('[')), "{quiet:?}: {err}");
    }
}

fn jsonl_in_a_file_is_the_stored_series_and_names_the_run() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("progress.jsonl");
    std::fs::write(&file, "earlier line\n").unwrap();
    let f = file.to_str().unwrap();
    let out = run(dir.path(), &["--time", "3", "--json", "--progress-file", f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("stdout is the report");
    let lines = std::fs::read_to_string(&file).unwrap();
    let mut lines = lines.lines();
    assert_eq!(lines.next(), Some("earlier line"), "appended, nothing lost");
    let objects: Vec<Value> = lines
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    let by =
        |event: &str| -> Vec<&Value> { objects.iter().filter(|o| o["event"] == event).collect() };
    // The layout: 4 MiB laid out, its last object marked `end`.
    let layout = by("layout");
    let last = layout.last().expect("a layout object");
    assert_eq!(last["end"], true);
    assert_eq!(last["done_bytes"], 4 << 20);
    assert_eq!(last["total_bytes"], 4 << 20);
    assert_eq!(last["what"], "data files");
    // Every second written as it was made is the stored series' point.
    let seconds = by("second");
    assert!(seconds.len() >= 2, "{objects:?}");
    let series = report["series"].as_array().unwrap();
    for s in &seconds {
        let t = s["t_s"].as_u64().unwrap() as usize;
        for k in ["read", "write", "sync"] {
            assert_eq!(s[k], series[t][k], "second {t}, {k}");
        }
        assert!(s["eta_s"].as_f64().unwrap() <= 3.0);
    }
    let reads: u64 = seconds
        .iter()
        .map(|s| s["read"]["ops"].as_u64().unwrap())
        .sum();
    assert!(reads > 0);
    // The last line names the stored run, as --json does.
    let saved = objects.last().unwrap();
    assert_eq!(saved["event"], "saved");
    assert_eq!(saved["status"], "completed");
    let id = report["run_id"].as_i64().expect("--json has run_id");
    assert_eq!(saved["run_id"], id);
    let shown = dbio()
        .args(["runs", "show", &id.to_string()])
        .output()
        .unwrap();
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    // stderr had none of it: only the `where` line.
    let err = text(&out.stderr);
    assert!(!err.contains("\"event\""), "{err}");
}

fn json_gives_the_run_id_a_script_goes_on_with() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let out = run(dir.path(), &["--ops", "200", "--json"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["schema"], "dbio.run.v2");
        ids.push(r["run_id"].as_i64().expect("run_id in --json"));
        // JSON output keeps stderr free of progress lines.
        assert!(!text(&out.stderr).contains("\"event\""));
    }
    assert_eq!(ids[1], ids[0] + 1, "{ids:?}");
    let list = dbio().args(["runs", "list"]).output().unwrap();
    let list = text(&list.stdout);
    for id in &ids {
        let row = |l: &str| l.split_whitespace().next() == Some(id.to_string().as_str());
        assert!(list.lines().any(row), "run {id} in the store: {list}");
    }
}

fn progress_refusals_are_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.txt");
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["--progress", "tty", "--progress-file", p.to_str().unwrap()],
            &["--progress-file", "--progress tty", "plain or jsonl"],
        ),
        (
            &["--progress-file", dir.path().to_str().unwrap()],
            &["--progress-file", "is a directory"],
        ),
        (&["--progress", "loud"], &["loud", "plain", "jsonl"]),
    ];
    for (args, needles) in cases {
        let out = run(dir.path(), &[&["--ops", "100"][..], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "{args:?}: {err} lacks {n}");
        }
        assert!(!dir.path().join("t").exists(), "{args:?}: nothing laid out");
        assert!(!p.exists(), "{args:?}: no progress file made");
    }
}

/// The model lays out data files and redo logs: each named in its own
/// layout objects.
fn a_models_layout_names_data_files_and_redo_logs() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let out = Run::slob(&dir.path().join("data"))
        .args(&["--sessions", "2", "--scale", "400", "--work-loop", "40"])
        .args(&["--progress", "jsonl", "--json"])
        .output();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let ends: Vec<Value> = err
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|o| o["event"] == "layout" && o["end"] == true)
        .collect();
    let what: Vec<&str> = ends.iter().map(|o| o["what"].as_str().unwrap()).collect();
    assert_eq!(what, ["data files", "redo logs"], "{err}");
    for o in &ends {
        assert_eq!(o["done_bytes"], o["total_bytes"], "{o}");
    }
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let saved = err.lines().last().unwrap();
    let saved: Value = serde_json::from_str(saved).unwrap();
    assert_eq!(saved["run_id"], report["run_id"]);
}

/// The README's first command says it builds first and about how long,
/// and names the layout lines as the run prints them (the test above).
fn the_readmes_first_command_says_it_builds_first_and_how_long() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let block = &readme[readme.find("```sh\n").expect("a first command") + 6..];
    let first = block.lines().next().unwrap();
    assert!(
        first.starts_with("cargo run --release -- run") && first.contains("# build"),
        "{first}"
    );
    let after = block[block.find("```").unwrap() + 3..].trim_start();
    let para = &after[..after.find("\n\n").unwrap()];
    let para = para.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        para.contains("compiles dbio first") && para.contains("about 2 minutes"),
        "{para}"
    );
    assert!(
        para.contains("`data files`, `redo logs`"),
        "the layout lines by name: {para}"
    );
}

crate::tests! {
    the_readmes_first_command_says_it_builds_first_and_how_long,
    a_models_layout_names_data_files_and_redo_logs,
    stderr_piped_gets_a_plain_line_per_second,
    jsonl_in_a_file_is_the_stored_series_and_names_the_run,
    json_gives_the_run_id_a_script_goes_on_with,
    progress_refusals_are_one_line,
}
