//! A server or model run's page section on where its window sat in the
//! checkpoint cycle (`document::cycle`) and what dbio changed from the stock
//! server's defaults (`Setup::departures`, servers only): two small tables,
//! values escaped.

use super::page::{table, td};
use crate::document::Report;
use crate::document::cycle::CheckpointCycle;
use crate::workload::db::departures::Departure;

/// The section's HTML, empty for a run with neither (a raw run, or one
/// stored before they were recorded).
pub fn section(report: Option<&Report>) -> String {
    let Some(r) = report else {
        return String::new();
    };
    let none: &[Departure] = &[];
    let (cycle, departures, log) = match (&r.pg, &r.mysql, &r.slob) {
        (Some(pg), _, _) => (
            pg.checkpoint_cycle.as_ref(),
            &pg.setup.departures[..],
            "WAL",
        ),
        (None, Some(my), _) => (
            my.checkpoint_cycle.as_ref(),
            &my.setup.departures[..],
            "redo",
        ),
        (None, None, Some(s)) => {
            let flavor = r
                .config
                .workload
                .model()
                .map(|m| m.flavor)
                .unwrap_or_default();
            (
                s.checkpoint_cycle.as_ref(),
                none,
                CheckpointCycle::model_log(flavor),
            )
        }
        (None, None, None) => return String::new(),
    };
    let mut o = String::new();
    if let Some(c) = cycle {
        o += &cycle_table(c, log);
    }
    if !departures.is_empty() {
        o += &departures_table(departures);
    }
    o
}

fn cycle_table(c: &CheckpointCycle, log: &str) -> String {
    let num = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.0}"));
    let share = c
        .first_change_share
        .map_or("—".to_string(), |v| format!("{v:.3}"));
    let rows = vec![
        vec![td("--window"), td(&c.window)],
        vec![
            td(&format!("{log} bytes since the last checkpoint, at open")),
            td(&num(c.open_log_bytes_since)),
        ],
        vec![
            td("write transactions since it, at open"),
            td(&num(c.open_transactions_since)),
        ],
        vec![
            td("seconds since it, at open"),
            td(&num(c.open_seconds_since)),
        ],
        vec![
            td(&format!("{log} bytes since the last checkpoint, at close")),
            td(&num(c.close_log_bytes_since)),
        ],
        vec![
            td("checkpoints begun inside"),
            td(&num(c.checkpoints_begun)),
        ],
        vec![
            td("checkpoints completed inside"),
            td(&num(c.checkpoints_completed)),
        ],
        vec![td("full-page images per updated row"), td(&share)],
    ];
    table("cycle", &["checkpoint cycle".into(), "value".into()], &rows)
}

fn departures_table(d: &[Departure]) -> String {
    let rows: Vec<Vec<String>> = d
        .iter()
        .map(|d| {
            vec![
                td(&d.name),
                td(&d.value),
                td(d.default.as_deref().unwrap_or("(not known)")),
            ]
        })
        .collect();
    table(
        "departures",
        &[
            "changed from the stock server".into(),
            "dbio's".into(),
            "default".into(),
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_and_unknowns_say_so() {
        let d = [Departure {
            name: "x".into(),
            value: "<b>&".into(),
            default: None,
        }];
        let html = departures_table(&d);
        assert!(html.contains("&lt;b&gt;&amp;"), "{html}");
        assert!(html.contains("(not known)"), "{html}");
        let c = CheckpointCycle {
            window: "cycles:2".into(),
            checkpoints_completed: Some(2.0),
            first_change_share: Some(0.25),
            ..CheckpointCycle::default()
        };
        let html = cycle_table(&c, "WAL");
        assert!(
            html.contains("cycles:2") && html.contains("0.250") && html.contains("—"),
            "{html}"
        );
        assert_eq!(section(None), "");
    }
}
