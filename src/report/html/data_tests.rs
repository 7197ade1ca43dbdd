//! The settings split, the sweep from cell keys, numbers in their units.

use super::*;

fn cfg(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn settings_split_into_shared_swept_and_per_arm() {
    let configs = vec![
        (
            "PSYNC".to_string(),
            cfg(&[
                ("engine", "psync"),
                ("bs", "8192"),
                ("sessions", "1"),
                ("seed", "5"),
            ]),
        ),
        (
            "PSYNC".to_string(),
            cfg(&[
                ("engine", "psync"),
                ("bs", "8192"),
                ("sessions", "10"),
                ("seed", "6"),
            ]),
        ),
        (
            "URING".to_string(),
            cfg(&[
                ("engine", "io_uring"),
                ("bs", "8192"),
                ("sessions", "2"),
                ("seed", "7"),
            ]),
        ),
    ];
    let (shared, varying, arms) = split_settings(&configs);
    assert_eq!(shared, vec![("bs".to_string(), "8192".to_string())]);
    assert_eq!(varying, vec!["sessions".to_string()]);
    assert_eq!(
        arms["URING"],
        vec![("engine".to_string(), "io_uring".to_string())]
    );
}

#[test]
fn a_key_only_some_arms_have_is_not_shared() {
    let configs = vec![
        (
            "RAW".to_string(),
            cfg(&[("engine", "psync"), ("pattern", "randread")]),
        ),
        (
            "SLOB".to_string(),
            cfg(&[
                ("engine", "psync"),
                ("pattern", "-"),
                ("slob.schemas", "1"),
                ("slob.log_buffer", "512 KiB"),
            ]),
        ),
        (
            "SLOB".to_string(),
            cfg(&[
                ("engine", "psync"),
                ("pattern", "-"),
                ("slob.schemas", "4"),
                ("slob.log_buffer", "512 KiB"),
            ]),
        ),
    ];
    let (shared, varying, arms) = split_settings(&configs);
    assert_eq!(shared, vec![("engine".to_string(), "psync".to_string())]);
    assert_eq!(varying, vec!["slob.schemas".to_string()]);
    assert_eq!(
        arms["SLOB"],
        vec![
            ("pattern".to_string(), "-".to_string()),
            ("slob.log_buffer".to_string(), "512 KiB".to_string())
        ]
    );
}

#[test]
fn the_sweep_comes_from_the_cell_keys() {
    let mut swept = Vec::new();
    for key in [
        "RAW|bs=8k|sessions=1|rep=1",
        "SLOB|bs=8k|sessions=4|rep=2",
        "SLOB|bs=16k|sessions=1|rep=1",
        "SLOB||rep=1",
    ] {
        add_swept(&mut swept, key);
    }
    let k = |s: &str, v: &[&str]| (s.to_string(), v.iter().map(|x| x.to_string()).collect());
    assert_eq!(
        swept,
        vec![k("bs", &["8k", "16k"]), k("sessions", &["1", "4"])]
    );
}

#[test]
fn numbers_read_in_their_units() {
    let v: Value = serde_json::json!({"size_bytes": 167772160, "block_size": 8192,
        "slob": {"log_buffer": 524288, "redo_file_size": 2097152, "update_pct": 25, "schemas": 2},
        "interval_s": 0.25, "outlier_ms": 500.0, "seed": 12});
    let f = flatten_config(Some(&v));
    assert_eq!(f["size_bytes"], "160 MiB");
    assert_eq!(f["block_size"], "8 KiB");
    assert_eq!(f["slob.log_buffer"], "512 KiB");
    assert_eq!(f["slob.redo_file_size"], "2 MiB");
    assert_eq!(f["slob.update_pct"], "25%");
    assert_eq!(f["slob.schemas"], "2");
    assert_eq!(f["interval_s"], "0.25 s");
    assert_eq!(f["outlier_ms"], "500 ms");
    assert_eq!(f["seed"], "12");
}

#[test]
fn nested_config_flattens_to_dotted_keys() {
    let v: Value = serde_json::json!({"length": {"time": {"time_s": 1.0}}, "hotspot": null, "engine": "psync"});
    let f = flatten_config(Some(&v));
    assert_eq!(f["hotspot"], "-");
    assert_eq!(f["length.time.time_s"], "1 s");
    assert_eq!(f["engine"], "psync");
}
