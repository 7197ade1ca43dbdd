//! How a session's io_uring is set up ([`UringOpts`], recorded in the run's
//! config) and the error when the kernel refuses a setting.

use std::io;

use serde::Serialize;

use crate::choice::{Choice, Named};

/// Who runs the kernel's completion work for the ring's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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

/// How each session's ring is set up (`dbio run --fixedbufs` and the like);
/// recorded in the run's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

impl Default for UringOpts {
    fn default() -> Self {
        UringOpts {
            fixedbufs: true,
            registerfiles: true,
            register_ring: false,
            sqthread_poll_ms: None,
            taskrun: Taskrun::Auto,
        }
    }
}

/// The kernel (or this process's limits) refused an io_uring setting.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the kernel refused to make an io_uring with {what}: {source}{hint}")]
    Ring {
        what: String,
        hint: &'static str,
        source: io::Error,
    },
    #[error(
        "cannot register the files with io_uring (--registerfiles): {0}; pass --registerfiles false"
    )]
    Files(io::Error),
    #[error(
        "cannot register {slots} buffers with io_uring (--fixedbufs): {source}; raise the locked-memory limit (ulimit -l) or pass --fixedbufs false"
    )]
    Buffers { slots: usize, source: io::Error },
    #[error(
        "cannot register the io_uring's own fd (--register-ring, Linux 5.18+): {0}; pass --register-ring false"
    )]
    RingFd(io::Error),
}

impl From<SetupError> for io::Error {
    fn from(e: SetupError) -> Self {
        io::Error::other(e.to_string())
    }
}
