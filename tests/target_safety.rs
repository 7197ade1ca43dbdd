//! Target safety (issue 13, "Devices and targets"): data the write gate does
//! not recognise, mistyped and unmounted targets, one command per target,
//! damaged layouts. Device tests use real loop devices with signatures
//! written by the real tools; they need root (skipped otherwise).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output};

use common::loopdev::{LoopDev, have_tool, require_root};
use common::store::{store_path, temp_store};

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

#[test]
fn an_oracle_asm_disk_is_refused_and_survives() {
    let _store = temp_store();
    if !require_root() {
        return;
    }
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

#[test]
fn signatures_only_util_linux_knows_are_refused() {
    let _store = temp_store();
    if !require_root() {
        return;
    }
    // mkfs.minix is in util-linux; dbio's own table does not know minix.
    // mkfs.jfs (jfsutils) is in both.
    for (mkfs, args, needle) in [
        ("mkfs.minix", &[][..], "minix signature"),
        ("mkfs.jfs", &["-q"][..], "JFS filesystem"),
    ] {
        if !have_tool(mkfs) {
            eprintln!("skipping {mkfs}: not installed");
            continue;
        }
        let dev = LoopDev::new(64 * MIB, true);
        tool(mkfs, args, &dev.path);
        let before = read_at(&dev.path, 0, MIB as usize);
        let d = dev.path.to_str().unwrap();
        refused(&write_run(d, &[]), &[needle, "--destroy-device"]);
        assert_eq!(read_at(&dev.path, 0, MIB as usize), before, "{mkfs}");
    }
}

#[test]
fn unknown_data_is_refused_but_zeros_and_dbio_blocks_are_not() {
    let _store = temp_store();
    if !require_root() {
        return;
    }
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
