//! Heartbeats before the start: from the first agreed step of a run to its
//! start barrier, every rank says every second what it is doing (laying out
//! its target, waiting for the others) — the other ranks to rank 0, rank 0
//! to every rank — and a rank that has heard nothing from one it watches
//! for `--mpi-grace` seconds names it and ends the job. Rank 0 watches
//! every rank; the others watch rank 0 (rank 1 first, the rest a little
//! later, so that one line is printed). Long local work runs on a worker
//! thread (`World::busy`) while the main thread, the only one that talks to
//! MPI, keeps beating: a layout may take hours and is not a hang, a stopped
//! process or a stuck device is.
//!
//! This module is the bookkeeping (what was heard when, who is silent); the
//! messages go through `world`.

use std::time::{Duration, Instant};

/// What a rank waiting in a collective says it is doing.
pub(super) const WAITING: &str = "waiting for the other ranks";
/// What a rank whose step failed says until the ranks agree on its error:
/// the others stop their own long steps instead of finishing them first.
pub(super) const FAILED: &str = "failed";
/// What rank 0 says once it heard that a rank failed (the others hear
/// only rank 0).
pub(super) const GIVING_UP: &str = "giving up (a rank failed)";

/// The heartbeats' state on one rank.
pub(super) struct Watch {
    rank: u32,
    hosts: Vec<String>,
    /// `Some` between `arm` and `disarm`: how long a watched rank may be silent.
    timeout: Option<Duration>,
    last_sent: Option<Instant>,
    /// This rank's current step.
    doing: &'static str,
    /// Per rank: when it was last heard, what it said, since when.
    heard: Vec<Heard>,
    /// A rank said it failed (or rank 0 that one did).
    peer_failed: bool,
    /// When this rank last listened (`listen`).
    listened: Option<Instant>,
}

#[derive(Clone)]
struct Heard {
    at: Instant,
    doing: String,
    since: Instant,
}

impl Watch {
    pub fn new(rank: u32, hosts: Vec<String>) -> Watch {
        let now = Instant::now();
        let heard = Heard {
            at: now,
            doing: "starting".into(),
            since: now,
        };
        Watch {
            rank,
            heard: vec![heard; hosts.len()],
            hosts,
            timeout: None,
            last_sent: None,
            doing: WAITING,
            peer_failed: false,
            listened: None,
        }
    }

    /// Starts watching, as of `now`: every rank counts as just heard.
    pub fn arm(&mut self, timeout: Duration, now: Instant) {
        self.timeout = Some(timeout);
        self.last_sent = None;
        self.doing = WAITING;
        self.peer_failed = false;
        self.listened = Some(now);
        for h in &mut self.heard {
            *h = Heard {
                at: now,
                doing: WAITING.into(),
                since: now,
            };
        }
    }

    pub fn disarm(&mut self) {
        self.timeout = None;
    }

    pub fn armed(&self) -> bool {
        self.timeout.is_some()
    }

    /// Whether another rank failed (this one gives up its long steps).
    pub fn peer_failed(&self) -> bool {
        self.peer_failed
    }

    /// This rank is now doing `what` (a step, `WAITING` or `FAILED`): said
    /// at once. Once failed or giving up, a rank says so until the start.
    pub fn doing(&mut self, what: &'static str) {
        let done = [FAILED, GIVING_UP].contains(&self.doing) && what != FAILED;
        if self.doing != what && !done {
            self.doing = what;
            self.last_sent = None;
        }
    }

    /// The ranks this one sends its heartbeats to.
    pub fn peers(&self) -> Vec<u32> {
        match self.rank {
            0 => (1..self.hosts.len() as u32).collect(),
            _ => vec![0],
        }
    }

    /// This rank's heartbeat if one is due at `now` (every `period`).
    pub fn due(&mut self, now: Instant) -> Option<&'static str> {
        let period = self.period()?;
        if self.last_sent.is_some_and(|t| now < t + period) {
            return None;
        }
        self.last_sent = Some(now);
        Some(self.doing)
    }

    /// This rank listens at `now`: a gap since it last did (it was stopped
    /// itself, or not given a core) is not the others' silence — mpirun
    /// continues a stopped rank as it ends the job, and that rank must not
    /// then name the ones it could not hear.
    pub fn listen(&mut self, now: Instant) {
        if let Some(gap) = self.listened.map(|t| now.saturating_duration_since(t))
            && gap > Duration::from_millis(100)
        {
            for h in &mut self.heard {
                h.at += gap;
            }
        }
        self.listened = Some(now);
    }

    /// Rank `from` said `doing` at `now`.
    pub fn heard(&mut self, from: u32, doing: &[u8], now: Instant) {
        let doing = String::from_utf8_lossy(doing);
        if [FAILED, GIVING_UP].contains(&&*doing) && !self.peer_failed {
            self.peer_failed = true;
            if self.rank == 0 && self.doing != FAILED {
                self.doing(GIVING_UP);
            }
        }
        let Some(h) = self.heard.get_mut(from as usize) else {
            return;
        };
        if h.doing != doing {
            h.doing = doing.into_owned();
            h.since = now;
        }
        h.at = now;
    }

    /// The line that names a watched rank silent for longer than the
    /// timeout at `now` (the others watch rank 0 a little longer each, so
    /// that rank 1 is the one that says it).
    pub fn silent(&self, now: Instant) -> Option<String> {
        let timeout = self.timeout?;
        let (watched, extra) = match self.rank {
            0 => ((1..self.hosts.len()).collect::<Vec<_>>(), 0),
            r => (vec![0], 2 * (r - 1)),
        };
        let late = timeout + Duration::from_secs(u64::from(extra));
        watched.into_iter().find_map(|r| {
            let h = &self.heard[r];
            let quiet = now.saturating_duration_since(h.at);
            (quiet > late).then(|| {
                let took = h.at.saturating_duration_since(h.since).as_secs_f64();
                let doing = if h.doing == WAITING || took < 1.0 {
                    format!("while {}", h.doing)
                } else {
                    format!("while {} (for {took:.0} s)", h.doing)
                };
                format!(
                    "rank {r} ({}): no word for {:.0} s {doing} (a stopped process or a stuck device?); ended the job before its start, nothing stored",
                    self.hosts[r],
                    quiet.as_secs_f64(),
                )
            })
        })
    }

    /// A heartbeat a fifth of the timeout apart, at most a second.
    fn period(&self) -> Option<Duration> {
        let t = self.timeout?;
        Some((t / 5).clamp(Duration::from_millis(50), Duration::from_secs(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("h{i}")).collect()
    }

    #[test]
    fn rank_0_names_the_rank_silent_past_the_timeout_and_what_it_was_doing() {
        let t0 = Instant::now();
        let mut w = Watch::new(0, hosts(3));
        w.arm(Duration::from_secs(10), t0);
        let s = |n| t0 + Duration::from_secs(n);
        w.heard(1, b"laying out its files", s(1));
        w.heard(2, b"laying out its files", s(1));
        w.heard(1, b"laying out its files", s(9));
        w.heard(1, WAITING.as_bytes(), s(12));
        assert_eq!(w.silent(s(11)), None);
        assert_eq!(
            w.silent(s(12)).as_deref(),
            Some(
                "rank 2 (h2): no word for 11 s while laying out its files (a stopped process or a stuck device?); ended the job before its start, nothing stored"
            )
        );
        w.disarm();
        assert_eq!(w.silent(s(100)), None);
    }

    #[test]
    fn a_rank_heard_all_along_is_never_silent() {
        let t0 = Instant::now();
        let mut w = Watch::new(0, hosts(2));
        w.arm(Duration::from_secs(2), t0);
        for i in 0..100 {
            let now = t0 + Duration::from_millis(500 * i);
            w.heard(1, b"laying out its files", now);
            assert_eq!(w.silent(now + Duration::from_millis(1999)), None);
        }
    }

    #[test]
    fn the_others_watch_rank_0_and_rank_1_speaks_first() {
        let t0 = Instant::now();
        let s = |n| t0 + Duration::from_secs(n);
        let mut one = Watch::new(1, hosts(3));
        let mut two = Watch::new(2, hosts(3));
        for w in [&mut one, &mut two] {
            w.arm(Duration::from_secs(10), t0);
            w.heard(0, b"laying out its files", s(2));
            assert_eq!(w.peers(), [0]);
        }
        let line = one.silent(s(13)).unwrap();
        assert!(line.starts_with("rank 0 (h0): no word for 11 s while laying out its files"));
        assert_eq!(two.silent(s(13)), None);
        assert!(two.silent(s(15)).is_some());
    }

    #[test]
    fn a_failed_rank_makes_rank_0_say_so_and_the_others_give_up() {
        let t0 = Instant::now();
        let mut zero = Watch::new(0, hosts(3));
        let mut two = Watch::new(2, hosts(3));
        zero.arm(Duration::from_secs(10), t0);
        two.arm(Duration::from_secs(10), t0);
        zero.doing("laying out its files");
        zero.due(t0);
        zero.heard(1, FAILED.as_bytes(), t0);
        assert!(zero.peer_failed());
        assert_eq!(zero.due(t0), Some(GIVING_UP), "said at once");
        zero.doing(WAITING);
        assert_eq!(zero.due(t0 + Duration::from_secs(1)), Some(GIVING_UP));
        assert!(!two.peer_failed());
        two.heard(0, GIVING_UP.as_bytes(), t0);
        assert!(two.peer_failed());
        two.arm(Duration::from_secs(10), t0);
        assert!(!two.peer_failed(), "a new run starts afresh");
    }

    #[test]
    fn a_rank_that_was_stopped_itself_does_not_blame_the_others() {
        let t0 = Instant::now();
        let s = |ms| t0 + Duration::from_millis(ms);
        let mut one = Watch::new(1, hosts(2));
        one.arm(Duration::from_secs(2), t0);
        one.listen(s(1));
        one.heard(0, b"laying out its files", s(1));
        // Stopped for 5 s, then continued: rank 0 is given the grace anew.
        one.listen(s(5001));
        assert_eq!(one.silent(s(5001)), None);
        for ms in (5051..=7001).step_by(50) {
            one.listen(s(ms));
            assert_eq!(one.silent(s(ms)), None);
        }
        one.listen(s(7051));
        assert!(one.silent(s(7051)).is_some());
    }

    #[test]
    fn heartbeats_are_due_a_fifth_of_the_timeout_apart_at_most_a_second() {
        let t0 = Instant::now();
        let mut w = Watch::new(0, hosts(3));
        assert_eq!(w.due(t0), None, "not armed");
        w.arm(Duration::from_secs(2), t0);
        assert_eq!(w.peers(), [1, 2]);
        assert_eq!(w.due(t0), Some(WAITING));
        w.doing("laying out its files");
        assert_eq!(
            w.due(t0),
            Some("laying out its files"),
            "a new step is said at once"
        );
        assert_eq!(w.due(t0 + Duration::from_millis(399)), None);
        assert!(w.due(t0 + Duration::from_millis(400)).is_some());
        w.heard(1, b"laying out its files", t0);
        w.heard(1, b"laying out its files", t0 + Duration::from_secs(5));
        let line = w.silent(t0 + Duration::from_secs(8)).unwrap();
        assert!(
            line.contains("while laying out its files (for 5 s)"),
            "{line}"
        );
        w.arm(Duration::from_secs(600), t0);
        assert!(w.due(t0).is_some());
        assert_eq!(w.due(t0 + Duration::from_millis(999)), None);
        assert!(w.due(t0 + Duration::from_secs(1)).is_some());
    }
}
