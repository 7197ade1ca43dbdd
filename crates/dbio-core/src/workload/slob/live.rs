//! The model's live tallies: each thread's waits (count and time per
//! event), commits and writes so far, in atomics only that thread writes
//! (a relaxed load and store, no read-modify-write, no lock, a cache line
//! of its own), summed by the control thread once a second for a live view
//! (`Workload::live`). Unlike the report's tallies they count from the
//! start, ramp included, as the request counters do.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::events::{EVENTS, Event, Side};
use crate::workload::live::{Activity, LiveDb, LiveWait, Process, WriterIo};

/// One thread's live tallies.
#[derive(Default)]
#[repr(align(128))]
pub struct LiveSlot {
    /// Per event: waits, ns waited.
    waits: [[AtomicU64; 2]; EVENTS.len()],
    commits: AtomicU64,
    writes: AtomicU64,
    written_bytes: AtomicU64,
}

#[inline]
fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Relaxed) + by, Relaxed);
}

impl LiveSlot {
    /// Slots for `threads` threads.
    pub fn many(threads: usize) -> Box<[LiveSlot]> {
        (0..threads).map(|_| LiveSlot::default()).collect()
    }

    /// A wait of `ns` in `e`.
    #[inline]
    pub fn wait(&self, e: Event, ns: u64) {
        let w = &self.waits[e as usize];
        bump(&w[0], 1);
        bump(&w[1], ns);
    }

    /// A commit (a session's).
    #[inline]
    pub fn commit(&self) {
        bump(&self.commits, 1);
    }

    /// `writes` writes of `bytes` in all (a DB writer's or the log writer's).
    #[inline]
    pub(crate) fn wrote(&self, writes: u64, bytes: u64) {
        bump(&self.writes, writes);
        bump(&self.written_bytes, bytes);
    }
}

/// Commits so far, every session's (a checkpoint's position counts them).
pub(crate) fn commits(slots: &[LiveSlot]) -> u64 {
    slots.iter().map(|s| s.commits.load(Relaxed)).sum()
}

/// Waits in `e` so far, every thread's (`--flavor innodb`'s page cleaners
/// count the sessions' reads and free buffer waits: `doublewrite::Demand`).
pub(crate) fn waits(slots: &[LiveSlot], e: Event) -> u64 {
    slots
        .iter()
        .map(|s| s.waits[e as usize][0].load(Relaxed))
        .sum()
}

/// Sums the slots of `sessions` sessions, then `db_writers` DB writers, then
/// the log writer (thread order). Its `seq` is everything counted (it moves
/// when anything does).
pub fn sum(
    slots: &[LiveSlot],
    sessions: usize,
    db_writers: usize,
    flavor: super::flavor::Flavor,
) -> LiveDb {
    let mut waits = [[0u64; 2]; EVENTS.len()];
    let mut commits = 0;
    let (mut db, mut log) = ([0u64; 2], [0u64; 2]);
    for (t, s) in slots.iter().enumerate() {
        for (acc, w) in waits.iter_mut().zip(&s.waits) {
            acc[0] += w[0].load(Relaxed);
            acc[1] += w[1].load(Relaxed);
        }
        commits += s.commits.load(Relaxed);
        let io = match t {
            t if t < sessions => continue,
            t if t < sessions + db_writers => &mut db,
            _ => &mut log,
        };
        io[0] += s.writes.load(Relaxed);
        io[1] += s.written_bytes.load(Relaxed);
    }
    let seq = waits.iter().map(|[n, _]| n).sum::<u64>() + commits + db[0] + log[0];
    let waits = EVENTS
        .iter()
        .zip(waits)
        .filter(|(_, [n, _])| *n > 0)
        .map(|(e, [n, ns])| LiveWait {
            process: match e.side() {
                Side::Foreground => Process::Session,
                Side::Background => Process::Background,
            },
            event: e.name_in(flavor).to_string(),
            class: e.class().to_string(),
            seconds: ns as f64 / 1e9,
            count: Some(n),
        })
        .collect();
    let io = |[n, b]: [u64; 2]| WriterIo {
        writes: Some(n as f64),
        bytes: Some(b as f64),
    };
    LiveDb {
        seq,
        waits,
        activity: Activity {
            commits: Some(commits as f64),
            db_writer: io(db),
            log_writer: io(log),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_thread_adds_to_its_function_and_waits_keep_their_side_and_class() {
        // Two sessions, one DB writer, the log writer.
        let slots: Vec<LiveSlot> = (0..4).map(|_| LiveSlot::default()).collect();
        slots[0].wait(Event::DbFileSequentialRead, 1_000_000);
        slots[1].wait(Event::DbFileSequentialRead, 3_000_000);
        slots[1].wait(Event::LogFileSync, 500_000);
        slots[0].commit();
        slots[1].commit();
        slots[1].commit();
        slots[2].wrote(4, 4 * 8192);
        slots[2].wait(Event::DbFileParallelWrite, 2_000_000);
        slots[3].wrote(1, 512);
        slots[3].wait(Event::LogFileParallelWrite, 100_000);
        let live = sum(&slots, 2, 1, Default::default());
        assert_eq!(live.seq, 5 + 3 + 4 + 1, "waits, commits, writes");
        assert_eq!(live.activity.commits, Some(3.0));
        assert_eq!(live.activity.db_writer.writes, Some(4.0));
        assert_eq!(live.activity.db_writer.bytes, Some(32768.0));
        assert_eq!(live.activity.log_writer.writes, Some(1.0));
        assert_eq!(live.activity.log_writer.bytes, Some(512.0));
        let read = live
            .waits
            .iter()
            .find(|w| w.event == "db file sequential read")
            .unwrap();
        assert_eq!(
            (read.process, read.class.as_str(), read.count, read.seconds),
            (Process::Session, "User I/O", Some(2), 0.004)
        );
        let lgwr = live
            .waits
            .iter()
            .find(|w| w.event == "log file parallel write")
            .unwrap();
        assert_eq!((lgwr.process, lgwr.count), (Process::Background, Some(1)));
        // Events nobody waited for are not listed.
        assert_eq!(live.waits.len(), 4);
    }
}
