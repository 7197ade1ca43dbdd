//! The run's settings as the run document writes them and reads them back:
//! for each workload, settings resolved from real command lines go to JSON,
//! come back as the same workload, and write the same bytes again; the
//! golden documents' `config` reads back into the types.

use crate::cli::tests::config;
use crate::config::{RunConfig, WorkloadConfig};

/// Serialized, read back, serialized again: the same bytes, the same workload.
fn round_trip(args: &[&str]) -> (String, RunConfig) {
    let c = config(args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let first = serde_json::to_string_pretty(&c).unwrap();
    let back: RunConfig =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{args:?}: {e}\n{first}"));
    let second = serde_json::to_string_pretty(&back).unwrap();
    assert_eq!(first, second, "{args:?}");
    assert_eq!(back.workload.name(), c.workload.name(), "{args:?}");
    (first, back)
}

#[test]
fn raw_settings_read_back_as_written() {
    let (json, back) = round_trip(&[
        "--pattern",
        "randread",
        "--dist",
        "zipf:1.2",
        "--engine",
        "io_uring",
        "--iodepth",
        "8",
        "--sqthread-poll",
        "20",
        "--verify",
        "--verify-sync-interval",
        "2",
        "--hotspot-mb",
        "4",
        "--hotspot-frequency",
        "3",
        "--size",
        "64M",
        "--rate",
        "1000",
        "--compress-pct",
        "50",
        "--ops",
        "100",
    ]);
    let raw = back.workload.raw().expect("a raw run");
    assert_eq!(raw.distribution.to_string(), "zipf:1.2");
    assert_eq!(raw.uring.and_then(|u| u.sqthread_poll_ms), Some(20));
    assert!(raw.verify.reads && raw.verify.map_sync_ms == 2000);
    assert_eq!(back.content.compress_pct, 50);
    assert!(json.contains("\"uring\"") && json.contains("\"verify\""));
    round_trip(&["--pattern", "seqwrite", "--io", "fsync"]);
    round_trip(&["--pattern", "randrw", "--read-pct", "70", "--time", "3"]);
}

#[test]
fn slob_settings_read_back_as_written() {
    let args = [
        &[
            "--workload",
            "slob",
            "--flavor",
            "postgres",
            "--think-frequency",
            "5",
            "--work-loop",
            "10",
        ][..],
        &crate::options::db::SHAPE[..],
    ]
    .concat();
    let (json, back) = round_trip(&args);
    assert!(json.contains("\"flavor\": \"postgres\""), "{json}");
    assert!(json.contains("\"pattern\": null"), "{json}");
    let m = back.workload.model().expect("a slob run");
    assert_eq!((m.schemas, m.update_pct), (4, 20));
    assert!(!m.flavor.is_oracle());
    round_trip(&["--workload", "slob", "--redo-stress", "heavy"]);
}

#[test]
fn server_settings_read_back_as_written() {
    let shape = crate::options::db::SHAPE;
    let pg = [
        &["--workload", "pg", "--pg-set", "wal_compression=on"][..],
        &shape[..],
    ]
    .concat();
    let (_, back) = round_trip(&pg);
    assert!(matches!(&back.workload, WorkloadConfig::Pg(p) if p.server.set.len() == 1));
    let mysql = [
        &["--workload", "mysql", "--io", "dsync", "--files", "4"][..],
        &shape[..],
    ]
    .concat();
    let (_, back) = round_trip(&mysql);
    assert!(matches!(&back.workload, WorkloadConfig::Mysql(m) if m.flush_method == "O_DSYNC"));
    let url = "mysql://bench:secret@db1:3306/";
    let (json, back) = round_trip(&["--workload", "mysql", "--mysql-url", url]);
    assert!(!json.contains("secret"), "{json}");
    assert!(back.workload.server().is_some_and(|s| s.url.is_none()));
}

#[test]
fn golden_documents_config_reads_back() {
    for snap in [
        include_str!("../report/run/snapshots/dbio__report__run__tests__json_report_snapshot.snap"),
        include_str!(
            "../report/run/snapshots/dbio__report__run__db_text__tests__pg_json_snapshot-2.snap"
        ),
        include_str!(
            "../report/run/snapshots/dbio__report__run__db_text__tests__mysql_json_snapshot-2.snap"
        ),
    ] {
        let doc: serde_json::Value = serde_json::from_str(snap.split("---\n").nth(2).unwrap())
            .expect("a snapshot is JSON after its header");
        let cfg = doc.get("config").unwrap_or(&doc);
        let back: RunConfig = serde_json::from_value(cfg.clone()).expect("reads back");
        assert_eq!(&serde_json::to_value(&back).unwrap(), cfg);
    }
}

#[test]
fn a_config_of_an_unknown_or_incomplete_workload_is_named() {
    let mut v = serde_json::to_value(config(&[]).unwrap()).unwrap();
    v["workload"] = "replay".into();
    let e = serde_json::from_value::<RunConfig>(v.clone()).unwrap_err();
    assert!(e.to_string().contains("\"replay\""), "{e}");
    v["workload"] = "slob".into();
    let e = serde_json::from_value::<RunConfig>(v).unwrap_err();
    assert!(e.to_string().contains("config.slob is missing"), "{e}");
}
