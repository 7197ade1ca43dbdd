//! The plan file, read into [`RawPlan`] with the line of every key and
//! value, so that each mistake is reported as `FILE:LINE: [section] key: ...`
//! before anything runs.

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::{OnFailure, Order, PlanError, Steps};
use crate::options::table::{self as options, RunOption, Val};

/// The placeholders an MPI rank fills in a path (`ranks::template`); a plan
/// leaves them to the ranks.
pub const RANK_PLACEHOLDERS: [&str; 2] = ["rank", "host"];

/// The plan text and how to name it in messages.
pub(crate) struct Src<'a> {
    pub file: String,
    pub text: &'a str,
}

impl Src<'_> {
    /// The 1-based line of a byte offset.
    pub fn line(&self, pos: usize) -> usize {
        let end = pos.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    pub fn err(
        &self,
        line: usize,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        PlanError::Invalid {
            file: self.file.clone(),
            line,
            key: key.into(),
            message: message.into(),
        }
    }

    fn err_at(
        &self,
        span: Range<usize>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> PlanError {
        self.err(self.line(span.start), key, message)
    }
}

/// Where a value was set: its line and `[section] key`.
#[derive(Clone, Debug)]
pub(crate) struct Loc {
    pub line: usize,
    pub key: String,
}

/// One `dbio run` option set by the plan.
#[derive(Clone, Debug)]
pub(crate) struct Setting {
    /// The long option name (`read-pct`).
    pub long: String,
    pub val: Val,
    pub loc: Loc,
}

/// An arm: a name under `[variables]` and the options it sets.
#[derive(Clone, Debug)]
pub(crate) struct Arm {
    pub name: String,
    pub loc: Loc,
    pub settings: Vec<Setting>,
}

/// A swept option and its values (each with its own line).
#[derive(Clone, Debug)]
pub(crate) struct Swept {
    pub long: String,
    pub loc: Loc,
    pub values: Vec<Setting>,
}

/// The file as written, every key known and every value typed.
#[derive(Clone, Debug)]
pub(crate) struct RawPlan {
    pub name: String,
    pub description: Option<String>,
    pub repeats: u32,
    pub warmup: u32,
    pub order: Order,
    pub seed: Option<u64>,
    pub on_failure: OnFailure,
    pub workload: Vec<Setting>,
    /// Where `[workload]` starts, if the file has one.
    pub workload_loc: Option<Loc>,
    /// In file order.
    pub sweep: Vec<Swept>,
    /// In file order; empty when the file has no `[variables]`.
    pub arms: Vec<Arm>,
    pub steps: Steps,
    pub options: Vec<RunOption>,
    /// The `[lab]` section (its arms are in `arms`).
    pub lab: Option<super::lab::LabSpec>,
    /// `metrics_listen`, `metrics_textfile`: live metrics for the whole plan.
    pub metrics: crate::metrics::Wanted,
}

/// The top-level keys, in the order the docs list them.
pub(crate) const PLAN_KEYS: &[&str] = &[
    "name",
    "description",
    "repeats",
    "warmup",
    "order",
    "seed",
    "on_failure",
    "metrics_listen",
    "metrics_textfile",
    "workload",
    "sweep",
    "variables",
    "steps",
    "lab",
];

const STEP_KEYS: &[&str] = &["before_arm", "before_run"];

pub(super) type Entry<'a, 'i> = (&'a Spanned<DeString<'i>>, &'a Spanned<DeValue<'i>>);

/// A table's entries in the order they appear in the file.
pub(super) fn entries<'a, 'i>(t: &'a DeTable<'i>) -> Vec<Entry<'a, 'i>> {
    let mut v: Vec<_> = t.iter().collect();
    v.sort_by_key(|(k, _)| k.span().start);
    v
}

pub(crate) fn parse(src: &Src) -> Result<RawPlan, PlanError> {
    let doc = DeTable::parse(src.text).map_err(|e| {
        let line = e.span().map(|s| src.line(s.start)).unwrap_or(1);
        src.err(line, "", format!("not valid TOML: {}", e.message().trim()))
    })?;
    let options = options::run_options();
    let mut plan = RawPlan {
        name: String::new(),
        description: None,
        repeats: 3,
        warmup: 0,
        order: Order::Shuffled,
        seed: None,
        on_failure: OnFailure::Stop,
        workload: Vec::new(),
        workload_loc: None,
        sweep: Vec::new(),
        arms: Vec::new(),
        steps: Steps::default(),
        options: Vec::new(),
        lab: None,
        metrics: Default::default(),
    };
    let mut name = None;
    let mut variables_seen = None;
    let mut lab_arms = Vec::new();
    for (k, v) in entries(doc.get_ref()) {
        let key: &str = k.get_ref();
        match key {
            "name" => name = Some(plan_name(src, key, v)?),
            "description" => plan.description = Some(string(src, key, v)?),
            "repeats" => plan.repeats = int_in(src, key, v, 1, 1000)? as u32,
            "warmup" => plan.warmup = int_in(src, key, v, 0, 100)? as u32,
            "seed" => plan.seed = Some(int_in(src, key, v, 0, i64::MAX)? as u64),
            "order" => plan.order = order(src, key, v)?,
            "on_failure" => plan.on_failure = on_failure(src, key, v)?,
            "metrics_listen" => {
                let text = string(src, key, v)?;
                let addr = crate::metrics::parse_listen(&text)
                    .map_err(|e| src.err_at(v.span(), key, e))?;
                plan.metrics.listen = Some(addr);
            }
            "metrics_textfile" => plan.metrics.textfile = Some(string(src, key, v)?.into()),
            "workload" => {
                let t = table(src, key, v)?;
                plan.workload = settings(src, &options, t, "[workload]")?;
                plan.workload_loc = Some(Loc {
                    line: src.line(k.span().start),
                    key: "[workload]".into(),
                });
            }
            "sweep" => plan.sweep = sweep(src, &options, table(src, key, v)?)?,
            "variables" => {
                let t = table(src, key, v)?;
                variables_seen = Some(src.line(k.span().start));
                plan.arms = arms(src, &options, t)?;
            }
            "steps" => plan.steps = steps(src, table(src, key, v)?)?,
            "lab" => {
                let line = src.line(k.span().start);
                let t = table(src, key, v)?;
                let plan_name = name.as_deref().unwrap_or_default();
                let (lab, arms) = super::lab_parse::parse(src, &options, t, line, plan_name)?;
                plan.lab = Some(lab);
                lab_arms = arms;
            }
            other => return Err(unknown_key(src, &options, src.line(k.span().start), other)),
        }
    }
    plan.name = name.ok_or_else(|| {
        src.err(
            1,
            "name",
            "missing: every plan needs name = \"...\" (it identifies the plan's runs in the store, so that running it again resumes)",
        )
    })?;
    if let Some(line) = variables_seen
        && plan.arms.is_empty()
    {
        return Err(src.err(
            line,
            "[variables]",
            "is empty: add an arm (e.g. XFS = { target = \"/mnt/xfs/dbio\" }) or remove [variables] for a single arm",
        ));
    }
    if plan.lab.is_some() {
        super::lab_parse::cross_check(src, &plan, variables_seen)?;
        plan.arms = lab_arms;
    }
    cross_check(src, &plan)?;
    plan.options = options;
    Ok(plan)
}

/// `name`: one line of at most 200 bytes, trimmed.
fn plan_name(src: &Src, key: &str, v: &Spanned<DeValue<'_>>) -> Result<String, PlanError> {
    let s = string(src, key, v)?;
    let t = s.trim();
    if t.is_empty() || t.chars().any(char::is_control) || t.len() > 200 {
        return Err(src.err(
            src.line(v.span().start),
            key,
            "must be a non-empty single-line text of at most 200 bytes (it identifies the plan's runs in the store)",
        ));
    }
    Ok(t.to_string())
}

fn order(src: &Src, key: &str, v: &Spanned<DeValue<'_>>) -> Result<Order, PlanError> {
    Ok(
        match choice(src, key, v, &["shuffled", "interleaved", "sequential"])? {
            "shuffled" => Order::Shuffled,
            "interleaved" => Order::Interleaved,
            _ => Order::Sequential,
        },
    )
}

fn on_failure(src: &Src, key: &str, v: &Spanned<DeValue<'_>>) -> Result<OnFailure, PlanError> {
    Ok(match choice(src, key, v, &["stop", "continue"])? {
        "stop" => OnFailure::Stop,
        _ => OnFailure::Continue,
    })
}

/// A top-level key that is not the plan's: an option of `dbio run` says
/// where it goes, anything else the nearest plan key (or all of them).
fn unknown_key(src: &Src, options: &[RunOption], line: usize, key: &str) -> PlanError {
    let msg = if options::lookup(options, key).is_ok() {
        "is an option of dbio run: set it under [workload] (shared by all arms), [sweep] (a list of values) or [variables.NAME]".to_string()
    } else {
        let mut m = "unknown key".to_string();
        match options::suggest(key, PLAN_KEYS.iter().copied()) {
            Some(s) => m.push_str(&format!(" (did you mean {s}?)")),
            None => m.push_str(&format!(" (plan keys: {})", PLAN_KEYS.join(", "))),
        }
        m
    };
    src.err(line, key, msg)
}

pub(super) fn string(src: &Src, key: &str, v: &Spanned<DeValue<'_>>) -> Result<String, PlanError> {
    match v.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        other => Err(src.err_at(
            v.span(),
            key,
            format!("expected a string, found {}", options::type_name(other)),
        )),
    }
}

pub(super) fn int_in(
    src: &Src,
    key: &str,
    v: &Spanned<DeValue<'_>>,
    min: i64,
    max: i64,
) -> Result<i64, PlanError> {
    match options::integer(v.get_ref()) {
        Some(Ok(n)) if (min..=max).contains(&n) => Ok(n),
        Some(_) => {
            let range = if max == i64::MAX {
                format!("{min} or more")
            } else {
                format!("from {min} to {max}")
            };
            Err(src.err_at(
                v.span(),
                key,
                format!(
                    "{} is out of range: must be {range}",
                    raw_text(src, v.span())
                ),
            ))
        }
        None => Err(src.err_at(
            v.span(),
            key,
            format!(
                "expected an integer, found {}",
                options::type_name(v.get_ref())
            ),
        )),
    }
}

pub(super) fn choice<'c>(
    src: &Src,
    key: &str,
    v: &Spanned<DeValue<'_>>,
    allowed: &[&'c str],
) -> Result<&'c str, PlanError> {
    let s = string(src, key, v)?;
    allowed.iter().find(|a| **a == s).copied().ok_or_else(|| {
        src.err_at(
            v.span(),
            key,
            format!("\"{s}\" is not one of {}", allowed.join(", ")),
        )
    })
}

pub(super) fn table<'a, 'i>(
    src: &Src,
    key: &str,
    v: &'a Spanned<DeValue<'i>>,
) -> Result<&'a DeTable<'i>, PlanError> {
    match v.get_ref() {
        DeValue::Table(t) => Ok(t),
        other => Err(src.err_at(
            v.span(),
            key,
            format!(
                "expected a table ([{key}]), found {}",
                options::type_name(other)
            ),
        )),
    }
}

/// The source text of a span, for messages (`0`, `"3k"`).
fn raw_text(src: &Src, span: Range<usize>) -> String {
    src.text.get(span).unwrap_or("the value").trim().to_string()
}

/// The `dbio run` option a key of `section` names, with its location;
/// refuses a key whose option is already among `seen` (long name, where).
pub(super) fn option_key<'o, 's>(
    src: &Src,
    options: &'o [RunOption],
    k: &Spanned<DeString<'_>>,
    section: &str,
    mut seen: impl Iterator<Item = (&'s str, &'s Loc)>,
    twice: &str,
) -> Result<(Loc, &'o RunOption), PlanError> {
    let key: &str = k.get_ref();
    let loc = Loc {
        line: src.line(k.span().start),
        key: format!("{section} {key}"),
    };
    let opt = options::lookup(options, key).map_err(|m| src.err(loc.line, &loc.key, m))?;
    if let Some((_, prev)) = seen.find(|(long, _)| *long == opt.long) {
        let msg = format!("{twice} (also as {} on line {})", prev.key, prev.line);
        return Err(src.err(loc.line, &loc.key, msg));
    }
    Ok((loc, opt))
}

/// Option settings of `[workload]` or of one arm.
pub(super) fn settings(
    src: &Src,
    options: &[RunOption],
    t: &DeTable<'_>,
    section: &str,
) -> Result<Vec<Setting>, PlanError> {
    let mut out: Vec<Setting> = Vec::new();
    for (k, v) in entries(t) {
        let seen = out.iter().map(|s| (s.long.as_str(), &s.loc));
        let (loc, opt) = option_key(src, options, k, section, seen, "set twice")?;
        let vline = src.line(v.span().start);
        let val = options::to_val(opt, v.get_ref()).map_err(|m| src.err(vline, &loc.key, m))?;
        if !has_placeholder(&val) {
            options::check_alone(&opt.long, &val).map_err(|m| src.err(vline, &loc.key, m))?;
        }
        out.push(Setting {
            long: opt.long.clone(),
            val,
            loc,
        });
    }
    Ok(out)
}

fn sweep(src: &Src, options: &[RunOption], t: &DeTable<'_>) -> Result<Vec<Swept>, PlanError> {
    let mut out: Vec<Swept> = Vec::new();
    for (k, v) in entries(t) {
        let seen = out.iter().map(|s| (s.long.as_str(), &s.loc));
        let (loc, opt) = option_key(src, options, k, "[sweep]", seen, "swept twice")?;
        let items = match v.get_ref() {
            DeValue::Array(a) if !a.is_empty() => a,
            DeValue::Array(_) => {
                return Err(src.err(loc.line, &loc.key, "is empty: give at least one value"));
            }
            other => {
                return Err(src.err(
                    src.line(v.span().start),
                    &loc.key,
                    format!(
                        "expected an array of values (e.g. [1, 4, 16]), found {}; a single value belongs in [workload]",
                        options::type_name(other)
                    ),
                ));
            }
        };
        let mut values: Vec<Setting> = Vec::new();
        for item in items.iter() {
            let line = src.line(item.span().start);
            let val =
                options::to_val(opt, item.get_ref()).map_err(|m| src.err(line, &loc.key, m))?;
            options::check_alone(&opt.long, &val).map_err(|m| src.err(line, &loc.key, m))?;
            let label = val.label();
            if label.contains('|') || label.chars().any(char::is_control) {
                return Err(src.err(
                    line,
                    &loc.key,
                    format!("\"{label}\": a swept value may not contain '|' or control characters (it is part of the run's cell key)"),
                ));
            }
            if values.iter().any(|s| s.val.label() == label) {
                return Err(src.err(line, &loc.key, format!("{label} is listed twice")));
            }
            values.push(Setting {
                long: opt.long.clone(),
                val,
                loc: Loc {
                    line,
                    key: loc.key.clone(),
                },
            });
        }
        out.push(Swept {
            long: opt.long.clone(),
            loc,
            values,
        });
    }
    Ok(out)
}

fn arms(src: &Src, options: &[RunOption], t: &DeTable<'_>) -> Result<Vec<Arm>, PlanError> {
    let mut out = Vec::new();
    for (k, v) in entries(t) {
        let name: &str = k.get_ref();
        let loc = Loc {
            line: src.line(k.span().start),
            key: format!("[variables] {name}"),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
        {
            return Err(src.err(
                loc.line,
                &loc.key,
                "a variable name may use letters, digits and _ . + - only (it is part of every run's cell key)",
            ));
        }
        let t = match v.get_ref() {
            DeValue::Table(t) => t,
            other => {
                return Err(src.err(
                    src.line(v.span().start),
                    &loc.key,
                    format!(
                        "expected a table of dbio run options (e.g. {name} = {{ target = \"/mnt/xfs/dbio\" }}), found {}",
                        options::type_name(other)
                    ),
                ));
            }
        };
        let settings = settings(src, options, t, &format!("[variables.{name}]"))?;
        out.push(Arm {
            name: name.to_string(),
            loc,
            settings,
        });
    }
    Ok(out)
}

fn steps(src: &Src, t: &DeTable<'_>) -> Result<Steps, PlanError> {
    let mut steps = Steps::default();
    for (k, v) in entries(t) {
        let key: &str = k.get_ref();
        let full = format!("[steps] {key}");
        let line = src.line(k.span().start);
        let list = match key {
            "before_arm" => &mut steps.before_arm,
            "before_run" => &mut steps.before_run,
            other => {
                let mut m = "unknown key".to_string();
                match options::suggest(other, STEP_KEYS.iter().copied()) {
                    Some(s) => m.push_str(&format!(" (did you mean {s}?)")),
                    None => m.push_str(&format!(" (step keys: {})", STEP_KEYS.join(", "))),
                }
                return Err(src.err(line, full, m));
            }
        };
        let items: Vec<&Spanned<DeValue<'_>>> = match v.get_ref() {
            DeValue::Array(a) => a.iter().collect(),
            _ => vec![v],
        };
        for item in items {
            let iline = src.line(item.span().start);
            match item.get_ref() {
                DeValue::String(s) if !s.trim().is_empty() => list.push(s.to_string()),
                DeValue::String(_) => return Err(src.err(iline, &full, "an empty command")),
                other => {
                    return Err(src.err(
                        iline,
                        &full,
                        format!(
                            "expected a shell command or a list of them, found {}",
                            options::type_name(other)
                        ),
                    ));
                }
            }
        }
    }
    Ok(steps)
}

/// Checks between sections: a swept option is set nowhere else, and every
/// `{placeholder}` names a swept option or `variable`.
fn cross_check(src: &Src, plan: &RawPlan) -> Result<(), PlanError> {
    for sw in &plan.sweep {
        if let Some(w) = plan.workload.iter().find(|w| w.long == sw.long) {
            return Err(src.err(
                sw.loc.line,
                &sw.loc.key,
                format!(
                    "also set in {} on line {}; set it in one place",
                    w.loc.key, w.loc.line
                ),
            ));
        }
        for arm in &plan.arms {
            if let Some(s) = arm.settings.iter().find(|s| s.long == sw.long) {
                return Err(src.err(
                    s.loc.line,
                    &s.loc.key,
                    format!(
                        "is swept in [sweep] (line {}): an arm cannot also set it",
                        sw.loc.line
                    ),
                ));
            }
        }
    }
    let swept: Vec<&str> = plan.sweep.iter().map(|s| s.long.as_str()).collect();
    let all = plan
        .workload
        .iter()
        .chain(plan.arms.iter().flat_map(|a| a.settings.iter()));
    for s in all {
        if let Val::Text(t) = &s.val {
            for name in placeholders(t) {
                let n = options::normalize(&name);
                let per_rank = RANK_PLACEHOLDERS.contains(&n.as_str());
                if n != "variable" && !per_rank && !swept.contains(&n.as_str()) {
                    let mut msg = format!("{{{name}}} is neither {{variable}} nor a swept option");
                    if !swept.is_empty() {
                        msg.push_str(&format!(
                            " (swept: {})",
                            swept
                                .iter()
                                .map(|s| format!("{{{}}}", s.replace('-', "_")))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    return Err(src.err(s.loc.line, &s.loc.key, msg));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn has_placeholder(v: &Val) -> bool {
    matches!(v, Val::Text(t) if !placeholders(t).is_empty())
}

/// The names in `{name}` placeholders (letters, digits, `_`, `-`).
pub(crate) fn placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let inner = &after[..close];
                if !inner.is_empty()
                    && inner
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                {
                    out.push(inner.to_string());
                    rest = &after[close + 1..];
                } else {
                    rest = after;
                }
            }
            None => break,
        }
    }
    out
}

/// Replaces every `{name}` placeholder with `value(name)` (names normalized).
pub(crate) fn fill(text: &str, value: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let replaced = after.find('}').and_then(|close| {
            let inner = &after[..close];
            let ok = !inner.is_empty()
                && inner
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if ok {
                value(&options::normalize(inner)).map(|v| (v, close))
            } else {
                None
            }
        });
        match replaced {
            Some((v, close)) => {
                out.push_str(&v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
