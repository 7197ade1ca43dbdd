//! Target safety (issue 13, "Devices and targets"): data the write gate does
//! not recognise, mistyped and unmounted targets, one command per target,
//! damaged layouts. Device tests use real loop devices with signatures
//! written by the real tools; they need root (skipped otherwise).

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};

use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};

const MIB: u64 = 1 << 20;

fn dbio(args: &[&str]) -> Output {
    StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a refusal: exit 2, one line on stderr holding every needle.
fn refused(out: &Output, needles: &[&str]) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
    err
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", stderr(out));
    stderr(out)
}

/// A short write run on `target` with extra arguments.
fn write_run(target: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        "--target",
        target,
        "--pattern",
        "randwrite",
        "--ops",
        "200",
        "--sessions",
        "1",
    ];
    args.extend_from_slice(extra);
    dbio(&args)
}

/// Writes `bytes` at `offset` of `path` with dd, as an admin would.
fn dd_at(path: &Path, offset: u64, bytes: &str) {
    let script = format!(
        "printf '{bytes}' | dd of={} bs=1 seek={offset} conv=notrunc status=none",
        path.display()
    );
    let st = StdCommand::new("sh")
        .args(["-c", &script])
        .status()
        .unwrap();
    assert!(st.success(), "{script}");
}

fn read_at(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap();
    let mut buf = vec![0u8; len];
    std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, offset).unwrap();
    buf
}

fn tool(name: &str, args: &[&str], dev: &Path) {
    let path = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(name));
    let out = StdCommand::new(path).args(args).arg(dev).output().unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn an_oracle_asm_disk_is_refused_and_survives() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, true);
    dd_at(&dev.path, 32, "ORCLDISK");
    let d = dev.path.to_str().unwrap();
    let out = write_run(d, &[]);
    refused(
        &out,
        &["Oracle ASM", "byte 32", &format!("--destroy-device {d}")],
    );
    assert_eq!(read_at(&dev.path, 32, 8), b"ORCLDISK");
    // The explicit overwrite still works.
    ok(&write_run(d, &["--destroy-device", d]));
}

fn signatures_only_util_linux_knows_are_refused() {
    let _store = temp_store();
    // mkfs.minix is in util-linux; dbio's own table does not know minix.
    // mkfs.jfs (jfsutils) is in both.
    for (mkfs, args, needle) in [
        ("mkfs.minix", &[][..], "minix signature"),
        ("mkfs.jfs", &["-q"][..], "JFS filesystem"),
    ] {
        let dev = LoopDev::new(64 * MIB, true);
        tool(mkfs, args, &dev.path);
        let before = read_at(&dev.path, 0, MIB as usize);
        let d = dev.path.to_str().unwrap();
        refused(&write_run(d, &[]), &[needle, "--destroy-device"]);
        assert_eq!(read_at(&dev.path, 0, MIB as usize), before, "{mkfs}");
    }
}

fn unknown_data_is_refused_but_zeros_and_dbio_blocks_are_not() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, true);
    let d = dev.path.to_str().unwrap();
    // All zeros: fine; then what dbio wrote itself is fine again.
    ok(&write_run(d, &[]));
    ok(&write_run(d, &["--bs", "4k"]));
    // Bytes nobody can name in the first MiB, then in the last MiB.
    for offset in [300_000u64, 64 * MIB - 1000] {
        let dev = LoopDev::new(64 * MIB, true);
        let d = dev.path.to_str().unwrap();
        dd_at(&dev.path, offset, "customer rows");
        refused(
            &write_run(d, &[]),
            &[
                "neither zeros nor blocks dbio wrote",
                &format!("byte {offset}"),
                &format!("--destroy-device {d}"),
            ],
        );
        assert_eq!(read_at(&dev.path, offset, 13), b"customer rows");
        // Reading is fine.
        let out = dbio(&["run", "--target", d, "--pattern", "randread", "--ops", "50"]);
        ok(&out);
    }
}

// ---- Mistyped and unmounted targets ----

fn a_mistyped_target_is_refused_and_nothing_is_created() {
    let _store = temp_store();
    let dev_typo = format!("/dev/dbio-test-nvme1n1x-{}", std::process::id());
    refused(
        &write_run(&dev_typo, &["--size", "1M"]),
        &["under /dev", "not an existing block device", "lsblk"],
    );
    assert!(!Path::new(&dev_typo).exists());
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("u01/oradata/dbio");
    refused(
        &write_run(deep.to_str().unwrap(), &["--size", "1M"]),
        &["does not exist", "only the last component"],
    );
    assert!(!dir.path().join("u01").exists(), "no parent was created");
    // The last component alone is created, and where it landed is said first.
    let t = dir.path().join("dbio");
    let err = ok(&write_run(t.to_str().unwrap(), &["--size", "1M"]));
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!("where    {} on ", t.display())) && first.contains("mounted at"),
        "{err}"
    );
    assert!(t.join("dbio-data-0000.dat").exists());
    // --quiet asks for no such line.
    let err = ok(&write_run(
        t.to_str().unwrap(),
        &["--size", "1M", "--quiet"],
    ));
    assert!(!err.contains("where    "), "{err}");
}

/// A directory made for the test (and a mount on it), removed on drop.
struct MountPoint {
    path: PathBuf,
    mounted: bool,
}

impl Drop for MountPoint {
    fn drop(&mut self) {
        if self.mounted && !crate::common::loopdev::umount_retrying(&self.path) {
            // A lazy unmount detaches it at once; if even that fails, keep
            // the tree: removing it would delete the mount's files.
            let lazy = StdCommand::new("umount").arg("-l").arg(&self.path).status();
            if !lazy.is_ok_and(|s| s.success()) {
                return;
            }
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn an_unmounted_mount_point_on_the_root_filesystem_is_refused() {
    let _store = temp_store();
    let dev = LoopDev::new(128 * MIB, true);
    dev.mkfs("ext4");
    let mut mp = MountPoint {
        path: PathBuf::from(format!("/mnt/dbio-safety-{}", std::process::id())),
        mounted: false,
    };
    std::fs::create_dir(&mp.path).unwrap();
    let t = mp.path.join("dbio");
    let ts = t.to_str().unwrap();
    // The filesystem is not mounted yet: the target would be on /.
    refused(
        &write_run(ts, &["--size", "1M"]),
        &["root filesystem", "/mnt", "--allow-root-fs"],
    );
    assert!(!t.exists(), "nothing was created");
    let err = ok(&write_run(ts, &["--size", "1M", "--allow-root-fs"]));
    assert!(
        err.lines().next().unwrap().contains(" mounted at / ("),
        "{err}"
    );
    ok(&dbio(&["clean", "--target", ts]));
    assert!(!t.exists());
    // Mounted: no refusal, and the first line names the loop device.
    let st = StdCommand::new("mount")
        .arg(&dev.path)
        .arg(&mp.path)
        .status()
        .unwrap();
    assert!(st.success());
    mp.mounted = true;
    let err = ok(&write_run(ts, &["--size", "1M"]));
    let want = format!(
        "where    {ts} on ext4 mounted at {} ({})",
        mp.path.display(),
        dev.path.display()
    );
    assert_eq!(err.lines().next().unwrap(), want, "{err}");
}

// ---- One command per target ----

/// A dbio child killed (and reaped) on drop.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_run(args: &[&str]) -> Child {
    Child(
        StdCommand::new(assert_cmd::cargo::cargo_bin("dbio"))
            .env("DBIO_DB", store_path())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn a_running_benchmark_locks_its_directory_against_runs_and_clean() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("dbio");
    let ts = t.to_str().unwrap();
    let mut first = spawn_run(&[
        "run",
        "--target",
        ts,
        "--size",
        "8M",
        "--pattern",
        "randread",
        "--sessions",
        "1",
        "--time",
        "30",
    ]);
    let pid = first.0.id();
    wait_for("the first run's complete layout", || {
        std::fs::read_to_string(t.join("dbio-manifest.json"))
            .is_ok_and(|m| m.contains("\"complete\": true"))
    });
    assert_eq!(
        std::fs::read_to_string(t.join("dbio.lock")).unwrap().trim(),
        pid.to_string()
    );
    let data = t.join("dbio-data-0000.dat");
    let before = std::fs::read(&data).unwrap();
    let busy = ["in use by another dbio command", &format!("pid {pid}")];
    refused(&write_run(ts, &["--size", "16M", "--files", "2"]), &busy);
    refused(&dbio(&["clean", "--target", ts]), &busy);
    assert_eq!(
        std::fs::read(&data).unwrap(),
        before,
        "the layout is untouched"
    );
    assert!(!t.join("dbio-data-0001.dat").exists());
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let status = first.0.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // Once it is over, clean removes everything, lock file and directory too.
    ok(&dbio(&["clean", "--target", ts]));
    assert!(!t.exists());
}

fn a_running_benchmark_locks_its_device() {
    let _store = temp_store();
    let dev = LoopDev::new(64 * MIB, true);
    let d = dev.path.to_str().unwrap();
    let first = spawn_run(&[
        "run",
        "--target",
        d,
        "--pattern",
        "randread",
        "--sessions",
        "1",
        "--time",
        "30",
    ]);
    let pid = first.0.id();
    wait_for("the first run's lock", || {
        std::fs::read_to_string("/proc/locks").is_ok_and(|l| {
            l.lines().any(|x| {
                x.contains("FLOCK") && x.split_whitespace().nth(4) == Some(&pid.to_string())
            })
        })
    });
    refused(
        &write_run(d, &[]),
        &["in use by another dbio command", &format!("pid {pid}")],
    );
    drop(first);
    ok(&write_run(d, &[]));
}

fn a_redo_dir_outside_the_target_is_checked_and_locked_too() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let redo = dir.path().join("redo");
    let slob = |target: &Path, redo: &Path, time: &str| {
        vec![
            "run".to_string(),
            "--workload".into(),
            "slob".into(),
            "--target".into(),
            target.display().to_string(),
            "--redo-dir".into(),
            redo.display().to_string(),
            "--sessions".into(),
            "1".into(),
            "--scale".into(),
            "1000".into(),
            "--time".into(),
            time.into(),
        ]
    };
    let run = |v: Vec<String>| dbio(&v.iter().map(String::as_str).collect::<Vec<_>>());
    // A missing --redo-dir is refused, not created.
    refused(
        &run(slob(&dir.path().join("a"), &redo, "1")),
        &["--redo-dir", "not an existing directory"],
    );
    assert!(!redo.exists() && !dir.path().join("a").exists());
    std::fs::create_dir(&redo).unwrap();
    let v = slob(&dir.path().join("a"), &redo, "30");
    let mut first = spawn_run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let pid = first.0.id();
    wait_for("the first run's redo logs", || {
        std::fs::read_to_string(redo.join("dbio-redo/dbio-manifest.json"))
            .is_ok_and(|m| m.contains("\"complete\": true"))
    });
    // Another target, the same redo directory: refused while the first runs.
    refused(
        &run(slob(&dir.path().join("b"), &redo, "1")),
        &[
            "--redo-dir",
            "in use by another dbio command",
            &format!("pid {pid}"),
        ],
    );
    assert!(!dir.path().join("b").exists(), "nothing was laid out");
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    assert_eq!(first.0.wait().unwrap().code(), Some(130));
    assert!(
        !redo.join("dbio.lock").exists(),
        "no lock file is left in a --redo-dir"
    );
}

fn a_layout_on_a_read_only_filesystem_is_locked_through_its_directory() {
    let _store = temp_store();
    let mut dev = LoopDev::new(128 * MIB, true);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let t = mnt.join("dbio");
    let ts = t.to_str().unwrap();
    let read = || {
        dbio(&[
            "run",
            "--target",
            ts,
            "--size",
            "4M",
            "--pattern",
            "randread",
            "--ops",
            "50",
        ])
    };
    ok(&read());
    let st = StdCommand::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(st.success());
    ok(&read());
    let _ = StdCommand::new("mount")
        .args(["-o", "remount,rw"])
        .arg(&mnt)
        .status();
    dev.umount();
}

// ---- Damaged layouts are not reused ----

fn all_blocks_verify(path: &Path, bs: usize) -> bool {
    let data = std::fs::read(path).unwrap();
    data.chunks(bs)
        .enumerate()
        .all(|(i, b)| dbio::storage::block::verify(b, Some((0, i as u64))).is_ok())
}

fn a_sparse_regrown_or_zeroed_data_file_is_laid_out_again() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("dbio");
    let ts = t.to_str().unwrap();
    let data = t.join("dbio-data-0000.dat");
    let read_run = || {
        dbio(&[
            "run",
            "--target",
            ts,
            "--size",
            "8M",
            "--pattern",
            "randread",
            "--sessions",
            "1",
            "--ops",
            "100",
            "--json",
        ])
    };
    let reused = |out: &Output| {
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["target"]["layout"]["reused"].as_bool().unwrap()
    };
    let out = read_run();
    ok(&out);
    assert!(!reused(&out));
    let out = read_run();
    ok(&out);
    assert!(reused(&out), "an intact layout is reused");
    type Damage = fn(&Path);
    let damages: [(&str, Damage, &str); 3] = [
        (
            "all holes",
            |p| {
                std::fs::remove_file(p).unwrap();
                std::fs::File::create(p).unwrap().set_len(8 * MIB).unwrap();
            },
            "hole at byte 0",
        ),
        (
            "truncated and regrown",
            |p| {
                let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
                f.set_len(3 * MIB).unwrap();
                f.set_len(8 * MIB).unwrap();
            },
            "hole at byte 3145728",
        ),
        (
            "zeros written",
            |p| std::fs::write(p, vec![0u8; 8 * MIB as usize]).unwrap(),
            "all zeros",
        ),
    ];
    for (what, damage, needle) in damages {
        damage(&data);
        let out = read_run();
        let err = ok(&out);
        assert!(!reused(&out), "{what}: reused");
        assert!(
            err.contains("laying it out again") && err.contains(needle),
            "{what}: {err}"
        );
        assert!(all_blocks_verify(&data, 8192), "{what}");
    }
}

crate::tests! {
    an_oracle_asm_disk_is_refused_and_survives [Root],
    signatures_only_util_linux_knows_are_refused [Root, Tool("mkfs.minix"), Tool("mkfs.jfs")],
    unknown_data_is_refused_but_zeros_and_dbio_blocks_are_not [Root],
    a_mistyped_target_is_refused_and_nothing_is_created,
    an_unmounted_mount_point_on_the_root_filesystem_is_refused [Root, OnRootFs("/mnt")],
    a_running_benchmark_locks_its_directory_against_runs_and_clean,
    a_running_benchmark_locks_its_device [Root],
    a_redo_dir_outside_the_target_is_checked_and_locked_too,
    a_layout_on_a_read_only_filesystem_is_locked_through_its_directory [Root],
    a_sparse_regrown_or_zeroed_data_file_is_laid_out_again,
}
