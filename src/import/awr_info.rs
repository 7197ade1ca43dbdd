//! SLOB's `misc/awr_info.sh` output: a pipe-separated table, one row per AWR
//! report, read by its header names (docs/import.md). Three generations are
//! known and any mix of their columns is read:
//!
//! * 2014+: `FILE|SESSIONS|ELAPSED|DB CPU|DB Tm|EXECUTES|LIO|PREADS|READ_MBS|
//!   PWRITES|WRITE_MBS|REDO_MBS|DFSR_LAT|DPR_LAT|DFPR_LAT|DFPW_LAT|LFPW_LAT|TOP WAIT|`
//! * 2013: the same without `DB CPU`, `DB Tm` and `LIO` (15 columns);
//! * the original SLOB: `READERS` and `WRITERS` columns and `REDO` in bytes per
//!   second (what SLOB.R reads).
//!
//! Cells may be padded with spaces; an empty cell is unknown. A header line
//! may appear again further down (outputs concatenated with `cat`); rows
//! below it are read with its columns.

use super::ImportError;

/// A column this importer knows, by its normalized header name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    File,
    Sessions,
    Elapsed,
    DbCpu,
    DbTm,
    Executes,
    Lio,
    Preads,
    ReadMbs,
    Pwrites,
    WriteMbs,
    RedoMbs,
    /// Redo bytes per second (the original awr_info.sh).
    Redo,
    Readers,
    Writers,
    DfsrLat,
    DprLat,
    DfprLat,
    DfpwLat,
    LfpwLat,
    LfsLat,
    TopWait,
}

/// Header names (normalized: upper case, runs of spaces, dots and
/// underscores as one `_`) and their columns.
const NAMES: &[(&str, Column)] = &[
    ("FILE", Column::File),
    ("SESSIONS", Column::Sessions),
    ("ELAPSED", Column::Elapsed),
    ("DB_CPU", Column::DbCpu),
    ("DB_TM", Column::DbTm),
    ("DB_TIME", Column::DbTm),
    ("EXECUTES", Column::Executes),
    ("LIO", Column::Lio),
    ("PREADS", Column::Preads),
    ("READ_MBS", Column::ReadMbs),
    ("PWRITES", Column::Pwrites),
    ("WRITE_MBS", Column::WriteMbs),
    ("REDO_MBS", Column::RedoMbs),
    ("REDO", Column::Redo),
    ("READERS", Column::Readers),
    ("WRITERS", Column::Writers),
    ("DFSR_LAT", Column::DfsrLat),
    ("DPR_LAT", Column::DprLat),
    ("DFPR_LAT", Column::DfprLat),
    ("DFPW_LAT", Column::DfpwLat),
    ("LFPW_LAT", Column::LfpwLat),
    ("LFS_LAT", Column::LfsLat),
    ("TOP_WAIT", Column::TopWait),
];

/// Upper case, every run of spaces, dots, dashes and underscores as one `_`.
fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.trim().chars() {
        if c.is_whitespace() || matches!(c, '.' | '_' | '-') {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
        } else {
            out.extend(c.to_uppercase());
        }
    }
    out.trim_end_matches('_').to_string()
}

fn column(name: &str) -> Option<Column> {
    let n = normalize(name);
    NAMES.iter().find(|(k, _)| *k == n).map(|(_, c)| *c)
}

/// One header line: the column of each cell (None = not known, ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub line: usize,
    pub columns: Vec<Option<Column>>,
    /// The header's own names, as written (trimmed).
    pub names: Vec<String>,
}

impl Header {
    pub fn has(&self, c: Column) -> bool {
        self.columns.contains(&Some(c))
    }

    /// The format generation this header looks like (for the run's record).
    pub fn generation(&self) -> &'static str {
        if self.has(Column::Readers) || self.has(Column::Writers) {
            "slob1-readers-writers"
        } else if self.has(Column::Lio) || self.has(Column::DbTm) {
            "2014"
        } else {
            "2013"
        }
    }
}

/// One data row: the FILE cell, the numbers and the top wait.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub line: usize,
    /// Index into [`Parsed::headers`].
    pub header: usize,
    pub file: String,
    /// Known numeric columns with a value (empty cells are left out).
    pub values: Vec<(Column, f64)>,
    pub top_wait: Option<String>,
    /// Every cell as written (trimmed), by header name.
    pub cells: Vec<(String, String)>,
}

impl Row {
    pub fn get(&self, c: Column) -> Option<f64> {
        self.values.iter().find(|(k, _)| *k == c).map(|(_, v)| *v)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub headers: Vec<Header>,
    pub rows: Vec<Row>,
    /// Header names this importer does not know (ignored), once each.
    pub ignored: Vec<String>,
    /// What is wrong with rows left out ([`parse_all`]); every one, by line.
    pub errors: Vec<ImportError>,
}

/// The cells of a line: split on `|`, one trailing empty cell (the trailing
/// pipe awr_info.sh prints) dropped.
fn cells(line: &str) -> Vec<&str> {
    let line = line.trim_end_matches(['\r', '\n']);
    let mut cells: Vec<&str> = line.split('|').collect();
    if cells.len() > 1 && cells.last().is_some_and(|c| c.trim().is_empty()) {
        cells.pop();
    }
    cells
}

fn is_header(cells: &[&str]) -> bool {
    cells
        .first()
        .is_some_and(|c| column(c) == Some(Column::File))
}

fn header(line: usize, cells: &[&str], ignored: &mut Vec<String>) -> Result<Header, ImportError> {
    let mut columns = Vec::with_capacity(cells.len());
    for (i, name) in cells.iter().enumerate() {
        let c = column(name);
        match c {
            Some(c) if columns.contains(&Some(c)) => {
                return Err(ImportError::at(
                    line,
                    name.trim(),
                    "this column appears twice in the header; remove one of them",
                ));
            }
            None if !name.trim().is_empty() && !ignored.iter().any(|n| n == name.trim()) => {
                ignored.push(name.trim().to_string());
            }
            None if !name.trim().is_empty() => {}
            None if i + 1 < cells.len() => {
                return Err(ImportError::at(
                    line,
                    format!("column {}", i + 1),
                    "the header has an empty column name; every column needs a name",
                ));
            }
            _ => {}
        }
        columns.push(c);
    }
    Ok(Header {
        line,
        columns,
        names: cells.iter().map(|c| c.trim().to_string()).collect(),
    })
}

/// A number cell: empty = unknown; otherwise finite and not negative.
fn number(line: usize, name: &str, cell: &str) -> Result<Option<f64>, ImportError> {
    let t = cell.trim();
    if t.is_empty() {
        return Ok(None);
    }
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
        Ok(_) => Err(ImportError::at(
            line,
            name,
            format!(
                "{t:?} is not a rate or a count (negative or not finite); fix the cell or leave it empty for unknown"
            ),
        )),
        Err(_) => Err(ImportError::at(
            line,
            name,
            format!("{t:?} is not a number; fix the cell or leave it empty for unknown"),
        )),
    }
}

/// Parses awr_info.sh output. The first line that is not blank must be a
/// header; every error names the line and the column, and all of them are
/// reported at once.
pub fn parse(text: &str) -> Result<Parsed, ImportError> {
    let parsed = parse_all(text)?;
    match ImportError::many(parsed.errors.clone()) {
        Some(e) => Err(e),
        None => Ok(parsed),
    }
}

/// As [`parse`], but rows with errors are left out and their errors kept in
/// [`Parsed::errors`] (the importer adds its own before refusing the file).
pub fn parse_all(text: &str) -> Result<Parsed, ImportError> {
    let mut parsed = Parsed::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let cells = cells(raw);
        if is_header(&cells) {
            let h = header(line, &cells, &mut parsed.ignored)?;
            parsed.headers.push(h);
            continue;
        }
        let Some(h) = parsed.headers.last() else {
            return Err(ImportError::line(
                line,
                "expected the awr_info.sh header line (FILE|SESSIONS|ELAPSED|…) first; is this SLOB's awr_info.sh output?",
            ));
        };
        if cells.len() != h.columns.len() {
            parsed.errors.push(ImportError::line(
                line,
                format!(
                    "{} cells, but the header on line {} has {} columns; a '|' too many or too few?",
                    cells.len(),
                    h.line,
                    h.columns.len()
                ),
            ));
            continue;
        }
        let mut row = Row {
            line,
            header: parsed.headers.len() - 1,
            file: String::new(),
            values: Vec::new(),
            top_wait: None,
            cells: Vec::with_capacity(cells.len()),
        };
        let mut bad = false;
        for ((cell, c), name) in cells.iter().zip(&h.columns).zip(&h.names) {
            row.cells.push((name.clone(), cell.trim().to_string()));
            match c {
                None => {}
                Some(Column::File) => row.file = cell.trim().to_string(),
                Some(Column::TopWait) => {
                    row.top_wait = Some(cell.trim().to_string()).filter(|t| !t.is_empty())
                }
                Some(c) => match number(line, name, cell) {
                    Ok(Some(v)) => row.values.push((*c, v)),
                    Ok(None) => {}
                    Err(e) => {
                        parsed.errors.push(e);
                        bad = true;
                    }
                },
            }
        }
        if row.file.is_empty() {
            parsed.errors.push(ImportError::at(
                line,
                "FILE",
                "the FILE cell is empty; every row needs the AWR report's file name",
            ));
            bad = true;
        }
        if !bad {
            parsed.rows.push(row);
        }
    }
    if parsed.headers.is_empty() {
        return Err(ImportError::whole(
            "no awr_info.sh header line (FILE|SESSIONS|ELAPSED|…); is this SLOB's awr_info.sh output?",
        ));
    }
    if parsed.rows.is_empty() && parsed.errors.is_empty() {
        return Err(ImportError::whole(
            "the file has a header but no rows; nothing to import",
        ));
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const V2014: &str = "FILE|SESSIONS|ELAPSED|DB CPU|DB Tm|EXECUTES|LIO|PREADS|READ_MBS|PWRITES|WRITE_MBS|REDO_MBS|DFSR_LAT|DPR_LAT|DFPR_LAT|DFPW_LAT|LFPW_LAT|TOP WAIT|\n\
awr.xfs.1.16|16|300|  1.5| 15.8|   2345|  123456| 24567.1|  191.9|   12|    0|  0.2|   412|     0|     0|  1200|   800|db file sequential read  7,370,109  3,036  0  93.9 User I/O|\n";

    #[test]
    fn the_2014_header_is_read_by_name() {
        let p = parse(V2014).unwrap();
        assert_eq!(p.headers.len(), 1);
        assert_eq!(p.headers[0].generation(), "2014");
        assert!(p.ignored.is_empty());
        let r = &p.rows[0];
        assert_eq!(r.file, "awr.xfs.1.16");
        assert_eq!(r.get(Column::Sessions), Some(16.0));
        assert_eq!(r.get(Column::DbCpu), Some(1.5));
        assert_eq!(r.get(Column::Preads), Some(24567.1));
        assert_eq!(r.get(Column::WriteMbs), Some(0.0));
        assert_eq!(r.get(Column::DfsrLat), Some(412.0));
        assert!(
            r.top_wait
                .as_deref()
                .unwrap()
                .starts_with("db file sequential read")
        );
    }

    #[test]
    fn columns_are_found_by_name_in_any_order_and_empty_cells_are_unknown() {
        let text =
            "FILE | WRITERS | READERS | PREADS | REDO | TOP.WAIT\nx.0.8 | 0 | 8 |  | 1024 | w\n";
        let p = parse(text).unwrap();
        assert_eq!(p.headers[0].generation(), "slob1-readers-writers");
        let r = &p.rows[0];
        assert_eq!(r.get(Column::Readers), Some(8.0));
        assert_eq!(r.get(Column::Preads), None);
        assert_eq!(r.get(Column::Redo), Some(1024.0));
        assert_eq!(r.top_wait.as_deref(), Some("w"));
    }

    #[test]
    fn errors_name_the_line_and_the_column() {
        let bad = V2014.replace("24567.1", "24x67");
        let e = parse(&bad).unwrap_err().to_string();
        assert_eq!(
            e,
            "line 2, PREADS: \"24x67\" is not a number; fix the cell or leave it empty for unknown"
        );
        let short = V2014.replace("|  191.9", "");
        let e = parse(&short).unwrap_err().to_string();
        assert!(
            e.starts_with("line 2: 17 cells, but the header on line 1 has 18"),
            "{e}"
        );
        let e = parse("x|1|2\n").unwrap_err().to_string();
        assert!(
            e.starts_with("line 1: expected the awr_info.sh header"),
            "{e}"
        );
        let e = parse("FILE|PREADS|PREADS\n").unwrap_err().to_string();
        assert!(e.contains("appears twice"), "{e}");
        let e = parse("FILE|PREADS\n").unwrap_err().to_string();
        assert!(e.contains("no rows"), "{e}");
        let e = parse("FILE|PREADS\n|5\n").unwrap_err().to_string();
        assert!(e.starts_with("line 2, FILE: the FILE cell is empty"), "{e}");
        let e = parse("FILE|PREADS\nx.1|-5\n").unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
    }

    #[test]
    fn every_bad_row_is_reported() {
        let text = "FILE|SESSIONS|PREADS\na.1|1|x\nb.2|2|5\n|3|4\nc.4|4\nd.5|-5|y\n";
        let e = parse(text).unwrap_err().to_string();
        let lines: Vec<&str> = e.split("; [").collect();
        assert_eq!(
            lines,
            [
                "5 problems, nothing imported: [1] line 2, PREADS: \"x\" is not a number; fix the cell or leave it empty for unknown",
                "2] line 4, FILE: the FILE cell is empty; every row needs the AWR report's file name",
                "3] line 5: 2 cells, but the header on line 1 has 3 columns; a '|' too many or too few?",
                "4] line 6, SESSIONS: \"-5\" is not a rate or a count (negative or not finite); fix the cell or leave it empty for unknown",
                "5] line 6, PREADS: \"y\" is not a number; fix the cell or leave it empty for unknown",
            ]
        );
        let p = parse_all(text).unwrap();
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.errors.len(), 5);
    }

    #[test]
    fn a_repeated_header_switches_columns_and_unknown_columns_are_listed() {
        let text = "FILE|SESSIONS|PREADS|\nA.1|1|10|\n\nFILE|SESSIONS|FOO|PWRITES|\nB.2|2|x|20|\n";
        let p = parse(text).unwrap();
        assert_eq!(p.headers.len(), 2);
        assert_eq!(p.rows[1].header, 1);
        assert_eq!(p.rows[1].get(Column::Pwrites), Some(20.0));
        assert_eq!(p.ignored, ["FOO"]);
    }
}
