//! SLOB.R's models: which runs a READS, REDO, WRITES or READWRITE table is
//! made of, and which metric it shows (docs/import.md, "Models").
//!
//! For runs with SLOB's reader and writer counts (`db.readers`,
//! `db.writers`: the original awr_info.sh) the rules are SLOB.R's exactly,
//! so a run may be in two models as in SLOB.R:
//!
//! * READS: readers > 0;
//! * REDO: redo bytes / (physical writes × 8192) > 2, and not READS;
//! * WRITES: writers > 0, and not REDO; READWRITE: the WRITES runs.
//!
//! Other runs (dbio's own, fio, newer awr_info.sh) have no reader/writer
//! counts: READS is "no writes" (dbio slob: `db.update_pct` = 0; raw and fio:
//! no write requests; awr_info: physical writes at most 1% of physical
//! reads), REDO the same ratio over `db.block_size_bytes` (8192 without it) among
//! the others, WRITES the rest. A model given at import (`--model`) wins.

use crate::choice::{Choice, Named};
use crate::vocab as v;

/// A model of `dbio report --model`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    /// Physical read requests/s of read-only runs (SLOB.R's PREADS of READS).
    Reads,
    /// Redo MiB/s of runs where redo dominates the writes.
    Redo,
    /// Physical write requests/s of write runs.
    Writes,
    /// Reads/s + writes/s of the write runs, each trimmed separately, then added.
    Readwrite,
}

impl Choice for Model {
    const ALL: &'static [(Self, Named)] = &[
        (
            Model::Reads,
            Named::help(
                "reads",
                "Physical read requests/s of read-only runs (SLOB.R's PREADS of READS)",
            ),
        ),
        (
            Model::Redo,
            Named::help("redo", "Redo MiB/s of runs where redo dominates the writes"),
        ),
        (
            Model::Writes,
            Named::help("writes", "Physical write requests/s of write runs"),
        ),
        (
            Model::Readwrite,
            Named::help(
                "readwrite",
                "Reads/s + writes/s of the write runs, each trimmed separately, then added",
            ),
        ),
    ];
}

/// SLOB.R's block size in the REDO rule.
pub const SLOB_R_BLOCK_SIZE: f64 = 8192.0;

/// Physical writes at most this share of physical reads count as none (newer
/// awr_info.sh output: AWR itself writes a little during a read-only run).
pub const READ_ONLY_WRITE_SHARE: f64 = 0.01;

/// What the rules look at in a stored run.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    /// The `model` column (given at import): `reads`, `redo` or `writes`.
    pub model: Option<&'a str>,
    /// Every metric of the run.
    pub metrics: &'a [(String, f64)],
}

impl Facts<'_> {
    /// The metric stored as `name` or, by a run an earlier build stored,
    /// under its old name (`vocab::RENAMED_METRICS`).
    fn get(&self, name: &str) -> Option<f64> {
        v::stored_names(name).iter().find_map(|name| {
            self.metrics
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, x)| *x)
        })
    }

    fn has_slob_sessions(&self) -> bool {
        self.get(v::READERS).is_some() || self.get(v::WRITERS).is_some()
    }

    /// Redo bytes per written block.
    fn redo_ratio(&self) -> Option<f64> {
        let redo = self.get(v::REDO_BYTES_S)?;
        let writes = self.get(v::PHYSICAL_WRITES_S)?;
        let bs = if self.has_slob_sessions() {
            SLOB_R_BLOCK_SIZE
        } else {
            self.get(v::BLOCK_SIZE).unwrap_or(SLOB_R_BLOCK_SIZE)
        };
        // As in R: x / 0 is Inf (> 2), 0 / 0 is NaN (not > 2).
        Some(redo / (writes * bs))
    }

    /// SLOB.R's READS(dat), or "no writes".
    pub fn is_reads(&self) -> bool {
        if let Some(m) = self.model {
            return m == "reads";
        }
        if self.has_slob_sessions() {
            return self.get(v::READERS).is_some_and(|r| r > 0.0);
        }
        if let Some(u) = self.get(v::UPDATE_PCT) {
            return u == 0.0;
        }
        if let Some(w) = self.get(v::PHYSICAL_WRITES_S) {
            let r = self.get(v::PHYSICAL_READS_S).unwrap_or(0.0);
            return w == 0.0 || w <= READ_ONLY_WRITE_SHARE * r;
        }
        self.get(v::WRITE_REQUESTS).is_none_or(|w| w == 0.0)
    }

    /// SLOB.R's REDO(dat).
    pub fn is_redo(&self) -> bool {
        if let Some(m) = self.model {
            return m == "redo";
        }
        self.redo_ratio().is_some_and(|r| r > 2.0) && !self.is_reads()
    }

    /// SLOB.R's WRITES(dat) (= READWRITE(dat)).
    pub fn is_writes(&self) -> bool {
        if let Some(m) = self.model {
            return m == "writes";
        }
        if self.has_slob_sessions() {
            return self.get(v::WRITERS).is_some_and(|w| w > 0.0) && !self.is_redo();
        }
        !self.is_reads() && !self.is_redo()
    }

    /// Whether the run belongs to `model`.
    pub fn is(&self, model: Model) -> bool {
        match model {
            Model::Reads => self.is_reads(),
            Model::Redo => self.is_redo(),
            Model::Writes | Model::Readwrite => self.is_writes(),
        }
    }

    /// The models the run belongs to (for import summaries).
    pub fn models(&self) -> Vec<Model> {
        [Model::Reads, Model::Redo, Model::Writes]
            .into_iter()
            .filter(|m| self.is(*m))
            .collect()
    }

    /// The run's reads/s: physical read requests (database runs) or read
    /// IOPS (raw runs, fio).
    pub fn reads_per_s(&self) -> Option<f64> {
        self.get(v::PHYSICAL_READS_S)
            .or_else(|| (!self.is_db()).then(|| self.get(v::READ_IOPS).unwrap_or(0.0)))
    }

    /// The run's writes/s, likewise.
    pub fn writes_per_s(&self) -> Option<f64> {
        self.get(v::PHYSICAL_WRITES_S)
            .or_else(|| (!self.is_db()).then(|| self.get(v::WRITE_IOPS).unwrap_or(0.0)))
    }

    /// A database-shaped run (it has `db.*` metrics).
    fn is_db(&self) -> bool {
        self.metrics.iter().any(|(n, _)| n.starts_with("db."))
    }

    /// The value a one-metric model shows for this run (`None` for
    /// READWRITE, which needs [`Facts::reads_per_s`] and
    /// [`Facts::writes_per_s`] trimmed apart).
    pub fn model_value(&self, model: Model) -> Option<f64> {
        match model {
            Model::Reads => self.reads_per_s(),
            Model::Redo => self.get(v::REDO_MBS),
            Model::Writes => self.writes_per_s(),
            Model::Readwrite => None,
        }
    }
}

/// The metric names a model's table shows, for its title.
pub fn metric_label(model: Model) -> &'static str {
    match model {
        Model::Reads => "reads model: db.physical_reads_per_s (raw runs: read.iops)",
        Model::Redo => "redo model: db.redo_mib_per_s",
        Model::Writes => "writes model: db.physical_writes_per_s (raw runs: write.iops)",
        Model::Readwrite => {
            "readwrite model: reads/s + writes/s of the write runs, each trimmed apart"
        }
    }
}

#[cfg(test)]
#[path = "models_tests.rs"]
mod tests;
