//! `dbio compare --format json` as scripts read it (`dbio.compare.v2`,
//! docs/json.md): every key snake_case and stable whatever the text report
//! calls the line (`"key": "read_io_requests"` beside the display
//! `"name": "Read IO requests"`), every number a JSON number (a setting
//! such as `sessions` is `4`, not `"4"`), host and device statistics as
//! objects keyed by their field names. The serializers here are attached to
//! [`Side`](super::compare::Side) and [`Cell`](super::compare::Cell) fields.

use std::collections::BTreeMap;

use serde::Serializer;
use serde::ser::SerializeSeq;
use serde_json::{Map, Value, json};

use super::LoadRow;
use super::evidence::LoadTest;

/// The `schema` of `dbio compare --format json`. v2: host and device fields
/// under the run document's `dbio.run.v2` names (`ctxt_per_s`, `r_per_s`,
/// `rkib_per_s`, …).
pub const SCHEMA: &str = "dbio.compare.v2";

/// A display label or setting name as a stable key: lower case, `I/O` as
/// `io`, every run of other characters but `.` one `_`
/// (`"Read avg latency (ms)"` → `read_avg_latency_ms`,
/// `"mount options"` → `mount_options`, `"slob.update_pct"` stays).
pub fn key(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.replace("I/O", "io").chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// A setting's value as JSON: a number or boolean when the text is one
/// (`"4"` → `4`, `"true"` → `true`), otherwise the text.
fn value(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Number(_) | Value::Bool(_))) => v,
        _ => Value::String(text.to_string()),
    }
}

pub fn settings<S: Serializer>(s: &BTreeMap<String, String>, ser: S) -> Result<S::Ok, S::Error> {
    let m: Map<String, Value> = s.iter().map(|(k, v)| (key(k), value(v))).collect();
    ser.collect_map(m)
}

pub fn load<S: Serializer>(rows: &[LoadRow], ser: S) -> Result<S::Ok, S::Error> {
    let mut seq = ser.serialize_seq(Some(rows.len()))?;
    for r in rows {
        seq.serialize_element(&json!({
            "key": key(&r.name),
            "name": r.name,
            "per_second": r.per_second,
            "per_transaction": r.per_transaction,
        }))?;
    }
    seq.end()
}

pub fn host<S: Serializer>(h: &[(String, f64)], ser: S) -> Result<S::Ok, S::Error> {
    ser.collect_map(h.iter().map(|(k, v)| (k, v)))
}

pub fn devices<S: Serializer>(d: &[(String, String, f64)], ser: S) -> Result<S::Ok, S::Error> {
    let mut by: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    for (dev, field, v) in d {
        by.entry(dev).or_default().insert(field.clone(), json!(v));
    }
    ser.collect_map(by)
}

pub fn tests<S: Serializer>(t: &[LoadTest], ser: S) -> Result<S::Ok, S::Error> {
    let mut seq = ser.serialize_seq(Some(t.len()))?;
    for lt in t {
        let mut v = serde_json::to_value(lt).map_err(serde::ser::Error::custom)?;
        v["key"] = json!(key(&lt.name));
        seq.serialize_element(&v)?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_become_stable_snake_case_keys() {
        assert_eq!(key("Read avg latency (ms)"), "read_avg_latency_ms");
        assert_eq!(key("CPU per I/O (us)"), "cpu_per_io_us");
        assert_eq!(key("Redo size (bytes)"), "redo_size_bytes");
        assert_eq!(key("mount options"), "mount_options");
        assert_eq!(key("slob.update_pct"), "slob.update_pct");
        assert_eq!(key("device loop0 model"), "device_loop0_model");
    }

    #[test]
    fn setting_values_that_are_numbers_are_numbers() {
        assert_eq!(value("4"), json!(4));
        assert_eq!(value("0.5"), json!(0.5));
        assert_eq!(value("true"), json!(true));
        assert_eq!(value("psync"), json!("psync"));
        assert_eq!(value("(varies: 1, 2)"), json!("(varies: 1, 2)"));
        assert_eq!(value("null"), json!("null"));
    }
}
