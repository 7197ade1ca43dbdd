//! Variable and session counts out of an AWR report's file name (the FILE
//! column of awr_info.sh), by a documented rule the user can replace
//! (docs/import.md):
//!
//! * SLOB 2 names a report `<free text>.<sessions>` (awr_info.sh takes the
//!   last dot-separated field as SESSIONS);
//! * the original SLOB named it `<free text with the variable>.<writers>.<readers>`;
//! * the variable is the free text (directory and a `.txt` at its end
//!   removed: `awr.txt` and `awr.txt.8` are both `awr`) less a trailing
//!   repeat counter (`-3`, `_run3`, `.r3`, …: a `-`, `_` or `.`, an optional
//!   `run`, `rep` or `r`, digits); the directory is kept in [`Named::dir`]
//!   so that rows of different directories are not merged
//!   ([`super::awr_runs`] puts it in front where two would be);
//! * `--variable-regex` replaces all of this: a regex searched in the FILE
//!   cell with a named group `variable` and optional groups `sessions`,
//!   `writers`, `readers`.

use regex::Regex;

/// What a file name says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Named {
    pub variable: String,
    /// The directory of the FILE cell as written (`XFS` for `XFS/awr.txt.16`),
    /// empty without one; not used with `--variable-regex`.
    pub dir: String,
    pub sessions: Option<u32>,
    pub writers: Option<u32>,
    pub readers: Option<u32>,
}

/// How file names are read.
#[derive(Clone, Debug)]
pub enum Rule {
    /// The SLOB conventions above; `writers_readers` when the table has
    /// READERS/WRITERS columns (the original SLOB's `.<writers>.<readers>`).
    Default { writers_readers: bool },
    /// `--variable-regex`.
    Regex(Regex),
}

/// Why a `--variable-regex` cannot be used: one line with an example.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegexError {
    #[error("--variable-regex {re:?} is not a valid regex: {first}")]
    Invalid { re: String, first: String },
    #[error(
        "--variable-regex {0:?} has no group named variable; write e.g. '(?P<variable>XFS|EXT4)' or 'AWR-(?P<variable>[^.]+)-\\d+\\.(?P<sessions>\\d+)$'"
    )]
    NoVariable(String),
    #[error(
        "--variable-regex {re:?} has a group named {name}; the groups are variable, sessions, writers and readers"
    )]
    UnknownGroup { re: String, name: String },
}

/// Why a FILE cell does not fit its `--variable-regex`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("{file:?} does not match --variable-regex {re:?}")]
    NoMatch { file: String, re: String },
    #[error("{file:?}: the variable group of --variable-regex {re:?} matched nothing")]
    EmptyVariable { file: String, re: String },
    #[error("{file:?}: the {group} group of --variable-regex matched {text:?}, not a whole number")]
    NotANumber {
        file: String,
        group: String,
        text: String,
    },
}

/// Checks a `--variable-regex`: it must compile and have a `variable` group.
pub fn compile(re: &str) -> Result<Regex, RegexError> {
    let r = Regex::new(re).map_err(|e| {
        let first = e.to_string();
        let first = first.lines().last().unwrap_or("invalid").trim().to_string();
        RegexError::Invalid {
            re: re.to_string(),
            first,
        }
    })?;
    if !r.capture_names().flatten().any(|n| n == "variable") {
        return Err(RegexError::NoVariable(re.to_string()));
    }
    for name in r.capture_names().flatten() {
        if !matches!(name, "variable" | "sessions" | "writers" | "readers") {
            return Err(RegexError::UnknownGroup {
                re: re.to_string(),
                name: name.to_string(),
            });
        }
    }
    Ok(r)
}

fn count(text: &str) -> Option<u32> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Removes a trailing repeat counter (`-3`, `_run12`, `.r2`) unless that
/// would leave nothing.
pub fn strip_counter(text: &str) -> &str {
    let digits = text.trim_end_matches(|c: char| c.is_ascii_digit());
    if digits.len() == text.len() {
        return text;
    }
    let lower = digits.to_ascii_lowercase();
    let word = ["run", "rep", "r"]
        .iter()
        .find(|w| lower.ends_with(*w))
        .map_or(0, |w| w.len());
    let head = &digits[..digits.len() - word];
    match head.strip_suffix(['-', '_', '.']) {
        Some(rest) if !rest.is_empty() => rest,
        _ => text,
    }
}

/// `text` without a `.txt` at its end (any case), unless that leaves nothing.
fn strip_txt(text: &str) -> &str {
    match text.len().checked_sub(4) {
        Some(n) if n > 0 && text.is_char_boundary(n) && text[n..].eq_ignore_ascii_case(".txt") => {
            &text[..n]
        }
        _ => text,
    }
}

/// Reads `file` (a FILE cell) by `rule`; `Err` says why it does not fit.
pub fn name(file: &str, rule: &Rule) -> Result<Named, NameError> {
    match rule {
        Rule::Regex(re) => {
            let caps = re.captures(file).ok_or_else(|| NameError::NoMatch {
                file: file.to_string(),
                re: re.as_str().to_string(),
            })?;
            let variable = caps
                .name("variable")
                .map(|m| m.as_str().to_string())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| NameError::EmptyVariable {
                    file: file.to_string(),
                    re: re.as_str().to_string(),
                })?;
            let group = |g: &str| -> Result<Option<u32>, NameError> {
                match caps.name(g) {
                    None => Ok(None),
                    Some(m) => count(m.as_str())
                        .map(Some)
                        .ok_or_else(|| NameError::NotANumber {
                            file: file.to_string(),
                            group: g.to_string(),
                            text: m.as_str().to_string(),
                        }),
                }
            };
            Ok(Named {
                variable,
                dir: String::new(),
                sessions: group("sessions")?,
                writers: group("writers")?,
                readers: group("readers")?,
            })
        }
        Rule::Default { writers_readers } => {
            let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
            let dir = file[..file.len() - base.len()].trim_end_matches(['/', '\\']);
            let base = strip_txt(base);
            let fields: Vec<&str> = base.split('.').collect();
            let mut named = Named::default();
            let mut free = fields.len();
            if *writers_readers && fields.len() >= 3 {
                let (w, r) = (
                    count(fields[fields.len() - 2]),
                    count(fields[fields.len() - 1]),
                );
                if let (Some(w), Some(r)) = (w, r) {
                    named.writers = Some(w);
                    named.readers = Some(r);
                    free -= 2;
                }
            }
            let last = count(fields[fields.len() - 1]);
            if let (true, Some(s)) = (free == fields.len() && fields.len() >= 2, last) {
                named.sessions = Some(s);
                free -= 1;
            }
            let text = fields[..free].join(".");
            named.variable = strip_counter(strip_txt(&text)).to_string();
            named.dir = dir.to_string();
            if named.variable.is_empty() {
                named.variable = base.to_string();
            }
            Ok(named)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default(file: &str) -> Named {
        name(
            file,
            &Rule::Default {
                writers_readers: false,
            },
        )
        .unwrap()
    }

    #[test]
    fn slob2_names_end_in_the_session_count() {
        let n = default("/awr/SLOB-AWR-XFS-3.16");
        assert_eq!(
            (n.variable.as_str(), n.sessions),
            ("SLOB-AWR-XFS", Some(16))
        );
        assert_eq!(default("awr.EXT4.run2.8.txt").variable, "awr.EXT4");
        // A variable ending in digits keeps them (no separator before them).
        assert_eq!(default("EXT4.32").variable, "EXT4");
        assert_eq!(default("RAID-10_r1.4").variable, "RAID-10");
        assert_eq!(
            default("awr.txt"),
            Named {
                variable: "awr".into(),
                ..Default::default()
            }
        );
        // awr.txt and awr.txt.8 name the same variable; the directory is kept.
        let n = default("XFS/awr.txt.16");
        assert_eq!(
            (n.variable.as_str(), n.dir.as_str(), n.sessions),
            ("awr", "XFS", Some(16))
        );
        assert_eq!(default("awr.TXT.8").variable, "awr");
        assert_eq!(default("/a/b/awr.txt").dir, "/a/b");
        assert_eq!(default(".txt.4").variable, ".txt");
    }

    #[test]
    fn original_slob_names_end_in_writers_and_readers() {
        let rule = Rule::Default {
            writers_readers: true,
        };
        let n = name("AWR-FCSAN-run10.8.0", &rule).unwrap();
        assert_eq!(n.variable, "AWR-FCSAN");
        assert_eq!((n.writers, n.readers, n.sessions), (Some(8), Some(0), None));
    }

    #[test]
    fn a_regex_names_the_parts() {
        let re =
            compile(r"-(?P<variable>XFS|EXT3)-\d+\.(?P<writers>\d+)\.(?P<readers>\d+)$").unwrap();
        let n = name("SLOB-AWR-EXT3-7.16.0", &Rule::Regex(re.clone())).unwrap();
        assert_eq!(
            (n.variable.as_str(), n.writers, n.readers),
            ("EXT3", Some(16), Some(0))
        );
        let e = name("SLOB-AWR-ZFS-7.16.0", &Rule::Regex(re))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not match --variable-regex"), "{e}");
        assert!(
            compile("(?P<var>x)")
                .unwrap_err()
                .to_string()
                .contains("no group named variable")
        );
        assert!(
            compile("(?P<variable>x)(?P<run>\\d)")
                .unwrap_err()
                .to_string()
                .contains("named run")
        );
        assert!(
            compile("(?P<variable>x")
                .unwrap_err()
                .to_string()
                .contains("not a valid regex")
        );
        let re = compile(r"(?P<variable>\w+)\.(?P<sessions>\w+)").unwrap();
        assert!(
            name("a.b", &Rule::Regex(re))
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
    }
}
