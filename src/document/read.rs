//! A stored document read back into the run document's types: a
//! `dbio.run.v1` document upgraded first ([`super::upgrade`]), then
//! deserialized into [`Report`]. Documents that are not runs of dbio (fio
//! and awr_info imports, verify runs) are named by their schema and left to
//! the readers that know them.

use serde_json::Value;

use super::Report;

/// The schemas of dbio's own run documents start with this.
pub const RUN_SCHEMA_PREFIX: &str = "dbio.run.";

/// Why a stored document is not a run document this build reads (the words
/// follow "the document").
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("is not a JSON object")]
    NotAnObject,
    #[error("has schema {0:?}, not dbio.run.*")]
    Schema(String),
    #[error("does not read as a dbio.run.v2 document: {0}")]
    Shape(#[from] serde_json::Error),
}

/// A stored document's schema (`dbio.run.v2`, `dbio.import.fio.v1`), if it names one.
pub fn schema(doc: &Value) -> Option<&str> {
    doc.get("schema").and_then(Value::as_str)
}

/// Whether the document is one of dbio's own runs (any `dbio.run.*` schema).
pub fn is_run(doc: &Value) -> bool {
    schema(doc).is_some_and(|s| s.starts_with(RUN_SCHEMA_PREFIX))
}

impl Report {
    /// A stored run document in this build's types: v1 upgraded on read.
    pub fn from_stored(doc: &Value) -> Result<Report, ReadError> {
        if !doc.is_object() {
            return Err(ReadError::NotAnObject);
        }
        if !is_run(doc) {
            return Err(ReadError::Schema(schema(doc).unwrap_or_default().into()));
        }
        let upgraded = super::upgrade::upgrade(doc.clone());
        Ok(serde_json::from_value(upgraded)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_RAW: &str = include_str!("../../tests/corpus/run_v1/raw.json");
    const V1_SLOB: &str = include_str!("../../tests/corpus/run_v1/slob.json");

    /// Whether every field of `part` is in `whole` with the same value.
    fn within(part: &Value, whole: &Value) -> Result<(), String> {
        match (part, whole) {
            (Value::Object(p), Value::Object(w)) => p.iter().try_for_each(|(k, v)| {
                let other = w.get(k).ok_or(format!("{k} lost"))?;
                within(v, other).map_err(|e| format!("{k}.{e}"))
            }),
            (Value::Array(p), Value::Array(w)) if p.len() == w.len() => {
                p.iter().zip(w).try_for_each(|(a, b)| within(a, b))
            }
            _ if part == whole => Ok(()),
            _ => Err(format!("{part} became {whole}")),
        }
    }

    /// The earlier build's documents read into this build's types; written
    /// again they hold the v1 document under v2's names, nothing lost or
    /// changed (a setting added since, `config.slob.dbwr_nice`, at its default).
    #[test]
    fn v1_documents_of_an_earlier_build_read_into_the_types() {
        for text in [V1_RAW, V1_SLOB] {
            let v1: Value = serde_json::from_str(text).unwrap();
            let r = Report::from_stored(&v1).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(r.schema, super::super::SCHEMA);
            let again = serde_json::to_value(&r).unwrap();
            let up = super::super::upgrade::upgrade_v1(v1);
            within(&up, &again).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn documents_that_are_not_runs_are_named_by_their_schema() {
        let fio = serde_json::json!({"schema": "dbio.import.fio.v1", "config": {}});
        let err = Report::from_stored(&fio).unwrap_err();
        assert_eq!(
            err.to_string(),
            "has schema \"dbio.import.fio.v1\", not dbio.run.*"
        );
        assert!(matches!(
            Report::from_stored(&Value::from(3)),
            Err(ReadError::NotAnObject)
        ));
        let partial = serde_json::json!({"schema": "dbio.run.v2", "status": "completed"});
        let err = Report::from_stored(&partial).unwrap_err().to_string();
        assert!(
            err.starts_with("does not read as a dbio.run.v2 document: missing field"),
            "{err}"
        );
    }
}
