//! How a session's io_uring is set up ([`UringOpts`], recorded in the run's
//! config; the engine's `uring.rs` makes the ring as it says).

use serde::{Deserialize, Serialize};

use crate::choice::{Choice, Named};

/// Who runs the kernel's completion work for the ring's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Taskrun {
    /// `defer` where the kernel allows it (6.1+), else `none`.
    Auto,
    /// SINGLE_ISSUER|DEFER_TASKRUN: only when the session waits for completions.
    Defer,
    /// COOP_TASKRUN: at the next system call, without interrupting the thread.
    Coop,
    /// The kernel's default: interrupting the thread (task work signals).
    None,
}

impl Choice for Taskrun {
    const ALL: &'static [(Self, Named)] = &[
        (
            Taskrun::Auto,
            Named::help("auto", "defer where the kernel allows it, else none"),
        ),
        (
            Taskrun::Defer,
            Named::help(
                "defer",
                "SINGLE_ISSUER|DEFER_TASKRUN: completion work runs only when the session waits (6.1+)",
            ),
        ),
        (
            Taskrun::Coop,
            Named::help(
                "coop",
                "COOP_TASKRUN: completion work waits for the session's next system call (5.19+)",
            ),
        ),
        (
            Taskrun::None,
            Named::help(
                "none",
                "the kernel's default: the session is interrupted for it",
            ),
        ),
    ];
}

/// When queued requests are handed to the kernel (fio's `iodepth_batch_submit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Submit {
    /// `each` from 2 to [`Submit::EACH_UP_TO`] in flight, else `batch`
    /// (measured on tmpfs, bench/README.md).
    Auto,
    /// Each request in its own `io_uring_enter` as it is queued (fio's
    /// default, `iodepth_batch_submit=1`): the kernel starts on it while the
    /// session prepares the next, and every call also collects completions;
    /// with none there, up to 8 calls that do not block come before one that
    /// sleeps, so the session seldom sleeps.
    Each,
    /// Everything queued in one `io_uring_enter` when the session waits:
    /// fewer system calls, but the session sleeps more often.
    Batch,
}

impl Submit {
    /// The deepest queue `auto` submits request by request: deeper, the
    /// kernel's worker always has work queued and a batch's saved calls win.
    pub(crate) const EACH_UP_TO: u32 = 32;

    /// Whether requests go in one by one at `depth` in flight.
    pub(crate) fn each_at(self, depth: u32) -> bool {
        match self {
            Submit::Auto => (2..=Self::EACH_UP_TO).contains(&depth),
            Submit::Each => true,
            Submit::Batch => false,
        }
    }
}

impl Choice for Submit {
    const ALL: &'static [(Self, Named)] = &[
        (
            Submit::Auto,
            Named::help(
                "auto",
                "each from 2 to 32 in flight, batch at 1 and above 32",
            ),
        ),
        (
            Submit::Each,
            Named::help(
                "each",
                "each request as it is queued, as fio does (iodepth_batch_submit=1)",
            ),
        ),
        (
            Submit::Batch,
            Named::help(
                "batch",
                "all queued requests in one system call when the session waits",
            ),
        ),
    ];
}

/// How each session's ring is set up (`dbio run --fixedbufs` and the like);
/// recorded in the run's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UringOpts {
    /// Buffers registered once, so the kernel need not map them per request.
    pub fixedbufs: bool,
    /// Files registered once, so the kernel need not look them up per request.
    pub registerfiles: bool,
    /// The ring's own fd registered (IORING_REGISTER_RING_FDS, 5.18+): no fd
    /// lookup per `io_uring_enter`.
    pub register_ring: bool,
    /// A kernel thread polls the submission queue (SQPOLL), sleeping after
    /// this many milliseconds without work; `None`: the session submits.
    pub sqthread_poll_ms: Option<u32>,
    pub taskrun: Taskrun,
    pub submit: Submit,
}

impl Default for UringOpts {
    fn default() -> Self {
        UringOpts {
            fixedbufs: true,
            registerfiles: true,
            register_ring: false,
            sqthread_poll_ms: None,
            taskrun: Taskrun::Auto,
            submit: Submit::Auto,
        }
    }
}
