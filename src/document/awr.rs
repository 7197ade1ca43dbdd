//! The SLOB model's report in AWR's vocabulary: the data (part of the
//! `--json` document as `slob`) — Load Profile per second and per
//! transaction, wait events with their histograms, I/O by function. Its
//! terminal rendering is `awr_text`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::measure::stats::OpStats;
use crate::workload::slob::events::{EVENTS, Event, EventStats, Side};
use crate::workload::slob::instance::{Counters, Tally};
use crate::workload::slob::run::SlobRun;

/// Upper bounds of the wait event histogram buckets, µs: each twice the
/// one before from 64 µs to 512 ms, then 1 s; a last bucket (open) counts
/// everything slower.
pub const BUCKETS_US: [u64; 15] = [
    64, 128, 256, 512, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000,
    512_000, 1_000_000,
];

/// The bounds of a document written before the buckets were continuous
/// (13 counts: from 64 ms straight to 1 s).
pub const BUCKETS_US_V1: [u64; 12] = [
    64, 128, 256, 512, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 1_000_000,
];

/// The bounds of a stored histogram of `counts` counts: an earlier
/// build's 13 are read with [`BUCKETS_US_V1`].
pub fn bucket_bounds(counts: usize) -> &'static [u64] {
    if counts == BUCKETS_US_V1.len() + 1 {
        &BUCKETS_US_V1
    } else {
        &BUCKETS_US
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlobSummary {
    pub elapsed_s: f64,
    /// Session time in operations (busy or waiting) over the window.
    pub db_time_s: f64,
    /// CPU the sessions used (their threads' CPU clocks).
    pub db_cpu_s: f64,
    /// DB time neither on CPU nor in a wait event: waiting for a CPU (run
    /// queue) and the model's own bookkeeping.
    pub cpu_wait_s: f64,
    pub load_profile: Vec<LoadLine>,
    /// Window counters, every function together.
    pub counters: Counters,
    /// Whole-run counters (ramp included), every function together: the
    /// invariants hold exactly on these.
    pub run_totals: Counters,
    pub events: Vec<EventSummary>,
    pub io_by_function: Vec<FunctionIo>,
    pub cache_buffers: u32,
    pub cache_hit_pct: f64,
    pub redo_files: Vec<PathBuf>,
    /// Thread numbers in outliers: sessions are 0.., DB writers from
    /// `first_dbwr_thread`, the log writer is `lgwr_thread`.
    pub first_dbwr_thread: u32,
    pub lgwr_thread: u32,
    /// Where the window sat in the model's own checkpoint cycle (None in
    /// runs stored before it was recorded, and in runs merged from ranks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_cycle: Option<super::cycle::CheckpointCycle>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LoadLine {
    pub name: String,
    pub per_second: f64,
    pub per_transaction: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EventSummary {
    pub name: String,
    pub class: String,
    pub side: Side,
    pub waits: u64,
    pub time_s: f64,
    pub avg_ms: f64,
    /// Share of DB time (foreground events), or of the window (background).
    pub pct_db_time: f64,
    /// Waits per bucket of [`BUCKETS_US`], then one for everything slower.
    pub histogram: Vec<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FunctionIo {
    pub function: String,
    pub read_requests_per_s: f64,
    pub read_mib_per_s: f64,
    pub write_requests_per_s: f64,
    pub write_mib_per_s: f64,
    /// Mean latency of one request, ms.
    pub avg_ms: f64,
}

fn histogram(s: &OpStats) -> Vec<u64> {
    let mut out = Vec::with_capacity(BUCKETS_US.len() + 1);
    let mut below = 0;
    for b in BUCKETS_US {
        let upto = if s.count == 0 {
            0
        } else {
            s.hist.count_between(0, b * 1000)
        };
        out.push(upto - below);
        below = upto;
    }
    out.push(s.count - below);
    out
}

impl SlobSummary {
    pub fn new(run: &SlobRun, measured_s: f64, sessions: u32, writers: u32) -> Self {
        Self::from_tallies(
            [&run.sessions, &run.dbwr, &run.lgwr],
            run.redo_files.clone(),
            measured_s,
            sessions,
            writers,
        )
    }

    /// From what the sessions, the DB writers and the log writer measured.
    pub fn from_tallies(
        [fg, dbwr, lgwr]: [&Tally; 3],
        redo_files: Vec<PathBuf>,
        measured_s: f64,
        sessions: u32,
        writers: u32,
    ) -> Self {
        let mut all = fg.clone();
        all.merge(dbwr);
        all.merge(lgwr);
        let c = all.window;
        let secs = measured_s.max(1e-9);
        let db_time_s = c.db_time_ns as f64 / 1e9;
        let db_cpu_s = c.db_cpu_ns as f64 / 1e9;
        let fg_wait_s = all.events.foreground_ns() as f64 / 1e9;
        let tx = c.transactions as f64;
        let line = |name: &str, v: f64| LoadLine {
            name: name.into(),
            per_second: v / secs,
            per_transaction: (tx > 0.0).then(|| v / tx),
        };
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        let load_profile = vec![
            line("DB Time(s)", db_time_s),
            line("DB CPU(s)", db_cpu_s),
            line("Redo size (bytes)", c.redo_bytes as f64),
            line("Logical read (blocks)", c.logical_reads as f64),
            line("Block changes", c.block_changes as f64),
            line("Physical read (blocks)", c.physical_reads as f64),
            line("Physical write (blocks)", c.physical_writes as f64),
            line("Read IO requests", c.read_requests as f64),
            line("Write IO requests", c.write_requests as f64),
            line("Read IO (MB)", mb(c.read_bytes)),
            line("Write IO (MB)", mb(c.write_bytes)),
            line("Executes (SQL)", c.executes as f64),
            line("Transactions", tx),
        ];
        let events = EVENTS
            .iter()
            .map(|&e| event(&all.events, e, db_time_s, secs))
            .filter(|e| e.waits > 0)
            .collect();
        let func = |name: &str, t: &Tally, reads: bool| {
            let w = &t.window;
            let (reqs, lat_ns) = if reads {
                let seq = t.events.get(Event::DbFileSequentialRead);
                let sc = t.events.get(Event::DbFileScatteredRead);
                (w.read_requests, seq.sum_ns + sc.sum_ns)
            } else if name == "LGWR" {
                (
                    w.redo_writes,
                    t.events.get(Event::LogFileParallelWrite).sum_ns,
                )
            } else {
                (
                    w.write_requests,
                    t.events.get(Event::DbFileParallelWrite).sum_ns,
                )
            };
            // Sessions' redo writes are those of the commit groups they led
            // (`--flavor innodb`: no log writer of its own); none otherwise.
            let write_bytes = if name == "LGWR" {
                w.redo_written_bytes
            } else {
                w.write_bytes + w.redo_written_bytes
            };
            FunctionIo {
                function: name.into(),
                read_requests_per_s: w.read_requests as f64 / secs,
                read_mib_per_s: mb(w.read_bytes) / secs,
                write_requests_per_s: if name == "LGWR" {
                    w.redo_writes as f64
                } else {
                    (w.write_requests + w.redo_writes) as f64
                } / secs,
                write_mib_per_s: mb(write_bytes) / secs,
                avg_ms: if reqs > 0 {
                    lat_ns as f64 / reqs as f64 / 1e6
                } else {
                    0.0
                },
            }
        };
        let io_by_function = vec![
            func("Sessions", fg, true),
            func("DBWR", dbwr, false),
            func("LGWR", lgwr, false),
        ];
        SlobSummary {
            elapsed_s: measured_s,
            db_time_s,
            db_cpu_s,
            cpu_wait_s: (db_time_s - db_cpu_s - fg_wait_s).max(0.0),
            load_profile,
            counters: c,
            run_totals: all.total,
            events,
            io_by_function,
            cache_buffers: 0,
            cache_hit_pct: if c.logical_reads > 0 {
                100.0 * c.cache_hits as f64 / c.logical_reads as f64
            } else {
                0.0
            },
            redo_files,
            first_dbwr_thread: sessions,
            lgwr_thread: sessions + writers,
            checkpoint_cycle: None,
        }
    }
}

impl SlobSummary {
    /// Names the events as `flavor` names them (InnoDB's for `--flavor
    /// innodb`; they are built with Oracle's).
    pub fn name_events(&mut self, flavor: crate::workload::slob::flavor::Flavor) {
        for s in &mut self.events {
            if let Some(e) = EVENTS.iter().find(|e| e.name() == s.name) {
                s.name = e.name_in(flavor).into();
            }
        }
    }
}

fn event(s: &EventStats, e: Event, db_time_s: f64, secs: f64) -> EventSummary {
    let st = s.get(e);
    let time_s = st.sum_ns as f64 / 1e9;
    let base = if e.side() == Side::Foreground {
        db_time_s
    } else {
        secs
    };
    EventSummary {
        name: e.name().into(),
        class: e.class().into(),
        side: e.side(),
        waits: st.count,
        time_s,
        avg_ms: st.mean_ns() / 1e6,
        pct_db_time: if base > 0.0 {
            100.0 * time_s / base
        } else {
            0.0
        },
        histogram: histogram(st),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The buckets as docs/json.md states them: bucket i holds the waits
    /// up to the HDR histogram's highest value equivalent to
    /// `BUCKETS_US[i]` (2 significant digits: up to 0.4% above the bound),
    /// the last everything slower.
    #[test]
    fn histogram_buckets_end_where_the_docs_say() {
        const EDGES_NS: [u64; 15] = [
            64_255,
            128_511,
            257_023,
            514_047,
            1_003_519,
            2_007_039,
            4_014_079,
            8_028_159,
            16_056_319,
            32_112_639,
            64_225_279,
            128_450_559,
            256_901_119,
            513_802_239,
            1_002_438_655,
        ];
        for (i, edge) in EDGES_NS.into_iter().enumerate() {
            let mut s = OpStats::default();
            s.record(edge, 0);
            s.record(edge + 1, 0);
            s.record(BUCKETS_US[i] * 1000, 0);
            let h = histogram(&s);
            assert_eq!(h.len(), 16);
            assert_eq!(h[i], 2, "bucket {i}: the bound and its edge {edge} ns");
            assert_eq!(h[i + 1], 1, "bucket {i}: {} ns is the next one's", edge + 1);
        }
    }

    /// No bucket spans more than twice its lower bound: 100 ms and 600 ms
    /// waits land in different buckets (both were in 64 ms – 1 s).
    #[test]
    fn the_buckets_are_continuous() {
        for w in BUCKETS_US.windows(2) {
            assert!(w[1] <= 2 * w[0], "{} µs to {} µs", w[0], w[1]);
        }
        let mut s = OpStats::default();
        s.record(100_000_000, 0);
        s.record(600_000_000, 0);
        let h = histogram(&s);
        assert_eq!((h[11], h[14]), (1, 1), "{h:?}");
        assert_eq!(bucket_bounds(13), &BUCKETS_US_V1[..]);
        assert_eq!(bucket_bounds(h.len()), &BUCKETS_US[..]);
    }
}
