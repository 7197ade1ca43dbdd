//! The seam with `dbio run`: which plan keys are options, how a TOML value
//! becomes command-line text, and validation by the real clap parser and
//! [`RunArgs::into_config`](crate::options::RunArgs::into_config).

use crate::options::Refused;
use clap::ArgAction;
use toml::de::DeValue;

use crate::config::RunConfig;

/// Options of `dbio run` a plan may not set: `dbio plan` controls them.
pub(crate) const RESERVED: &[(&str, &str)] = &[
    (
        "json",
        "is set by dbio plan itself (every run's report is stored); remove it",
    ),
    (
        "quiet",
        "is set by dbio plan itself (it shows its own progress); remove it",
    ),
    (
        "progress",
        "is set by dbio plan itself (it shows its own progress and ETA); remove it",
    ),
    (
        "progress-file",
        "is set by dbio plan itself (it shows its own progress and ETA); remove it",
    ),
    (
        "output",
        "is not for plans: every run is stored; write a report with dbio report --output FILE; remove it",
    ),
    (
        "db",
        "is chosen for the whole plan: dbio plan run PLAN --db PATH; remove it",
    ),
    (
        "metrics-listen",
        "is chosen for the whole plan: metrics_listen = \"ADDR:PORT\" at the top of the plan, or dbio plan run PLAN --metrics-listen ADDR:PORT; remove it",
    ),
    (
        "metrics-textfile",
        "is chosen for the whole plan: metrics_textfile = \"DIR\" at the top of the plan, or dbio plan run PLAN --metrics-textfile DIR; remove it",
    ),
    (
        "mpi",
        "is not supported in plans yet: run each step with dbio run --mpi under mpirun; remove it",
    ),
];

/// One long option of `dbio run`.
#[derive(Clone, Debug)]
pub(crate) struct RunOption {
    /// The long name without dashes, as clap knows it (`read-pct`).
    pub long: String,
    /// A flag (`--json`): present or absent, set with `true` / `false`.
    pub flag: bool,
}

/// Every long option of `dbio run` (help and version excluded) in the order
/// of `dbio run --help` (the order arguments are written in), read from the
/// clap definition so that new options are plan keys at once.
pub(crate) fn run_options() -> Vec<RunOption> {
    crate::options::run_command()
        .get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            if matches!(long, "help" | "version") {
                return None;
            }
            Some(RunOption {
                long: long.to_string(),
                flag: matches!(a.get_action(), ArgAction::SetTrue),
            })
        })
        .collect()
}

/// `read_pct` and `read-pct` are the same key.
pub(crate) fn normalize(key: &str) -> String {
    key.replace('_', "-")
}

/// Finds the option a plan key names, or says why it is not one.
pub(crate) fn lookup<'a>(options: &'a [RunOption], key: &str) -> Result<&'a RunOption, Refused> {
    let norm = normalize(key);
    if let Some((_, why)) = RESERVED.iter().find(|(k, _)| *k == norm) {
        return Err((*why).into());
    }
    if let Some(o) = options.iter().find(|o| o.long == norm) {
        return Ok(o);
    }
    let mut msg = "is not an option of dbio run".to_string();
    if let Some(s) = suggest(&norm, options.iter().map(|o| o.long.as_str())) {
        msg.push_str(&format!(" (did you mean {}?)", s.replace('-', "_")));
    } else {
        msg.push_str(" (see dbio run --help)");
    }
    Err(msg.into())
}

/// The closest name within an edit distance of 2, if any.
pub(crate) fn suggest<'a>(key: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    names
        .map(|n| (edit_distance(key, n), n))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// Levenshtein distance in characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A plan value after its type was checked against its option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// A flag: `true` writes `--name`, `false` writes nothing.
    Flag(bool),
    /// The text after `--name`.
    Text(String),
}

impl Val {
    /// How the value appears in a cell key and in `{name}` templates.
    pub fn label(&self) -> String {
        match self {
            Val::Flag(b) => b.to_string(),
            Val::Text(t) => t.clone(),
        }
    }
}

/// The TOML type name used in messages.
pub(crate) fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// An integer as written (any radix), if it fits in i64.
pub(crate) fn integer(v: &DeValue<'_>) -> Option<Result<i64, ()>> {
    match v {
        DeValue::Integer(i) => Some(i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| ())),
        _ => None,
    }
}

/// Checks the TOML type of a value for an option and turns it into text.
pub(crate) fn to_val(opt: &RunOption, v: &DeValue<'_>) -> Result<Val, Refused> {
    if opt.flag {
        return match v {
            DeValue::Boolean(b) => Ok(Val::Flag(*b)),
            other => Err(format!(
                "expected true or false (--{} is a flag), found {}",
                opt.long,
                type_name(other)
            )
            .into()),
        };
    }
    match v {
        DeValue::String(s) => Ok(Val::Text(s.to_string())),
        DeValue::Integer(_) => match integer(v) {
            Some(Ok(n)) => Ok(Val::Text(n.to_string())),
            _ => Err("integer is too large".into()),
        },
        DeValue::Float(f) => Ok(Val::Text(f.as_str().to_string())),
        DeValue::Array(_) => Err(
            "expected a string or a number (e.g. \"8k\", 16), found an array; a list of values to sweep belongs in [sweep]".into(),
        ),
        other => Err(format!(
            "expected a string or a number (e.g. \"8k\", 16), found {}",
            type_name(other)
        ).into()),
    }
}

/// Appends `--name value` (or `--name` for a set flag) to an argument list.
pub(crate) fn push_arg(args: &mut Vec<String>, long: &str, val: &Val) {
    match val {
        Val::Flag(true) => args.push(format!("--{long}")),
        Val::Flag(false) => {}
        // A value starting with '-' would be taken for an option.
        Val::Text(t) if t.starts_with('-') => args.push(format!("--{long}={t}")),
        Val::Text(t) => {
            args.push(format!("--{long}"));
            args.push(t.clone());
        }
    }
}

/// Checks one value on its own with clap: values clap refuses whatever else
/// is set (a bad size, a number out of range, an unknown enum value). Errors
/// that depend on other options (conflicts, requirements) are left to
/// [`parse_run`] on the whole argument list.
pub(crate) fn check_alone(long: &str, val: &Val) -> Result<(), Refused> {
    let mut args = Vec::new();
    push_arg(&mut args, long, val);
    if args.is_empty() {
        return Ok(());
    }
    match crate::options::parse_run_args(&args) {
        Ok(_) => Ok(()),
        Err(e) => {
            use clap::error::ErrorKind::*;
            match e.kind() {
                ArgumentConflict | MissingRequiredArgument => Ok(()),
                _ => Err(clap_line(&e).into()),
            }
        }
    }
}

/// Parses a full `dbio run` argument list exactly as the binary would.
pub(crate) fn parse_run(args: &[String]) -> Result<RunConfig, Refused> {
    let mut r = crate::options::parse_run_args(args).map_err(|e| clap_line(&e))?;
    // A plan may run under `plan run --mpi`: MPI-only options are accepted
    // here and refused by each run made without MPI.
    r.mpi = true;
    r.into_config()
}

/// clap's message on one line (see [`crate::options::error_line`]).
pub(crate) fn clap_line(e: &clap::Error) -> String {
    crate::options::error_line(e, None)
}
