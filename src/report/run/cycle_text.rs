//! The `ckpt cycle` line of a server or model run's terminal report: where
//! the window sat in the checkpoint cycle (`document::cycle`), and the
//! `departs` line: what dbio changed from the stock server's defaults.

use std::fmt::Write;

use crate::document::cycle::CheckpointCycle;
use crate::units::fmt_size;
use crate::workload::db::departures::Departure;

/// `ckpt cycle  window any; at open 12.0 MiB WAL, 840 transactions, 31 s
/// since the last checkpoint; 1 begun, 1 completed inside; 0.42 full-page
/// images per updated row`. `log` names the log (WAL, redo). Nothing when
/// the server said nothing about its checkpoints.
pub fn line(o: &mut String, c: &CheckpointCycle, log: &str) {
    let known = [
        c.open_log_bytes_since,
        c.checkpoints_begun,
        c.checkpoints_completed,
        c.first_change_share,
    ];
    if known.iter().all(Option::is_none) {
        return;
    }
    let mut since = Vec::new();
    if let Some(b) = c.open_log_bytes_since {
        since.push(format!("{} {log}", fmt_size(b.max(0.0) as u64)));
    }
    if let Some(t) = c.open_transactions_since {
        since.push(format!("{t:.0} write transactions"));
    }
    if let Some(s) = c.open_seconds_since {
        since.push(format!("{s:.0} s"));
    }
    let mut parts = vec![format!("window {}", c.window)];
    if !since.is_empty() {
        parts.push(format!(
            "at open {} since the last checkpoint",
            since.join(", ")
        ));
    }
    let completed = c
        .checkpoints_completed
        .map_or("?".to_string(), |v| format!("{v:.0}"));
    parts.push(match c.checkpoints_begun {
        Some(b) => format!("{b:.0} begun, {completed} completed inside"),
        None => format!("{completed} completed inside"),
    });
    if let Some(b) = c.close_log_bytes_since {
        parts.push(format!(
            "at close {} {log} since",
            fmt_size(b.max(0.0) as u64)
        ));
    }
    if let Some(f) = c.first_change_share {
        parts.push(format!("{f:.3} full-page images per updated row"));
    }
    let _ = writeln!(o, "cycle    {}", parts.join("; "));
}

/// `departs  name=value (default d)  ...`: nothing when dbio changed nothing.
pub fn departures(o: &mut String, d: &[Departure]) {
    if d.is_empty() {
        return;
    }
    let items: Vec<String> = d
        .iter()
        .map(|d| {
            let value = if d.value.is_empty() { "''" } else { &d.value };
            match &d.default {
                Some(def) => format!("{}={value} (default {def})", d.name),
                None => format!("{}={value}", d.name),
            }
        })
        .collect();
    let _ = writeln!(o, "departs  from the stock server: {}", items.join("  "));
}
