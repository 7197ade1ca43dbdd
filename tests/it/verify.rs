//! `dbio verify` against injected faults: runs write a target, the test
//! damages the data file (or the loop device's whole image) the way storage
//! fails, and verify must name each damaged block's class and place —
//! zeroed, checksum, misdirected, torn, lost — with no false positive on
//! clean targets, overlapping writers and killed runs. Device-mapper faults
//! (dm-flakey dropping writes) where the kernel has device-mapper.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};

use crate::common::loopdev::LoopDev;
use crate::common::run::dbio;
use crate::common::store::temp_store;
use serde_json::Value;

pub(crate) const BS: u64 = 8192;
const MIB: u64 = 1 << 20;

pub(crate) fn run(target: &Path, args: &[&str]) {
    let out = dbio()
        .args(["run", "--quiet", "--target"])
        .arg(target)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "run {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn verify(target: &Path) -> (Output, Value) {
    let out = dbio()
        .args(["verify", "--json", "--quiet", "--target"])
        .arg(target)
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, doc)
}

/// Verify must find the target clean: exit 0, nothing in any class.
pub(crate) fn assert_clean(target: &Path) -> Value {
    let (out, doc) = verify(target);
    let f = &doc["findings"];
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{f:#}",
        String::from_utf8_lossy(&out.stderr)
    );
    let torn = f["in_flight"]["torn"]["count"].as_u64().unwrap();
    assert_eq!(
        f["blocks"].as_u64().unwrap(),
        f["intact"].as_u64().unwrap() + torn,
        "intact but for blocks torn by writes in flight at a kill: {f:#}"
    );
    doc
}

pub(crate) fn count(doc: &Value, class: &str) -> u64 {
    doc["findings"][class]["count"].as_u64().unwrap()
}

/// Byte offsets of the blocks a class shows first.
pub(crate) fn offsets(doc: &Value, class: &str) -> Vec<u64> {
    doc["findings"][class]["first"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["offset"].as_u64().unwrap())
        .collect()
}

pub(crate) fn data_file(target: &Path) -> PathBuf {
    target.join("dbio-data-0000.dat")
}

pub(crate) fn block(bytes: &[u8], b: u64) -> &[u8] {
    &bytes[(b * BS) as usize..((b + 1) * BS) as usize]
}

pub(crate) fn put(path: &Path, b: u64, data: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, b * BS).unwrap();
    f.sync_all().unwrap();
}

/// Blocks whose bytes differ between two copies of a data file.
fn changed(a: &[u8], b: &[u8]) -> Vec<u64> {
    (0..a.len() as u64 / BS)
        .filter(|&i| block(a, i) != block(b, i))
        .collect()
}

fn every_injected_fault_is_found_and_named() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let args = ["--size", "8M", "--pattern", "randwrite", "--seed"];
    run(&t, &[&args[..], &["3", "--ops", "3000"]].concat());
    let data = data_file(&t);
    let old = std::fs::read(&data).unwrap();
    assert_clean(&t);
    run(&t, &[&args[..], &["4", "--ops", "2000"]].concat());
    let new = std::fs::read(&data).unwrap();
    assert_clean(&t);
    let rewritten = changed(&old, &new);
    assert!(rewritten.len() > 100, "{}", rewritten.len());
    let (tear, lose) = (rewritten[0], rewritten[1]);
    let kept: Vec<u64> = (6..old.len() as u64 / BS)
        .filter(|b| !rewritten.contains(b))
        .collect();
    let (zero, flip, over) = (kept[0], kept[1], kept[2]);
    put(&data, zero, &[0u8; BS as usize]);
    let mut rot = block(&new, flip).to_vec();
    rot[4000] ^= 0x20;
    put(&data, flip, &rot);
    let mut torn = block(&new, tear).to_vec();
    torn[4096..].copy_from_slice(&block(&old, tear)[4096..]);
    put(&data, tear, &torn);
    put(&data, over, block(&new, 5));
    put(&data, lose, block(&old, lose));

    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("5 damaged blocks") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    for (class, at) in [
        ("zeroed", zero),
        ("checksum", flip),
        ("torn", tear),
        ("misdirected", over),
        ("lost", lose),
    ] {
        assert_eq!(count(&doc, class), 1, "{class}: {:#}", doc["findings"]);
        assert_eq!(offsets(&doc, class), vec![at * BS], "{class}");
    }
    let mis = &doc["findings"]["misdirected"]["first"][0];
    assert_eq!(mis["found"]["offset"], 5 * BS, "the stamp names block 5");
    let torn = &doc["findings"]["torn"]["first"][0];
    assert_eq!(torn["sector"], 8, "the second half is the old write");
    let lost = &doc["findings"]["lost"]["first"][0];
    assert!(
        lost["found"]["generation"].as_u64() < lost["expected"]["min_generation"].as_u64(),
        "{lost}"
    );
    // The text names the classes in words, and the run is stored.
    let text = dbio()
        .args(["verify", "--target"])
        .arg(&t)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&text.stdout);
    assert!(
        s.contains("lost") && s.contains("ORA-1578") && s.contains("DAMAGED"),
        "{s}"
    );
    let runs = dbio()
        .args(["runs", "export", "--format", "json", "--workload", "verify"])
        .output()
        .unwrap();
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let verifies = runs.as_array().unwrap().len();
    assert_eq!(verifies, 4, "every verify is a stored run");
}

fn overlapping_writers_and_killed_runs_give_no_false_failures() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    // 32 blocks, 8 sessions x 8 in flight: nearly every write overlaps another of its block.
    let hot = [
        "--size",
        "256k",
        "--pattern",
        "randwrite",
        "--engine",
        "io_uring",
        "--iodepth",
        "8",
        "--sessions",
        "8",
    ];
    for seed in ["1", "2", "3"] {
        run(
            &t,
            &[&hot[..], &["--ops", "20000", "--seed", seed]].concat(),
        );
        assert_clean(&t);
    }
    // kill -9 mid-run: blocks newer than the map, never lost ones.
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", crate::common::store::store_path())
        .args(["run", "--quiet", "--target"])
        .arg(&t)
        .args(hot)
        .args(["--time", "30"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    let doc = assert_clean(&t);
    assert_eq!(doc["map"]["clean"], false, "{:#}", doc["map"]);
    // The next run starts past what the killed run may have left.
    run(&t, &[&hot[..], &["--ops", "5000"]].concat());
    let doc = assert_clean(&t);
    assert_eq!(doc["map"]["clean"], true);
}

/// The map file's sync point counter and floors.
fn map_state(target: &Path) -> (u64, Vec<u16>) {
    let m = std::fs::read(target.join("dbio-genmap")).unwrap();
    let points = u64::from_le_bytes(m[24..32].try_into().unwrap());
    let floors = m[40..]
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    (points, floors)
}

fn a_killed_run_keeps_the_map_of_its_last_periodic_sync_point() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let args = ["--size", "8M", "--pattern", "randwrite"];
    run(&t, &[&args[..], &["--ops", "100", "--seed", "1"]].concat());
    let before = std::fs::read(data_file(&t)).unwrap();
    let (points0, floors0) = map_state(&t);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", crate::common::store::store_path())
        .args(["run", "--quiet", "--target"])
        .arg(&t)
        .args(args)
        .args(["--time", "60", "--rate", "3000", "--seed", "2"])
        .args(["--verify-sync-interval", "0.3"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for two periodic sync points, then kill -9 between two.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(40);
    while map_state(&t).0 < points0 + 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "no periodic sync point"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(150));
    child.kill().unwrap();
    child.wait().unwrap();
    let (points, floors) = map_state(&t);
    assert!(points >= points0 + 2, "{points0} -> {points}");
    let doc = assert_clean(&t);
    assert_eq!(doc["map"]["clean"], false, "{:#}", doc["map"]);
    assert_eq!(doc["map"]["sync_points"], points, "{:#}", doc["map"]);
    // The synced map holds writes of the killed run: put back the block a
    // raised floor says was overwritten, acknowledged and synced, and it is lost.
    let raised: Vec<u64> = (0..floors.len() as u64)
        .filter(|&b| floors[b as usize] != floors0[b as usize])
        .collect();
    assert!(raised.len() > 50, "{} floors raised", raised.len());
    let b = raised[raised.len() / 2];
    put(&data_file(&t), b, block(&before, b));
    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(count(&doc, "lost"), 1, "{:#}", doc["findings"]);
    assert_eq!(offsets(&doc, "lost"), vec![b * BS]);
}

fn a_power_cut_to_an_earlier_sync_point_names_exactly_the_later_writes_lost() {
    let _store = temp_store();
    let mut dev = LoopDev::new(256 * MIB, true);
    dev.mkfs("xfs");
    let t = dev.mount().join("t");
    // Four sessions, four in flight each: some writes of a block overlap.
    let args = [
        "--size",
        "32M",
        "--pattern",
        "randwrite",
        "--ops",
        "1500",
        "--sessions",
        "4",
        "--engine",
        "io_uring",
        "--iodepth",
        "4",
    ];
    run(&t, &[&args[..], &["--seed", "1"]].concat());
    let data = data_file(&t);
    let at_sync = std::fs::read(&data).unwrap();
    dev.umount();
    let image = dev.image().to_path_buf();
    let copy = image.with_extension("at-sync-point");
    assert!(
        StdCommand::new("cp")
            .args(["--sparse=always"])
            .arg(&image)
            .arg(&copy)
            .status()
            .unwrap()
            .success()
    );
    let t = dev.mount().join("t");
    run(&t, &[&args[..], &["--seed", "2"]].concat());
    let after = std::fs::read(data_file(&t)).unwrap();
    let map = std::fs::read(t.join("dbio-genmap")).unwrap();
    dev.umount();
    // The storage loses everything since the first sync point; the map of the
    // last one survives (kept off the device under test).
    std::fs::copy(&copy, &image).unwrap();
    std::fs::remove_file(&copy).unwrap();
    let t = dev.mount().join("t");
    std::fs::write(t.join("dbio-genmap"), &map).unwrap();
    let lost_blocks = changed(&at_sync, &after);
    assert!(lost_blocks.len() > 500, "{}", lost_blocks.len());
    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        count(&doc, "lost"),
        lost_blocks.len() as u64,
        "changed blocks from {:?}; {:#}",
        &lost_blocks[..5],
        doc["findings"]
    );
    for class in ["zeroed", "checksum", "misdirected", "torn"] {
        assert_eq!(count(&doc, class), 0, "{class}");
    }
    let first: Vec<u64> = lost_blocks.iter().take(5).map(|b| b * BS).collect();
    assert_eq!(offsets(&doc, "lost"), first);
    drop(t);
    dev.umount();
}

fn verify_refuses_what_dbio_did_not_lay_out() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let out = dbio()
        .args(["verify", "--target"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no dbio-manifest.json") && err.trim_end().lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

/// dm-flakey corrupting reads of a device dbio wrote whole: verify names
/// the blocks as failing their checksums (and the device clean before).
fn dm_flakey_corrupted_reads_fail_their_checksums() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, true);
    let sectors = 64 * MIB / 512;
    let name = format!("dbio-flakey-{}", std::process::id());
    struct Dm(String);
    impl Drop for Dm {
        fn drop(&mut self) {
            let _ = StdCommand::new("dmsetup")
                .args(["remove", &self.0])
                .status();
        }
    }
    let dmsetup = |args: &[&str]| {
        let ok = StdCommand::new("dmsetup")
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "dmsetup {args:?}");
    };
    let linear = format!("0 {sectors} linear {} 0", dev.path.display());
    dmsetup(&["create", &name, "--table", &linear]);
    let _dm = Dm(name.clone());
    let mapped = PathBuf::from(format!("/dev/mapper/{name}"));
    let m = mapped.to_str().unwrap();
    let whole = ["--pattern", "seqwrite", "--bs", "8k", "--ops", "8192"];
    run(
        &mapped,
        &[&["--destroy-device", m][..], &whole[..]].concat(),
    );
    let (out, _) = verify(&mapped);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Up 0 s, down 60 s: byte 1000 of every read is set to 0.
    let flakey = format!(
        "0 {sectors} flakey {} 0 0 60 5 corrupt_bio_byte 1000 r 0 0",
        dev.path.display()
    );
    dmsetup(&["suspend", &name]);
    dmsetup(&["load", &name, "--table", &flakey]);
    dmsetup(&["resume", &name]);
    let (out, doc) = verify(&mapped);
    assert_eq!(out.status.code(), Some(1));
    assert!(count(&doc, "checksum") > 0, "{:#}", doc["findings"]);
}

crate::tests! {
    every_injected_fault_is_found_and_named,
    overlapping_writers_and_killed_runs_give_no_false_failures,
    a_killed_run_keeps_the_map_of_its_last_periodic_sync_point,
    a_power_cut_to_an_earlier_sync_point_names_exactly_the_later_writes_lost [Root, Tool("mkfs.xfs")],
    verify_refuses_what_dbio_did_not_lay_out,
    dm_flakey_corrupted_reads_fail_their_checksums [Root, Tool("dmsetup"), DeviceMapper],
}
