//! Statistics over repeated runs: pure functions over `f64` slices, with no
//! I/O and no store access (callers pull the numbers out of the store).
//!
//! * [`summary`]: one cell of a results table. [`slob_trimmed_mean`] is
//!   SLOB.R's `myavg` exactly; [`summarize`] adds spread, a Student t and a
//!   bootstrap 95% interval and Tukey outliers ([`ci95`] picks the one a
//!   table shows); [`readwrite`] is SLOB.R's
//!   READWRITE model (reads and writes trimmed separately, then added).
//! * [`compare`]: two sets of runs against each other: Welch's t-test,
//!   ratios and a one-line verdict.
//! * [`models`]: SLOB.R's READS, REDO, WRITES and READWRITE models: which
//!   runs belong to each and the metric each shows.
//! * [`scaling`]: throughput over sessions: the peak, the knee, a collapse
//!   after the peak, and a Universal Scalability Law fit.

pub mod compare;
pub mod models;
pub mod scaling;
pub mod summary;

pub use compare::{Welch, ratio, verdict, welch};
pub use scaling::{Collapse, Peak, UslFit, collapse, fit_usl, knee, peak, per_n_means, usl};
pub use summary::{
    CellSummary, CiMethod, ReadWrite, ci95, is_skewed, readwrite, readwrite_cell,
    slob_trimmed_mean, summarize,
};
