//! dbio's measuring core: everything a run needs and nothing that presents
//! it. No command line, no results store, no HTML: the `dbio` crate above
//! adds those.
//!
//! The pipeline, left to right: [`config`] (what to run) → [`storage`]
//! (where I/O goes) → [`workload`] (what is asked) → [`engine`] (how it is
//! issued), driven by [`harness`] and measured by [`measure`] and
//! [`samplers`]. [`verify`] reads a target back; [`trace`] captures and
//! reads block I/O traces. See ARCHITECTURE.md.

pub mod choice;
pub mod config;
pub mod engine;
pub mod environment;
pub(crate) mod futex;
pub mod harness;
pub mod measure;
pub mod rng;
pub mod samplers;
pub mod steady;
pub mod storage;
pub mod terminal;
pub mod trace;
pub mod units;
pub mod verify;
pub mod vocab;
pub mod workload;
