//! postgresql.conf's own syntax for the values dbio writes there
//! (`dbio.conf`): a value is single-quoted with `'` doubled and `\`
//! escaped, as the server's configuration lexer reads it back; a value it
//! cannot carry (a line break ends a quoted string there) is refused.
//! `unix_socket_directories` is a comma list inside that value, whose
//! elements are double-quoted with `"` doubled (the server's
//! SplitDirectoriesString), so a `,` in a path stays in the path.

use std::path::Path;

/// Why a value cannot go into postgresql.conf.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfError {
    #[error("holds a line break, which postgresql.conf cannot carry in a value")]
    LineBreak,
    #[error("holds a NUL byte")]
    Nul,
    #[error("is not valid UTF-8")]
    NotUtf8,
}

/// `v` as a quoted postgresql.conf value: `'it''s'`, `'a\\b'`.
pub fn quote(v: &str) -> Result<String, ConfError> {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('\'');
    for c in v.chars() {
        match c {
            '\n' | '\r' => return Err(ConfError::LineBreak),
            '\0' => return Err(ConfError::Nul),
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
    Ok(out)
}

/// One directory as an element of `unix_socket_directories`' list:
/// double-quoted, `"` doubled (then quoted as any value by [`quote`]).
pub(crate) fn socket_dir_element(dir: &Path) -> Result<String, ConfError> {
    let s = dir.to_str().ok_or(ConfError::NotUtf8)?;
    Ok(format!("\"{}\"", s.replace('"', "\"\"")))
}

/// `dbio.conf`'s text: one `name = 'value'` line per setting, in order.
/// Names are setting names (letters, digits, `_`, `.`: checked when given).
pub fn render(settings: &[(String, String)]) -> Result<String, (String, ConfError)> {
    let mut text = String::from("# written by dbio for each run; do not edit\n");
    for (k, v) in settings {
        let q = quote(v).map_err(|e| (k.clone(), e))?;
        text.push_str(&format!("{k} = {q}\n"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_by_postgresqls_rules() {
        assert_eq!(quote("on").unwrap(), "'on'");
        assert_eq!(quote("").unwrap(), "''");
        assert_eq!(quote("it's").unwrap(), "'it''s'");
        assert_eq!(quote(r"a\tb").unwrap(), r"'a\\tb'");
        assert_eq!(
            quote("a\tb #c $(x) `y` \"z\"").unwrap(),
            "'a\tb #c $(x) `y` \"z\"'"
        );
        assert_eq!(quote("a\nb"), Err(ConfError::LineBreak));
        assert_eq!(quote("a\rb"), Err(ConfError::LineBreak));
    }

    #[test]
    fn socket_directories_keep_commas_and_quotes() {
        let e = socket_dir_element(Path::new("/t/a,b\"c/run")).unwrap();
        assert_eq!(e, "\"/t/a,b\"\"c/run\"");
        assert_eq!(quote(&e).unwrap(), "'\"/t/a,b\"\"c/run\"'");
        use std::os::unix::ffi::OsStrExt;
        let bad = Path::new(std::ffi::OsStr::from_bytes(b"/t/\xff"));
        assert_eq!(socket_dir_element(bad), Err(ConfError::NotUtf8));
    }

    #[test]
    fn render_names_the_setting_it_cannot_write() {
        let ok = render(&[("port".into(), "5432".into())]).unwrap();
        assert!(ok.ends_with("port = '5432'\n"), "{ok}");
        let e = render(&[("x".into(), "a\nb".into())]).unwrap_err();
        assert_eq!(e, ("x".to_string(), ConfError::LineBreak));
    }
}
