//! `dbio verify`: every block of a target read back and named — intact, or
//! zeroed, bad checksum, misdirected, torn, or lost (docs/verify.md).
//! `classify` names one block from its sector stamps and the generation
//! map's floor, `scan` reads the whole target through io_uring, `findings`
//! tallies and renders what was found; `interrupted` tells blocks a killed
//! run was writing from damage; `online` checks a run's reads as they
//! complete (`dbio run --verify`).

pub mod classify;
pub mod findings;
pub mod interrupted;
pub mod online;
pub mod scan;
