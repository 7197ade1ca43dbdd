//! `dbio run --verify` and `--verify-after-write`: a run that reads a block
//! damaged the way storage fails stops with a one-line error naming the
//! class, the file and the offset; clean runs with overlapping writers pass;
//! workloads and patterns where it cannot apply are refused.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Output;

use crate::common::run::dbio;
use crate::common::store::temp_store;

const BS: u64 = 8192;

fn run(target: &Path, args: &[&str]) -> Output {
    dbio()
        .args(["run", "--quiet", "--target"])
        .arg(target)
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Everything the run said, stdout then stderr.
fn said(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn read_block(path: &Path, b: u64) -> Vec<u8> {
    let mut v = vec![0u8; BS as usize];
    std::fs::File::open(path)
        .unwrap()
        .read_exact_at(&mut v, b * BS)
        .unwrap();
    v
}

fn put(path: &Path, b: u64, data: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, b * BS).unwrap();
    f.sync_all().unwrap();
}

/// A sequential read with --verify meets the damaged block and names it.
fn assert_named(target: &Path, class: &str, file: &Path, b: u64) {
    let out = run(
        target,
        &[
            "--size",
            "4M",
            "--pattern",
            "seqread",
            "--sessions",
            "1",
            "--verify",
        ],
    );
    let text = said(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let want = format!("{class} block at {} offset {}: ", file.display(), b * BS);
    let line = text
        .lines()
        .find(|l| l.contains(&want))
        .unwrap_or_else(|| panic!("no line with {want:?}:\n{text}"));
    assert!(line.contains("expected target"), "{line}");
}

fn a_verified_read_names_the_damaged_block_it_meets() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let data = t.join("dbio-data-0000.dat");
    let args = ["--size", "4M", "--pattern", "randwrite", "--seed"];
    ok(&run(&t, &[&args[..], &["5", "--ops", "600"]].concat()));
    let old = std::fs::read(&data).unwrap();
    ok(&run(&t, &[&args[..], &["6", "--ops", "600"]].concat()));
    let new = std::fs::read(&data).unwrap();
    // Clean: every block checked passes, by sequential and random reads.
    ok(&run(
        &t,
        &["--size", "4M", "--pattern", "seqread", "--verify"],
    ));
    ok(&run(
        &t,
        &[
            "--size",
            "4M",
            "--pattern",
            "randread",
            "--ops",
            "2000",
            "--verify",
        ],
    ));
    let blocks = new.len() as u64 / BS;
    let rewritten: Vec<u64> = (0..blocks)
        .filter(|&b| {
            let r = (b * BS) as usize..((b + 1) * BS) as usize;
            old[r.clone()] != new[r]
        })
        .collect();
    let lose = rewritten[3];
    let current = read_block(&data, lose);
    // A lost write: the block as it was before the second run's write.
    put(
        &data,
        lose,
        &old[(lose * BS) as usize..((lose + 1) * BS) as usize],
    );
    assert_named(&t, "lost", &data, lose);
    put(&data, lose, &current);
    // Zeros, a flipped bit, another block's content.
    put(&data, 7, &[0u8; BS as usize]);
    assert_named(&t, "zeroed", &data, 7);
    put(&data, 7, &new[(7 * BS) as usize..(8 * BS) as usize]);
    let mut rot = new[(9 * BS) as usize..(10 * BS) as usize].to_vec();
    rot[3000] ^= 0x10;
    put(&data, 9, &rot);
    assert_named(&t, "checksum", &data, 9);
    put(&data, 9, &new[(9 * BS) as usize..(10 * BS) as usize]);
    put(&data, 11, &new[(40 * BS) as usize..(41 * BS) as usize]);
    assert_named(&t, "misdirected", &data, 11);
    put(&data, 11, &new[(11 * BS) as usize..(12 * BS) as usize]);
    ok(&run(
        &t,
        &["--size", "4M", "--pattern", "seqread", "--verify"],
    ));
}

fn overlapping_writers_checked_as_they_go_give_no_false_failure() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    // 64 blocks, 4 sessions x 8 in flight: reads race writes of their block
    // and writes of one block overlap all the time.
    for pattern in ["randrw", "randwrite"] {
        ok(&run(
            &t,
            &[
                "--size",
                "512k",
                "--pattern",
                pattern,
                "--sessions",
                "4",
                "--engine",
                "io_uring",
                "--iodepth",
                "8",
                "--ops",
                "20000",
                "--verify",
                "--verify-after-write",
            ],
        ));
    }
    let out = dbio()
        .args(["verify", "--quiet", "--target"])
        .arg(&t)
        .output()
        .unwrap();
    ok(&out);
}

fn verify_where_it_cannot_apply_is_refused_in_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let cases: [(&[&str], &str); 2] = [
        (
            &["--workload", "slob", "--verify"],
            "--verify applies to --workload raw only",
        ),
        (
            &[
                "--pattern",
                "randread",
                "--size",
                "1M",
                "--verify-after-write",
            ],
            "--verify-after-write reads back writes, and --pattern randread writes nothing",
        ),
    ];
    for (args, want) in cases {
        let out = run(&t, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

crate::tests! {
    a_verified_read_names_the_damaged_block_it_meets,
    overlapping_writers_checked_as_they_go_give_no_false_failure,
    verify_where_it_cannot_apply_is_refused_in_one_line,
}
