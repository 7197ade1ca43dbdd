//! Settings that take one of a few names (a pattern, an engine, an I/O
//! mode): each value's name, its other spellings and a line of help, so a
//! command line, a plan file or another program can parse and list them
//! without this crate knowing how (the CLI builds its value parser from
//! [`Choice::ALL`]).

/// How one value is written and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Named {
    /// The name it is given and shown by.
    pub name: &'static str,
    /// Other accepted spellings (never listed).
    pub aliases: &'static [&'static str],
    /// One line on what it does (None: the name says it).
    pub help: Option<&'static str>,
}

impl Named {
    /// A value known only by its name.
    pub const fn plain(name: &'static str) -> Named {
        Named {
            name,
            aliases: &[],
            help: None,
        }
    }

    /// A value with a line of help.
    pub const fn help(name: &'static str, help: &'static str) -> Named {
        Named {
            name,
            aliases: &[],
            help: Some(help),
        }
    }
}

/// An enum whose values are chosen by name.
pub trait Choice: Copy + Send + Sync + 'static {
    /// Every value with its name, in the order they are listed.
    const ALL: &'static [(Self, Named)];

    /// The value named (or spelled) `s`, exactly.
    fn from_name(s: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(_, n)| n.name == s || n.aliases.contains(&s))
            .map(|(v, _)| *v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EngineKind, IoMode, Pattern};
    use crate::workload::slob::{RedoStress, RedoSync};

    /// Every value is listed once, under a name that finds it again.
    fn names_find_their_values<T: Choice + PartialEq + std::fmt::Debug>() {
        for (i, (v, n)) in T::ALL.iter().enumerate() {
            assert_eq!(T::from_name(n.name), Some(*v), "{}", n.name);
            for a in n.aliases {
                assert_eq!(T::from_name(a), Some(*v), "{a}");
            }
            assert!(T::ALL[..i].iter().all(|(w, _)| w != v), "{v:?} twice");
        }
        assert_eq!(T::from_name("no such value"), None);
    }

    #[test]
    fn every_choice_parses_its_own_names() {
        names_find_their_values::<Pattern>();
        names_find_their_values::<EngineKind>();
        names_find_their_values::<IoMode>();
        names_find_their_values::<RedoStress>();
        names_find_their_values::<RedoSync>();
        names_find_their_values::<crate::workload::slob::flavor::Flavor>();
        assert_eq!(EngineKind::from_name("uring"), Some(EngineKind::IoUring));
    }
}
