//! Wait events in the vocabulary DBAs read in AWR: what a session or a
//! background process waited for, its wait class, and per-thread statistics
//! (count, time, HDR histogram) that are merged at the end of a run. Under
//! `--flavor innodb` the same waits carry InnoDB's names ([`Event::name_in`]):
//! performance_schema's file instruments for I/O, InnoDB's status names
//! for the rest.

use serde::Serialize;

use super::flavor::Flavor;
use crate::measure::stats::OpStats;

/// Who waits for an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    /// Sessions: counted in DB time.
    Foreground,
    /// DB writers and the log writer.
    Background,
}

/// Every event the model records. Each wait is recorded in exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Event {
    DbFileSequentialRead = 0,
    DbFileScatteredRead,
    ReadByOtherSession,
    FreeBufferWaits,
    LogFileSync,
    LogBufferSpace,
    LogFileSwitchCheckpointIncomplete,
    DbFileParallelWrite,
    LogFileParallelWrite,
    EnqTxRowLockContention,
    /// A session writing a dirty buffer itself to free it (`--flavor
    /// postgres`: PostgreSQL's backend write, IO:DataFileWrite).
    BackendBufferWrite,
    /// A session advising the kernel of the block it reads next (`--flavor
    /// postgres` through the page cache: PostgreSQL's `posix_fadvise`,
    /// IO:DataFilePrefetch; `prefetch.rs`).
    DataFilePrefetch,
}

pub const EVENTS: [Event; 12] = [
    Event::DbFileSequentialRead,
    Event::DbFileScatteredRead,
    Event::ReadByOtherSession,
    Event::FreeBufferWaits,
    Event::LogFileSync,
    Event::LogBufferSpace,
    Event::LogFileSwitchCheckpointIncomplete,
    Event::DbFileParallelWrite,
    Event::LogFileParallelWrite,
    Event::EnqTxRowLockContention,
    Event::BackendBufferWrite,
    Event::DataFilePrefetch,
];

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::DbFileSequentialRead => "db file sequential read",
            Event::DbFileScatteredRead => "db file scattered read",
            Event::ReadByOtherSession => "read by other session",
            Event::FreeBufferWaits => "free buffer waits",
            Event::LogFileSync => "log file sync",
            Event::LogBufferSpace => "log buffer space",
            Event::LogFileSwitchCheckpointIncomplete => "log file switch (checkpoint incomplete)",
            Event::DbFileParallelWrite => "db file parallel write",
            Event::LogFileParallelWrite => "log file parallel write",
            Event::EnqTxRowLockContention => "enq: TX - row lock contention",
            Event::BackendBufferWrite => "backend buffer write",
            Event::DataFilePrefetch => "data file prefetch",
        }
    }

    /// The name as a metric key: `db_file_sequential_read`.
    pub fn key(self) -> String {
        crate::vocab::event_key(self.name())
    }

    /// The event's name in the model's `flavor`: InnoDB's for
    /// `--flavor innodb` (the file I/O waits as performance_schema's
    /// `wait/io/file/innodb/*` instruments and their operation, the others
    /// as InnoDB's status counters of them), Oracle's otherwise.
    pub fn name_in(self, flavor: Flavor) -> &'static str {
        if flavor != Flavor::Innodb {
            return self.name();
        }
        match self {
            Event::DbFileSequentialRead => "innodb_data_file read",
            Event::DbFileScatteredRead => "innodb_data_file read-ahead",
            Event::ReadByOtherSession => "buffer pool page read by other thread",
            Event::FreeBufferWaits => "buffer pool wait free",
            Event::LogFileSync => "innodb_log_file sync (commit)",
            Event::LogBufferSpace => "log waits",
            Event::LogFileSwitchCheckpointIncomplete => "log checkpoint margin",
            Event::DbFileParallelWrite => "page cleaner flush batch",
            Event::LogFileParallelWrite => "innodb_log_file write",
            Event::EnqTxRowLockContention => "row lock wait",
            Event::BackendBufferWrite => "buffer pool single page flush",
            Event::DataFilePrefetch => "innodb_data_file prefetch advice",
        }
    }

    /// [`Event::name_in`] as a metric key.
    pub fn key_in(self, flavor: Flavor) -> String {
        crate::vocab::event_key(self.name_in(flavor))
    }

    pub fn class(self) -> &'static str {
        match self {
            Event::DbFileSequentialRead
            | Event::DbFileScatteredRead
            | Event::ReadByOtherSession
            | Event::BackendBufferWrite
            | Event::DataFilePrefetch => "User I/O",
            Event::FreeBufferWaits
            | Event::LogBufferSpace
            | Event::LogFileSwitchCheckpointIncomplete => "Configuration",
            Event::LogFileSync => "Commit",
            Event::DbFileParallelWrite | Event::LogFileParallelWrite => "System I/O",
            Event::EnqTxRowLockContention => "Application",
        }
    }

    pub fn side(self) -> Side {
        match self {
            Event::DbFileParallelWrite | Event::LogFileParallelWrite => Side::Background,
            _ => Side::Foreground,
        }
    }
}

/// One thread's waits, per event.
#[derive(Clone, Debug, Default)]
pub struct EventStats {
    pub by_event: [OpStats; EVENTS.len()],
}

impl EventStats {
    #[inline]
    pub fn record(&mut self, e: Event, ns: u64) {
        self.by_event[e as usize].record(ns, 0);
    }

    pub fn get(&self, e: Event) -> &OpStats {
        &self.by_event[e as usize]
    }

    pub fn merge(&mut self, other: &EventStats) {
        for (a, b) in self.by_event.iter_mut().zip(&other.by_event) {
            a.merge(b);
        }
    }

    /// Total time waited in foreground events, ns.
    pub fn foreground_ns(&self) -> u64 {
        EVENTS
            .iter()
            .filter(|e| e.side() == Side::Foreground)
            .map(|e| self.get(*e).sum_ns)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_metric_safe() {
        assert_eq!(Event::DbFileSequentialRead.key(), "db_file_sequential_read");
        assert_eq!(
            Event::LogFileSwitchCheckpointIncomplete.key(),
            "log_file_switch_checkpoint_incomplete"
        );
        for (i, e) in EVENTS.iter().enumerate() {
            assert_eq!(*e as usize, i);
        }
    }

    #[test]
    fn innodb_names_are_distinct_and_others_keep_oracles() {
        let mut names: Vec<&str> = EVENTS.iter().map(|e| e.name_in(Flavor::Innodb)).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EVENTS.len());
        for e in EVENTS {
            assert_ne!(e.name_in(Flavor::Innodb), e.name());
            assert_eq!(e.name_in(Flavor::Postgres), e.name());
        }
        assert_eq!(
            Event::LogFileParallelWrite.key_in(Flavor::Innodb),
            "innodb_log_file_write"
        );
    }

    #[test]
    fn foreground_time_excludes_background_events() {
        let mut s = EventStats::default();
        s.record(Event::LogFileSync, 1000);
        s.record(Event::LogFileParallelWrite, 500);
        s.record(Event::DbFileSequentialRead, 200);
        assert_eq!(s.foreground_ns(), 1200);
    }
}
