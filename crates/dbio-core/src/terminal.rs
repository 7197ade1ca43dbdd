//! Text from users, the store and other tools as the terminal shows it:
//! every control character (C0, DEL, C1) escaped, so a note, a target path,
//! a tag or a name imported from fio's JSON or an AWR file name can never
//! retitle the terminal (`ESC ] 0 ; … BEL`), clear it (`ESC [ 2 J`) or move
//! the cursor; and values quoted in error lines cut to [`QUOTE_MAX`]
//! characters with their length.
//!
//! [`field`] is for one value (a table cell, a name: a line break in it is
//! escaped too; [`path`] for a path), [`text`] for a whole document that dbio laid out in lines
//! (its line breaks kept), [`quote`] for a value in an error line, and
//! [`line`] for a whole error line (control characters escaped, any value
//! longer than [`QUOTE_MAX`] cut).

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of one value an error line quotes.
pub(crate) const QUOTE_MAX: usize = 200;

/// Room for [`quote`]'s `… (N characters)` and quotes: [`line`] leaves a
/// value cut already as it is.
const CUT_MARK: usize = 32;

/// `c` escaped: `\t`, `\n`, `\r`, else `\x1b` (C0, DEL) or `\u{9b}` (C1).
fn push_escaped(o: &mut String, c: char) {
    match c {
        '\t' => o.push_str("\\t"),
        '\n' => o.push_str("\\n"),
        '\r' => o.push_str("\\r"),
        c if (c as u32) < 0x80 => {
            let _ = write!(o, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(o, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `s` with every character `escape` picks escaped; borrowed when none is.
fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escape) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escape(c) {
            push_escaped(&mut o, c);
        } else {
            o.push(c);
        }
    }
    Cow::Owned(o)
}

/// One value (a cell, a name, a path): every control character escaped,
/// line breaks and tabs included.
pub fn field(s: &str) -> Cow<'_, str> {
    escape_where(s, char::is_control)
}

/// A path as one value: [`field`] of its text (bytes that are not UTF-8
/// shown as `�`).
pub fn path(p: &std::path::Path) -> String {
    field(&p.to_string_lossy()).into_owned()
}

/// A document dbio laid out in lines (a report, a table): its line breaks
/// kept, every other control character escaped.
pub fn text(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n' && c.is_control())
}

/// A value as an error line quotes it: escaped, and when longer than
/// [`QUOTE_MAX`] characters, its first ones, `…` and how long it is.
pub fn quote(s: &str) -> String {
    let n = s.chars().count();
    if n <= QUOTE_MAX {
        return field(s).into_owned();
    }
    let head: String = s.chars().take(QUOTE_MAX).collect();
    format!("{}… ({n} characters)", field(&head))
}

/// A whole error line: control characters escaped and every word (a run
/// without spaces) or quoted value ('…' or "…" opening a word) longer than
/// [`QUOTE_MAX`] characters (and the room of a cut mark) cut as [`quote`]
/// cuts it, so no value, however it reached the line, is echoed whole.
pub fn line(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut o = String::with_capacity(s.len().min(4096));
    let mut i = 0;
    while i < chars.len() {
        let start_of_word = i == 0 || chars[i - 1] == ' ';
        let word_end = || {
            chars[i..]
                .iter()
                .position(|&c| c == ' ')
                .map_or(chars.len(), |p| i + p)
        };
        let end = match chars[i] {
            q @ ('\'' | '"') if start_of_word => chars[i + 1..]
                .iter()
                .position(|&c| c == q)
                .map_or_else(word_end, |p| i + 1 + p + 1),
            ' ' => i + 1,
            _ => word_end(),
        };
        let value: String = chars[i..end].iter().collect();
        match value.chars().next() {
            _ if end - i <= QUOTE_MAX + CUT_MARK => o.push_str(&field(&value)),
            Some(q @ ('\'' | '"')) if end - i >= 2 && value.ends_with(q) => {
                let inner = &value[1..value.len() - 1];
                let _ = write!(o, "{q}{}{q}", quote(inner));
            }
            _ => o.push_str(&quote(&value)),
        }
        i = end;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_plain_text_borrowed() {
        assert!(matches!(field("/data/t 1"), Cow::Borrowed("/data/t 1")));
        assert_eq!(field("a\u{1b}]0;pwned\u{7}b"), "a\\x1b]0;pwned\\x07b");
        assert_eq!(field("\u{1b}[2J\u{7f}\u{9b}31m"), "\\x1b[2J\\x7f\\u{9b}31m");
        assert_eq!(field("a\tb\nc\rd"), "a\\tb\\nc\\rd");
        assert_eq!(
            text("line 1\nline\u{1b}[2J 2\n"),
            "line 1\nline\\x1b[2J 2\n"
        );
        assert_eq!(field("é ü 日本"), "é ü 日本", "printable text is kept");
    }

    #[test]
    fn a_long_value_is_cut_with_its_length() {
        let long = "x".repeat(100_000);
        let q = quote(&long);
        assert_eq!(q, format!("{}… (100000 characters)", "x".repeat(200)));
        assert_eq!(quote(&"y".repeat(200)), "y".repeat(200));
    }

    #[test]
    fn an_error_line_cuts_every_long_value_and_keeps_the_rest() {
        let tag = "t".repeat(5000);
        let l = line(&format!(
            "tag \"{tag}\" is not valid: a tag is 1 to 64 letters"
        ));
        assert_eq!(
            l,
            format!(
                "tag \"{}… (5000 characters)\" is not valid: a tag is 1 to 64 letters",
                "t".repeat(200)
            )
        );
        let spaced = format!("'{}'", "a b ".repeat(1000));
        let l = line(&format!("invalid value {spaced} for '--size <SIZE>'"));
        assert!(l.len() < 300 && l.ends_with("for '--size <SIZE>'"), "{l}");
        let l = line(&format!("--target {}: no such directory", "/d".repeat(300)));
        assert!(
            l.len() < 300 && l.ends_with("(601 characters) no such directory"),
            "{l}"
        );
        assert_eq!(
            line("it's dbio's \u{1b}[2J line"),
            "it's dbio's \\x1b[2J line"
        );
        let cut = format!("tag '{}' is not valid", quote(&tag));
        assert_eq!(line(&cut), cut, "a value cut already is left as it is");
    }
}
