//! Where a `--workload mysql` window sits in InnoDB's checkpoint cycle,
//! against real MariaDB: after a ramp of updates the window opens with the
//! redo since the last checkpoint (InnoDB's checkpoint age) and sees
//! checkpoints complete; `--window after-checkpoint` opens it at a
//! checkpoint (the age down to a checkpoint's own); the report lists what
//! dbio changed from a stock MariaDB.

use serde_json::Value;

use crate::common::server::json;
use crate::common::store::temp_store;
use crate::mysql::{MyDir, ONE_AT_A_TIME, assert_nothing_left};

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn innodb_checkpoint_age_frames_the_window_and_departures_are_listed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let base = [
        "--sessions",
        "2",
        "--scale",
        "400",
        "--work-unit",
        "8",
        "--update-pct",
        "100",
    ];
    // After a ramp of updates, wherever the cycle is.
    let any = json(&d.run(&[&base[..], &["--ramp", "2", "--time", "2"]].concat()));
    let c = &any["mysql"]["checkpoint_cycle"];
    assert_eq!(c["window"], "any", "{c}");
    assert!(num(c, "open_log_bytes_since") > 0.0, "{c}");
    assert!(num(c, "close_log_bytes_since") > 0.0, "{c}");
    assert!(c["checkpoints_completed"].as_f64().is_some(), "{c}");
    assert!(
        c["first_change_share"].is_null(),
        "InnoDB logs no page images: {c}"
    );
    let names: Vec<&str> = any["mysql"]["departures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    for want in [
        "skip_networking",
        "innodb_buffer_pool_size",
        "performance_schema",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    for stock in ["innodb_doublewrite", "innodb_flush_log_at_trx_commit"] {
        assert!(!names.contains(&stock), "{stock} is the default: {names:?}");
    }
    assert_nothing_left(&d);

    // Right after a checkpoint: the age is a checkpoint's own.
    let after = json(
        &d.run(
            &[
                &base[..],
                &["--work-loop", "20", "--window", "after-checkpoint"],
            ]
            .concat(),
        ),
    );
    let c = &after["mysql"]["checkpoint_cycle"];
    assert_eq!(c["window"], "after-checkpoint");
    assert_eq!(after["config"]["mysql"]["window"], "after_checkpoint");
    assert!(num(c, "open_log_bytes_since") <= 512.0, "{c}");
    assert_nothing_left(&d);
}

crate::tests! {
    innodb_checkpoint_age_frames_the_window_and_departures_are_listed [Root, MariaDB],
}
