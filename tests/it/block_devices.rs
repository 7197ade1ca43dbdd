//! dbio on real block devices and filesystems: ext4 and XFS on loop devices,
//! a full filesystem, an I/O error mid-run, an interrupted layout, and the
//! safety rules for writing to a block device. Needs root (skips otherwise).

use std::path::Path;
use std::process::{Command as StdCommand, Output, Stdio};
use std::time::Duration;

use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};
use dbio::storage::block::{MAGIC, verify};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn dbio(args: &[&str]) -> Output {
    StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(args)
        .output()
        .unwrap()
}

fn ok_json(args: &[&str]) -> Value {
    let mut all = vec!["run", "--json"];
    all.extend_from_slice(args);
    let out = dbio(&all);
    assert!(
        out.status.success(),
        "dbio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Counts blocks with a dbio header in the first `len` bytes of `path`
/// (all must verify), and how many of them were rewritten by a run.
fn sealed_blocks(path: &Path, len: usize, bs: usize) -> (usize, usize) {
    let mut data = vec![0u8; len];
    let mut f = std::fs::File::open(path).unwrap();
    std::io::Read::read_exact(&mut f, &mut data).unwrap();
    let (mut sealed, mut rewritten) = (0, 0);
    for (i, b) in data.chunks(bs).enumerate() {
        if b[..4] == MAGIC {
            let h = verify(b, Some((0, i as u64))).unwrap_or_else(|e| panic!("block {i}: {e}"));
            sealed += 1;
            rewritten += usize::from(h.generation > 0);
        }
    }
    (sealed, rewritten)
}

fn runs_on_ext4_and_xfs_loop_filesystems() {
    let _store = temp_store();
    for fs in ["ext4", "xfs"] {
        let mut dev = LoopDev::new(512 * MIB, true);
        dev.mkfs(fs);
        let mnt = dev.mount();
        let target = mnt.join("dbio");
        let t = target.to_str().unwrap();
        let r = ok_json(&[
            "--target",
            t,
            "--size",
            "64M",
            "--pattern",
            "randwrite",
            "--sessions",
            "4",
            "--ops",
            "2000",
        ]);
        assert_eq!(r["write"]["requests"], 2000, "{fs}");
        assert_eq!(
            r["target"]["layout"]["direct"], true,
            "{fs}: layout with O_DIRECT"
        );
        let r = ok_json(&[
            "--target",
            t,
            "--size",
            "64M",
            "--pattern",
            "randrw",
            "--engine",
            "io_uring",
            "--iodepth",
            "16",
            "--sessions",
            "2",
            "--ops",
            "4000",
        ]);
        assert_eq!(r["total"]["requests"], 4000, "{fs}");
        assert_eq!(r["target"]["layout"]["reused"], true);
        let r = ok_json(&[
            "--target",
            t,
            "--size",
            "64M",
            "--pattern",
            "randwrite",
            "--io",
            "fsync",
            "--ops",
            "200",
        ]);
        assert_eq!(r["sync"]["requests"], 200, "{fs}");
        let r = ok_json(&[
            "--target",
            t,
            "--size",
            "64M",
            "--pattern",
            "seqwrite",
            "--bs",
            "1M",
            "--io",
            "dsync",
            "--ops",
            "64",
        ]);
        assert_eq!(r["write"]["bytes"].as_u64().unwrap(), 64 * MIB, "{fs}");
        let file = target.join("dbio-data-0000.dat");
        let (sealed, _) = sealed_blocks(&file, (64 * MIB) as usize, MIB as usize);
        assert_eq!(sealed, 64, "{fs}: every 1 MiB block verifies");
        let out = dbio(&["clean", "--target", t]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!target.exists());
        dev.umount();
        assert!(dev.fsck_clean(), "{fs} fsck after the runs");
    }
}

fn a_full_filesystem_is_found_before_writing_and_nothing_is_left() {
    let _store = temp_store();
    let mut dev = LoopDev::new(64 * MIB, true);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let target = mnt.join("dbio");
    let out = dbio(&[
        "run",
        "--target",
        target.to_str().unwrap(),
        "--size",
        "256M",
        "--ops",
        "10",
    ]);
    // Refused as a configuration error before anything is written.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not enough free space") && err.contains("--size 256 MiB"),
        "{err}"
    );
    // One line: the free space is checked before the target is prepared.
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        !target.exists(),
        "the partial layout and the directory dbio made are gone"
    );
    dev.umount();
    assert!(dev.fsck_clean());
}

fn an_io_error_mid_run_stops_cleanly_with_results_so_far() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 * MIB, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let t = mnt.join("dbio");
    ok_json(&[
        "--target",
        t.to_str().unwrap(),
        "--size",
        "32M",
        "--ops",
        "10",
    ]);
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args([
            "run",
            "--json",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "32M",
            "--pattern",
            "randwrite",
            "--sessions",
            "2",
            "--time",
            "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // Shut the filesystem down: every later I/O on it fails with EIO.
    let shut = StdCommand::new("xfs_io")
        .args(["-x", "-c", "shutdown"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(shut.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).expect("the report is still printed");
    assert_eq!(r["status"], "failed");
    let e = r["error"].as_str().unwrap();
    assert!(
        e.contains("Input/output error") && e.contains("dbio-data-0000.dat"),
        "{e}"
    );
    assert!(
        r["write"]["requests"].as_u64().unwrap() > 0,
        "results so far are kept"
    );
    assert!(r["measured_s"].as_f64().unwrap() < 30.0);
    dev.umount();
}

fn ctrl_c_during_layout_removes_the_partial_layout() {
    let _store = temp_store();
    let mut dev = LoopDev::new(3 << 30, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let t = mnt.join("dbio");
    std::fs::create_dir(&t).unwrap();
    std::fs::write(t.join("keep.me"), b"user data").unwrap();
    let child = StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args([
            "run",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "2G",
            "--files",
            "4",
            "--ops",
            "10",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("partial layout was removed"),
        "{}",
        stderr(&out)
    );
    let left: Vec<_> = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("keep.me")]);
    dev.umount();
}

fn writing_to_a_device_with_a_filesystem_is_refused_and_the_filesystem_survives() {
    let _store = temp_store();
    let mut dev = LoopDev::new(128 * MIB, true);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    std::fs::write(mnt.join("table.dbf"), b"customer rows").unwrap();
    dev.umount();
    let d = dev.path.to_str().unwrap().to_string();
    for pattern in ["randwrite", "randrw", "seqwrite"] {
        let out = dbio(&["run", "--target", &d, "--pattern", pattern, "--ops", "100"]);
        assert_eq!(out.status.code(), Some(2), "{pattern}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("ext4") && err.contains(&format!("--destroy-device {d}")),
            "{err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    // A different path in --destroy-device does not count.
    let out = dbio(&[
        "run",
        "--target",
        &d,
        "--pattern",
        "randwrite",
        "--ops",
        "100",
        "--destroy-device",
        "/dev/loop999",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Reads are allowed and change nothing.
    let before = std::fs::read(dev.image()).unwrap();
    let r = ok_json(&[
        "--target",
        &d,
        "--pattern",
        "randread",
        "--ops",
        "500",
        "--io",
        "direct",
    ]);
    assert_eq!(r["target"]["kind"], "device");
    assert_eq!(r["read"]["requests"], 500);
    assert!(
        std::fs::read(dev.image()).unwrap() == before,
        "a read run changed the device"
    );
    assert!(dev.fsck_clean(), "the filesystem still checks clean");
    let mnt = dev.mount();
    assert_eq!(
        std::fs::read(mnt.join("table.dbf")).unwrap(),
        b"customer rows"
    );
    dev.umount();
}

fn a_mounted_device_is_refused_even_with_destroy_device() {
    let _store = temp_store();
    let mut dev = LoopDev::new(64 * MIB, true);
    dev.mkfs("ext4");
    let _mnt = dev.mount();
    let d = dev.path.to_str().unwrap().to_string();
    let out = dbio(&[
        "run",
        "--target",
        &d,
        "--pattern",
        "randwrite",
        "--ops",
        "10",
        "--destroy-device",
        &d,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("mounted"), "{}", stderr(&out));
    dev.umount();
    assert!(dev.fsck_clean());
}

fn destroy_device_allows_overwriting_and_written_blocks_verify() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, true);
    dev.mkfs("xfs");
    let d = dev.path.to_str().unwrap().to_string();
    let r = ok_json(&[
        "--target",
        &d,
        "--destroy-device",
        &d,
        "--pattern",
        "randwrite",
        "--size",
        "16M",
        "--ops",
        "500",
        "--seed",
        "3",
    ]);
    assert_eq!(r["write"]["requests"], 500);
    assert_eq!(r["target"]["blocks"], 2048);
    let (sealed, rewritten) = sealed_blocks(Path::new(&d), (16 * MIB) as usize, 8192);
    assert!(
        sealed > 300 && sealed <= 500 && rewritten == sealed,
        "{sealed} {rewritten}"
    );
    // dbio never wrote past --size.
    let img = std::fs::read(dev.image()).unwrap();
    let beyond = &img[(16 * MIB) as usize..];
    assert!(beyond.chunks(8192).all(|b| b[..4] != MAGIC));
}

fn a_blank_device_takes_writes_without_destroy_device() {
    let _store = temp_store();
    let dev = LoopDev::new(32 * MIB, true);
    let d = dev.path.to_str().unwrap().to_string();
    let r = ok_json(&[
        "--target",
        &d,
        "--pattern",
        "randrw",
        "--engine",
        "io_uring",
        "--iodepth",
        "8",
        "--ops",
        "1000",
    ]);
    assert_eq!(r["total"]["requests"], 1000);
    let out = dbio(&[
        "run",
        "--target",
        &d,
        "--files",
        "2",
        "--ops",
        "10",
        "--pattern",
        "randread",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--files 2"), "{}", stderr(&out));
}

fn a_block_size_below_the_logical_sector_is_refused_for_o_direct() {
    let _store = temp_store();
    let dev = LoopDev::with_sector_size(32 * MIB, true, 4096);
    let d = dev.path.to_str().unwrap().to_string();
    let out = dbio(&[
        "run",
        "--target",
        &d,
        "--pattern",
        "randread",
        "--bs",
        "512",
        "--ops",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("logical sector size (4096"),
        "{}",
        stderr(&out)
    );
    let r = ok_json(&[
        "--target",
        &d,
        "--pattern",
        "randread",
        "--bs",
        "4k",
        "--ops",
        "100",
    ]);
    assert_eq!(r["read"]["requests"], 100);
}

crate::tests! {
    runs_on_ext4_and_xfs_loop_filesystems [Root, Tool("mkfs.xfs")],
    a_full_filesystem_is_found_before_writing_and_nothing_is_left [Root],
    an_io_error_mid_run_stops_cleanly_with_results_so_far [Root, Tool("xfs_io")],
    ctrl_c_during_layout_removes_the_partial_layout [Root],
    writing_to_a_device_with_a_filesystem_is_refused_and_the_filesystem_survives [Root],
    a_mounted_device_is_refused_even_with_destroy_device [Root],
    destroy_device_allows_overwriting_and_written_blocks_verify [Root],
    a_blank_device_takes_writes_without_destroy_device [Root],
    a_block_size_below_the_logical_sector_is_refused_for_o_direct [Root],
}
