//! MariaDB's cumulative counters at one instant — `SHOW GLOBAL STATUS` by
//! their own names, and performance_schema's wait summaries
//! (`wait/io/file/innodb/*`, `wait/synch/*`: count and time per event) —
//! and their difference over the measured window; and InnoDB's checkpoint
//! age (its LSN now less its last checkpoint's).

use std::collections::BTreeMap;

use mysql::prelude::Queryable;

use crate::workload::db::cycle::Position;
use crate::workload::live::{Activity, LiveWait, Process, WriterIo};

/// The counters kept, in InnoDB's (and the server's) own words.
/// (MariaDB 10.11 has no Innodb_rows_* or Innodb_os_log_fsyncs: the
/// Handler_* counters count rows; absent counters are left out.)
pub(crate) const COUNTERS: [&str; 29] = [
    "Com_commit",
    "Com_rollback",
    "Com_begin",
    "Com_select",
    "Com_update",
    "Questions",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_ahead",
    "Innodb_buffer_pool_write_requests",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_wait_free",
    "Innodb_pages_read",
    "Innodb_pages_written",
    "Innodb_pages_created",
    "Innodb_data_reads",
    "Innodb_data_read",
    "Innodb_data_writes",
    "Innodb_data_written",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Innodb_log_write_requests",
    "Innodb_log_waits",
    "Innodb_dblwr_pages_written",
    "Innodb_dblwr_writes",
    "Handler_read_key",
    "Handler_read_next",
    "Handler_update",
];

/// Wait events timed by performance_schema, with their count and total
/// time in picoseconds.
const WAITS: &str = "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
     FROM performance_schema.events_waits_summary_global_by_event_name \
     WHERE COUNT_STAR > 0 AND EVENT_NAME LIKE 'wait/%'";

/// The counters at one instant, by name (those the server has), and the
/// wait events' (count, picoseconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub status: BTreeMap<String, f64>,
    pub waits: BTreeMap<String, (f64, f64)>,
    /// Where InnoDB is in its checkpoint cycle, where it says.
    pub position: Option<Position>,
}

impl Snapshot {
    /// Reads both; performance_schema off (`--mysql-set
    /// performance_schema=0`) leaves the waits empty.
    pub fn read(c: &mut mysql::Conn) -> Result<Snapshot, mysql::Error> {
        let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS")?;
        let waits: Vec<(String, u64, u64)> = c.query(WAITS).unwrap_or_default();
        Ok(Snapshot {
            position: position_from_rows(&rows),
            status: status_from_rows(rows),
            waits: waits
                .into_iter()
                .map(|(e, n, ps)| (e, (n as f64, ps as f64)))
                .collect(),
        })
    }
}

/// InnoDB's redo since its last checkpoint (the checkpoint age: the LSN
/// now less the checkpoint's), from `SHOW GLOBAL STATUS`; None where the
/// server does not show both LSNs.
fn position_from_rows(rows: &[(String, String)]) -> Option<Position> {
    let get = |name: &str| {
        rows.iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.trim().parse::<f64>().ok())
    };
    let (now, checkpoint) = (get(LSN_NOW)?, get(LSN_CHECKPOINT)?);
    Some(Position {
        log_bytes_since: now - checkpoint,
        transactions_since: None,
        seconds_since: None,
        checkpoint_lsn: checkpoint,
        checkpoints_seen: 0,
    })
}

/// MariaDB's LSN now and at the last checkpoint (`SHOW GLOBAL STATUS`).
pub(crate) const LSN_NOW: &str = "Innodb_lsn_current";
pub(crate) const LSN_CHECKPOINT: &str = "Innodb_lsn_last_checkpoint";

/// The last checkpoint's LSN alone (the sampler follows it between snapshots).
pub fn checkpoint_lsn(c: &mut mysql::Conn) -> Option<f64> {
    let row: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{LSN_CHECKPOINT}'"))
        .ok()?;
    row?.1.trim().parse().ok()
}

fn status_from_rows(rows: Vec<(String, String)>) -> BTreeMap<String, f64> {
    rows.into_iter()
        .filter(|(k, _)| COUNTERS.contains(&k.as_str()))
        .filter_map(|(k, v)| Some((k, v.trim().parse::<f64>().ok()?)))
        .collect()
}

/// What changed between two snapshots, by counter name (a counter the
/// server does not have is absent).
pub fn delta(a: &Snapshot, b: &Snapshot) -> BTreeMap<String, f64> {
    b.status
        .iter()
        .map(|(k, v)| (k.clone(), v - a.status.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// Commits and writer I/O between two snapshots, for a live view: the DB
/// writer is InnoDB's page writes (`Innodb_pages_written`, pages of
/// `page_size` bytes), the log writer its redo (`Innodb_os_log_written`;
/// MariaDB counts no redo write requests). A counter the server lacks is None.
pub fn activity(a: &Snapshot, b: &Snapshot, page_size: u32) -> Activity {
    let d = delta(a, b);
    let c = |k: &str| d.get(k).copied();
    let pages = c("Innodb_pages_written");
    Activity {
        commits: c("Com_commit"),
        db_writer: WriterIo {
            writes: pages,
            bytes: pages.map(|p| p * f64::from(page_size)),
        },
        log_writer: WriterIo {
            writes: None,
            bytes: c("Innodb_os_log_written"),
        },
    }
}

/// performance_schema's waits between two snapshots for a live view,
/// server-wide: counted and timed by the server, classed by the event's
/// first three parts (`wait/io/file` of `wait/io/file/innodb/innodb_log_file`).
pub(crate) fn live_waits(a: &Snapshot, b: &Snapshot) -> Vec<LiveWait> {
    wait_deltas(a, b)
        .into_iter()
        .map(|w| LiveWait {
            process: Process::Server,
            class: w.event.splitn(4, '/').take(3).collect::<Vec<_>>().join("/"),
            seconds: w.time_ms / 1e3,
            count: Some(w.waits as u64),
            event: w.event,
        })
        .collect()
}

/// A wait event over the window.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WaitDelta {
    /// performance_schema's name, e.g. `wait/io/file/innodb/innodb_log_file`.
    pub event: String,
    pub waits: f64,
    pub time_ms: f64,
    pub avg_us: f64,
}

/// The wait events that happened in the window, longest total time first.
pub fn wait_deltas(a: &Snapshot, b: &Snapshot) -> Vec<WaitDelta> {
    let mut out: Vec<WaitDelta> = b
        .waits
        .iter()
        .filter_map(|(e, (n, ps))| {
            let (n0, ps0) = a.waits.get(e).copied().unwrap_or((0.0, 0.0));
            let (n, ps) = (n - n0, ps - ps0);
            (n > 0.0).then(|| WaitDelta {
                event: e.clone(),
                waits: n,
                time_ms: ps / 1e9,
                avg_us: ps / 1e6 / n,
            })
        })
        .collect();
    out.sort_by(|x, y| y.time_ms.total_cmp(&x.time_ms).then(x.event.cmp(&y.event)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_counters_and_their_differences() {
        let row = |k: &str, v: &str| (k.to_string(), v.to_string());
        let snap = |rows: Vec<(String, String)>| Snapshot {
            position: position_from_rows(&rows),
            status: status_from_rows(rows),
            waits: BTreeMap::new(),
        };
        let a = snap(vec![
            row("Com_commit", "10"),
            row("Innodb_buffer_pool_reads", "100"),
            row("Uptime", "5"),
            row("Innodb_os_log_written", "not a number"),
        ]);
        assert_eq!(a.status.len(), 2);
        let b = snap(vec![
            row("Com_commit", "25"),
            row("Innodb_buffer_pool_reads", "160"),
            row("Innodb_os_log_written", "4096"),
        ]);
        let d = delta(&a, &b);
        assert_eq!(d["Com_commit"], 15.0);
        assert_eq!(d["Innodb_buffer_pool_reads"], 60.0);
        assert_eq!(d["Innodb_os_log_written"], 4096.0);
        assert!(!d.contains_key("Uptime"));
        assert_eq!(a.position, None, "no LSNs, no position");
        let at = snap(vec![
            row("Innodb_lsn_current", "9000"),
            row("Innodb_lsn_last_checkpoint", "8000"),
        ]);
        let p = at.position.unwrap();
        assert_eq!((p.log_bytes_since, p.checkpoint_lsn), (1000.0, 8000.0));
        // Live: commits and redo; no page written counter in either, so none.
        let live = activity(&a, &b, 16384);
        assert_eq!(live.commits, Some(15.0));
        assert_eq!(live.log_writer.bytes, Some(4096.0));
        assert_eq!(live.db_writer, WriterIo::default());
        let pages = |n: &str| snap(vec![row("Innodb_pages_written", n)]);
        let live = activity(&pages("3"), &pages("10"), 16384);
        assert_eq!(live.db_writer.writes, Some(7.0));
        assert_eq!(live.db_writer.bytes, Some(7.0 * 16384.0));
        assert_eq!(live.commits, None);
    }

    #[test]
    fn waits_in_the_window_longest_first() {
        let w = |v: &[(&str, f64, f64)]| Snapshot {
            status: BTreeMap::new(),
            position: None,
            waits: v
                .iter()
                .map(|(e, n, ps)| (e.to_string(), (*n, *ps)))
                .collect(),
        };
        let a = w(&[
            ("wait/io/file/innodb/innodb_data_file", 10.0, 1e9),
            ("wait/synch/x", 5.0, 5e6),
        ]);
        let b = w(&[
            ("wait/io/file/innodb/innodb_data_file", 110.0, 101e9),
            ("wait/synch/x", 5.0, 5e6),
            ("wait/io/file/innodb/innodb_log_file", 4.0, 8e9),
        ]);
        let d = wait_deltas(&a, &b);
        assert_eq!(d.len(), 2, "no change, no line: {d:?}");
        assert_eq!(d[0].event, "wait/io/file/innodb/innodb_data_file");
        assert_eq!(
            (d[0].waits, d[0].time_ms, d[0].avg_us),
            (100.0, 100.0, 1000.0)
        );
        assert_eq!((d[1].waits, d[1].time_ms, d[1].avg_us), (4.0, 8.0, 2000.0));
        // Live: the same, server-wide, in seconds, classed by the event's first three parts.
        let live = live_waits(&a, &b);
        assert_eq!(live.len(), 2);
        assert_eq!(live[0].event, "wait/io/file/innodb/innodb_data_file");
        assert_eq!(live[0].class, "wait/io/file");
        assert_eq!((live[0].count, live[0].seconds), (Some(100), 0.1));
        assert_eq!(live[1].process, Process::Server);
    }
}
