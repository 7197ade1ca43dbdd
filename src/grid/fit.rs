//! Text output fitted to the terminal's width: a prose line, or a `key
//! value` line, is wrapped at its spaces; a table (two lines or more of
//! fields two or more spaces apart, one under another, with three fields
//! or more) is wrapped by columns: the columns past the width go under it
//! in a second part, each row again led by its first column; where a
//! column alone is wider than the terminal (a meaning, a path) the rows
//! are wrapped at their spaces. Nothing is left out. The
//! width is `COLUMNS` when set, else the terminal's; output that is
//! neither (a pipe, a file) is left whole, as `ls` and `ps` do.

use std::fmt::Write;

/// The narrowest width fitted to: below it a table keeps one column.
const MIN_WIDTH: usize = 20;

/// The width text on stdout is fitted to: `COLUMNS` (a positive number),
/// else the terminal's columns when stdout is one; `None` otherwise.
pub fn terminal_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c.max(MIN_WIDTH));
    }
    let out = std::io::stdout();
    if !rustix::termios::isatty(&out) {
        return None;
    }
    rustix::termios::tcgetwinsize(&out)
        .ok()
        .map(|w| w.ws_col as usize)
        .filter(|&c| c > 0)
        .map(|c| c.max(MIN_WIDTH))
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The fields of a line: its words split where two or more spaces part
/// them (after the indentation).
fn fields(line: &str) -> usize {
    line.trim()
        .split("  ")
        .filter(|f| !f.trim().is_empty())
        .count()
}

/// Where each field of a line starts and ends (character positions).
fn edges(line: &str) -> (Vec<usize>, Vec<usize>) {
    let c: Vec<char> = line.chars().collect();
    let (mut starts, mut ends) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < c.len() {
        if c[i] == ' ' {
            i += 1;
            continue;
        }
        starts.push(i);
        // A field runs on over single spaces.
        while i < c.len() && !(c[i] == ' ' && c.get(i + 1).is_none_or(|n| *n == ' ')) {
            i += 1;
        }
        ends.push(i);
    }
    (starts, ends)
}

/// Whether two lines are rows of one table: their fields start or end at
/// the same places (text columns start together, numbers end together),
/// at least two and half of the shorter row's.
fn aligned(a: &str, b: &str) -> bool {
    let ((sa, ea), (sb, eb)) = (edges(a), edges(b));
    let same = |x: &[usize], y: &[usize]| x.iter().filter(|p| **p > 0 && y.contains(p)).count();
    let shared = same(&sa, &sb) + same(&ea, &eb);
    shared >= 2 && shared * 2 >= sa.len().min(sb.len())
}

/// `text` with every line within `width` characters (`None`: unchanged).
pub fn fit(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return text.to_string();
    };
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        // A table: consecutive lines of three fields or more, each
        // aligned with the one above.
        let block = 1 + lines[i..]
            .windows(2)
            .take_while(|w| fields(w[0]) >= 3 && fields(w[1]) >= 3 && aligned(w[0], w[1]))
            .count();
        let rows = &lines[i..i + block];
        if block >= 2 {
            if rows.iter().any(|l| chars(l) > width) {
                stack(rows, width, &mut out);
            } else {
                for l in rows {
                    let _ = writeln!(out, "{l}");
                }
            }
            i += block;
            continue;
        }
        let line = lines[i];
        if chars(line) <= width {
            let _ = writeln!(out, "{line}");
        } else {
            out += &wrap(line, width);
        }
        i += 1;
    }
    if !text.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Whether `at` falls between two columns on every row: two spaces before
/// it, or the row ended.
fn between(rows: &[Vec<char>], at: usize) -> bool {
    at >= 2
        && rows
            .iter()
            .all(|r| r.len() <= at || (r[at - 1] == ' ' && r[at - 2] == ' '))
}

/// A table wrapped by columns into `out`: the columns that fit, then the
/// rest under them, each row led by its first column again; rows wrapped
/// at their spaces where a column alone is too wide.
fn stack(rows: &[&str], width: usize, out: &mut String) {
    let mut rows: Vec<Vec<char>> = rows.iter().map(|l| l.chars().collect()).collect();
    let longest = rows.iter().map(Vec::len).max().unwrap_or(0);
    // The first column's end: the first boundary with text before it.
    let label = (2..longest)
        .find(|&at| {
            between(&rows, at)
                && rows
                    .iter()
                    .any(|r| r[..at.min(r.len())].iter().any(|c| *c != ' '))
        })
        .unwrap_or(0);
    // A first column too wide to lead each part: the parts are not led.
    let label = if label * 2 > width { 0 } else { label };
    loop {
        if rows.iter().all(|r| r.len() <= width) {
            for r in &rows {
                let _ = writeln!(out, "{}", r.iter().collect::<String>().trim_end());
            }
            return;
        }
        let Some(at) = (label + 1..=width).rev().find(|&at| between(&rows, at)) else {
            // A column wider than the width (a meaning, a path): each row
            // wrapped at its spaces.
            for r in &rows {
                *out += &wrap(r.iter().collect::<String>().trim_end(), width);
            }
            return;
        };
        let mut rest = Vec::with_capacity(rows.len());
        for r in &rows {
            let head: String = r.iter().take(at).collect();
            let _ = writeln!(out, "{}", head.trim_end());
            if r.len() > at {
                let mut next: Vec<char> = r[..label.min(at)].to_vec();
                next.extend(&r[at..]);
                rest.push(next);
            } else {
                rest.push(r[..label.min(r.len())].to_vec());
            }
        }
        if rest.iter().all(|r| r.len() <= label) {
            return;
        }
        rows = rest;
    }
}

/// One line wrapped within `width` at its spaces (two-space gaps kept);
/// continuation lines indented to a `key  value` line's value, else two
/// more than the line. A word longer than the width is cut.
pub fn wrap(line: &str, width: usize) -> String {
    let indent = chars(line) - chars(line.trim_start());
    let body = line.trim_start();
    // (gap before, word): the gap one or two spaces.
    let mut words: Vec<(&str, &str)> = Vec::new();
    let (mut rest, mut gap) = (body, "");
    while !rest.is_empty() {
        let end = rest.find(' ').unwrap_or(rest.len());
        words.push((gap, &rest[..end]));
        let after = &rest[end..];
        let trimmed = after.trim_start_matches(' ');
        gap = if after.len() - trimmed.len() >= 2 {
            "  "
        } else {
            " "
        };
        rest = trimmed;
    }
    // A `key  value` line: continuation lines start under the value.
    let value_at = body
        .find("  ")
        .filter(|&p| !body[..p].contains(' '))
        .map(|p| {
            let after = &body[p..];
            indent + chars(&body[..p]) + after.len() - after.trim_start().len()
        });
    let next_indent = " ".repeat(value_at.unwrap_or(indent + 2).min(width / 2));
    let mut out = String::new();
    let mut cur = " ".repeat(indent);
    let mut fresh = true;
    for (gap, w) in words {
        if !fresh && chars(&cur) + chars(gap) + chars(w) > width {
            let _ = writeln!(out, "{}", cur.trim_end());
            cur = next_indent.clone();
            fresh = true;
        }
        if !fresh {
            cur += gap;
        }
        cur += w;
        fresh = false;
        while chars(&cur) > width {
            let head: String = cur.chars().take(width).collect();
            let _ = writeln!(out, "{head}");
            cur = next_indent.clone() + &cur.chars().skip(width).collect::<String>();
        }
    }
    let _ = writeln!(out, "{}", cur.trim_end());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(s: &str) -> usize {
        s.lines().map(chars).max().unwrap_or(0)
    }

    #[test]
    fn a_table_too_wide_goes_on_under_itself_led_by_its_first_column() {
        let t = "id  started               status     target\n 1  2026-11-27T23:39:40Z  completed  /a/long/path\n12  2026-11-27T23:39:41Z  failed     /b\n";
        let out = fit(t, Some(40));
        assert!(widest(&out) <= 40, "{out}");
        assert_eq!(
            out,
            "id  started               status\n \
              1  2026-11-27T23:39:40Z  completed\n\
             12  2026-11-27T23:39:41Z  failed\n\
             id  target\n \
              1  /a/long/path\n\
             12  /b\n"
        );
        // Wide enough, or not a terminal: unchanged.
        assert_eq!(fit(t, Some(200)), t);
        assert_eq!(fit(t, None), t);
        // Narrower: stacked again, every field kept whole.
        let out = fit(t, Some(26));
        assert!(widest(&out) <= 26, "{out}");
        for w in t.split_whitespace() {
            assert!(out.split_whitespace().any(|o| o == w), "{w} in {out}");
        }
    }

    #[test]
    fn prose_and_single_lines_of_fields_wrap() {
        let prose =
            "(same on both: block_size, device vda model, engine, files, filesystem, host cpus)";
        let out = fit(prose, Some(30));
        assert!(widest(&out) <= 30, "{out}");
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            prose.split_whitespace().collect::<Vec<_>>(),
            "every word kept, in order"
        );
        let fields = "host cpu %user 96.5  %system 3.0  %iowait 0.0  load 16.86";
        let out = fit(fields, Some(30));
        assert_eq!(
            out,
            "host cpu %user 96.5  %system\n  3.0  %iowait 0.0  load 16.86"
        );
        // A `key  value` line goes on under its value.
        let kv = "storage  /tmp/t on ext4 (rw,relatime) on /dev/vda";
        assert_eq!(
            fit(kv, Some(30)),
            "storage  /tmp/t on ext4\n         (rw,relatime) on\n         /dev/vda"
        );
        // A word longer than the line is cut, nothing lost.
        let out = wrap(&"x".repeat(50), 20);
        assert!(widest(&out) <= 20, "{out}");
        assert_eq!(out.chars().filter(|&c| c == 'x').count(), 50);
    }
}
