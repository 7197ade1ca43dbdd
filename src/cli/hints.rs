//! What dbio calls a thing a user typed by another name: fio's option
//! names (`--runtime` is `--time`), an option spelled with underscores as
//! fio and plan files do (`--read_pct`), and a subcommand of a subcommand
//! typed at the top (`dbio list` is `dbio runs list`). Added to the one
//! error line when clap has no suggestion of its own.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// fio's option names and what dbio calls them (`dbio run`). Names that are
/// the same in both (`--bs`, `--size`, `--iodepth`, `--verify`) need no entry.
pub const FIO_NAMES: &[(&str, &str)] = &[
    ("runtime", "--time (runs are timed unless --ops is given)"),
    ("time_based", "--time (runs are timed by default)"),
    ("ramp_time", "--ramp"),
    ("numjobs", "--sessions"),
    (
        "rw",
        "--pattern (randread, randwrite, randrw, seqread, seqwrite)",
    ),
    (
        "readwrite",
        "--pattern (randread, randwrite, randrw, seqread, seqwrite)",
    ),
    ("rwmixread", "--read-pct"),
    ("rwmixwrite", "--read-pct (100 minus fio's rwmixwrite)"),
    ("ioengine", "--engine (psync, io_uring)"),
    ("direct", "--io direct (direct=0 is --io buffered)"),
    ("buffered", "--io buffered"),
    ("fsync", "--io fsync (a sync after every write)"),
    ("fdatasync", "--io fdatasync (a sync after every write)"),
    ("sync", "--io dsync (O_DSYNC)"),
    ("blocksize", "--bs"),
    (
        "filename",
        "--target (a directory for data files, or a block device)",
    ),
    ("directory", "--target"),
    ("nrfiles", "--files"),
    ("filesize", "--size (the total over --files)"),
    (
        "rate_iops",
        "--rate (requests per second over all sessions)",
    ),
    ("rate_process", "--arrival (uniform, poisson)"),
    ("randseed", "--seed"),
    (
        "random_distribution",
        "--dist (uniform, zipf:THETA, pareto:H)",
    ),
    ("number_ios", "--ops (the total over all sessions)"),
    ("io_size", "--ops (a count of requests)"),
    (
        "output-format",
        "--json (or --progress jsonl while it runs)",
    ),
    ("status-interval", "--progress plain (a line per second)"),
    (
        "eta",
        "--progress tty (always) or plain (a line per second)",
    ),
    ("eta-newline", "--progress plain"),
    ("name", "--tag"),
    (
        "group_reporting",
        "nothing: a run's sessions are always reported together",
    ),
    ("buffer_compress_percentage", "--compress-pct"),
    ("dedupe_percentage", "--dedupe-pct"),
    ("verify_backlog", "--verify-after-write"),
    ("hipri", "--sqthread-poll or --uring-taskrun"),
];

/// Subcommands of a subcommand, typed at the top: (typed, what to type).
const NESTED: &[(&str, &str)] = &[
    ("list", "dbio runs list"),
    ("ls", "dbio runs list"),
    ("show", "dbio runs show"),
    ("export", "dbio runs export"),
    ("delete", "dbio runs delete"),
    ("rm", "dbio runs delete"),
    ("tag", "dbio runs tag"),
    ("note", "dbio runs note"),
    ("discard", "dbio lab discard"),
    ("cleanup", "dbio lab cleanup"),
    ("bench", "dbio run"),
    ("test", "dbio run"),
    (
        "fio",
        "dbio run (fio's option names are answered with dbio's) or dbio import fio",
    ),
    ("html", "dbio report --html FILE"),
];

/// A hint for `e`, or None: clap's own tip is kept by the error line.
pub fn hint(e: &clap::Error, cmd: &clap::Command) -> Option<String> {
    let typed = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let arg = typed(ContextKind::InvalidArg)?;
            option(arg, cmd)
        }
        ErrorKind::InvalidSubcommand => {
            let word = typed(ContextKind::InvalidSubcommand)?;
            NESTED
                .iter()
                .find(|(w, _)| *w == word)
                .map(|(_, to)| format!("dbio calls this `{to}`"))
        }
        _ => None,
    }
}

/// `--runtime=10`, `--read_pct`: fio's name, or dbio's with dashes.
fn option(arg: &str, cmd: &clap::Command) -> Option<String> {
    let name = arg.trim_start_matches('-');
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    if let Some((_, dbio)) = FIO_NAMES.iter().find(|(f, _)| *f == name) {
        return Some(format!("fio's --{name} is dbio's {dbio}"));
    }
    let dashed = name.replace('_', "-");
    (dashed != name && has_long(cmd, &dashed)).then(|| format!("dbio spells it --{dashed}"))
}

/// Whether any command of `cmd` has the long option `--name`.
fn has_long(cmd: &clap::Command, name: &str) -> bool {
    cmd.get_arguments().any(|a| a.get_long() == Some(name))
        || cmd.get_subcommands().any(|c| has_long(c, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(argv: &[&str]) -> String {
        let e = crate::cli::try_parse_from(argv).unwrap_err();
        crate::cli::error_line(&e)
    }

    #[test]
    fn every_fio_answer_names_a_real_option() {
        let cmd = crate::cli::command();
        let run = cmd.find_subcommand("run").unwrap();
        for (fio, dbio) in FIO_NAMES {
            assert!(!has_long(run, fio), "--{fio} is dbio's own option too");
            for word in dbio.split_whitespace().filter(|w| w.starts_with("--")) {
                let opt = word
                    .trim_start_matches("--")
                    .trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
                assert!(has_long(run, opt), "{fio}: `dbio run` has no {word}");
            }
        }
    }

    #[test]
    fn nested_subcommands_exist() {
        let cmd = crate::cli::command();
        for (typed, to) in NESTED {
            assert!(
                cmd.find_subcommand(typed).is_none(),
                "{typed} is a subcommand"
            );
            let mut words = to.split_whitespace().skip(1);
            let first = words.next().unwrap();
            let sub = cmd.find_subcommand(first).expect(to);
            if let Some(second) = words
                .next()
                .filter(|w| !w.starts_with('-') && *w != "(fio's")
            {
                assert!(sub.find_subcommand(second).is_some(), "{to}");
            }
        }
    }

    #[test]
    fn the_error_line_keeps_clap_tips_and_answers_fio_names() {
        let l = line(&["dbio", "run", "--sesions", "4"]);
        assert!(
            l.contains("'--sesions'") && l.contains("similar argument exists: '--sessions'"),
            "{l}"
        );
        let l = line(&["dbio", "rnu"]);
        assert!(
            l.contains("'rnu'") && l.contains("similar subcommand exists: 'run"),
            "{l}"
        );
        let l = line(&["dbio", "run", "--runtime=30"]);
        assert!(
            l.ends_with("fio's --runtime is dbio's --time (runs are timed unless --ops is given)"),
            "{l}"
        );
        let l = line(&["dbio", "run", "--numjobs", "8"]);
        assert!(l.contains("fio's --numjobs is dbio's --sessions"), "{l}");
        let l = line(&["dbio", "run", "--read_pct", "70"]);
        assert!(l.contains("--read-pct"), "{l}");
        let l = line(&["dbio", "ls"]);
        assert!(l.contains("dbio calls this `dbio runs list`"), "{l}");
        for l in [l, line(&["dbio", "run", "--rw", "randread"])] {
            assert_eq!(l.lines().count(), 1, "{l}");
        }
    }
}
