//! Where runs ran, as the report shows it: the host (name, kernel, CPU,
//! memory) and the storage chain (filesystem, mount options, devices with
//! model, scheduler, rotational, discard, loop backing) from each stored
//! run's environment, runs with the same environment grouped.

use serde_json::Value;

use super::data::{Arm, Environment, ReportData};
use crate::store::StoredRun;

/// Adds one run as an arm of its own (the single-run page).
pub(crate) fn add_environment_to(data: &mut ReportData, run: &StoredRun, variable: &str) {
    let mut environments = Vec::new();
    add_environment(&mut environments, run);
    data.arms.push(Arm {
        variable: variable.to_string(),
        runs: 1,
        settings: Vec::new(),
        environments,
    });
}

/// Adds the run to the environment it shares with earlier runs, or a new one.
pub(crate) fn add_environment(list: &mut Vec<Environment>, run: &StoredRun) {
    let env = &run.environment;
    let host = env.get("host").unwrap_or(&Value::Null);
    let s = |k: &str| {
        host.get(k)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    let memory = host
        .get("memory_bytes")
        .and_then(Value::as_u64)
        .map_or("?".into(), crate::units::fmt_size);
    let cpus = host
        .get("cpus")
        .and_then(Value::as_u64)
        .map_or("?".into(), |c| c.to_string());
    let host = vec![
        ("host".to_string(), s("hostname")),
        ("kernel".to_string(), s("kernel")),
        ("CPU".to_string(), format!("{} × {}", cpus, s("cpu_model"))),
        ("memory".to_string(), memory),
    ];
    let storage = storage_rows(env.get("storage").unwrap_or(&Value::Null));
    match list
        .iter_mut()
        .find(|e| e.host == host && e.storage == storage)
    {
        Some(e) => e.runs.push(run.row.id),
        None => list.push(Environment {
            runs: vec![run.row.id],
            host,
            storage,
        }),
    }
}

/// The stored storage chain as (layer, name, details) rows.
pub(crate) fn storage_rows(chain: &Value) -> Vec<(String, String, String)> {
    let links = chain
        .get("links")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let s = |l: &Value, k: &str| l.get(k).and_then(Value::as_str).map(str::to_string);
    links
        .iter()
        .map(|l| {
            if l.get("type").and_then(Value::as_str) == Some("filesystem") {
                let name = s(l, "path").unwrap_or_default();
                let details = format!(
                    "{} on {} mounted at {} ({})",
                    s(l, "fs_type").unwrap_or_default(),
                    s(l, "source").unwrap_or_default(),
                    s(l, "mount_point").unwrap_or_default(),
                    s(l, "mount_options").unwrap_or_default()
                );
                ("filesystem".to_string(), name, details)
            } else {
                let flag = |k: &str, yes: &str, no: &str| {
                    l.get(k)
                        .and_then(Value::as_bool)
                        .map(|b| if b { yes } else { no }.to_string())
                };
                let mut parts: Vec<String> = Vec::new();
                parts.extend(s(l, "kind"));
                parts.extend(s(l, "model"));
                parts.extend(s(l, "scheduler").map(|x| format!("scheduler {x}")));
                parts.extend(flag("rotational", "rotational", "non-rotational"));
                parts.extend(flag("discard", "discard", "no discard"));
                if let (Some(lb), Some(pb)) = (
                    l.get("logical_block_bytes").and_then(Value::as_u64),
                    l.get("physical_block_bytes").and_then(Value::as_u64),
                ) {
                    parts.push(format!("{lb}/{pb}-byte sectors"));
                }
                parts.extend(
                    l.get("size_bytes")
                        .and_then(Value::as_u64)
                        .map(crate::units::fmt_size),
                );
                parts.extend(s(l, "loop_backing").map(|b| format!("backed by {b}")));
                parts.extend(flag("loop_direct_io", "direct-io", "buffered loop"));
                let name = format!("/dev/{}", s(l, "name").unwrap_or_default());
                ("device".to_string(), name, parts.join(", "))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_chains_become_rows() {
        let v = serde_json::json!({"links": [
            {"type": "filesystem", "path": "/mnt/x", "fs_type": "xfs", "source": "/dev/loop2", "mount_point": "/mnt", "mount_options": "rw,noatime"},
            {"type": "device", "name": "loop2", "kind": "loop", "loop_backing": "/var/x.img", "loop_direct_io": true}
        ]});
        let rows = storage_rows(&v);
        assert_eq!(rows[0].2, "xfs on /dev/loop2 mounted at /mnt (rw,noatime)");
        assert_eq!(rows[1].1, "/dev/loop2");
        assert_eq!(rows[1].2, "loop, backed by /var/x.img, direct-io");
        assert!(storage_rows(&Value::Null).is_empty());
    }
}
