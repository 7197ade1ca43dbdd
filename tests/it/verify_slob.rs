//! A killed SLOB run's torn blocks are not damage: the model keeps no
//! record of its writes in flight, only a mark that it is writing
//! (`dbio-slob-mark`), so after a run killed with -9 verify counts any torn
//! block of its datafiles and redo logs as that run's interruption. A run
//! killed again and again on tmpfs (buffered and O_DIRECT) never leaves
//! damage; a tear put into a target whose SLOB runs all ended cleanly still
//! is damage.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::common::store::temp_store;
use crate::verify::{BS, assert_clean, block, data_file, offsets, put, verify};

/// A small model: 2 schemas of 2,000 blocks, every operation an update.
const SMALL: [&str; 6] = ["--scale", "2000", "--schemas", "2", "--update-pct", "100"];

const MARK: &str = "dbio-slob-mark";

/// A SLOB run of the small model on `t` (its output: none).
fn slob(t: &Path, seed: &str) -> StdCommand {
    let mut c = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", crate::common::store::store_path())
        .args(["run", "--quiet", "--workload", "slob", "--target"])
        .arg(t)
        .args(SMALL)
        .args(["--redo-file-size", "2M", "--log-buffer", "512K"])
        .args(["--seed", seed])
        .stdout(Stdio::null());
    c
}

/// A SLOB run on `t` that ends cleanly after a second.
fn clean_run(t: &Path, seed: &str) {
    let out = slob(t, seed).args(["--time", "1"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A SLOB run on `t` for a minute (killed before it ends).
fn slob_writer(t: &Path, io: &str, seed: u64) -> Child {
    slob(t, &seed.to_string())
        .args(["--time", "60", "--io", io])
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The inode of the mark of `dir`, if any (each run puts a new one).
fn mark_inode(dir: &Path) -> Option<u64> {
    std::fs::metadata(dir.join(MARK)).ok().map(|m| m.ino())
}

/// Waits until the run has put its mark in `t` (it writes after that),
/// then `ms` more, and kills it with SIGKILL.
fn kill_9_when_writing(t: &Path, mut child: Child, ms: u64) {
    let before = mark_inode(t);
    let deadline = Instant::now() + Duration::from_secs(30);
    while mark_inode(t).is_none() || mark_inode(t) == before {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended before it was killed: {status}");
        }
        assert!(Instant::now() < deadline, "the run never marked {t:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(ms));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Verify of `t` after a kill: exit 0, no damage, the interruption named.
/// Returns the blocks torn by it.
fn no_damage(t: &Path, trial: usize) -> u64 {
    let doc = assert_clean(t);
    let why = doc["interrupted"]["slob"]["why"].as_str().unwrap_or("");
    assert!(why.contains("SLOB run"), "trial {trial}: {doc:#}");
    doc["findings"]["in_flight"]["torn"]["count"]
        .as_u64()
        .unwrap()
}

/// A clean SLOB run with `seed` over `t`, then one block it rewrote torn:
/// its first half the run's write, its second what the block held before.
fn clean_run_and_tear(t: &Path, seed: &str) -> u64 {
    let data = data_file(t);
    let before = std::fs::read(&data).unwrap();
    clean_run(t, seed);
    let after = std::fs::read(&data).unwrap();
    let n = (0..after.len() as u64 / BS)
        .find(|&n| block(&after, n) != block(&before, n))
        .expect("a block the clean run rewrote");
    let mut b = block(&after, n).to_vec();
    b[BS as usize / 2..].copy_from_slice(&block(&before, n)[BS as usize / 2..]);
    put(&data, n, &b);
    n
}

fn killed_slob_runs_never_leave_damage() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = dir.path().join("t");
    let redo = t.join("dbio-redo");
    clean_run(&t, "1");
    assert!(mark_inode(&t).is_none() && mark_inode(&redo).is_none());
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id());
    let mut torn = 0;
    for trial in 0..12 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let io = if trial % 2 == 0 { "buffered" } else { "direct" };
        kill_9_when_writing(&t, slob_writer(&t, io, rng), 200 + rng % 800);
        torn += no_damage(&t, trial) + no_damage(&redo, trial);
    }
    eprintln!("tmpfs: 12 SLOB runs killed, {torn} blocks torn by the kills");
    // The rule itself, whether or not a kill tore a block: a tear of the
    // killed run's writes is its interruption, named as such.
    let n = clean_run_and_tear(&t, "2");
    // The clean run after the kills keeps that an earlier run was interrupted.
    assert_eq!(
        std::fs::read_to_string(t.join(MARK)).unwrap().trim(),
        "interrupted before"
    );
    let torn_now = no_damage(&t, 12);
    assert!(torn_now >= 1);
    let out = crate::common::run::dbio()
        .args(["verify", "--quiet", "--target"])
        .arg(&t)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("torn: the SLOB run writing it was interrupted (not damage)")
            && (torn_now > 5 || text.contains(&format!("offset {} sector 8", n * BS)))
            && text.contains("by the SLOB run writing them, which was interrupted"),
        "{text}"
    );
    // `dbio clean` takes the marks with the layouts: nothing is left.
    let clean = ["clean", "--target", t.to_str().unwrap()];
    crate::common::run::dbio().args(clean).assert().success();
    let left: Vec<_> = walk(&t);
    assert!(left.is_empty() && !t.exists(), "left behind: {left:?}");
}

/// Every file under `dir` (none when it is gone).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match e.file_type().is_ok_and(|t| t.is_dir()) {
            true => out.extend(walk(&e.path())),
            false => out.push(e.path()),
        }
    }
    out
}

fn a_tear_after_slob_runs_that_ended_cleanly_is_damage() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let t = dir.path().join("t");
    clean_run(&t, "1");
    let n = clean_run_and_tear(&t, "2");
    assert!(mark_inode(&t).is_none(), "a clean end takes the mark away");
    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1), "{:#}", doc["findings"]);
    assert_eq!(offsets(&doc, "torn"), vec![n * BS], "{:#}", doc["findings"]);
    assert_eq!(doc["findings"]["in_flight"]["torn"]["count"], 0);
    assert_eq!(doc["interrupted"], "nothing");
}

crate::tests! {
    killed_slob_runs_never_leave_damage,
    a_tear_after_slob_runs_that_ended_cleanly_is_damage,
}
