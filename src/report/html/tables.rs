//! The report's tables as HTML: the SLOB.R table with n, CV, 95% CI and
//! outlier flags per cell; Welch's test between each variable and the
//! baseline at each session count; the scaling summary; each arm's
//! settings and environment; the plan.

use std::fmt::Write;

use super::charts::{Cells, Scaling, cells};
use super::data::{ReportData, RunValue};
use super::page::{key_values, table, td};
use crate::analysis::CiMethod;
use crate::chart::escape;
use crate::chart::scale::value_label;
pub use crate::report::plan::stats::ALPHA;
use crate::report::plan::stats::{self, cell_stats};
use crate::report::plan::table::{self as slob, Cell, Point};

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

/// One cell: the value (marked `*` when a plain mean), then n, CV, CI and
/// the runs Tukey's fences flag.
fn cell_html(c: &Option<Cell>, outliers: &[(i64, f64)]) -> String {
    let Some(c) = c else {
        return "<td class=\"num\">-</td>".into();
    };
    let mut o = format!(
        "<td class=\"num\"><span class=\"v\">{}{}</span>",
        value_label(c.value),
        if c.trimmed { "" } else { "*" }
    );
    let mut d = format!("n={}", c.n);
    if let Some(cv) = c.cv {
        let _ = write!(d, " · CV {}", pct(cv));
    }
    let _ = write!(o, "<span class=\"d\">{}</span>", escape(&d));
    if let Some(ci) = c.ci95 {
        let (a, b) = (ci.low, ci.high);
        // Student t is the default; any other method is named.
        let how = match ci.method {
            CiMethod::StudentT => String::new(),
            m => format!(" ({})", m.short()),
        };
        let _ = write!(
            o,
            "<span class=\"d\">95% CI {} – {}{how}</span>",
            value_label(a),
            value_label(b)
        );
    }
    for (id, v) in outliers {
        let _ = write!(
            o,
            "<span class=\"d flag\">outlier: run {id} ({})</span>",
            value_label(*v)
        );
    }
    o + "</td>"
}

/// Runs outside the Tukey fences of their cell.
fn outliers(rs: &[&RunValue]) -> Vec<(i64, f64)> {
    cell_stats("", None, rs)
        .map(|c| c.outliers.iter().map(|o| (o.run, o.value)).collect())
        .unwrap_or_default()
}

/// The SLOB.R table (the same numbers as `dbio report`), each cell with its
/// spread; `Err` names a baseline that is not among the variables.
pub fn slob_table(
    data: &ReportData,
    relative_to: Option<&str>,
) -> Result<String, crate::report::plan::table::NoBaseline> {
    let points: Vec<Point> = data.runs.iter().map(Point::from).collect();
    let t = if data.readwrite.is_empty() {
        slob::build(&data.metric, &points, relative_to)?
    } else {
        // SLOB.R's READWRITE: reads and writes trimmed apart, then added.
        let reads: Vec<Point> = points
            .iter()
            .zip(&data.readwrite)
            .map(|(p, &(r, _))| Point {
                value: r,
                ..p.clone()
            })
            .collect();
        let writes: Vec<f64> = data.readwrite.iter().map(|&(_, w)| w).collect();
        slob::build_readwrite(&data.metric, &reads, &writes, relative_to)?
    };
    let by: Cells = cells(&data.runs);
    let mut header = vec!["variable \\ sessions".to_string()];
    header.extend(t.sessions.iter().map(|s| s.to_string()));
    header.push("Overall".into());
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| {
            let mut r = vec![format!("<th>{}</th>", escape(&row.variable))];
            let var = by.get(row.variable.as_str());
            for (i, c) in row.cells.iter().enumerate() {
                let out = match (var, t.sessions.get(i)) {
                    (Some(v), Some(s)) => v.get(s).map(|rs| outliers(rs)).unwrap_or_default(),
                    (Some(v), None) => outliers(&v.values().flatten().copied().collect::<Vec<_>>()),
                    _ => Vec::new(),
                };
                r.push(cell_html(c, &out));
            }
            r
        })
        .collect();
    let scaled = relative_to
        .map(|b| format!(", relative to {b} = 1"))
        .unwrap_or_default();
    let mut o = format!(
        "<p>{} by variable and sessions: SLOB.R trimmed mean (every copy of the minimum and the maximum dropped){}.</p>\n",
        escape(&data.metric),
        escape(&scaled)
    );
    o += &table("slob", &header, &rows);
    o += "<p class=\"note\">* plain mean: fewer than three distinct values, so SLOB.R's trimmed mean gives none. \
          n = runs; CV = standard deviation / mean; 95% CI of the mean: Student t; a percentile bootstrap where marked \
          (a skewed cell of 3 to 30 runs); a log-normal (modified Cox) interval where marked, for a rate whose \
          t interval would reach zero or below; \
          outliers lie outside Tukey's fences (1.5 IQR, n ≥ 4).</p>\n";
    Ok(o)
}

/// Welch's t-test of each variable against the baseline at each session
/// count, with the ratio of their SLOB.R values and a plain verdict.
pub fn welch_table(data: &ReportData, baseline: &str) -> String {
    let rows: Vec<Vec<String>> = stats::comparisons(&data.runs, baseline)
        .iter()
        .map(|c| {
            let ratio = c.ratio.map_or("-".into(), |r| format!("{r:.3}"));
            let (p, class) = match &c.welch {
                Some(w) if w.p_two_sided < ALPHA => (format!("{:.4}", w.p_two_sided), "sig"),
                Some(w) => (format!("{:.4}", w.p_two_sided), "nosig"),
                None => ("-".into(), ""),
            };
            vec![
                td(&c.variable),
                format!("<td class=\"num\">{}</td>", c.sessions),
                format!("<td class=\"num\">{}</td>", value_label(c.value)),
                format!("<td class=\"num\">{}</td>", value_label(c.baseline_value)),
                format!("<td class=\"num\">{ratio}</td>"),
                format!("<td class=\"num\">{p}</td>"),
                if class.is_empty() {
                    td(&c.verdict)
                } else {
                    format!("<td class=\"{class}\">{}</td>", c.verdict)
                },
            ]
        })
        .collect();
    if rows.is_empty() {
        return format!(
            "<p class=\"note\">No session count has runs of both {} and another variable to compare.</p>\n",
            escape(baseline)
        );
    }
    let header: Vec<String> = [
        "variable",
        "sessions",
        "value",
        &format!("{baseline} value"),
        &format!("ratio to {baseline}"),
        "p (Welch, two-sided)",
        &format!("at α = {ALPHA}"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    table("welch", &header, &rows)
}

/// Peak, knee, collapse and the USL parameters per variable.
pub fn scaling_table(s: &[Scaling]) -> String {
    let rows: Vec<Vec<String>> = s
        .iter()
        .map(|Scaling { fit: x, .. }| {
            let peak = x.peak.map_or("-".into(), |p| {
                format!("{} at {} sessions", value_label(p.throughput), p.sessions)
            });
            let knee = x
                .knee
                .map_or("none (still scaling)".into(), |k| format!("{k} sessions"));
            let collapse = match &x.collapse {
                Some(c) => format!(
                    "<td class=\"flag\">{} → {} at {} sessions (−{:.0}%)</td>",
                    value_label(c.from),
                    value_label(c.to),
                    c.at_sessions,
                    c.drop_pct
                ),
                None => td("no"),
            };
            let usl = match (&x.usl, &x.no_fit) {
                (Some(f), _) => vec![
                    format!("<td class=\"num\">{:.4}</td>", f.sigma),
                    format!("<td class=\"num\">{:.6}</td>", f.kappa),
                    format!("<td class=\"num\">{}</td>", value_label(f.lambda)),
                    format!(
                        "<td class=\"num\">{}</td>",
                        f.peak_n
                            .map_or("none (κ = 0)".into(), |p| format!("{p:.1}"))
                    ),
                    format!("<td class=\"num\">{:.3}</td>", f.r2),
                ],
                (None, e) => vec![format!(
                    "<td colspan=\"5\" class=\"note\">{}</td>",
                    escape(e.as_deref().unwrap_or("no fit"))
                )],
            };
            let mut r = vec![td(&x.variable), td(&peak), td(&knee), collapse];
            r.extend(usl);
            r
        })
        .collect();
    let header: Vec<String> = [
        "variable",
        "peak",
        "knee",
        "collapse after the peak",
        "USL σ",
        "USL κ",
        "USL λ",
        "USL peak N",
        "R²",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    table("scaling", &header, &rows)
}

/// Each arm's settings and the environments its runs ran in.
pub fn environment_section(data: &ReportData) -> String {
    let mut o = String::new();
    for arm in &data.arms {
        let _ = writeln!(
            o,
            "<h3>{} <span class=\"meta\">({} runs)</span></h3>",
            escape(&arm.variable),
            arm.runs
        );
        if !arm.settings.is_empty() {
            o += "<p class=\"note\">Settings of this arm (the others differ):</p>\n";
            o += &key_values(&arm.settings);
        }
        let several = arm.environments.len() > 1;
        if several {
            let _ = writeln!(
                o,
                "<p class=\"flag\">This arm's runs ran in {} different environments: compare with care.</p>",
                arm.environments.len()
            );
        }
        for env in &arm.environments {
            if several {
                let ids: Vec<String> = env.runs.iter().map(|i| i.to_string()).collect();
                let _ = writeln!(o, "<p class=\"note\">runs {}</p>", escape(&ids.join(", ")));
            }
            o += &key_values(&env.host);
            if env.storage.is_empty() {
                o += "<p class=\"note\">storage chain: not recorded</p>\n";
            } else {
                let rows: Vec<Vec<String>> = env
                    .storage
                    .iter()
                    .map(|(layer, name, details)| vec![td(layer), td(name), td(details)])
                    .collect();
                let header = vec![
                    "layer".to_string(),
                    "path or device".into(),
                    "details".into(),
                ];
                o += &table("storage", &header, &rows);
            }
        }
    }
    o
}

/// The plan: names, what all runs share, what was swept, and (from the
/// plan file when given) seed, order and repeats.
pub fn plan_section(data: &ReportData, plan: Option<&super::PlanFile>) -> String {
    let mut o = String::new();
    let mut facts: Vec<(String, String)> = Vec::new();
    match plan {
        Some(p) => {
            facts.push(("plan".into(), p.name.clone()));
            if let Some(d) = &p.description {
                facts.push(("description".into(), d.clone()));
            }
            facts.push(("file".into(), p.path.clone()));
            facts.push((
                "seed".into(),
                format!(
                    "{}{}",
                    p.seed,
                    if p.seed_given {
                        ""
                    } else {
                        " (derived from the name)"
                    }
                ),
            ));
            facts.push(("order".into(), p.order.to_string()));
            facts.push((
                "repeats".into(),
                format!("{} per cell, {} warm-up per arm", p.repeats, p.warmup),
            ));
            facts.push(("variables".into(), p.arms.join(", ")));
            if !p.cells.is_empty() {
                facts.push(("cells".into(), p.cells.join("; ")));
            }
        }
        None if data.plans.is_empty() => {
            o += "<p class=\"note\">These runs do not come from a plan.</p>\n";
        }
        None => {
            facts.push(("plan".into(), data.plans.join(", ")));
            facts.push((
                "seed".into(),
                "not stored with the runs: pass --plan-file PLAN.toml to show it".into(),
            ));
        }
    }
    let vars: Vec<&str> = data.arms.iter().map(|a| a.variable.as_str()).collect();
    if plan.is_none() && !vars.is_empty() {
        facts.push(("variables".into(), vars.join(", ")));
    }
    for (k, vs) in &data.swept {
        facts.push((format!("swept: {k}"), vs.join(", ")));
    }
    if !data.varying.is_empty() {
        facts.push(("differ within a variable".into(), data.varying.join(", ")));
    }
    o += &key_values(&facts);
    if !data.shared.is_empty() {
        o += "<h3>Settings shared by every run</h3>\n";
        o += "<p class=\"note\">Settings that differ between variables, or that only some variables have, are under each variable in Environment.</p>\n";
        o += &key_values(&data.shared);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(method: CiMethod) -> Option<Cell> {
        Some(Cell {
            n: 3,
            value: 1000.0,
            trimmed: true,
            cv: Some(0.9),
            ci95: Some(crate::report::plan::stats::Interval {
                low: 200.0,
                high: 9000.0,
                method,
            }),
        })
    }

    #[test]
    fn a_cell_names_its_interval_unless_it_is_student_t() {
        assert!(!cell_html(&cell(CiMethod::StudentT), &[]).contains("(t)"));
        assert!(cell_html(&cell(CiMethod::Bootstrap), &[]).contains("(bootstrap)"));
        assert!(cell_html(&cell(CiMethod::LogNormal), &[]).contains("(log-normal)"));
    }
}
