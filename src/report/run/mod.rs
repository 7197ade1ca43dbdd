//! One run's report as the terminal shows it: `text.rs` (the run: summary,
//! latency, outliers, telemetry), `awr_text.rs` (the SLOB model's AWR-style
//! sections), `db_text.rs` (what the pg and mysql reports share),
//! `pg_text.rs` and `mysql_text.rs` (each server's own counters),
//! `steady_text.rs` (a steady-state run's verdict, window and rounds).

pub mod awr_text;
mod cycle_text;
mod db_text;
mod mysql_text;
mod open_loop_text;
mod pg_text;
pub mod ranks_text;
mod replay_text;
mod steady_text;
pub mod text;

#[cfg(test)]
pub(crate) mod tests;
