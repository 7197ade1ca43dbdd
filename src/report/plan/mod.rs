//! `dbio report`'s products over a selection of stored runs: `table.rs`
//! (the SLOB.R table), `stats.rs` + `stats_text.rs` (`--stats`,
//! `--scaling`), `select.rs` (which value a run shows), `rformat.rs`
//! (numbers as R prints them), `metric_names.rs` (a stored metric name's
//! unit and meaning).

pub mod metric_names;
pub(crate) mod rformat;
pub mod select;
pub mod stats;
pub mod stats_text;
pub mod table;
