//! The SLOB model in the HTML report, rendered by headless Chromium: a SLOB
//! run's page draws what the terminal AWR report prints (load profile, top
//! events as bars, one wait histogram per event, I/O by function, the
//! model's per-second series), with the numbers the store holds; a plan
//! with a raw and a SLOB arm reports what the plan swept and the settings
//! every run has, `--model` works with `--html`, and a SLOB run records no
//! raw pattern.

use std::path::Path;

use serde_json::Value;

use crate::common::browser::{charts, chromium, drawn, pixels, render};
use crate::common::run::{Run, dbio};
use crate::common::store::temp_store;

/// Runs `dbio` with `args`; it must succeed. Its stdout.
fn ok(args: &[&str]) -> String {
    let out = dbio().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "dbio {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ids `runs list` prints, oldest first.
fn run_ids(list: &str) -> Vec<String> {
    list.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// The `<svg>` (from `<svg` to `</svg>`) whose `<title>` is `title`.
fn svg_titled<'a>(markup: &'a str, title: &str) -> &'a str {
    charts(markup)
        .into_iter()
        .find(|s| s.contains(&format!("<title>{title}</title>")))
        .unwrap_or_else(|| panic!("no chart titled {title:?}"))
}

/// A SLOB run with updates and a small cache: reads, writes, commits, and
/// every event with waits.
fn slob_run(dir: &Path, extra: &[&str]) -> Value {
    Run::slob(&dir.join("data"))
        .args(&[
            "--sessions",
            "2",
            "--scale",
            "1000",
            "--cache",
            "512K",
            "--update-pct",
            "30",
            "--quiet",
        ])
        .args(extra)
        .json()
}

fn a_slob_runs_page_draws_its_top_events_and_wait_histograms() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    slob_run(
        dir.path(),
        &["--time", "2", "--ramp", "1", "--interval", "0.5"],
    );
    let list = ok(&["runs", "list"]);
    assert!(
        list.contains("slob -") && !list.contains("randrw"),
        "a SLOB run has no raw pattern: {list}"
    );
    let id = run_ids(&list).pop().unwrap();
    let stored: Value = serde_json::from_str(&ok(&["runs", "show", &id, "--json"])).unwrap();
    assert!(stored["config"]["pattern"].is_null() && stored["config"]["read_pct"].is_null());
    let slob = &stored["slob"];
    let events = slob["events"].as_array().unwrap();
    assert!(events.len() >= 3, "{events:?}");

    let page = dir.path().join("run.html");
    ok(&["runs", "show", &id, "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("randrw"));
    for id in ["awr", "load", "events", "io", "histograms", "timeline"] {
        assert!(html.contains(&format!("<h2 id=\"{id}\"")), "section {id}");
    }
    // The load profile and I/O by function: every line with its numbers as
    // the terminal report prints them.
    for l in slob["load_profile"].as_array().unwrap() {
        let name = l["name"].as_str().unwrap();
        let per_s = format!("{:.1}", l["per_second"].as_f64().unwrap());
        assert!(
            html.contains(&format!("<td>{name}</td><td class=\"num\">{per_s}</td>")),
            "{name} {per_s}"
        );
    }
    for f in slob["io_by_function"].as_array().unwrap() {
        let avg = format!("{:.3}", f["avg_ms"].as_f64().unwrap());
        let name = f["function"].as_str().unwrap();
        let row = html
            .split("<tr>")
            .find(|r| r.starts_with(&format!("<td>{name}</td>")))
            .unwrap_or_else(|| panic!("IO by function row {name}"));
        assert!(row.contains(&format!(">{avg}<")), "{row}");
    }

    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let r = render(&browser, &page, dir.path(), 5200);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let dom = &r.dom;
    assert_eq!(charts(dom).len(), charts(&html).len(), "every chart parsed");

    // Top events: DB CPU (and CPU wait when over 1% of DB time), then each
    // foreground event as a bar with its name, waits and share.
    let top = svg_titled(dom, "Top timed events (foreground)");
    let foreground: Vec<&Value> = events
        .iter()
        .filter(|e| e["side"] == "foreground")
        .collect();
    let cpu_rows = 1 + usize::from(top.contains(">CPU wait<"));
    assert_eq!(
        top.matches("class=\"bar\"").count(),
        cpu_rows + foreground.len(),
        "{top}"
    );
    assert!(top.contains(">DB CPU<"));
    for e in &foreground {
        let name = e["name"].as_str().unwrap();
        let waits = e["waits"].as_u64().unwrap();
        let pct = format!("{:.1}%", e["pct_db_time"].as_f64().unwrap());
        assert!(top.contains(&format!(">{name}<")), "{name} in {top}");
        assert!(
            top.contains(&format!("{pct} · ")) && top.contains(&format!("{waits} waits")),
            "{name}: {pct}, {waits} waits in {top}"
        );
    }

    // One histogram per event: a bar per bucket with waits, each bucket's
    // count in its tooltip.
    for e in events {
        let name = e["name"].as_str().unwrap();
        let waits = e["waits"].as_u64().unwrap();
        let svg = svg_titled(dom, &format!("{name} ({waits} waits)"));
        let hist: Vec<u64> = e["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_u64().unwrap())
            .collect();
        assert_eq!(hist.iter().sum::<u64>(), waits);
        let nonzero: Vec<u64> = hist.iter().copied().filter(|&n| n > 0).collect();
        assert_eq!(
            svg.matches("class=\"bar\"").count(),
            nonzero.len(),
            "{name}: {svg}"
        );
        for n in nonzero {
            assert!(
                svg.contains(&format!("{name}: {n} waits")),
                "{name}: bucket of {n}"
            );
        }
    }

    // The model's per-second series, each drawn.
    for title in [
        "physical reads/s",
        "redo generated by commits",
        "commits/s",
        "DBWR + LGWR writes/s",
    ] {
        let svg = svg_titled(dom, &format!("{title} — run {id}"));
        assert!(drawn(svg), "{title}");
    }
    for (i, svg) in charts(dom).iter().enumerate() {
        assert!(
            drawn(svg),
            "chart {i} drawn: {}",
            &svg[..svg.len().min(300)]
        );
    }
    let (ink, _, hits) = pixels(&r.png, &[[0x00, 0x72, 0xB2]]);
    assert!(ink > 0.05 && hits[0] > 200, "{ink} {hits:?}");
}

fn the_series_carries_each_seconds_commits_and_their_redo() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let r = slob_run(dir.path(), &["--work-loop", "150"]);
    let sum = |k: &str| -> u64 {
        r["series"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["sync"][k].as_u64().unwrap())
            .sum()
    };
    let totals = &r["slob"]["run_totals"];
    assert!(totals["transactions"].as_u64().unwrap() > 0);
    assert_eq!(sum("ops"), totals["transactions"].as_u64().unwrap());
    assert_eq!(sum("bytes"), totals["redo_bytes"].as_u64().unwrap());
}

fn a_plan_with_a_slob_arm_reports_what_it_swept_and_its_models() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("mixed.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "mixed"
repeats = 2

[workload]
time = 1
ramp = 0
interval = 0.25

[sweep]
sessions = [1, 2]

[variables]
RAW = {{ target = "{raw}", size = "4M", pattern = "randread", io = "buffered" }}
SLOB = {{ target = "{slob}", workload = "slob", scale = "1000", cache = "512K", update_pct = 25, redo_file_size = "2M", log_buffer = "512K" }}
"#,
            raw = dir.path().join("raw").display(),
            slob = dir.path().join("slob").display(),
        ),
    )
    .unwrap();
    ok(&["plan", "run", plan.to_str().unwrap()]);
    let list = ok(&["runs", "list"]);
    assert!(!list.contains("slob randrw"), "{list}");

    let page = dir.path().join("report.html");
    let p = page.to_str().unwrap();
    ok(&["report", "--plan-file", plan.to_str().unwrap(), "--html", p]);
    let html = std::fs::read_to_string(&page).unwrap();
    let plan_part = &html[html.find("<h2 id=\"plan\"").unwrap()..];
    // What the plan swept, and only that.
    assert!(
        plan_part.contains("<th>swept: sessions</th><td>1, 2</td>"),
        "{plan_part}"
    );
    assert_eq!(plan_part.matches("swept:").count(), 1, "{plan_part}");
    // Shared: only settings every run has, in units.
    let shared = &plan_part[plan_part.find("Settings shared by every run").unwrap()..];
    assert!(!shared.contains("slob."), "{shared}");
    assert!(
        shared.contains("<th>block_size_bytes</th><td>8 KiB</td>"),
        "{shared}"
    );
    assert!(
        shared.contains("<th>interval_s</th><td>0.25 s</td>"),
        "{shared}"
    );
    // The SLOB arm's own settings, in units, under its environment.
    let env =
        &html[html.find("<h2 id=\"environment\"").unwrap()..html.find("<h2 id=\"plan\"").unwrap()];
    assert!(
        env.contains("<th>slob.log_buffer_bytes</th><td>512 KiB</td>"),
        "{env}"
    );
    assert!(!html.contains("randrw"));

    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let r = render(&browser, &page, dir.path(), 7000);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let svgs = charts(&r.dom);
    assert_eq!(svgs.len(), charts(&html).len());
    for (i, svg) in svgs.iter().enumerate() {
        assert!(drawn(svg), "chart {i}: {}", &svg[..svg.len().min(300)]);
    }

    // --model with --html: the model's runs and metric.
    for (model, arm, other) in [("writes", "SLOB", "RAW"), ("reads", "RAW", "SLOB")] {
        let page = dir.path().join(format!("{model}.html"));
        let out = dbio()
            .args(["report", "--plan", "mixed", "--model", model, "--html"])
            .arg(&page)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "--model {model}: {err}");
        assert!(err.contains("4 runs"), "{err}");
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains(&format!("{model} model")), "{model}");
        let table = &html[html.find("<table class=\"slob\"").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert!(
            table.contains(&format!("<th>{arm}</th>"))
                && !table.contains(&format!("<th>{other}</th>")),
            "{model}: {table}"
        );
    }
}

crate::tests! {
    a_slob_runs_page_draws_its_top_events_and_wait_histograms [Tool("chromium")],
    the_series_carries_each_seconds_commits_and_their_redo,
    a_plan_with_a_slob_arm_reports_what_it_swept_and_its_models [Tool("chromium")],
}
