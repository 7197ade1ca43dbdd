//! The one clap value parser for every setting of the core that takes one
//! of a few names ([`Choice`]): it lists the values (`--help`, completions,
//! the man page) and refuses others exactly as clap's own `ValueEnum`
//! parser does, so the core needs no clap.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};

use crate::choice::Choice;

/// `value_parser = choice::<EngineKind>()`.
pub fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

#[derive(Clone, Copy, Debug)]
pub struct ChoiceParser<T>(PhantomData<T>);

fn possible<T: Choice>() -> impl Iterator<Item = PossibleValue> {
    T::ALL.iter().map(|(_, n)| {
        PossibleValue::new(n.name)
            .aliases(n.aliases.iter().copied())
            .help(n.help)
    })
}

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // clap's own parser of listed values says what is wrong, in the
        // words its `ValueEnum` parser uses.
        let text = PossibleValuesParser::new(possible::<T>()).parse_ref(cmd, arg, value)?;
        let ignore_case = arg.is_some_and(|a| a.is_ignore_case_set());
        Ok(T::ALL
            .iter()
            .zip(possible::<T>())
            .find(|(_, p)| p.matches(&text, ignore_case))
            .map(|((v, _), _)| *v)
            .expect("the parser accepts only listed values"))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(possible::<T>()))
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Command, try_parse_from};
    use crate::config::{EngineKind, IoMode};

    fn run(args: &[&str]) -> Result<crate::options::RunArgs, clap::Error> {
        let argv = ["dbio", "run"].iter().chain(args).copied();
        match try_parse_from(argv)?.command {
            Command::Run(r) => Ok(*r),
            _ => unreachable!("argv starts with run"),
        }
    }

    #[test]
    fn names_aliases_and_defaults_parse_to_their_values() {
        assert_eq!(run(&[]).unwrap().engine, EngineKind::Psync);
        assert_eq!(run(&[]).unwrap().io_mode, IoMode::Direct);
        let a = run(&["--engine", "uring", "--io", "fdatasync"]).unwrap();
        assert_eq!(
            (a.engine, a.io_mode),
            (EngineKind::IoUring, IoMode::Fdatasync)
        );
        let e = run(&["--engine", "aio"]).unwrap_err().to_string();
        assert!(
            e.contains("invalid value 'aio' for '--engine <ENGINE>'"),
            "{e}"
        );
        assert!(
            e.contains("[possible values: psync, io_uring, null]"),
            "{e}"
        );
    }
}
