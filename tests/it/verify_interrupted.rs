//! Interruption is not damage (`dbio verify` after kill -9): sixteen
//! sessions write a 1 MiB target, the run is killed at a random moment,
//! and verify must find no damage — blocks torn or stale by the writes in
//! flight are their own outcome — on tmpfs and on ext4 on a loop device,
//! run after run on the same target (the interrupted writes carried in the
//! map). Torn and stale blocks injected away from the writes in flight are
//! still damage.

use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use crate::common::loopdev::LoopDev;
use crate::common::run::dbio;
use crate::common::store::temp_store;
use crate::verify::{BS, block, count, data_file, offsets, put, run, verify};
use serde_json::Value;

const HOT: [&str; 6] = ["--size", "1M", "--pattern", "randwrite", "--sessions", "16"];

/// A run writing `t` until it is killed.
fn writer(t: &Path, extra: &[&str]) -> Child {
    StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", crate::common::store::store_path())
        .args(["run", "--quiet", "--target"])
        .arg(t)
        .args(HOT)
        .args(["--time", "60"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The record of writes in flight in `t`: its inode, and whether any slot
/// holds a write.
fn record(t: &Path) -> Option<(u64, bool)> {
    use std::os::unix::fs::MetadataExt;
    let p = t.join("dbio-inflight");
    let ino = std::fs::metadata(&p).ok()?.ino();
    let r = std::fs::read(&p).ok()?;
    Some((ino, r.len() > 64 && r[64..].iter().any(|&b| b != 0)))
}

/// Waits until the run has made its record of writes in flight and its
/// sessions are writing, then `ms` more, and kills it with SIGKILL.
fn kill_9_after(t: &Path, mut child: Child, ms: u64) {
    let before = record(t).map(|(ino, _)| ino);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match record(t) {
            Some((ino, true)) if Some(ino) != before => break,
            _ => {}
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended before it was killed: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "the run never started writing: {:?}",
            record(t)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    std::thread::sleep(Duration::from_millis(ms));
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Verify after a kill: exit 0, no damage; returns (torn, stale) in flight.
fn no_damage(t: &Path, trial: usize) -> (u64, u64) {
    let (out, doc) = verify(t);
    let f = &doc["findings"];
    assert_eq!(
        out.status.code(),
        Some(0),
        "trial {trial}: {}\n{f:#}",
        String::from_utf8_lossy(&out.stderr)
    );
    for class in ["zeroed", "checksum", "misdirected", "torn", "lost"] {
        assert_eq!(count(&doc, class), 0, "trial {trial}: {class}");
    }
    assert!(
        doc["interrupted"]["writes"]["count"].as_u64() > Some(0),
        "trial {trial}: the record of writes in flight was read: {}",
        doc["interrupted"]
    );
    let n = |k: &str| f["in_flight"][k]["count"].as_u64().unwrap();
    (n("torn"), n("stale"))
}

/// `trials` runs of 16 sessions on one target, each killed with -9 at a
/// random moment, psync and io_uring and both I/O modes in turn; then a
/// run that ends cleanly. Returns the torn and stale blocks seen.
fn kill_loop(t: &Path, trials: usize) -> (u64, u64) {
    run(t, &[&HOT[..], &["--ops", "200"]].concat());
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(std::process::id());
    let (mut torn, mut stale) = (0, 0);
    for trial in 0..trials {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let engine: &[&str] = if trial % 2 == 0 {
            &["--engine", "psync"]
        } else {
            &["--engine", "io_uring", "--iodepth", "2"]
        };
        let io = if trial % 4 < 2 { "direct" } else { "buffered" };
        let child = writer(t, &[engine, &["--io", io]].concat());
        kill_9_after(t, child, 20 + rng % 300);
        let (a, b) = no_damage(t, trial);
        (torn, stale) = (torn + a, stale + b);
    }
    // A run that ends cleanly after them: what the kills tore is carried.
    run(t, &[&HOT[..], &["--ops", "100"]].concat());
    let (out, doc) = verify(t);
    assert_eq!(out.status.code(), Some(0), "{:#}", doc["findings"]);
    assert_eq!(doc["map"]["clean"], true);
    (torn, stale)
}

fn kill_9_mid_write_is_never_damage_on_tmpfs() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let (torn, stale) = kill_loop(&dir.path().join("t"), 20);
    eprintln!("tmpfs: 20 kills, {torn} blocks torn and {stale} stale in flight");
}

fn kill_9_mid_write_is_never_damage_on_ext4() {
    let _store = temp_store();
    let mut dev = LoopDev::new(64 << 20, true);
    dev.mkfs("ext4");
    let t = dev.mount().join("t");
    let (torn, stale) = kill_loop(&t, 12);
    eprintln!("ext4: 12 kills, {torn} blocks torn and {stale} stale in flight");
    dev.umount();
}

/// The blocks the killed run's record says were in flight.
fn in_flight(t: &Path) -> Vec<u64> {
    let r = std::fs::read(t.join("dbio-inflight")).unwrap();
    let mut v: Vec<u64> = r[64..]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .filter(|&v| v != 0)
        .map(|v| (v >> 16) - 1)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// `new`'s first half over `old`'s second: a write cut short.
fn half(new: &[u8], old: &[u8]) -> Vec<u8> {
    let mut b = old.to_vec();
    b[..BS as usize / 2].copy_from_slice(&new[..BS as usize / 2]);
    b
}

/// A target laid out, written by a run that ended cleanly, then by one
/// killed mid-write: the data file at each step, and the blocks in flight.
struct Killed {
    _dir: tempfile::TempDir,
    t: PathBuf,
    data: PathBuf,
    laid: Vec<u8>,
    synced: Vec<u8>,
    killed: Vec<u8>,
    flying: Vec<u64>,
}

impl Killed {
    fn new() -> Killed {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let t = dir.path().join("t");
        let data = data_file(&t);
        run(
            &t,
            &[&HOT[..2], &["--pattern", "randread", "--ops", "10"]].concat(),
        );
        let laid = std::fs::read(&data).unwrap();
        run(&t, &[&HOT[..], &["--ops", "400", "--seed", "1"]].concat());
        let synced = std::fs::read(&data).unwrap();
        kill_9_after(&t, writer(&t, &["--seed", "2"]), 200);
        let killed = std::fs::read(&data).unwrap();
        let flying = in_flight(&t);
        Killed {
            _dir: dir,
            t,
            data,
            laid,
            synced,
            killed,
            flying,
        }
    }

    fn blocks(&self) -> u64 {
        self.laid.len() as u64 / BS
    }

    /// A block the killed run rewrote (its write acknowledged or not),
    /// in flight at the kill or not.
    fn rewritten(&self, in_flight: bool) -> u64 {
        (0..self.blocks())
            .filter(|n| self.flying.contains(n) == in_flight)
            .find(|&n| block(&self.killed, n) != block(&self.synced, n))
            .expect("a block the killed run rewrote")
    }

    /// Block `n` torn: the killed run's first half over the synced block.
    fn tear(&self, n: u64) {
        put(
            &self.data,
            n,
            &half(block(&self.killed, n), block(&self.synced, n)),
        );
    }
}

fn torn_and_stale_blocks_away_from_the_writes_in_flight_are_damage() {
    let _store = temp_store();
    let k = Killed::new();
    let (t, data) = (&k.t, &k.data);
    let (laid, synced) = (&k.laid, &k.synced);
    // In flight: one torn (its write landed, half the block put back),
    // another put back whole (stale): the interruption, not damage.
    let a = k.rewritten(true);
    let e = *k
        .flying
        .iter()
        .find(|&&n| n != a)
        .expect("two blocks in flight");
    k.tear(a);
    put(data, e, block(synced, e));
    // Away from them: the same tear, and a block put back below its floor.
    let c = k.rewritten(false);
    let d = (0..k.blocks())
        .filter(|n| !k.flying.contains(n))
        .find(|&n| n != c && block(synced, n) != block(laid, n))
        .expect("a block the synced run wrote");
    k.tear(c);
    put(data, d, block(laid, d));

    let (out, doc) = verify(t);
    let f = &doc["findings"];
    assert_eq!(out.status.code(), Some(1), "{f:#}");
    assert_eq!(count(&doc, "torn"), 1, "{f:#}");
    assert_eq!(offsets(&doc, "torn"), vec![c * BS]);
    assert_eq!(count(&doc, "lost"), 1, "{f:#}");
    assert_eq!(offsets(&doc, "lost"), vec![d * BS]);
    let at = |k: &str| -> Vec<u64> {
        let v: &Value = &f["in_flight"][k]["first"];
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e["offset"].as_u64().unwrap())
            .collect()
    };
    let n = |k: &str| f["in_flight"][k]["count"].as_u64().unwrap();
    assert!(n("torn") >= 1 && n("stale") >= 1, "{f:#}");
    assert!(n("torn") > 5 || at("torn").contains(&(a * BS)), "{f:#}");
    assert!(n("stale") > 5 || at("stale").contains(&(e * BS)), "{f:#}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 damaged blocks") && err.contains("1 torn, 1 lost"),
        "{err}"
    );
}

/// A power cut, as far as verify can tell: the record of writes in flight
/// was written in another boot. Its writes are not known, so any tear
/// above the floor is the interruption; below it, still damage.
fn after_a_reboot_writes_in_flight_are_unknown_and_tears_above_the_floor_are_not_damage() {
    let _store = temp_store();
    let k = Killed::new();
    let t = &k.t;
    let rec = t.join("dbio-inflight");
    let mut r = std::fs::read(&rec).unwrap();
    r[24] = if r[24] == b'0' { b'1' } else { b'0' }; // another boot id
    std::fs::write(&rec, &r).unwrap();
    let c = k.rewritten(false);
    k.tear(c);
    let (out, doc) = verify(t);
    assert_eq!(out.status.code(), Some(0), "{:#}", doc["findings"]);
    let why = doc["interrupted"]["blind"]["why"].as_str().unwrap();
    assert!(why.contains("before the last boot"), "{why}");
    assert!(doc["findings"]["in_flight"]["torn"]["count"].as_u64() >= Some(1));
    // Half of it put back below its floor: a synced write lost, damage.
    let (laid, synced, killed) = (&k.laid, &k.synced, &k.killed);
    let d = (0..k.blocks())
        .find(|&n| {
            n != c && block(synced, n) != block(laid, n) && block(killed, n) != block(synced, n)
        })
        .expect("a block both runs wrote");
    put(&k.data, d, &half(block(killed, d), block(laid, d)));
    let (out, doc) = verify(t);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(offsets(&doc, "torn"), vec![d * BS], "{:#}", doc["findings"]);
}

/// `dbio run --verify` reads a killed run's torn block as the
/// interruption, and stops at the same tear away from its writes in flight.
fn checked_reads_take_a_kill_torn_block_as_the_interruption() {
    let _store = temp_store();
    let k = Killed::new();
    let a = k.rewritten(true);
    k.tear(a);
    let check = || {
        dbio()
            .args(["run", "--quiet", "--target"])
            .arg(&k.t)
            .args(&HOT[..2])
            .args(["--pattern", "seqread", "--ops", "128", "--verify"])
            .output()
            .unwrap()
    };
    let out = check();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = k.rewritten(false);
    k.tear(c);
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!("torn block at {} offset {}", k.data.display(), c * BS);
    assert!(text.contains(&want), "{want}: {text}");
}

crate::tests! {
    kill_9_mid_write_is_never_damage_on_tmpfs,
    after_a_reboot_writes_in_flight_are_unknown_and_tears_above_the_floor_are_not_damage,
    kill_9_mid_write_is_never_damage_on_ext4 [Root, Tool("mkfs.ext4")],
    torn_and_stale_blocks_away_from_the_writes_in_flight_are_damage,
    checked_reads_take_a_kill_torn_block_as_the_interruption,
}
