//! `--flavor postgres`: the model's redo as PostgreSQL's WAL, a full-page
//! image of each block the first time it changes after a checkpoint begins,
//! on real runs — more redo per transaction than Oracle's right after a
//! checkpoint, images once per block per checkpoint, the flavor in the
//! report, and refused where it means nothing.

use std::path::Path;

use crate::common::run::{Run, dbio, num};
use crate::common::store::temp_store;
use serde_json::Value;

/// 256 blocks of one session, all updates, `ops` updates of 64 rows
/// (200 change every block many times over).
fn updates(dir: &Path, ops: u32, extra: &[&str]) -> Value {
    Run::slob(&dir.join("data"))
        .args(&[
            "--sessions",
            "1",
            "--scale",
            "256",
            "--cache",
            "4M",
            "--update-pct",
            "100",
            "--work-loop",
            &ops.to_string(),
        ])
        .args(extra)
        .json()
}

fn t(r: &Value, k: &str) -> u64 {
    num(r, &format!("slob.run_totals.{k}")) as u64
}

fn redo_per_tx(r: &Value) -> f64 {
    t(r, "redo_bytes") as f64 / t(r, "transactions") as f64
}

fn postgres_redo_is_larger_right_after_a_checkpoint_and_logs_each_page_once() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Redo files large enough that no log switch (no checkpoint) happens:
    // the whole run is "right after a checkpoint".
    let big = ["--redo-file-size", "32M", "--log-buffer", "1M"];
    let oracle = updates(dir.path(), 200, &big);
    let pg = updates(
        dir.path(),
        200,
        &[&big[..], &["--flavor", "postgres"]].concat(),
    );
    assert_eq!(t(&pg, "log_switches"), 0);
    assert_eq!(t(&pg, "transactions"), 200);
    assert_eq!(t(&pg, "block_changes"), 200 * 64);
    // 12,800 changes of 256 blocks: only each block's first change logged
    // its image (nearly every block changed; a run twice as long logs no
    // more images, only more changes).
    let images = t(&pg, "full_page_images");
    assert!((200..=256).contains(&images), "{images} images");
    let longer = updates(
        dir.path(),
        400,
        &[&big[..], &["--flavor", "postgres"]].concat(),
    );
    assert_eq!(t(&longer, "block_changes"), 400 * 64);
    assert!(t(&longer, "full_page_images") <= 256);
    // Oracle's flavor logs no images and keeps its JSON as it was.
    assert!(
        oracle["slob"]["run_totals"]
            .get("full_page_images")
            .is_none()
    );
    assert!(oracle["config"]["slob"].get("flavor").is_none());
    assert_eq!(pg["config"]["slob"]["flavor"], "postgres");
    // Oracle: 64 × 256 B + 64 per commit. PostgreSQL: 64 × 96 B + 48 per
    // commit, plus 256 images of 1120 B over the run.
    assert_eq!(redo_per_tx(&oracle), (64 * 256 + 64) as f64);
    assert_eq!(
        t(&pg, "redo_bytes"),
        200 * (64 * 96 + 48) + images * 1120,
        "WAL records plus one image per block"
    );
    // Right after the checkpoint (the first updates, when every block is
    // new) PostgreSQL's redo per transaction is above Oracle's; once every
    // page is logged it falls below it.
    let first = dbio_first_updates(dir.path(), 2);
    assert!(
        first > redo_per_tx(&oracle),
        "the first 2 updates after a checkpoint: {first} B/tx, Oracle {} B/tx",
        redo_per_tx(&oracle)
    );
    assert!(redo_per_tx(&pg) < first);
}

/// Redo per transaction of the first `n` updates of a fresh run (its
/// checkpoint is the start) with `--flavor postgres`.
fn dbio_first_updates(dir: &Path, n: u32) -> f64 {
    let r = updates(dir, n, &["--flavor", "postgres"]);
    assert_eq!(t(&r, "transactions"), u64::from(n));
    redo_per_tx(&r)
}

fn each_checkpoint_logs_the_pages_again() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Small redo files: ~1.6 MB of redo over 256 KiB files is several log
    // switches, each beginning a checkpoint.
    let r = updates(
        dir.path(),
        200,
        &[
            "--flavor",
            "postgres",
            "--redo-file-size",
            "256K",
            "--log-buffer",
            "128K",
        ],
    );
    let switches = t(&r, "log_switches");
    let images = t(&r, "full_page_images");
    assert!(switches >= 3, "{switches} log switches");
    assert!(
        images > 256,
        "{images} images: the pages are logged again after a checkpoint"
    );
    assert!(
        images <= 256 * (switches + 1),
        "{images} images: at most once per block per checkpoint ({switches} switches)"
    );
    assert!(images < t(&r, "block_changes"));
}

fn selects_dirty_again_the_pages_updates_changed() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // 64 buffers for 256 blocks: changed blocks are written out and read
    // again by selects, which hint and prune them (dirty once more).
    let mixed = |flavor: &str| {
        Run::slob(&dir.path().join("data"))
            .args(&[
                "--sessions",
                "1",
                "--scale",
                "256",
                "--cache",
                "512K",
                "--update-pct",
                "50",
                "--work-loop",
                "400",
                "--flavor",
                flavor,
            ])
            .json()
    };
    let pg = mixed("postgres");
    let hinted = t(&pg, "hint_dirtied");
    assert!(hinted > 0, "no select dirtied a page");
    assert!(t(&pg, "blocks_dirtied") <= t(&pg, "block_changes") + hinted);
    assert!(t(&pg, "physical_writes") <= t(&pg, "blocks_dirtied"));
    // WAL: the updates' records and images, plus the selects' prune records.
    let updates = t(&pg, "updates");
    assert_eq!(updates, 200);
    let without_prunes = updates * (64 * 96 + 48) + t(&pg, "full_page_images") * 1120;
    assert!(
        t(&pg, "redo_bytes") >= without_prunes + hinted * 64,
        "{} B of redo",
        t(&pg, "redo_bytes")
    );
    assert_eq!(
        t(&pg, "redo_written_bytes"),
        t(&pg, "redo_bytes") + t(&pg, "redo_wastage_bytes"),
        "every byte of it written"
    );
    let oracle = mixed("oracle");
    assert!(oracle["slob"]["run_totals"].get("hint_dirtied").is_none());
    assert!(t(&oracle, "blocks_dirtied") <= t(&oracle, "block_changes"));
}

fn the_report_names_the_flavor_and_its_images() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let out = Run::slob(&dir.path().join("data"))
        .args(&[
            "--quiet",
            "--sessions",
            "1",
            "--scale",
            "256",
            "--cache",
            "4M",
            "--update-pct",
            "50",
            "--work-loop",
            "40",
            "--flavor",
            "postgres",
        ])
        .output();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("FLAVOR postgres"), "{text}");
    assert!(!text.contains("REDO_STRESS"), "{text}");
    assert!(text.contains("full-page images: "), "{text}");
}

fn refused(args: &[&str], needles: &[&str]) {
    let out = dbio().arg("run").args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
}

fn the_flavor_is_refused_where_it_means_nothing() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let t = t.to_str().unwrap();
    refused(
        &["--target", t, "--flavor", "postgres"],
        &["--flavor", "applies to --workload slob"],
    );
    for w in ["pg", "mysql"] {
        refused(
            &["--workload", w, "--target", t, "--flavor", "postgres"],
            &["--flavor postgres", "the model's redo", "drop --flavor"],
        );
    }
    refused(
        &[
            "--workload",
            "slob",
            "--target",
            t,
            "--flavor",
            "postgres",
            "--redo-stress",
            "heavy",
        ],
        &["--redo-stress", "--flavor postgres"],
    );
    refused(
        &["--workload", "slob", "--target", t, "--flavor", "sybase"],
        &["sybase"],
    );
    assert!(!dir.path().join("data").exists(), "nothing laid out");
}

crate::tests! {
    postgres_redo_is_larger_right_after_a_checkpoint_and_logs_each_page_once,
    each_checkpoint_logs_the_pages_again,
    selects_dirty_again_the_pages_updates_changed,
    the_report_names_the_flavor_and_its_images,
    the_flavor_is_refused_where_it_means_nothing,
}
