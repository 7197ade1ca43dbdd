//! `--flavor innodb` and the log writer's page-shaped writes, on real
//! devices: an InnoDB-flavoured run on XFS over a direct-io loop device
//! writes every page twice (the doublewrite area, then in place), fsyncs
//! each commit group and each batch, in 16 KiB pages, and names its waits
//! as InnoDB does; a PostgreSQL-flavoured run writes its WAL in whole 8 KiB
//! pages; `dbio clean` removes the doublewrite file with the rest.

use std::path::Path;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio, num};
use crate::common::store::temp_store;
use crate::common::trace::disk_fields;
use serde_json::Value;

const MIB: u64 = 1 << 20;

/// The device's write requests, bytes written and flush requests.
fn device_writes(dev: &str) -> [u64; 3] {
    let f = disk_fields(dev);
    [f[4], f[6] * 512, f[15]]
}

fn t(r: &Value, k: &str) -> u64 {
    num(r, &format!("slob.run_totals.{k}")) as u64
}

/// Two sessions, half updates, on `target` with `extra`.
fn run(target: &Path, extra: &[&str]) -> Value {
    Run::slob(target)
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "1000",
            "--cache",
            "4M",
            "--update-pct",
            "50",
            "--work-loop",
            "60",
            "--io",
            "direct",
        ])
        .args(extra)
        .json()
}

fn innodb_pages_are_written_twice_and_each_commit_group_is_fsynced() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 * MIB, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let target = mnt.join("data");
    let innodb = ["--flavor", "innodb", "--db-writers", "1"];
    // Laid out first: the measured run writes only what the model writes.
    run(&target, &innodb);
    let before = device_writes(&dev.name());
    let r = run(&target, &innodb);
    let after = device_writes(&dev.name());
    let [requests, bytes, flushes] = [0, 1, 2].map(|i| after[i] - before[i]);

    assert_eq!(r["config"]["slob"]["flavor"], "innodb");
    assert_eq!(
        r["config"]["slob"]["block_size_bytes"], 16384,
        "InnoDB's page"
    );
    assert_eq!(r["config"]["slob"]["redo_block_bytes"], 512);
    assert_eq!(r["config"]["slob"]["redo_sync"], "fdatasync");
    let pages = t(&r, "physical_writes");
    assert!(pages > 0, "the page cleaner wrote nothing");
    // The doublewrite: every page once more, one write and one fsync per batch.
    assert_eq!(t(&r, "doublewrite_bytes"), pages * 16384);
    let batches = t(&r, "doublewrite_writes");
    assert!(batches > 0 && batches <= pages);
    assert_eq!(t(&r, "write_requests"), pages + batches);
    assert_eq!(t(&r, "write_bytes"), 2 * pages * 16384);
    // One datafile: the doublewrite file and it, fsynced after each batch.
    assert_eq!(t(&r, "datafile_syncs"), 2 * batches);
    // Redo: a write (and its fsync) per commit group, never more than one per commit.
    let groups = t(&r, "redo_writes");
    assert!(groups > 0 && groups <= t(&r, "transactions"));
    assert_eq!(t(&r, "redo_written_bytes") % 512, 0);

    // At the device: each page twice plus the redo (XFS adds a little).
    let expected = 2 * pages * 16384 + t(&r, "redo_written_bytes");
    assert!(
        bytes >= expected && bytes <= expected + expected / 10 + MIB,
        "device wrote {bytes} B, the model {expected} B"
    );
    let writes = pages + batches + groups;
    assert!(
        requests >= writes.saturating_sub(writes / 20) && requests <= writes + writes / 5 + 64,
        "device write requests {requests}, the model's {writes}"
    );
    // A flush per redo write and per fsync after a batch.
    let syncs = groups + t(&r, "datafile_syncs");
    assert!(
        flushes >= syncs,
        "{flushes} device flushes for {syncs} fsyncs"
    );
    // Waits under InnoDB's names, in the JSON and the text.
    let names: Vec<&str> = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"innodb_log_file sync (commit)"),
        "{names:?}"
    );
    assert!(names.contains(&"page cleaner flush batch"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("db file")), "{names:?}");

    // The doublewrite file sits beside the redo logs, one batch per writer,
    // and `dbio clean` removes it with them.
    let dw = target.join("dbio-dblwr");
    let file = std::fs::read_dir(&dw)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "dat"))
        .expect("the doublewrite file");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 64 * 16384);
    dbio()
        .args(["clean", "--target"])
        .arg(&target)
        .assert()
        .success();
    assert!(!dw.exists(), "dbio clean left {}", dw.display());
    dev.umount();
}

fn postgres_writes_its_wal_in_whole_8k_pages() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = run(&dir.path().join("data"), &["--flavor", "postgres"]);
    assert_eq!(r["config"]["slob"]["redo_block_bytes"], 8192);
    let (writes, written) = (t(&r, "redo_writes"), t(&r, "redo_written_bytes"));
    assert!(writes > 0);
    // Every write is whole pages: a partly filled page is written again,
    // fuller, by the next write (not padded and skipped).
    assert_eq!(written % 8192, 0, "{written} B in {writes} writes");
    assert!(written >= 8192 * writes);
    assert_eq!(written, t(&r, "redo_bytes") + t(&r, "redo_wastage_bytes"));
}

fn the_innodb_flavor_is_refused_with_redo_stress() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("data");
    let out = dbio()
        .args(["run", "--workload", "slob", "--target"])
        .arg(&t)
        .args(["--flavor", "innodb", "--redo-stress", "heavy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--redo-stress") && err.contains("--flavor innodb"),
        "{err}"
    );
    assert!(!t.exists(), "nothing laid out");
}

crate::tests! {
    innodb_pages_are_written_twice_and_each_commit_group_is_fsynced [Root, Tool("mkfs.xfs")],
    postgres_writes_its_wal_in_whole_8k_pages,
    the_innodb_flavor_is_refused_with_redo_stress,
}
