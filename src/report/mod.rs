//! What dbio shows of runs, one folder per product: `run/` (one run's
//! terminal report and its AWR-style sections), `plan/` (`dbio report`'s
//! tables and statistics over a selection of stored runs), `compare/`
//! (`dbio compare`), `vs_engine/` (the model against the engines, `dbio lab
//! vs-engine`), `html/` (the self-contained HTML pages). The run
//! document they read is [`crate::document`]; its names are re-exported
//! here for the run path.

pub mod compare;
pub mod export;
pub mod html;
pub mod plan;
pub mod run;
pub mod vs_engine;

pub use crate::document::{
    CpuSummary, Latency, OpSummary, OutlierSummary, Report, SCHEMA, TargetSummary, awr, db, mysql,
    pg, upgrade,
};
pub use run::text;
