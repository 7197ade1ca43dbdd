//! What is asked of the storage. A [`Workload`] hands each session its next
//! request: a direction and a global block number. The engine decides how it
//! is issued; the target decides where that block lives.

pub mod dist;
pub mod raw;
pub mod rng;
pub mod slob;

use crate::engine::OpKind;
use rng::Rng;

/// A session's source of requests (one instance per session, never shared).
pub trait Workload: Send {
    /// The next request: its direction and the global block it touches.
    fn next_io(&mut self, rng: &mut Rng) -> (OpKind, u64);
}
