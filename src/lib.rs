//! dbio: a storage benchmark for databases.
//!
//! The measuring core is the `dbio_core` crate (re-exported here under the
//! same module names): [`config`] (what to run) → [`storage`] (where I/O
//! goes) → [`workload`] (what is asked) → [`engine`] (how it is issued),
//! driven by [`harness`], measured by [`measure`] and [`samplers`]. This
//! crate adds the command line ([`cli`], [`commands`]), the results
//! [`store`], [`plan`]s and the [`lab`], [`analysis`] and the [`report`]s.
//! See ARCHITECTURE.md.

pub use dbio_core::{
    choice, config, engine, environment, harness, measure, rng, samplers, steady, storage,
    terminal, trace, units, verify, vocab, workload,
};

pub mod analysis;
pub mod chart;
pub mod cli;
pub mod commands;
pub mod document;
pub mod grid;
pub mod import;
pub mod interrupt;
pub mod lab;
pub mod metrics;
pub mod options;
pub mod plan;
pub mod preflight;
pub mod ranks;
pub mod report;
pub mod store;
