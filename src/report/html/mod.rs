//! The HTML report: one self-contained file (inline SVG and CSS, no
//! script, nothing fetched) that a browser opens offline.
//!
//! * [`report_page`]: `dbio report --html`: the SLOB.R table with spread
//!   and outliers, Welch's verdicts, the metric and latency over sessions,
//!   bars relative to a baseline, scaling with the USL fit, one run per arm
//!   over time beside its device and host telemetry, the environment of
//!   each arm and the plan; for open-loop runs (`dbio curve`) latency
//!   against throughput, the hockey stick (`curve`).
//! * [`run_page`]: `dbio runs show ID --html`: one run over time; for a
//!   SLOB model run first its AWR content (`awr`: load profile, top events
//!   and wait histograms drawn, I/O by function); for a run under MPI the
//!   job and its per-rank table (`ranks`); for a `--steady-state` run its
//!   rounds with the steady band and the steady window (`steady`).
//!
//! Files: `data` (reading the store), `awr` (a SLOB run's AWR sections),
//! `ranks` (a run under MPI: each rank), `environment` (host and storage
//! of the runs), `charts`, `timeline`, `tables`,
//! `page` (the document, CSS, escaping helpers). docs/report.md describes
//! the page for users.

pub mod awr;
pub mod charts;
pub mod compare;
pub mod curve;
pub mod cycle;
pub mod data;
pub mod environment;
pub mod open_loop;
pub mod page;
pub mod ranks;
pub mod run_summary;
pub mod steady;
pub mod tables;
pub mod timeline;

use std::path::Path;

use crate::chart::escape;
use crate::store::StoredRun;
use data::ReportData;
use page::{Page, figure};
use timeline::Timeline;

/// What the page says of the plan file the runs came from (`--plan-file`).
#[derive(Clone, Debug, Default)]
pub struct PlanFile {
    pub name: String,
    pub description: Option<String>,
    pub path: String,
    pub seed: u64,
    /// The seed was written in the file (else derived from the name).
    pub seed_given: bool,
    pub order: &'static str,
    pub repeats: u32,
    pub warmup: u32,
    /// The variables (arms), in order.
    pub arms: Vec<String>,
    /// The cells, described.
    pub cells: Vec<String>,
}

/// What the page says about how it was made.
#[derive(Clone, Debug, Default)]
pub struct Options<'a> {
    /// The variable every other is divided by (`--relative-to`).
    pub relative_to: Option<&'a str>,
    /// The plan file, when given (`--plan-file`).
    pub plan: Option<&'a PlanFile>,
    /// The selection, as typed (`--plan fs --tag x`) or "all runs".
    pub selection: String,
    /// Where the runs came from.
    pub store: String,
    /// When the page was made (UTC).
    pub generated: String,
}

/// The report page for a selection; `Err` is a usage error (an unknown
/// `--relative-to` variable).
pub fn report_page(
    data: &ReportData,
    o: &Options,
) -> Result<String, crate::report::plan::table::NoBaseline> {
    let variables: Vec<&str> = data.arms.iter().map(|a| a.variable.as_str()).collect();
    let mut p = heading(data, o, &variables);
    let baseline = o.relative_to.or(variables.first().copied()).unwrap_or("-");

    p.section("table", "SLOB.R table");
    p.html(&tables::slob_table(data, o.relative_to)?);

    if variables.len() > 1 {
        p.section("compare", "Differences between variables");
        p.para(
            "note",
            &format!(
                "Each variable against {baseline}{} at each session count: the ratio of their SLOB.R values and Welch's t-test (unequal variances) on the runs.",
                if o.relative_to.is_none() { " (the first variable; choose with --relative-to)" } else { "" }
            ),
        );
        p.html(&tables::welch_table(data, baseline));
    }

    charts_section(&mut p, data, &variables, baseline);
    curve_section(&mut p, data);
    latency_section(&mut p, data);
    scaling_section(&mut p, data);
    p.section("timeline", "Over time");
    p.para(
        "note",
        "For each variable its latest run at its largest session count: dbio's own per-second series on the left, \
         the devices under the target and the host in the same seconds on the right (iostat -x and mpstat definitions). \
         `dbio runs show ID --html FILE` draws any run.",
    );
    for t in &data.timelines {
        p.html(&timeline_html(t));
    }

    p.section("environment", "Environment");
    p.html(&tables::environment_section(data));

    p.section("plan", "Plan");
    p.html(&tables::plan_section(data, o.plan));

    Ok(p.finish(&format!(
        "dbio {} · generated {} UTC",
        env!("CARGO_PKG_VERSION"),
        o.generated
    )))
}

/// The page with its title and what it shows: runs, variables, store,
/// selection, runs left out.
fn heading(data: &ReportData, o: &Options, variables: &[&str]) -> Page {
    Page::new(
        &format!("dbio report: {}", data.metric),
        &format!(
            "{} runs of {} ({}) from {}, {}{}",
            data.runs.len(),
            if variables.len() == 1 {
                "1 variable".to_string()
            } else {
                format!("{} variables", variables.len())
            },
            variables.join(", "),
            o.store,
            o.selection,
            if data.left_out > 0 {
                format!(
                    "; {} selected runs left out (warm-ups, not completed, or without {})",
                    data.left_out, data.metric
                )
            } else {
                String::new()
            }
        ),
    )
}

/// The metric over sessions, and each cell relative to the baseline's.
fn charts_section(p: &mut Page, data: &ReportData, variables: &[&str], baseline: &str) {
    p.section("charts", "Over sessions");
    let mut figs = figure(
        &charts::metric_vs_sessions(data).render(),
        "Large markers: SLOB.R trimmed mean of the cell's runs; whiskers: its 95% CI as in the table (none with one run); small dots: the runs. \
         Variables at the same session count are drawn side by side. Hover a point for its numbers.",
    );
    if variables.len() > 1 {
        figs += &figure(
            &charts::relative_bars(data, baseline).render(),
            &format!("Each cell divided by {baseline}'s (SLOB.R values)."),
        );
    }
    p.html(&format!("<div class=\"charts\">{figs}</div>"));
}

/// Latency against throughput, when runs ran open loop.
fn curve_section(p: &mut Page, data: &ReportData) {
    if !data.curve.is_empty() {
        p.section("curve", "Latency against throughput");
        p.html(&format!(
            "<div class=\"charts\">{}</div>",
            figure(
                &curve::chart(&data.curve).render(),
                "Each open-loop run at its achieved rate: from the due time (what a user of the storage waits) and from the issue (service), \
                 p50 solid, p99 dashed, p99.9 dotted. Where the due-time lines leave the service lines the storage no longer keeps up \
                 and requests wait for it; the vertical line is the closed-loop maximum. Hover a point for its numbers.",
            )
        ));
        p.html(&curve::points_table(&data.curve));
    }
}

/// Latency percentiles over sessions, when the runs have histograms.
fn latency_section(p: &mut Page, data: &ReportData) {
    let lat = charts::latency_vs_sessions(data);
    if !lat.is_empty() {
        p.section("latency", "Latency percentiles");
        let figs: String = lat
            .iter()
            .map(|c| figure(&c.render(), "p50 solid, p99 dashed, p99.9 dotted; from the histograms of all the cell's runs merged."))
            .collect();
        p.html(&format!("<div class=\"charts\">{figs}</div>"));
    }
}

/// Peak, knee, collapse and the USL fit, for a throughput.
fn scaling_section(p: &mut Page, data: &ReportData) {
    p.section("scaling", "Scaling");
    if data.throughput {
        let s = charts::scaling(data);
        p.para(
            "note",
            "Peak: the highest cell (the trimmed mean the table shows). Knee: where a session adds less than half of what the first ones added. \
             Collapse: more than 20% below the peak after it. USL: X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted to every run \
             (σ contention, κ coherency, λ one session's throughput).",
        );
        p.html(&tables::scaling_table(&s));
        let figs: String = s.iter().map(|x| figure(&x.chart.render(), "")).collect();
        p.html(&format!("<div class=\"charts\">{figs}</div>"));
    } else {
        p.para(
            "note",
            &format!("Scaling analysis applies to throughput metrics (…iops, …mib_per_s); {} is not one.", data.metric),
        );
    }
}

fn timeline_html(t: &Timeline) -> String {
    let arm = if t.variable == "-" {
        String::new()
    } else {
        format!("{}: ", escape(&t.variable))
    };
    let mut o = format!("<h3>{arm}run {} ({} sessions)</h3>\n", t.run_id, t.sessions);
    let why = t.left_out();
    if !why.is_empty() {
        o += &format!(
            "<p class=\"note\">Panels without data are left out: {}.</p>\n",
            escape(&why.join("; "))
        );
    }
    let pairs = t.charts();
    if pairs.iter().all(|(a, b)| a.is_some() && b.is_some()) {
        for (a, b) in pairs.iter().flat_map(|(a, b)| a.as_ref().zip(b.as_ref())) {
            o += &format!(
                "<div class=\"pair\">{}{}</div>\n",
                figure(&a.render(), ""),
                figure(&b.render(), "")
            );
        }
    } else {
        // A side is missing: the charts drawn flow two by two.
        let figs: String = pairs
            .iter()
            .flat_map(|(a, b)| [a, b])
            .flatten()
            .map(|c| figure(&c.render(), ""))
            .collect();
        if !figs.is_empty() {
            o += &format!("<div class=\"pair\">{figs}</div>\n");
        }
    }
    o
}

/// One run: its settings, environment and its series beside its telemetry.
pub fn run_page(run: &StoredRun, generated: &str) -> String {
    let r = &run.row;
    let variable = r.variable.clone().unwrap_or_else(|| "-".into());
    let what = match (&r.workload, &r.pattern) {
        (Some(w), Some(p)) => format!("{w} {p}"),
        (Some(w), None) => w.clone(),
        (None, p) => p.clone().unwrap_or_else(|| "?".into()),
    };
    let mut p = Page::new(
        &format!("dbio run {}", r.id),
        &format!(
            "{} · {what} · {} sessions · started {} UTC{}",
            r.status,
            r.sessions.unwrap_or(0),
            crate::store::fmt_utc(r.started_unix_ms),
            r.plan
                .as_ref()
                .map(|p| format!(" · plan {p}, variable {variable}"))
                .unwrap_or_default()
        ),
    );
    // A dbio run in its types; an import (no `dbio.run.*` schema) as stored.
    let report = match crate::document::Report::from_stored(&run.report) {
        Ok(r) => Some(r),
        Err(crate::document::ReadError::Schema(_)) => None,
        Err(e) => {
            p.para("note", &format!("This run's stored document {e}."));
            None
        }
    };
    if let Some((job, ranks)) = report.as_ref().and_then(ranks::from_report) {
        p.section("ranks", "Ranks (MPI)");
        p.html(&ranks::section(job, ranks));
    }
    let awr = report.as_ref().and_then(|r| r.slob.as_ref());
    if let Some(a) = awr {
        for (id, heading, html) in awr::sections(a) {
            p.section(id, heading);
            p.html(&html);
        }
    }
    p.section("timeline", "Over time");
    if awr.is_some() {
        p.para(
            "note",
            "The model's own per-second series (physical reads, redo of the commits, commits, latency, the writers' writes) beside the devices and the host in the same seconds.",
        );
    }
    p.html(&timeline_html(&Timeline::from_run(run, &variable)));
    p.section(
        "metrics",
        if awr.is_some() {
            "Physical I/O (read = sessions' reads, write = DB writer and log writer writes)"
        } else {
            "Summary"
        },
    );
    p.html(&run_summary::headline(report.as_ref()));
    p.html(&run_summary::percentile_table(report.as_ref()));
    p.html(&open_loop::section(report.as_ref()));
    if let Some(c) = run_summary::latency_histogram(run) {
        let fig = figure(
            &c.render(),
            "The share of each operation's requests in each latency bucket: up to the bucket's label, above the one before (powers of two, every bucket from the fastest request's to the slowest's; hover a bar for its bucket), from the run's exact histograms.",
        );
        p.html(&format!("<div class=\"charts\">{fig}</div>"));
    }
    let cycle = cycle::section(report.as_ref());
    if !cycle.is_empty() {
        // A model run has no stock server to depart from.
        let model = report.as_ref().is_some_and(|r| r.slob.is_some());
        p.section(
            "cycle",
            if model {
                "Checkpoint cycle (the model's own)"
            } else {
                "Checkpoint cycle and settings changed"
            },
        );
        p.html(&cycle);
    }
    let steady = steady::section(report.as_ref());
    if !steady.is_empty() {
        p.section("steady", "Steady state");
        p.html(&steady);
    }
    p.section("settings", "Settings");
    p.html(&run_summary::settings(run, report.as_ref()));
    p.section("environment", "Environment");
    let mut d = ReportData::default();
    environment::add_environment_to(&mut d, run, &variable);
    p.html(&tables::environment_section(&d));
    p.finish(&format!(
        "dbio {} · generated {generated} UTC",
        env!("CARGO_PKG_VERSION")
    ))
}

/// The page could not be written: one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot write the HTML report to {}: {source}; check the directory exists and is writable",
    path.display()
)]
pub struct WriteError {
    pub path: std::path::PathBuf,
    pub source: std::io::Error,
}

/// Writes the page to `path`.
pub fn write(path: &Path, html: &str) -> Result<(), WriteError> {
    std::fs::write(path, html).map_err(|source| WriteError {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests;
