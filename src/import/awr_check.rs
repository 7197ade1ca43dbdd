//! An awr_info.sh row's variable, session count, readers and writers: from
//! the file name ([`super::naming`]) and the row's cells, checked against
//! each other (every problem of every row is collected, so the importer
//! reports them all at once), and rows of different directories kept apart.

use super::ImportError;
use super::awr_info::{Column, Row};
use super::naming::{self, Rule};

fn whole(row: &Row, c: Column, name: &str) -> Result<Option<u32>, ImportError> {
    match row.get(c) {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && x <= f64::from(u32::MAX) => Ok(Some(x as u32)),
        Some(x) => Err(ImportError::at(
            row.line,
            name,
            format!("{x} is not a whole number of sessions"),
        )),
    }
}

/// SLOB.R's session count of a run with `writers` and `readers`: the one
/// that is not 0, or the common number when equal. When both differ SLOB.R
/// lists the run under both numbers; a table has one column per run, so
/// their sum (the sessions that ran) is used and a warning says so.
fn slob_sessions(writers: u32, readers: u32) -> (u32, bool) {
    match (writers, readers) {
        (0, r) => (r, false),
        (w, 0) => (w, false),
        (w, r) if w == r => (w, false),
        (w, r) => (w.saturating_add(r), true),
    }
}

/// A row's names and counts, checked.
pub(super) struct Checked {
    pub named: naming::Named,
    pub sessions: u32,
    pub readers: Option<u32>,
    pub writers: Option<u32>,
}

/// The variable, session count, readers and writers of `row`; every
/// problem with them.
pub(super) fn check(
    row: &Row,
    rule: &Rule,
    warnings: &mut Vec<String>,
) -> Result<Checked, Vec<ImportError>> {
    let mut errors = Vec::new();
    let named = naming::name(&row.file, rule)
        .map_err(|m| vec![ImportError::at(row.line, "FILE", m.to_string())])?;
    let mut cell = |c: Column, name: &str, from_name: Option<u32>| match whole(row, c, name) {
        Err(e) => {
            errors.push(e);
            None
        }
        Ok(Some(v)) => {
            if let Some(n) = from_name.filter(|&n| n != v) {
                errors.push(ImportError::at(
                    row.line,
                    name,
                    format!(
                        "{name} is {v} but the file name {:?} says {n}; fix the cell or the name, or pass --variable-regex to read the name another way",
                        row.file
                    ),
                ));
            }
            Some(v)
        }
        Ok(None) => from_name,
    };
    let readers = cell(Column::Readers, "READERS", named.readers);
    let writers = cell(Column::Writers, "WRITERS", named.writers);
    let mut sessions = cell(Column::Sessions, "SESSIONS", named.sessions);
    if sessions.is_none() && (readers.is_some() || writers.is_some()) {
        let (s, both) = slob_sessions(writers.unwrap_or(0), readers.unwrap_or(0));
        if both {
            warnings.push(format!(
                "line {}: {} has {} writers and {} readers; SLOB.R would count it under both {} and {} sessions, dbio under {s}",
                row.line,
                row.file,
                writers.unwrap_or(0),
                readers.unwrap_or(0),
                writers.unwrap_or(0),
                readers.unwrap_or(0)
            ));
        }
        sessions = Some(s);
    }
    match sessions {
        None => errors.push(ImportError::at(
            row.line,
            "FILE",
            format!(
                "no session count for {:?}: the SESSIONS cell is empty or missing and the name does not end in .<sessions>; pass --variable-regex with a (?P<sessions>...) group",
                row.file
            ),
        )),
        Some(0) => errors.push(ImportError::at(
            row.line,
            if readers.is_some() || writers.is_some() {
                "READERS/WRITERS"
            } else {
                "SESSIONS"
            },
            "0 sessions: a run has at least one; fix the cell",
        )),
        Some(_) => {}
    }
    if row.get(Column::Elapsed) == Some(0.0) {
        errors.push(ImportError::at(
            row.line,
            "ELAPSED",
            "0 s: every rate of the row would be over no time; fix the cell or leave it empty for unknown",
        ));
    }
    match sessions {
        Some(sessions) if errors.is_empty() => Ok(Checked {
            named,
            sessions,
            readers,
            writers,
        }),
        _ => Err(errors),
    }
}

/// Rows whose file names give one variable but sit in different
/// directories (`XFS/awr.txt.16`, `EXT4/awr.txt.16`) are not merged: their
/// variables get as many of their directories' last components as tell
/// them apart (`XFS/awr`, `EXT4/awr`).
pub(super) fn keep_directories(rows: &mut [(&Row, Checked)]) {
    let mut by_var: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    for (i, (_, c)) in rows.iter().enumerate() {
        by_var.entry(c.named.variable.clone()).or_default().push(i);
    }
    for idx in by_var.values() {
        let dirs: Vec<Vec<String>> = idx
            .iter()
            .map(|&i| {
                rows[i]
                    .1
                    .named
                    .dir
                    .split(['/', '\\'])
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .collect();
        let suffix = |d: &Vec<String>, k: usize| d[d.len().saturating_sub(k)..].join("/");
        let distinct = |k: usize| {
            let mut s: Vec<String> = dirs.iter().map(|d| suffix(d, k)).collect();
            s.sort();
            s.dedup();
            s.len()
        };
        let all = distinct(usize::MAX);
        if all < 2 {
            continue;
        }
        let k = (1..).find(|&k| distinct(k) == all).unwrap_or(usize::MAX);
        for (&i, d) in idx.iter().zip(&dirs) {
            let prefix = suffix(d, k);
            if !prefix.is_empty() {
                let v = &mut rows[i].1.named.variable;
                *v = format!("{prefix}/{v}");
            }
        }
    }
}
