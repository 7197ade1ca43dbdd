//! dbio: a storage benchmark for databases.
//!
//! The pipeline, left to right: [`config`] (what to run) → [`target`] (where
//! I/O goes) → [`workload`] (what is asked) → [`engine`] (how it is issued),
//! driven by [`harness`], measured by [`measure`] and [`samplers`], and
//! rendered by [`report`]. See ARCHITECTURE.md.

pub mod analysis;
pub mod chart;
pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod environment;
pub mod grid;
pub mod harness;
pub mod import;
pub mod lab;
pub mod measure;
pub mod plan;
pub mod preflight;
pub mod ranks;
pub mod report;
pub mod rng;
pub mod samplers;
pub mod store;
pub mod target;
pub mod units;
pub mod verify;
pub mod vocab;
pub mod workload;
