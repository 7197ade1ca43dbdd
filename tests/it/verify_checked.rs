//! `dbio verify` says what it checked: without a usable lost-write map
//! (deleted, damaged, or dropped by dbio for a reason it recorded) it says
//! lost writes were not checked and why, never that every block is the
//! last written; a data file missing or cut short is a finding of its own
//! (how many blocks, where), the rest is still checked, and the run saved.

use std::path::Path;

use crate::common::run::dbio;
use crate::common::store::temp_store;
use crate::verify::{BS, block, count, data_file, offsets, put, run, verify};

/// The text verify prints, and its exit code.
fn verify_text(t: &Path) -> (Option<i32>, String) {
    let out = dbio()
        .args(["verify", "--quiet", "--target"])
        .arg(t)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Verify finds nothing wrong but says lost writes were not checked, and why.
fn unchecked(t: &Path, why: &str) {
    let (code, text) = verify_text(t);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        !text.contains("every block is the block dbio last wrote"),
        "claims what it did not check: {text}"
    );
    let result = text.lines().find(|l| l.starts_with("result")).unwrap();
    assert!(
        result.contains("lost writes were not checked") && result.contains(why),
        "{text}"
    );
    let (_, doc) = verify(t);
    assert_eq!(doc["lost_writes_checked"], false, "{doc:#}");
}

fn without_a_usable_map_verify_says_lost_writes_were_not_checked() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    run(
        &t,
        &["--size", "1M", "--pattern", "randwrite", "--ops", "300"],
    );
    let (code, text) = verify_text(&t);
    assert_eq!(code, Some(0));
    assert!(
        text.contains("every block is the block dbio last wrote"),
        "{text}"
    );
    let map = t.join("dbio-genmap");
    let mut bytes = std::fs::read(&map).unwrap();
    bytes[60] ^= 1;
    std::fs::write(&map, &bytes).unwrap();
    unchecked(&t, "damaged (checksum mismatch)");
    std::fs::remove_file(&map).unwrap();
    unchecked(&t, "deleted");
    let (_, text) = verify_text(&t);
    assert!(!text.contains("SLOB"), "a raw layout: {text}");
}

fn a_short_or_missing_data_file_is_a_finding_and_the_rest_is_checked() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let args = ["--files", "3", "--size", "12M", "--pattern", "randwrite"];
    run(&t, &[&args[..], &["--ops", "500"]].concat());
    let file = |i: usize| t.join(format!("dbio-data-{i:04}.dat"));
    assert_eq!(file(0), data_file(&t));
    // File 0 cut short by 1 MiB and a half block; file 1 gone; file 2 damaged.
    let f0 = std::fs::OpenOptions::new()
        .write(true)
        .open(file(0))
        .unwrap();
    f0.set_len((3 << 20) - BS / 2).unwrap();
    std::fs::remove_file(file(1)).unwrap();
    let kept = std::fs::read(file(2)).unwrap();
    put(&file(2), 100, &[0u8; BS as usize]);

    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1));
    let f = &doc["findings"];
    let per_file = (4 << 20) / BS;
    let short = (1 << 20) / BS + 1;
    assert_eq!(f["missing"]["blocks"], short + per_file, "{f:#}");
    let m = &f["missing"]["files"];
    assert_eq!(m[0]["file"], 0);
    assert_eq!(m[0]["bytes"], (3 << 20) - BS / 2);
    assert_eq!(m[0]["from"], (3 << 20) - BS);
    assert_eq!(m[0]["blocks"], short);
    assert_eq!(m[1]["file"], 1);
    assert_eq!(m[1]["bytes"], serde_json::Value::Null);
    assert_eq!(m[1]["blocks"], per_file);
    // Everything there was read and checked, file 2's zeroed block found.
    assert_eq!(f["blocks"], 3 * per_file - short - per_file, "{f:#}");
    assert_eq!(count(&doc, "zeroed"), 1);
    assert_eq!(offsets(&doc, "zeroed"), vec![100 * BS]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 damaged blocks")
            && err.contains(&format!("{} blocks missing", short + per_file)),
        "{err}"
    );
    // Only missing blocks: they alone fail it, in one line naming the file.
    put(&file(2), 100, block(&kept, 100));
    let (out, doc) = verify(&t);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(doc["findings"]["blocks"], doc["findings"]["intact"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.trim_end().lines().count() == 1
            && err.contains("blocks missing in")
            && err.contains("dbio-data-0000.dat holds 3141632 bytes")
            && err.contains("and 1 more files"),
        "{err}"
    );
    // Every verify was saved as a run.
    let runs = dbio()
        .args(["runs", "export", "--format", "json", "--workload", "verify"])
        .output()
        .unwrap();
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 2, "both verifies stored");
}

crate::tests! {
    without_a_usable_map_verify_says_lost_writes_were_not_checked,
    a_short_or_missing_data_file_is_a_finding_and_the_rest_is_checked,
}
