//! Statistics over repeated runs: pure functions over `f64` slices, with no
//! I/O and no store access (callers pull the numbers out of the store).
//!
//! * [`summary`]: one cell of a results table. [`slob_trimmed_mean`] is
//!   SLOB.R's `myavg` exactly; [`summarize`] adds spread, a Student t and a
//!   bootstrap 95% interval, one on the log scale for positive values, and
//!   Tukey outliers ([`ci95`] picks the interval a table shows);
//!   [`readwrite`] is SLOB.R's
//!   READWRITE model (reads and writes trimmed separately, then added).
//! * [`compare`]: two sets of runs against each other: Welch's t-test,
//!   ratios, the effect size, the runs a test would need to detect a
//!   difference (power), and verdicts in words that match the evidence.
//! * [`models`]: SLOB.R's READS, REDO, WRITES and READWRITE models: which
//!   runs belong to each and the metric each shows.
//! * [`ratio`]: the ratio of two sets of runs' means with a log-ratio t
//!   interval (the model against an engine, `dbio lab vs-engine`).
//! * [`scaling`]: throughput over sessions: the peak, the knee, a collapse
//!   after the peak, and a Universal Scalability Law fit.

pub mod compare;
pub mod models;
pub mod ratio;
pub mod scaling;
pub mod summary;

pub use compare::{
    Evidence, RunsNeeded, Welch, cohens_d, evidence, ratio, runs_needed, verdict, welch,
};
pub use ratio::{NoRatio, RatioCi, ratio_ci};
pub use scaling::{Collapse, Peak, UslFit, collapse, fit_usl, knee, peak, per_n_values, usl};
pub use summary::{
    CellSummary, CiMethod, ReadWrite, ci95, is_skewed, lognormal_mean_ci95, readwrite,
    readwrite_cell, slob_trimmed_mean, summarize, tukey_outliers,
};
