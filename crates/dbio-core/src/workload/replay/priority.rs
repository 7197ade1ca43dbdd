//! How a replay's threads ask the scheduler to run them on time: a timer
//! slack of 1 ns, nice −10 and a short time slice where the process may
//! (root), or real-time priority with `--rt` — and none of it passed on to
//! the io_uring worker threads the kernel starts for a session.
//!
//! Measured on this project's 2-CPU machine (docs/replay.md, "Issue-time
//! error"): a session woken at a due time waits for a CPU behind whatever
//! runs there; the io_uring workers inherited the sessions' nice −10 (or
//! SCHED_FIFO) and competed with them at their own priority, and at the
//! kernel's default slice (1.4 ms here) a running thread keeps the CPU
//! from a woken session until its slice ends.

/// The nice value of a replay's threads where the process may raise it
/// (root): on a busy host a woken session otherwise waits tens of ms for
/// a CPU (measured on 2 busy cores, null engine: issue error p99 45 ms at
/// nice 0).
pub(crate) const REPLAY_NICE: i32 = -10;

/// The time slice a replay thread asks for (EEVDF's `sched_runtime` for
/// SCHED_OTHER, Linux 6.12+; the kernel's least, 100 µs): a woken thread
/// whose slice is shorter than the running one's preempts it at once
/// (`PREEMPT_SHORT`), where at the default slice it waits until the
/// running thread's slice ends. A replay thread runs for microseconds
/// between sleeps, so the short slice costs it nothing.
pub(crate) const SLICE_NS: u64 = 100_000;

/// `SCHED_FLAG_RESET_ON_FORK`: threads this one starts (io_uring's
/// workers) get nice 0 and SCHED_OTHER, not this thread's priority.
const RESET_ON_FORK: u64 = 0x01;

/// Asks the kernel to wake this thread's sleeps on time (a timer slack of
/// 1 ns instead of 50 µs) and to run it before ordinary threads where it
/// may: a replay sleeps until due times. With `rt` (`--rt`) the thread
/// runs at real-time priority (SCHED_FIFO 1): woken at a due time, it
/// takes the CPU from any ordinary thread at once (measured on 2 cores at
/// load 14, null engine: issue error p99 13.4 ms at nice 0, 1.0 ms under
/// SCHED_FIFO); where that is not allowed, the one line saying so.
/// Without `rt`: nice −10 and, for a session, a [`SLICE_NS`] slice, or
/// as much of it as the kernel allows; the feed keeps the default slice,
/// so that a session woken at a due time preempts it too (it works ahead
/// of the sessions in long stretches, [`super::BATCHES_AHEAD`] batches
/// each). Either way the priority is not inherited by the threads it
/// starts.
pub(crate) fn fine_timers(rt: bool, role: Role) -> Result<(), String> {
    // SAFETY: sets only the calling thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
    if rt {
        return set_attr(libc::SCHED_FIFO, RESET_ON_FORK, 1, 0).map_err(|e| {
            format!(
                "--rt: cannot run the replay at real-time priority: {e} (run as root, or with CAP_SYS_NICE; or drop --rt)"
            )
        });
    }
    // Not fatal where refused (not root, an older kernel): each step
    // that the kernel takes still helps.
    let slice = match role {
        Role::Session => SLICE_NS,
        Role::Feed => 0,
    };
    if set_attr(libc::SCHED_OTHER, RESET_ON_FORK, REPLAY_NICE, slice).is_err()
        && !crate::workload::slob::dbwr::raise_priority(REPLAY_NICE)
    {
        let _ = set_attr(libc::SCHED_OTHER, RESET_ON_FORK, 0, slice);
    }
    Ok(())
}

/// Which replay thread asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Session,
    Feed,
}

/// sched_setattr(2) of the calling thread: `policy` with `flags`, and
/// `prio` as its nice value (SCHED_OTHER) or real-time priority;
/// `slice_ns` its time slice (0: the kernel's default).
fn set_attr(policy: i32, flags: u64, prio: i32, slice_ns: u64) -> std::io::Result<()> {
    let fifo = policy == libc::SCHED_FIFO;
    let attr = libc::sched_attr {
        size: std::mem::size_of::<libc::sched_attr>() as u32,
        sched_policy: policy as u32,
        sched_flags: flags,
        sched_nice: if fifo { 0 } else { prio },
        sched_priority: if fifo { prio as u32 } else { 0 },
        sched_runtime: slice_ns,
        sched_deadline: 0,
        sched_period: 0,
    };
    // SAFETY: `attr` is a valid sched_attr of the size it gives, read
    // during the call; 0 names the calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_sched_setattr,
            0,
            &attr as *const libc::sched_attr,
            0,
        )
    };
    match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
