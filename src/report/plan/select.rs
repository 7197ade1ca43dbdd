//! What a report's cells show for one stored run: a metric (`--metric`),
//! or a SLOB.R model's value (`--model`, which also chooses the runs). The
//! terminal table (`commands/report.rs`) and the HTML report
//! (`report::html::data`) both pick their values here.

use crate::analysis::models::{self, Facts, Model};

/// `--metric`'s value when `--model` is given without it: each run's model
/// metric.
pub const MODEL_METRIC: &str = "model";

/// A run's value in the report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pick {
    /// The run belongs to another model than the one asked.
    OtherModel,
    /// The run has no value for the measure.
    Missing,
    /// The value; for READWRITE the reads/s + writes/s, with both parts
    /// (SLOB.R trims them apart).
    Value {
        value: f64,
        split: Option<(f64, f64)>,
    },
}

/// What the cells show: `--metric` and `--model` as given.
#[derive(Clone, Copy, Debug)]
pub struct Measure<'a> {
    pub metric: &'a str,
    pub model: Option<Model>,
}

/// `--model readwrite` with a `--metric`: a combination that shows nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "--model readwrite adds reads/s and writes/s; it takes no --metric (use --model writes --metric NAME)"
)]
pub struct ReadwriteMetric;

impl Measure<'_> {
    /// The model's own metric (no `--metric` other than the default).
    pub fn by_model(&self) -> bool {
        self.model.is_some() && self.metric == MODEL_METRIC
    }

    /// READWRITE: the reads and writes of each run, trimmed apart.
    pub fn readwrite(&self) -> bool {
        self.model == Some(Model::Readwrite)
    }

    /// `Err` (a usage error) for a combination that shows nothing.
    pub fn check(&self) -> Result<(), ReadwriteMetric> {
        if self.readwrite() && !self.by_model() {
            return Err(ReadwriteMetric);
        }
        Ok(())
    }

    /// The name of the values, for titles.
    pub fn label(&self) -> String {
        match self.model {
            Some(m) if self.by_model() => models::metric_label(m).to_string(),
            Some(m) => format!("{} ({m:?} model runs)", self.metric).to_lowercase(),
            None => self.metric.to_string(),
        }
    }

    /// Whether the values are a throughput (scaling applies).
    pub fn is_throughput(&self) -> bool {
        self.by_model() || super::stats::is_throughput(&crate::vocab::resolve_metric(self.metric).0)
    }

    /// The value of the run whose `model` column and metrics are given.
    pub fn pick(&self, model: Option<&str>, metrics: &[(String, f64)]) -> Pick {
        let facts = Facts { model, metrics };
        if self.model.is_some_and(|m| !facts.is(m)) {
            return Pick::OtherModel;
        }
        let value = match self.model {
            Some(Model::Readwrite) => facts
                .reads_per_s()
                .zip(facts.writes_per_s())
                .map(|(r, w)| (r + w, Some((r, w)))),
            Some(m) if self.by_model() => facts.model_value(m).map(|v| (v, None)),
            _ => crate::vocab::lookup(metrics, self.metric).map(|v| (v, None)),
        };
        match value {
            Some((value, split)) => Pick::Value { value, split },
            None => Pick::Missing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metrics(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn a_model_picks_its_runs_and_its_metric() {
        let read_only = metrics(&[
            ("db.update_pct", 0.0),
            ("db.physical_reads_s", 900.0),
            ("db.physical_writes_s", 0.0),
            ("total.iops", 950.0),
        ]);
        let writes = metrics(&[
            ("db.update_pct", 25.0),
            ("db.physical_reads_s", 700.0),
            ("db.physical_writes_s", 300.0),
            ("db.redo_bytes_s", 1000.0),
        ]);
        let reads = Measure {
            metric: MODEL_METRIC,
            model: Some(Model::Reads),
        };
        assert_eq!(
            reads.pick(None, &read_only),
            Pick::Value {
                value: 900.0,
                split: None
            }
        );
        assert_eq!(reads.pick(None, &writes), Pick::OtherModel);
        let rw = Measure {
            metric: MODEL_METRIC,
            model: Some(Model::Readwrite),
        };
        assert_eq!(
            rw.pick(None, &writes),
            Pick::Value {
                value: 1000.0,
                split: Some((700.0, 300.0))
            }
        );
        let other = Measure {
            metric: "total.iops",
            model: Some(Model::Reads),
        };
        assert!(!other.by_model());
        assert_eq!(
            other.pick(None, &read_only),
            Pick::Value {
                value: 950.0,
                split: None
            }
        );
        let plain = Measure {
            metric: "total.iops",
            model: None,
        };
        assert_eq!(plain.pick(None, &writes), Pick::Missing);
        assert!(reads.is_throughput() && plain.is_throughput());
    }
}
