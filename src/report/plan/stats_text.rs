//! `dbio report --stats` and `--scaling` on a terminal, in Markdown and in
//! CSV: the numbers of [`super::stats`] as tables, with a line saying what
//! each column is.

use std::fmt::Write;

use super::stats::{CellStats, Comparison, ScalingFit, Summary};
use crate::grid::{self, num};

/// How a table is written out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Text,
    Markdown,
}

fn render(style: Style, title: &str, rows: &[Vec<String>], align: &str, notes: &[&str]) -> String {
    let mut o = String::new();
    match style {
        Style::Text => {
            let _ = writeln!(o, "{title}");
            o += &grid::text(rows, align);
            for n in notes {
                let _ = writeln!(o, "{n}");
            }
        }
        Style::Markdown => {
            let _ = writeln!(o, "{title}\n");
            o += &grid::markdown(rows);
            for n in notes {
                let _ = writeln!(o, "\n{}", n.replace('\n', " "));
            }
        }
    }
    o
}

fn sessions(c: &CellStats) -> String {
    c.sessions.map_or("Overall".into(), |s| s.to_string())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn outlier_runs(c: &CellStats) -> String {
    let o: Vec<String> = c
        .outliers
        .iter()
        .map(|o| format!("{} ({})", o.run, num(o.value)))
        .collect();
    if o.is_empty() {
        "-".into()
    } else {
        o.join(", ")
    }
}

fn p_value(c: &Comparison) -> String {
    match &c.welch {
        Some(w) if w.p_two_sided < 1e-4 => "<0.0001".into(),
        Some(w) => format!("{:.4}", w.p_two_sided),
        None => "-".into(),
    }
}

/// What the baseline is and why.
fn against(s: &Summary, b: &str) -> String {
    format!(
        "Against {b}{}: ratio of the SLOB.R values; Welch's t-test on the runs (two-sided, α = {})",
        if s.baseline_given {
            ""
        } else {
            " (the first variable; choose another with --relative-to)"
        },
        s.alpha
    )
}

const CELL_NOTE: &str =
    "n = runs; CV = standard deviation / mean; 95% CI of the mean: t = Student t,
bootstrap = percentile bootstrap (3 to 30 runs, skewness over 2 standard errors),
log-normal = modified Cox interval (positive values whose t interval would reach 0);
outlier runs: outside Tukey's fences (1.5 IQR) of their own session count's runs (n >= 4), with their values";

const SCALING_NOTE: &str =
    "peak: the highest value over the session counts, each the table's cell (SLOB.R trimmed mean);
knee: where a session starts adding less than half of what the first ones added;
collapse: the first session count more than 20% below the peak after it, then the lowest,
when Welch's t-test on their runs finds the drop significant (α = 0.05) or has a run a side;
USL: X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted to every run
(σ contention, κ coherency, λ one session's throughput)";

/// The per-cell table and the comparisons, as text or Markdown.
pub fn summary(s: &Summary, style: Style) -> String {
    let mut rows = vec![
        [
            "variable",
            "sessions",
            "n",
            "mean",
            "CV",
            "95% CI",
            "CI",
            "outlier runs",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for c in &s.cells {
        rows.push(vec![
            c.variable.clone(),
            sessions(c),
            c.n.to_string(),
            num(c.mean),
            pct(c.cv),
            c.ci95
                .map_or("-".into(), |i| format!("{} – {}", num(i.low), num(i.high))),
            c.ci95.map_or("-".into(), |i| i.method.short().into()),
            outlier_runs(c),
        ]);
    }
    let mut o = render(
        style,
        &format!("{} per cell (not relative to a baseline)", s.metric),
        &rows,
        "llrrrrll",
        &[CELL_NOTE],
    );
    let Some(b) = &s.baseline else {
        return o;
    };
    o += "\n";
    if s.comparisons.is_empty() {
        let _ = writeln!(
            o,
            "No session count has runs of both {b} and another variable to compare."
        );
        return o;
    }
    let mut rows = vec![vec![
        "variable".to_string(),
        "sessions".into(),
        "value".into(),
        format!("{b} value"),
        format!("ratio to {b}"),
        "p".into(),
        "verdict".into(),
    ]];
    for c in &s.comparisons {
        rows.push(vec![
            c.variable.clone(),
            c.sessions.to_string(),
            num(c.value),
            num(c.baseline_value),
            c.ratio.map_or("-".into(), |r| format!("{r:.3}")),
            p_value(c),
            c.verdict.clone(),
        ]);
    }
    o += &render(style, &against(s, b), &rows, "llrrrrl", &[]);
    o
}

/// One line per cell, every number unrounded, the comparison with the
/// baseline on the cell's line.
pub fn summary_csv(s: &Summary) -> String {
    let f = |v: f64| v.to_string();
    let opt = |v: Option<f64>| v.map_or(String::new(), f);
    let mut rows = vec![
        [
            "variable",
            "sessions",
            "n",
            "value",
            "trimmed",
            "mean",
            "stddev",
            "cv",
            "ci95_low",
            "ci95_high",
            "ci95_method",
            "ci95_t_low",
            "ci95_t_high",
            "ci95_bootstrap_low",
            "ci95_bootstrap_high",
            "outlier_runs",
            "baseline",
            "ratio",
            "welch_t",
            "welch_df",
            "welch_p",
            "verdict",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for c in &s.cells {
        let cmp = s
            .comparisons
            .iter()
            .find(|x| x.variable == c.variable && Some(x.sessions) == c.sessions);
        let w = cmp.and_then(|x| x.welch);
        let ids: Vec<String> = c.outliers.iter().map(|o| o.run.to_string()).collect();
        rows.push(vec![
            c.variable.clone(),
            sessions(c),
            c.n.to_string(),
            f(c.value),
            c.trimmed.to_string(),
            f(c.mean),
            f(c.stddev),
            opt(c.cv),
            opt(c.ci95.map(|i| i.low)),
            opt(c.ci95.map(|i| i.high)),
            c.ci95.map_or(String::new(), |i| i.method.short().into()),
            opt(c.ci95_t.map(|i| i.low)),
            opt(c.ci95_t.map(|i| i.high)),
            opt(c.ci95_bootstrap.map(|i| i.low)),
            opt(c.ci95_bootstrap.map(|i| i.high)),
            ids.join(" "),
            cmp.map_or(String::new(), |_| s.baseline.clone().unwrap_or_default()),
            opt(cmp.and_then(|x| x.ratio)),
            opt(w.map(|w| w.t)),
            opt(w.map(|w| w.df)),
            opt(w.map(|w| w.p_two_sided)),
            cmp.map_or(String::new(), |x| x.verdict.clone()),
        ]);
    }
    grid::csv(&rows)
}

fn collapse(x: &ScalingFit) -> String {
    let Some(c) = x.collapse else {
        return "no".into();
    };
    if !c.flagged() {
        return unsupported_collapse(&c);
    }
    let mut o = format!(
        "{} → {} at {} (−{:.0}%)",
        num(c.from),
        num(c.to),
        c.at_sessions,
        c.drop_pct
    );
    if let Some(e) = c.evidence {
        let _ = write!(o, ", {}", e.words());
    }
    if let Some((n, low)) = x.lowest_after_peak().filter(|l| l.1 < c.to) {
        let _ = write!(
            o,
            ", {} at {n} (−{:.0}%)",
            num(low),
            (c.from - low) / c.from * 100.0
        );
    }
    o
}

/// A fall past the peak that the runs do not support: "no (−27% at 32
/// is not significant at 3+2 runs (p=0.524, …))".
pub fn unsupported_collapse(c: &crate::analysis::Collapse) -> String {
    let why = c.evidence.map_or(String::new(), |e| e.words());
    format!("no (−{:.0}% at {} is {why})", c.drop_pct, c.at_sessions)
}

/// Peak, knee, collapse and the USL fit per variable, as text or Markdown.
pub fn scaling(metric: &str, s: &[ScalingFit], style: Style) -> String {
    let mut rows = vec![
        [
            "variable",
            "sessions",
            "peak",
            "at",
            "knee",
            "collapse after the peak",
            "σ",
            "κ",
            "λ",
            "USL peak N",
            "R²",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut notes = Vec::new();
    for x in s {
        let counts: Vec<String> = x.session_counts.iter().map(u32::to_string).collect();
        let mut r = vec![
            x.variable.clone(),
            counts.join(","),
            x.peak.map_or("-".into(), |p| num(p.throughput)),
            x.peak.map_or("-".into(), |p| p.sessions.to_string()),
            match x.knee {
                Some(k) => k.to_string(),
                None if x.session_counts.len() < 3 => "-".into(),
                None => "none (still scaling)".into(),
            },
            collapse(x),
        ];
        match (&x.usl, &x.no_fit) {
            (Some(f), _) => r.extend([
                format!("{:.4}", f.sigma),
                format!("{:.6}", f.kappa),
                num(f.lambda),
                f.peak_n
                    .map_or("none (κ = 0)".into(), |p| format!("{p:.1}")),
                format!("{:.3}", f.r2),
            ]),
            (None, why) => {
                r.extend(std::iter::repeat_n("-".to_string(), 5));
                notes.push(format!(
                    "{}: no USL fit: {}",
                    x.variable,
                    why.as_deref().unwrap_or("-")
                ));
            }
        }
        rows.push(r);
    }
    notes.push(SCALING_NOTE.to_string());
    let notes: Vec<&str> = notes.iter().map(String::as_str).collect();
    render(
        style,
        &format!("Scaling of {metric} over sessions"),
        &rows,
        "llrrrlrrrrr",
        &notes,
    )
}

/// One line per variable, every number unrounded.
pub fn scaling_csv(s: &[ScalingFit]) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let mut rows = vec![
        [
            "variable",
            "sessions",
            "peak",
            "peak_sessions",
            "knee",
            "collapse_at",
            "collapse_to",
            "collapse_drop_pct",
            "collapse_p",
            "usl_sigma",
            "usl_kappa",
            "usl_lambda",
            "usl_peak_n",
            "usl_r2",
            "no_fit",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for x in s {
        let counts: Vec<String> = x.session_counts.iter().map(u32::to_string).collect();
        rows.push(vec![
            x.variable.clone(),
            counts.join(" "),
            opt(x.peak.map(|p| p.throughput)),
            opt(x.peak.map(|p| p.sessions)),
            opt(x.knee),
            opt(x.collapse.map(|c| c.at_sessions)),
            opt(x.collapse.map(|c| c.to)),
            opt(x.collapse.map(|c| c.drop_pct)),
            opt(x
                .collapse
                .and_then(|c| c.evidence)
                .map(|e| e.welch.p_two_sided)),
            opt(x.usl.map(|f| f.sigma)),
            opt(x.usl.map(|f| f.kappa)),
            opt(x.usl.map(|f| f.lambda)),
            opt(x.usl.and_then(|f| f.peak_n)),
            opt(x.usl.map(|f| f.r2)),
            x.no_fit.clone().unwrap_or_default(),
        ]);
    }
    grid::csv(&rows)
}

#[cfg(test)]
#[path = "stats_text_tests.rs"]
mod tests;
