//! A run measured is never lost (issue 26): when the store stays locked by
//! another process (a real `sqlite3` holding `BEGIN EXCLUSIVE`) or its
//! filesystem is full, the run goes whole to a side file that the one error
//! line names, and `dbio import run FILE` saves it later as the first save
//! would have (same report, text, environment, series and histograms). A
//! store that is read-only already is refused before the run.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use dbio::store::{Store, decode_histogram};
use serde_json::Value;

fn dbio(store: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store);
    c
}

/// `dbio ARGS --db STORE`, which must succeed: its stdout.
fn ok(store: &Path, args: &[&str]) -> String {
    let out = dbio(store).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "dbio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A `sqlite3` process holding the store's write lock (`BEGIN EXCLUSIVE`)
/// until it is dropped.
struct Locked {
    child: Child,
}

impl Locked {
    fn hold(store: &Path, dir: &Path) -> Locked {
        let marker = dir.join("locked");
        let mut child = Command::new("sqlite3")
            .arg(store)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let script = format!(
            "BEGIN EXCLUSIVE;\n.output {}\n.print locked\n.output stdout\n",
            marker.display()
        );
        let stdin = child.stdin.as_mut().unwrap();
        stdin.write_all(script.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let lock = Locked { child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::read_to_string(&marker).map_or(true, |m| m.trim() != "locked") {
            assert!(Instant::now() < deadline, "sqlite3 did not take the lock");
            std::thread::sleep(Duration::from_millis(20));
        }
        lock
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // End of input: sqlite3 rolls back and exits.
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The side file the one error line of a run that was not saved names.
fn kept_file(out: &Output) -> PathBuf {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "one error line: {err}");
    let line = errors[0];
    assert!(
        line.starts_with("error: the run was measured but not saved: "),
        "{line}"
    );
    let (_, file) = line
        .split_once("save it with `dbio import run ")
        .unwrap_or_else(|| panic!("the line names the file: {line}"));
    let file = PathBuf::from(file.strip_suffix('`').unwrap());
    assert!(file.is_file(), "{} exists: {line}", file.display());
    file
}

/// The stored run `id` matches what the run printed: its report document
/// (`--json`) or terminal text, its histograms hold every operation, its
/// series every second.
fn assert_same_run(store: &Path, id: i64, printed: &str, json: bool) {
    let shown = ok(store, &["runs", "show", &id.to_string(), "--json"]);
    let report: Value = serde_json::from_str(&shown).unwrap();
    if json {
        let printed: Value = serde_json::from_str(printed).unwrap();
        assert_eq!(report, printed, "runs show --json is the printed document");
    } else {
        let text = ok(store, &["runs", "show", &id.to_string()]);
        assert!(
            text.starts_with(printed),
            "runs show is the printed text:\n{text}\n---\n{printed}"
        );
    }
    let stored = Store::open(store).unwrap().get(id).unwrap();
    assert_eq!(stored.environment["host"], report["environment"]);
    for op in ["read", "write"] {
        let (_, bytes) = stored
            .histograms
            .iter()
            .find(|(o, _)| o == op)
            .unwrap_or_else(|| panic!("a {op} histogram"));
        let h = decode_histogram(bytes).unwrap();
        assert_eq!(
            h.len(),
            report[op]["requests"].as_u64().unwrap(),
            "every {op} is in its histogram"
        );
    }
    let seconds = report["series"].as_array().unwrap().len();
    assert!(seconds > 0 && stored.series.len() == seconds, "the series");
}

/// When run `id` counts as saved (ms), read with sqlite3 as other tools would.
fn saved_unix_ms(store: &Path, id: i64) -> i64 {
    let out = Command::new("sqlite3")
        .arg(store)
        .arg(format!("SELECT saved_unix_ms FROM runs WHERE id = {id}"))
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn a_run_the_locked_store_cannot_take_is_kept_and_imported_later() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    ok(&store, &["runs", "list"]);
    let lock = Locked::hold(&store, dir.path());
    // Two runs at once, as text and as JSON: both wait the 30 s out.
    let runs: Vec<Child> = ["t1", "t2"]
        .iter()
        .map(|t| {
            let mut c = dbio(&store);
            c.args(["run", "--size", "4M", "--time", "1", "--target"])
                .arg(dir.path().join(t));
            if *t == "t2" {
                c.arg("--json");
            }
            c.stdout(Stdio::piped()).stderr(Stdio::piped());
            c.spawn().unwrap()
        })
        .collect();
    let outs: Vec<Output> = runs
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let started = std::time::SystemTime::now();
    drop(lock);
    let files: Vec<PathBuf> = outs.iter().map(kept_file).collect();
    for (f, out) in files.iter().zip(&outs) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("stayed locked by another process for 30 s"),
            "{err}"
        );
        assert_eq!(f.parent().unwrap(), dir.path().join("store.sqlite.unsaved"));
    }
    let rows = |store: &Path| {
        let rows: Value =
            serde_json::from_str(&ok(store, &["runs", "export", "--format", "json"])).unwrap();
        rows.as_array().unwrap().len()
    };
    assert_eq!(rows(&store), 0, "nothing saved while locked");
    let copy = dir.path().join("copy.json");
    std::fs::copy(&files[1], &copy).unwrap();

    let said = ok(
        &store,
        &[
            "import",
            "run",
            files[0].to_str().unwrap(),
            files[1].to_str().unwrap(),
        ],
    );
    assert!(
        said.contains("saved as run 1") && said.contains("saved as run 2"),
        "{said}"
    );
    assert!(
        !files[0].exists() && !files[1].exists(),
        "imported files are removed"
    );
    assert!(
        !dir.path().join("store.sqlite.unsaved").exists(),
        "and their empty directory"
    );
    let printed = |i: usize| String::from_utf8(outs[i].stdout.clone()).unwrap();
    assert_same_run(&store, 1, &printed(0), false);
    assert_same_run(&store, 2, &printed(1), true);
    let first_save = started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for id in [1, 2] {
        assert!(
            saved_unix_ms(&store, id) <= first_save,
            "run {id} counts as saved when it was measured, not when imported"
        );
    }

    // The same run twice is stored once.
    let said = ok(&store, &["import", "run", copy.to_str().unwrap()]);
    assert!(said.contains("was stored already as run 2"), "{said}");
    assert_eq!(rows(&store), 2);
}

/// A tmpfs of its own, unmounted (and its directory removed) on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount(size: &str) -> SmallFs {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "dbio-it-full"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount a tmpfs");
        SmallFs { dir }
    }

    /// Writes `path` until the filesystem is full.
    fn fill(path: &Path) {
        let mut f = std::fs::File::create(path).unwrap();
        let chunk = vec![0x5a_u8; 64 << 10];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.sync_all();
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        if !crate::common::loopdev::umount_retrying(self.dir.path()) {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

fn a_run_a_full_store_cannot_take_is_kept_in_the_temporary_directory() {
    let fs = SmallFs::mount("4m");
    let store = fs.dir.path().join("store.sqlite");
    let work = tempfile::tempdir().unwrap();
    let tmp = work.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    ok(&store, &["runs", "list"]);
    let mut run = dbio(&store)
        .args(["run", "--size", "4M", "--time", "2", "--target"])
        .arg(work.path().join("t"))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The store is open once the run names where its target is.
    let mut stderr = run.stderr.take().unwrap();
    let mut err = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&err).contains("where ") {
        assert_eq!(stderr.read(&mut byte).unwrap(), 1, "the run started");
        err.push(byte[0]);
    }
    let filler = fs.dir.path().join("filler");
    SmallFs::fill(&filler);
    stderr.read_to_end(&mut err).unwrap();
    let mut out = run.wait_with_output().unwrap();
    out.stderr = err;
    let file = kept_file(&out);
    let line = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(line.contains("full"), "the cause is named: {line}");
    assert_eq!(file.parent().unwrap(), tmp.join("dbio-unsaved"), "{line}");
    assert!(
        !fs.dir.path().join("store.sqlite.unsaved").exists(),
        "nothing half-written beside the full store"
    );

    std::fs::remove_file(&filler).unwrap();
    let said = ok(&store, &["import", "run", file.to_str().unwrap()]);
    assert!(said.contains("saved as run 1"), "{said}");
    assert_same_run(&store, 1, &String::from_utf8(out.stdout).unwrap(), false);
}

/// A read-only bind mount of one file, unmounted on drop.
struct ReadOnlyFile(PathBuf);

impl ReadOnlyFile {
    fn mount(file: &Path) -> ReadOnlyFile {
        let bind = Command::new("mount")
            .args(["--bind"])
            .args([file, file])
            .status()
            .unwrap();
        assert!(bind.success(), "bind-mount the store on itself");
        let guard = ReadOnlyFile(file.to_path_buf());
        let ro = Command::new("mount")
            .args(["-o", "remount,bind,ro"])
            .arg(file)
            .status()
            .unwrap();
        assert!(ro.success(), "remount it read-only");
        guard
    }
}

impl Drop for ReadOnlyFile {
    fn drop(&mut self) {
        if !crate::common::loopdev::umount_retrying(&self.0) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
}

/// A store that can only be read is refused before anything is measured
/// or created; it can still be listed.
fn a_read_only_store_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    ok(&store, &["runs", "list"]);
    let _ro = ReadOnlyFile::mount(&store);
    let target = dir.path().join("t");
    let out = dbio(&store)
        .args([
            "run", "--engine", "null", "--size", "1M", "--time", "1", "--target",
        ])
        .arg(&target)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("error: {} cannot be written", store.display())),
        "{err}"
    );
    assert!(!target.exists(), "nothing was created");
    ok(&store, &["runs", "list"]);
}

crate::tests! {
    a_run_the_locked_store_cannot_take_is_kept_and_imported_later [Tool("sqlite3")],
    a_run_a_full_store_cannot_take_is_kept_in_the_temporary_directory [Root],
    a_read_only_store_is_refused_before_the_run [Root],
}
