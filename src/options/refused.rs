//! [`Refused`]: a command line dbio will not run — a value out of range,
//! options that do not go together, a plan key that is no option. One line
//! naming the option, the value and what to give instead; the commands map
//! it to exit 2 (nothing was run), clap's value parsers show it as their own.

/// A refused command line, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(String);

impl Refused {
    /// The line, for callers that add to it (a plan adds its file and line).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Refused {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<String> for Refused {
    fn from(line: String) -> Refused {
        Refused(line)
    }
}

impl From<&str> for Refused {
    fn from(line: &str) -> Refused {
        Refused(line.to_string())
    }
}

impl From<Refused> for String {
    fn from(r: Refused) -> String {
        r.0
    }
}

impl From<crate::units::UnitError> for Refused {
    fn from(e: crate::units::UnitError) -> Refused {
        Refused(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::Refused;

    #[test]
    fn a_refusal_is_its_line_unchanged() {
        let r = Refused::from(format!("--bs {} is not a page size", 3000));
        assert_eq!(r.to_string(), "--bs 3000 is not a page size");
        assert!(r.contains("--bs 3000"));
        assert_eq!(String::from(r.clone()), r.as_str());
        let boxed: Box<dyn std::error::Error + Send + Sync> = r.into();
        assert_eq!(boxed.to_string(), "--bs 3000 is not a page size");
    }
}
