//! Run documents of earlier schemas, read as this build writes them.
//!
//! `dbio.run.v1` named per-second rates with `_s` (which elsewhere means
//! seconds), KiB with `kb`, MiB with `mb`, and a few byte sizes without a
//! unit. [`upgrade_v1`] rewrites such a document under `dbio.run.v2`'s
//! names — a pure JSON → JSON rename, no value changes — so every reader of
//! stored runs (`runs show`, `report`, `compare`, HTML, `runs export`, fio
//! JSON) sees one shape. The store applies [`upgrade`] on load. docs/json.md
//! lists the renames.

use serde_json::{Map, Value};

use crate::vocab::{RENAMED_DEVICE_FIELDS, RENAMED_HOST_FIELDS};

/// The schema [`upgrade_v1`] reads.
pub const SCHEMA_V1: &str = "dbio.run.v1";

/// Byte sizes of `config` and of the database model's settings
/// (`config.slob`, `config.pg.slob`, `config.mysql.slob`) that v1 named
/// without their unit.
const RENAMED_CONFIG_FIELDS: &[(&str, &str)] = &[("block_size", "block_size_bytes")];
const RENAMED_SLOB_CONFIG_FIELDS: &[(&str, &str)] = &[
    ("block_size", "block_size_bytes"),
    ("redo_file_size", "redo_file_size_bytes"),
    ("redo_block", "redo_block_bytes"),
    ("log_buffer", "log_buffer_bytes"),
];
/// `config.mysql`: InnoDB's page size in bytes.
const RENAMED_DB_CONFIG_FIELDS: &[(&str, &str)] = &[("page_size", "page_size_bytes")];
/// `slob.io_by_function[]`: MiB per second, named `mb`.
const RENAMED_IO_FUNCTION_FIELDS: &[(&str, &str)] = &[
    ("read_mb_per_s", "read_mib_per_s"),
    ("write_mb_per_s", "write_mib_per_s"),
];
/// `storage.links[]` of `"type": "device"`: block sizes in bytes.
const RENAMED_DEVICE_LINK_FIELDS: &[(&str, &str)] = &[
    ("logical_block", "logical_block_bytes"),
    ("physical_block", "physical_block_bytes"),
];

/// A stored run document in this build's schema: a `dbio.run.v1` document
/// through [`upgrade_v1`]; any other (this build's, an import's, a
/// verify run's) as it is.
pub fn upgrade(doc: Value) -> Value {
    if doc.get("schema").and_then(Value::as_str) == Some(SCHEMA_V1) {
        upgrade_v1(doc)
    } else {
        doc
    }
}

/// A `dbio.run.v1` document under `dbio.run.v2`'s names (every renamed
/// field, wherever v1 had it: the run's sections, the telemetry window and
/// per-interval points, each MPI rank's sections); values are unchanged.
pub fn upgrade_v1(mut doc: Value) -> Value {
    let Some(root) = doc.as_object_mut() else {
        return doc;
    };
    root.insert("schema".into(), Value::from(super::SCHEMA));
    if let Some(config) = root.get_mut("config").and_then(Value::as_object_mut) {
        rename(config, RENAMED_CONFIG_FIELDS);
        rename_at(config, "slob", RENAMED_SLOB_CONFIG_FIELDS);
        for db in ["pg", "mysql"] {
            if let Some(c) = config.get_mut(db).and_then(Value::as_object_mut) {
                rename_at(c, "slob", RENAMED_SLOB_CONFIG_FIELDS);
                rename(c, RENAMED_DB_CONFIG_FIELDS);
            }
        }
    }
    upgrade_sections(root);
    if let Some(ranks) = root.get_mut("ranks").and_then(Value::as_array_mut) {
        for rank in ranks.iter_mut().filter_map(Value::as_object_mut) {
            upgrade_sections(rank);
        }
    }
    doc
}

/// The sections a run and each of its MPI ranks share.
fn upgrade_sections(section: &mut Map<String, Value>) {
    if let Some(w) = section.get_mut("telemetry_window") {
        telemetry(w);
    }
    if let Some(points) = section.get_mut("telemetry").and_then(Value::as_array_mut) {
        points.iter_mut().for_each(telemetry);
    }
    if let Some(links) = section
        .get_mut("storage")
        .and_then(|s| s.get_mut("links"))
        .and_then(Value::as_array_mut)
    {
        for link in links.iter_mut().filter_map(Value::as_object_mut) {
            rename(link, RENAMED_DEVICE_LINK_FIELDS);
        }
    }
    if let Some(rows) = section
        .get_mut("slob")
        .and_then(|s| s.get_mut("io_by_function"))
        .and_then(Value::as_array_mut)
    {
        for row in rows.iter_mut().filter_map(Value::as_object_mut) {
            rename(row, RENAMED_IO_FUNCTION_FIELDS);
        }
    }
}

/// A telemetry window or point: `host` and `devices[].rates`.
fn telemetry(w: &mut Value) {
    let Some(w) = w.as_object_mut() else { return };
    rename_at(w, "host", RENAMED_HOST_FIELDS);
    if let Some(devices) = w.get_mut("devices").and_then(Value::as_array_mut) {
        for d in devices.iter_mut().filter_map(Value::as_object_mut) {
            rename_at(d, "rates", RENAMED_DEVICE_FIELDS);
        }
    }
}

fn rename_at(parent: &mut Map<String, Value>, key: &str, table: &[(&str, &str)]) {
    if let Some(child) = parent.get_mut(key).and_then(Value::as_object_mut) {
        rename(child, table);
    }
}

/// Renames `object`'s keys by `table` (old → new), keeping the key order
/// of the rest; a new name already present is left as it is.
fn rename(object: &mut Map<String, Value>, table: &[(&str, &str)]) {
    for (old, new) in table {
        if object.contains_key(*new) {
            continue;
        }
        if let Some(v) = object.remove(*old) {
            object.insert((*new).to_string(), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_v1_document_reads_under_the_v2_names_with_the_same_values() {
        let v1 = json!({
            "schema": "dbio.run.v1",
            "config": {"block_size": 8192, "sessions": 4, "mysql": {"page_size": 16384},
                       "slob": {"block_size": 8192, "log_buffer": 524288,
                                "redo_file_size": 1048576, "redo_block": 512}},
            "telemetry_window": {"seconds": 10.0,
                "host": {"ctxt_s": 25000.0, "intr_s": 9000.0, "dirty_kb": 2048.0, "load1": 1.0},
                "devices": [{"name": "vdb", "rates": {"r_s": 350.0, "rkb_s": 2800.0,
                             "rareq_sz_kb": 8.0, "r_await_ms": 0.2}},
                            {"name": "gone", "rates": null}]},
            "telemetry": [{"t_s": 1.0, "host": {"ctxt_s": 1.0}, "devices": [{"name": "vdb", "rates": {"w_s": 2.0}}]}],
            "storage": {"links": [{"type": "device", "logical_block": 512, "physical_block": 4096}]},
            "slob": {"io_by_function": [{"function": "DBWR", "read_mb_per_s": 0.0, "write_mb_per_s": 93.75}]},
            "ranks": [{"rank": 1, "telemetry_window": {"host": {"intr_s": 3.0}, "devices": []}}],
        });
        let v2 = upgrade(v1);
        assert_eq!(v2["schema"], crate::document::SCHEMA);
        assert_eq!(v2["config"]["block_size_bytes"], 8192);
        assert_eq!(v2["config"]["sessions"], 4);
        assert_eq!(v2["config"]["mysql"]["page_size_bytes"], 16384);
        assert_eq!(v2["config"]["slob"]["log_buffer_bytes"], 524288);
        assert_eq!(v2["config"]["slob"]["redo_file_size_bytes"], 1048576);
        assert_eq!(v2["config"]["slob"]["redo_block_bytes"], 512);
        let host = &v2["telemetry_window"]["host"];
        assert_eq!(
            (host["ctxt_per_s"].as_f64(), host["intr_per_s"].as_f64()),
            (Some(25000.0), Some(9000.0))
        );
        assert_eq!(host["dirty_kib"], 2048.0);
        let rates = &v2["telemetry_window"]["devices"][0]["rates"];
        assert_eq!(rates["r_per_s"], 350.0);
        assert_eq!(rates["rkib_per_s"], 2800.0);
        assert_eq!(rates["rareq_sz_kib"], 8.0);
        assert_eq!(rates["r_await_ms"], 0.2);
        assert!(v2["telemetry_window"]["devices"][1]["rates"].is_null());
        assert_eq!(v2["telemetry"][0]["host"]["ctxt_per_s"], 1.0);
        assert_eq!(v2["telemetry"][0]["devices"][0]["rates"]["w_per_s"], 2.0);
        assert_eq!(v2["storage"]["links"][0]["logical_block_bytes"], 512);
        assert_eq!(v2["slob"]["io_by_function"][0]["write_mib_per_s"], 93.75);
        assert_eq!(
            v2["ranks"][0]["telemetry_window"]["host"]["intr_per_s"],
            3.0
        );
        // No old name is left anywhere.
        let text = v2.to_string();
        for old in [
            "\"ctxt_s\"",
            "\"r_s\"",
            "\"rkb_s\"",
            "\"read_mb_per_s\"",
            "\"log_buffer\"",
            "\"block_size\"",
        ] {
            assert!(!text.contains(old), "{old} in {text}");
        }
        // Upgrading is idempotent; other documents pass through.
        assert_eq!(upgrade(v2.clone()), v2);
        let import = json!({"schema": "dbio.import.fio.v1", "config": {"block_size": 4096}});
        assert_eq!(upgrade(import.clone()), import);
    }
}
