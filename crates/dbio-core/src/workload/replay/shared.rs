//! How a timed replay shares its captured threads among fewer sessions
//! ([`Sessions::Shared`]): each thread's requests all go to one session's
//! ring, its place there (its lane) kept so that the faithfulness report
//! still sets each captured thread's inter-arrival beside its replay; the
//! threads are spread so that the sessions issue about as many requests
//! each. Measured on this project's 2-CPU machine (docs/replay.md,
//! "Fewer sessions"): replaying a SLOB capture of twelve threads, two
//! sessions woke half as often as twelve, used less CPU and started a
//! fifth as many io_uring workers, and with `--rt` issued the requests
//! that had room with a lower p99.

use super::{ReplayConfig, Sessions, Speed};
use crate::config::replay::ThreadFacts;

/// Where one captured thread's requests go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub session: u32,
    /// Its index among the threads of that session.
    pub lane: u16,
}

/// Each thread's place (in the order of `threads`) among `sessions`
/// sessions: the thread with the most requests first, each to the session
/// with the fewest requests so far (the lowest-numbered on a tie).
pub(crate) fn places(threads: &[ThreadFacts], sessions: u32) -> Vec<Place> {
    let n = sessions.max(1) as usize;
    let mut order: Vec<usize> = (0..threads.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(threads[i].requests), i));
    let mut load = vec![0u64; n];
    let mut lanes = vec![0u16; n];
    let mut out = vec![
        Place {
            session: 0,
            lane: 0
        };
        threads.len()
    ];
    for i in order {
        let s = (0..n).min_by_key(|&s| (load[s], s)).expect("a session");
        load[s] += threads[i].requests;
        out[i] = Place {
            session: s as u32,
            lane: lanes[s],
        };
        lanes[s] = lanes[s].saturating_add(1);
    }
    out
}

/// A shared session's ring: for each of its threads, what the thread's
/// own session would have had — the run's depth, and in a timed replay at
/// least twice what the thread had in flight at once (a replayed request
/// is in flight longer than the block layer saw it, docs/replay.md) —
/// summed, so that a target that falls behind queues as many requests as
/// with a session per thread; None when the replay is not shared.
pub(crate) fn depth(iodepth: u32, rc: &ReplayConfig, id: u32) -> Option<u32> {
    let Sessions::Shared(n) = rc.sessions else {
        return None;
    };
    let timed = matches!(rc.speed, Speed::Factor(_));
    let threads = &rc.facts.threads;
    let sum = places(threads, n)
        .iter()
        .zip(threads)
        .filter(|(p, _)| p.session == id)
        .map(|(_, t)| {
            let own = if timed { 2 * t.max_in_flight } else { 0 };
            u64::from(iodepth.max(own))
        })
        .sum::<u64>();
    Some(sum.min(u64::from(u32::MAX)) as u32)
}

/// How many lanes session `id` keeps apart (1 unless shared).
pub(crate) fn lanes(rc: &ReplayConfig, id: u32) -> usize {
    match rc.sessions {
        Sessions::Shared(n) => places(&rc.facts.threads, n)
            .iter()
            .filter(|p| p.session == id)
            .count()
            .max(1),
        Sessions::PerThread { .. } | Sessions::Pool(_) => 1,
    }
}
