//! Tables and numbers as dbio prints them, in one place: rows of strings laid
//! out as aligned terminal text, Markdown or CSV (RFC 4180), and the
//! rounding of numbers in report tables and exports; text output fitted to
//! the terminal's width ([`fit`]).

use std::fmt::Write;

mod fit;
pub use fit::{fit, terminal_width, wrap};

/// A number as the report tables print it: no decimals from 100 up, two
/// from 1, four below; in scientific notation from [`HUGE`] up (the bound
/// of an interval two runs far apart give).
pub fn num(v: f64) -> String {
    if v.abs() >= HUGE {
        return format!("{v:.3e}");
    }
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 1.0 {
        2
    } else {
        4
    };
    format!("{v:.digits$}")
}

/// From here up a number is printed as `4.444e29` (a plain one of 30 digits
/// widens its column past any terminal).
pub const HUGE: f64 = 1e15;

/// A number rounded for reading (exports, `runs list`): `1000`, `12.3`, `0.358`.
pub fn readable(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Columns padded to their widest cell, two spaces apart; column i is
/// left-aligned where `align`'s i-th character is `l`, right-aligned
/// otherwise (text left, numbers right). Rows may be ragged.
pub fn text(rows: &[Vec<String>], align: &str) -> String {
    // Stored and imported text (paths, tags, names) is shown escaped, and
    // measured as shown.
    let rows: Vec<Vec<std::borrow::Cow<str>>> = rows
        .iter()
        .map(|r| r.iter().map(|c| crate::terminal::field(c)).collect())
        .collect();
    let left: Vec<bool> = align.chars().map(|c| c == 'l').collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut o = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let w = widths[i];
                if left.get(i).copied().unwrap_or(false) {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(o, "{}", cells.join("  ").trim_end());
    }
    o
}

/// A Markdown table; the first row is the header. Cells as
/// [`markdown_cell`] writes them.
pub fn markdown(rows: &[Vec<String>]) -> String {
    let mut o = String::new();
    for (i, r) in rows.iter().enumerate() {
        let cells: Vec<String> = r.iter().map(|c| markdown_cell(c)).collect();
        let _ = writeln!(o, "| {} |", cells.join(" | "));
        if i == 0 {
            let _ = writeln!(o, "|{}", "---|".repeat(r.len()));
        }
    }
    o
}

/// A Markdown table cell: pipes escaped, line breaks as spaces, a `<` that
/// could open HTML (before a letter, `/`, `!` or `?`: a renderer passes raw
/// HTML through, so a stored `<script>` must stay text) and every `&` (an
/// entity) as entities, other control characters escaped. `<0.0001` stays.
pub fn markdown_cell(c: &str) -> String {
    let mut o = String::with_capacity(c.len());
    let mut chars = c.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || "/!?".contains(*n)) =>
            {
                o.push_str("&lt;")
            }
            '|' => o.push_str("\\|"),
            '\n' | '\r' => o.push(' '),
            ch => o.push(ch),
        }
    }
    crate::terminal::field(&o).into_owned()
}

/// CSV (RFC 4180): a field holding a comma, quote or line break is quoted,
/// its quotes doubled. A field a spreadsheet would run as a formula (see
/// [`csv_formula`]) gets a leading `'` and is quoted (OWASP, CSV injection).
pub fn csv(rows: &[Vec<String>]) -> String {
    let field = |c: &String| {
        if csv_formula(c) {
            format!("\"'{}\"", c.replace('"', "\"\""))
        } else if c.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", c.replace('"', "\"\""))
        } else {
            c.clone()
        }
    };
    let mut o = String::new();
    for r in rows {
        let cells: Vec<String> = r.iter().map(field).collect();
        let _ = writeln!(o, "{}", cells.join(","));
    }
    o
}

/// True for text a spreadsheet would take as a formula: it starts with
/// `=`, `+`, `-`, `@`, a tab or a carriage return (OWASP's list). A number
/// (`-3.5`, `+1e3`) is a number, not a formula, and stays as it is; so does
/// a lone `-`, dbio's "none", which no spreadsheet evaluates.
pub fn csv_formula(cell: &str) -> bool {
    cell.starts_with(['=', '+', '-', '@', '\t', '\r'])
        && cell != "-"
        && !cell.parse::<f64>().is_ok_and(f64::is_finite)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<String>> {
        r.iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    #[test]
    fn text_pads_by_characters_and_aligns_numbers_right() {
        let t = text(
            &rows(&[&["var", "σ", "n", "verdict"], &["XFS", "0.0312", "3", "no"]]),
            "lrrl",
        );
        assert_eq!(t, "var       σ  n  verdict\nXFS  0.0312  3  no\n");
    }

    #[test]
    fn markdown_keeps_html_and_escapes_text() {
        let cell = "x<script>alert(1)</script> & <!-- <0.0001 a>b \u{1b}[2J";
        assert_eq!(
            markdown_cell(cell),
            "x&lt;script>alert(1)&lt;/script> &amp; &lt;!-- <0.0001 a>b \\x1b[2J"
        );
    }

    #[test]
    fn markdown_and_csv_escape_their_separators() {
        let r = rows(&[&["a", "b"], &["x|y", "1,5 \"q\""]]);
        assert_eq!(
            markdown(&r),
            "| a | b |\n|---|---|\n| x\\|y | 1,5 \"q\" |\n"
        );
        assert_eq!(csv(&r), "a,b\nx|y,\"1,5 \"\"q\"\"\"\n");
    }

    #[test]
    fn csv_neutralises_formulas_but_not_numbers() {
        let r = rows(&[
            &["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tx", "-inf", "a=b"],
            &["-3.5", "+1e3", "-0", "12", "-", "x,=y", "=\"q\""],
        ]);
        assert_eq!(
            csv(&r),
            "\"'=1+2\",\"'+SUM(A1)\",\"'-2+3\",\"'@cmd\",\"'\tx\",\"'-inf\",a=b\n\
             -3.5,+1e3,-0,12,-,\"x,=y\",\"'=\"\"q\"\"\"\n"
        );
    }

    #[test]
    fn numbers_round_by_magnitude() {
        assert_eq!(
            [num(40123.4), num(12.345), num(0.12345), num(-250.6)],
            ["40123", "12.35", "0.1235", "-251"]
        );
        assert_eq!(num(4.4436e29), "4.444e29");
    }
}
