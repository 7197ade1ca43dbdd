//! MariaDB's cumulative counters at one instant (`SHOW GLOBAL STATUS`, by
//! their own names) and their difference over the measured window.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;

/// The counters kept, in InnoDB's (and the server's) own words.
/// (MariaDB 10.11 has no Innodb_rows_* or Innodb_os_log_fsyncs: the
/// Handler_* counters count rows; absent counters are left out.)
pub const COUNTERS: [&str; 29] = [
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

/// The counters at one instant, by name (those the server has).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot(pub BTreeMap<String, f64>);

impl Snapshot {
    pub fn read(c: &mut mysql::Conn) -> Result<Snapshot, mysql::Error> {
        let rows: Vec<(String, String)> = c.query("SHOW GLOBAL STATUS")?;
        Ok(Snapshot::from_rows(rows))
    }

    fn from_rows(rows: Vec<(String, String)>) -> Snapshot {
        Snapshot(
            rows.into_iter()
                .filter(|(k, _)| COUNTERS.contains(&k.as_str()))
                .filter_map(|(k, v)| Some((k, v.trim().parse::<f64>().ok()?)))
                .collect(),
        )
    }
}

/// What changed between two snapshots, by counter name (a counter the
/// server does not have is absent).
pub fn delta(a: &Snapshot, b: &Snapshot) -> BTreeMap<String, f64> {
    b.0.iter()
        .map(|(k, v)| (k.clone(), v - a.0.get(k).copied().unwrap_or(0.0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_counters_and_their_differences() {
        let row = |k: &str, v: &str| (k.to_string(), v.to_string());
        let a = Snapshot::from_rows(vec![
            row("Com_commit", "10"),
            row("Innodb_buffer_pool_reads", "100"),
            row("Uptime", "5"),
            row("Innodb_os_log_written", "not a number"),
        ]);
        assert_eq!(a.0.len(), 2);
        let b = Snapshot::from_rows(vec![
            row("Com_commit", "25"),
            row("Innodb_buffer_pool_reads", "160"),
            row("Innodb_os_log_written", "4096"),
        ]);
        let d = delta(&a, &b);
        assert_eq!(d["Com_commit"], 15.0);
        assert_eq!(d["Innodb_buffer_pool_reads"], 60.0);
        assert_eq!(d["Innodb_os_log_written"], 4096.0);
        assert!(!d.contains_key("Uptime"));
    }
}
