//! awr_info.sh rows as stored runs: the variable and session count from the
//! file name ([`super::naming`], checked against the row's cells in
//! `awr_check`), the numbers as `db.*` and `event.*`
//! metrics ([`crate::vocab`]), the row itself as the run's record.
//!
//! Units: awr_info.sh prints rates per second, MiB (2^20 bytes) per second,
//! the old `REDO` in bytes per second and wait latencies in microseconds
//! (`DFSR_LAT` …); a latency of 0 is what it prints when the event is not in
//! the AWR report, so 0 is stored as unknown.

use std::fmt::Write;

use serde_json::{Map, Value, json};

use super::awr_check::{Checked, check, keep_directories};
use super::awr_info::{Column, Parsed, Row};
use super::naming::Rule;
use super::{ImportError, ModelArg};
use crate::store::{ImportedRun, RunRow};
use crate::vocab as v;

/// How the rows become runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub variable_regex: Option<regex::Regex>,
    pub plan: Option<String>,
    pub model: Option<ModelArg>,
    pub tags: Vec<String>,
}

const MIB: f64 = 1_048_576.0;

/// Plain metrics: column, name, factor.
const PLAIN: &[(Column, &str, f64)] = &[
    (Column::Elapsed, "measured_s", 1.0),
    (Column::DbCpu, v::DB_CPU_S, 1.0),
    (Column::DbTm, v::DB_TIME_S, 1.0),
    (Column::Executes, v::EXECUTES_S, 1.0),
    (Column::Lio, v::LOGICAL_READS_S, 1.0),
    (Column::Preads, v::PHYSICAL_READS_S, 1.0),
    (Column::ReadMbs, v::READ_MBS, 1.0),
    (Column::Pwrites, v::PHYSICAL_WRITES_S, 1.0),
    (Column::WriteMbs, v::WRITE_MBS, 1.0),
    (Column::RedoMbs, v::REDO_MBS, 1.0),
    (Column::RedoMbs, v::REDO_BYTES_S, MIB),
    (Column::Redo, v::REDO_BYTES_S, 1.0),
    (Column::Redo, v::REDO_MBS, 1.0 / MIB),
];

/// Wait latencies: column, event name (µs in the file, ms stored).
const EVENTS: &[(Column, &str, &str)] = &[
    (
        Column::DfsrLat,
        v::EVENT_DB_FILE_SEQUENTIAL_READ,
        "db file sequential read",
    ),
    (
        Column::DprLat,
        v::EVENT_DIRECT_PATH_READ,
        "direct path read",
    ),
    (
        Column::DfprLat,
        v::EVENT_DB_FILE_PARALLEL_READ,
        "db file parallel read",
    ),
    (
        Column::DfpwLat,
        v::EVENT_DB_FILE_PARALLEL_WRITE,
        "db file parallel write",
    ),
    (
        Column::LfpwLat,
        v::EVENT_LOG_FILE_PARALLEL_WRITE,
        "log file parallel write",
    ),
    (Column::LfsLat, v::EVENT_LOG_FILE_SYNC, "log file sync"),
];

/// One run per row; `warnings` gets what the user should know. Every bad
/// row is reported (with those [`super::awr_info::parse_all`] found), then
/// the file is refused.
pub fn runs(
    parsed: &Parsed,
    opts: &Options,
    source_file: &str,
    started_unix_ms: i64,
    warnings: &mut Vec<String>,
) -> Result<Vec<ImportedRun>, ImportError> {
    let mut errors = parsed.errors.clone();
    let mut checked = Vec::with_capacity(parsed.rows.len());
    for row in &parsed.rows {
        let header = &parsed.headers[row.header];
        let rule = match &opts.variable_regex {
            Some(re) => Rule::Regex(re.clone()),
            None => Rule::Default {
                writers_readers: header.has(Column::Readers) || header.has(Column::Writers),
            },
        };
        match check(row, &rule, warnings) {
            Ok(c) => checked.push((row, c)),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if let Some(e) = ImportError::many(errors) {
        return Err(e);
    }
    keep_directories(&mut checked);
    let out = checked
        .into_iter()
        .map(|(row, c)| imported_run(parsed, row, c, opts, source_file, started_unix_ms))
        .collect();
    Ok(out)
}

/// One checked row as a stored run.
fn imported_run(
    parsed: &Parsed,
    row: &Row,
    c: Checked,
    opts: &Options,
    source_file: &str,
    started_unix_ms: i64,
) -> ImportedRun {
    let header = &parsed.headers[row.header];
    let Checked {
        named,
        sessions,
        readers,
        writers,
    } = c;
    let elapsed_ms = row
        .get(Column::Elapsed)
        .map(|s| (s * 1000.0).round() as i64);
    let mut cells = Map::new();
    for (name, cell) in &row.cells {
        cells.insert(name.clone(), Value::String(cell.clone()));
    }
    let report = json!({
        "schema": "dbio.import.awr-info.v1",
        "source_file": source_file,
        "line": row.line,
        "header_line": header.line,
        "format": header.generation(),
        "file": row.file,
        "variable": named.variable,
        "sessions": sessions,
        "writers": writers,
        "readers": readers,
        "top_wait": row.top_wait,
        "cells": cells,
    });
    ImportedRun {
        row: RunRow {
            started_unix_ms,
            ended_unix_ms: elapsed_ms.map(|ms| started_unix_ms.saturating_add(ms)),
            status: "completed".into(),
            workload: Some("slob".into()),
            sessions: Some(i64::from(sessions)),
            plan: opts.plan.clone(),
            variable: Some(named.variable.clone()),
            tags: opts.tags.clone(),
            source: "awr-info".into(),
            source_file: Some(source_file.to_string()),
            model: opts.model.map(|m| m.stored().to_string()),
            ..Default::default()
        },
        report_text: text(
            row,
            &named.variable,
            sessions,
            writers,
            readers,
            source_file,
        ),
        metrics: metrics(row, readers, writers),
        report,
        environment: json!({"source": "awr-info", "source_file": source_file}),
        histograms: Vec::new(),
    }
}

/// A row's metrics under dbio's names, the first of a name kept.
fn metrics(row: &Row, readers: Option<u32>, writers: Option<u32>) -> Vec<(String, f64)> {
    let mut metrics: Vec<(String, f64)> = Vec::new();
    let mut put = |name: &str, value: f64| {
        if !metrics.iter().any(|(n, _)| n == name) {
            metrics.push((name.to_string(), value));
        }
    };
    for &(c, name, factor) in PLAIN {
        if let Some(x) = row.get(c) {
            put(name, x * factor);
        }
    }
    for &(c, name, _) in EVENTS {
        if let Some(us) = row.get(c).filter(|&us| us > 0.0) {
            put(name, us / 1000.0);
        }
    }
    if let Some(r) = readers {
        put(v::READERS, f64::from(r));
    }
    if let Some(w) = writers {
        put(v::WRITERS, f64::from(w));
    }
    metrics
}

/// What `dbio runs show` prints for an imported row.
fn text(
    row: &Row,
    variable: &str,
    sessions: u32,
    writers: Option<u32>,
    readers: Option<u32>,
    source_file: &str,
) -> String {
    let num = |c: Column| row.get(c).map(|x| format!("{x}"));
    let mut o = String::new();
    let _ = writeln!(
        o,
        "imported   awr_info.sh row, line {} of {source_file}",
        row.line
    );
    let _ = writeln!(o, "file       {}", row.file);
    let wr = match (writers, readers) {
        (None, None) => String::new(),
        (w, r) => format!(
            " ({} writers, {} readers)",
            w.map_or("?".into(), |w| w.to_string()),
            r.map_or("?".into(), |r| r.to_string())
        ),
    };
    let _ = writeln!(o, "variable   {variable}, {sessions} sessions{wr}");
    let mut line = |label: &str, parts: Vec<(&str, Option<String>)>| {
        let parts: Vec<String> = parts
            .into_iter()
            .filter_map(|(name, v)| v.map(|v| format!("{name} {v}")))
            .collect();
        if !parts.is_empty() {
            let _ = writeln!(o, "{label:<10} {}", parts.join(", "));
        }
    };
    line("elapsed", vec![("s", num(Column::Elapsed))]);
    line(
        "load /s",
        vec![
            ("DB time s", num(Column::DbTm)),
            ("DB CPU s", num(Column::DbCpu)),
            ("executes", num(Column::Executes)),
            ("logical reads", num(Column::Lio)),
        ],
    );
    line(
        "I/O /s",
        vec![
            ("physical reads", num(Column::Preads)),
            ("read MiB", num(Column::ReadMbs)),
            ("physical writes", num(Column::Pwrites)),
            ("write MiB", num(Column::WriteMbs)),
            ("redo MiB", num(Column::RedoMbs)),
            ("redo bytes", num(Column::Redo)),
        ],
    );
    let waits = EVENTS
        .iter()
        .map(|&(c, _, event)| {
            (
                event,
                row.get(c)
                    .filter(|&us| us > 0.0)
                    .map(|us| format!("{} ms", us / 1000.0)),
            )
        })
        .collect();
    line("avg wait", waits);
    if let Some(t) = &row.top_wait {
        let _ = writeln!(o, "top wait   {t}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::awr_info::parse;

    #[test]
    fn rows_become_runs_with_db_metrics_in_the_vocabulary() {
        let text = "FILE|SESSIONS|ELAPSED|DB CPU|DB Tm|EXECUTES|LIO|PREADS|READ_MBS|PWRITES|WRITE_MBS|REDO_MBS|DFSR_LAT|DPR_LAT|DFPR_LAT|DFPW_LAT|LFPW_LAT|TOP WAIT|\n\
                    x/awr.XFS.2.16|16|300|1.5|15.8|2345|123456|24567.1|191.9|12|0.1|0.5|412|0|0|1200|800|db file sequential read|\n";
        let p = parse(text).unwrap();
        let mut w = Vec::new();
        let runs = runs(&p, &Options::default(), "/f", 1000, &mut w).unwrap();
        let r = &runs[0];
        assert_eq!(
            (r.row.variable.as_deref(), r.row.sessions),
            (Some("awr.XFS"), Some(16))
        );
        assert_eq!(r.row.ended_unix_ms, Some(301_000));
        let m = |n: &str| r.metrics.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(m(v::PHYSICAL_READS_S), Some(24567.1));
        assert_eq!(m(v::LOGICAL_READS_S), Some(123456.0));
        assert_eq!(m(v::DB_TIME_S), Some(15.8));
        assert_eq!(m(v::REDO_BYTES_S), Some(0.5 * MIB));
        assert_eq!(m(v::EVENT_DB_FILE_SEQUENTIAL_READ), Some(0.412));
        assert_eq!(m(v::EVENT_DIRECT_PATH_READ), None, "0 = not in the report");
        assert_eq!(m(v::EVENT_LOG_FILE_PARALLEL_WRITE), Some(0.8));
        assert_eq!(m("measured_s"), Some(300.0));
        assert!(
            r.report_text.contains("physical reads 24567.1"),
            "{}",
            r.report_text
        );
        assert!(w.is_empty());
    }

    #[test]
    fn readers_and_writers_give_the_slob_r_session_count() {
        let text = "FILE|READERS|WRITERS|PREADS|PWRITES|REDO|TOP WAIT\n\
                    A-XFS-1.0.8|8|0|100|1|10|w\n\
                    A-XFS-2.8.0|0|8|100|10|1000000|w\n\
                    A-XFS-3.4.4|4|4|100|10|1000|w\n\
                    A-XFS-4.2.6|6|2|100|10|1000|w\n";
        let p = parse(text).unwrap();
        let mut w = Vec::new();
        let runs = runs(&p, &Options::default(), "/f", 0, &mut w).unwrap();
        let s: Vec<_> = runs.iter().map(|r| r.row.sessions.unwrap()).collect();
        assert_eq!(s, [8, 8, 4, 8]);
        assert!(
            runs.iter()
                .all(|r| r.row.variable.as_deref() == Some("A-XFS"))
        );
        let m = |r: &ImportedRun, n: &str| r.metrics.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(m(&runs[1], v::REDO_MBS), Some(1_000_000.0 / MIB));
        assert_eq!(m(&runs[1], v::WRITERS), Some(8.0));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("under both 2 and 6"), "{w:?}");
    }

    #[test]
    fn directories_keep_rows_apart_and_bad_rows_are_all_reported() {
        let text = "FILE|SESSIONS|ELAPSED|PREADS\n\
                    run1/XFS/awr.txt.16|16|300|10\n\
                    run1/EXT4/awr.txt.16|16|300|20\n\
                    run2/XFS/awr.txt.8|8|300|30\n\
                    other/awr.XFS.txt.4|4|300|40\n";
        let p = parse(text).unwrap();
        let got = runs(&p, &Options::default(), "/f", 0, &mut Vec::new()).unwrap();
        let vars: Vec<&str> = got
            .iter()
            .map(|r| r.row.variable.as_deref().unwrap())
            .collect();
        // Two directories named XFS: their parents tell them apart.
        assert_eq!(
            vars,
            ["run1/XFS/awr", "run1/EXT4/awr", "run2/XFS/awr", "awr.XFS"]
        );
        let bad = "FILE|SESSIONS|ELAPSED|PREADS\n\
                   a.16|0|300|1\n\
                   b.16|16|0|1\n\
                   c.8|16|300|1\n\
                   d.4|4|300|x\n\
                   e.4|4|300|1\n";
        let p = crate::import::awr_info::parse_all(bad).unwrap();
        let e = runs(&p, &Options::default(), "/f", 0, &mut Vec::new())
            .unwrap_err()
            .to_string();
        let lines: Vec<&str> = e.split("; [").collect();
        assert_eq!(lines.len(), 5, "{e}");
        for (got, want) in lines.iter().zip([
            "5 problems, nothing imported: [1] line 2, SESSIONS: SESSIONS is 0 but the file name \"a.16\" says 16",
            "2] line 2, SESSIONS: 0 sessions",
            "3] line 3, ELAPSED: 0 s",
            "4] line 4, SESSIONS: SESSIONS is 16 but the file name \"c.8\" says 8",
            "5] line 5, PREADS: \"x\" is not a number",
        ]) {
            assert!(got.starts_with(want), "{got} / {want}");
        }
        let zero = parse("FILE|READERS|WRITERS\nx.0.0|0|0\n").unwrap();
        let e = runs(&zero, &Options::default(), "/f", 0, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("READERS/WRITERS: 0 sessions"), "{e}");
    }

    #[test]
    fn a_row_without_a_session_count_is_an_error_naming_its_line() {
        let p = parse("FILE|PREADS\nawr.txt|5\n").unwrap();
        let e = runs(&p, &Options::default(), "/f", 0, &mut Vec::new()).unwrap_err();
        assert!(
            e.to_string().starts_with("line 2, FILE: no session count"),
            "{e}"
        );
    }
}
