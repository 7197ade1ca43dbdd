//! The HTML report end to end: a small plan (2 variables x 4 session counts
//! x 2 repeats) is run into a temporary store, `dbio report --html` and
//! `dbio runs show --html` write their pages, and headless Chromium renders
//! them: the screenshot must not be blank and must show the series'
//! colours, the browser must parse every chart as SVG with its lines and
//! points, and the page must log nothing on the console (its
//! Content-Security-Policy turns any attempt to fetch into a console error).

use std::process::{Command, Output};

use crate::common::browser::{charts, chromium, drawn, pixels, render};
use crate::common::store::{store_path, temp_store};

fn dbio(args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        .env("DBIO_DB", store_path())
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "dbio failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One line on stderr, the exit code, and nothing written.
fn refused(out: &Output, code: i32, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(says), "{err}");
}

const BLUE: [u8; 3] = [0x00, 0x72, 0xB2];
const VERMILLION: [u8; 3] = [0xD5, 0x5E, 0x00];

fn a_plans_html_report_renders_in_chromium_with_every_chart_drawn() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("html-plan.toml");
    std::fs::write(
        &plan,
        format!(
            r#"name = "html-plan"
repeats = 2

[workload]
target = "{}"
size = "4M"
pattern = "randrw"
io = "buffered"
time = 0.5
ramp = 0
interval = 0.25

[sweep]
sessions = [1, 2, 3, 4]

[variables]
PSYNC = {{ engine = "psync" }}
URING = {{ engine = "io_uring", iodepth = 4 }}
"#,
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    ok(&dbio(&["plan", "run", plan.to_str().unwrap()]));
    // A longer run on its own, for the single-run page's time series.
    ok(&dbio(&[
        "run",
        "--target",
        dir.path().join("data").to_str().unwrap(),
        "--size",
        "4M",
        "--io",
        "buffered",
        "--time",
        "2",
        "--ramp",
        "1",
        "--interval",
        "0.5",
        "--quiet",
        "--tag",
        "single",
    ]));

    let page = dir.path().join("report.html");
    let p = page.to_str().unwrap();
    let out = dbio(&[
        "report",
        "--plan-file",
        plan.to_str().unwrap(),
        "--relative-to",
        "PSYNC",
        "--html",
        p,
    ]);
    ok(&out);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("16 runs"),
        "{out:?}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for id in [
        "table",
        "compare",
        "charts",
        "latency",
        "scaling",
        "timeline",
        "environment",
        "plan",
    ] {
        assert!(
            html.contains(&format!("<h2 id=\"{id}\"")),
            "section {id} missing"
        );
    }
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("href=\"http"));
    assert!(html.contains("Content-Security-Policy"));
    // The plan file's facts and the environment of the arms.
    assert!(
        html.contains("html-plan")
            && html.contains("swept: sessions")
            && html.contains(">1, 2, 3, 4<")
    );
    assert!(html.contains("(derived from the name)") && html.contains(">io_uring<"));
    assert!(html.contains(">kernel<") && html.contains(">filesystem<"));
    assert!(html.contains("Welch") && html.contains("USL σ"));
    // metric vs sessions + relative bars + read and write latency + 2
    // scaling charts + 2 timelines x 6 panels.
    let svgs = charts(&html);
    assert_eq!(svgs.len(), 1 + 1 + 2 + 2 + 2 * 6, "charts in the page");
    for (i, svg) in svgs.iter().enumerate() {
        assert!(
            drawn(svg),
            "chart {i} has no data drawn: {}",
            &svg[..svg.len().min(400)]
        );
    }

    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let r = render(&browser, &page, dir.path(), 7000);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let dom_svgs = charts(&r.dom);
    assert_eq!(
        dom_svgs.len(),
        svgs.len(),
        "Chromium parsed every chart as SVG"
    );
    for (a, b) in svgs.iter().zip(&dom_svgs) {
        assert_eq!(a.matches("<path").count(), b.matches("<path").count());
        assert_eq!(a.matches("<circle").count(), b.matches("<circle").count());
    }
    let (ink, colours, hits) = pixels(&r.png, &[BLUE, VERMILLION]);
    assert!(
        ink > 0.05,
        "the screenshot is nearly blank: {:.1}% ink",
        ink * 100.0
    );
    assert!(colours > 100, "only {colours} colours in the screenshot");
    assert!(
        hits.iter().all(|&h| h > 200),
        "series colours drawn: {hits:?}"
    );

    // The single run's page: its series and its telemetry over time.
    let id = ok(&dbio(&["runs", "list", "--tag", "single"]));
    let id = id
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let run_page = dir.path().join("run.html");
    let out = ok(&dbio(&[
        "runs",
        "show",
        &id,
        "--html",
        run_page.to_str().unwrap(),
    ]));
    assert!(out.contains("wrote"), "{out}");
    let html = std::fs::read_to_string(&run_page).unwrap();
    let svgs = charts(&html);
    assert_eq!(svgs.len(), 6);
    for svg in &svgs {
        assert!(svg.contains("class=\"series\""), "a line over time: {svg}");
    }
    let r = render(&browser, &run_page, dir.path(), 1400);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let (ink, _, hits) = pixels(&r.png, &[BLUE]);
    assert!(ink > 0.05 && hits[0] > 200, "{ink} {hits:?}");
}

fn the_console_check_sees_a_page_that_reaches_out() {
    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("bad.html");
    // The report's own policy, and an image from the network.
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"{}\"></head>\
             <body><img src=\"http://127.0.0.1:9/x.png\"></body></html>",
            dbio::report::html::page::CSP
        ),
    )
    .unwrap();
    let r = render(&browser, &page, dir.path(), 300);
    assert!(
        r.console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "{:#?}",
        r.console
    );
}

fn bad_html_report_arguments_are_refused_in_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    ok(&dbio(&[
        "run",
        "--target",
        dir.path().join("d").to_str().unwrap(),
        "--size",
        "2M",
        "--io",
        "buffered",
        "--ops",
        "200",
        "--quiet",
    ]));
    let page = dir.path().join("r.html");
    let p = page.to_str().unwrap();
    refused(
        &dbio(&["report", "--html", p, "--relative-to", "NOPE"]),
        2,
        "--relative-to NOPE",
    );
    refused(
        &dbio(&["report", "--html", p, "--metric", "no.such"]),
        2,
        "no.such",
    );
    refused(
        &dbio(&["report", "--html", p, "--plan", "none"]),
        2,
        "no completed run",
    );
    assert!(!page.exists(), "nothing written on a refusal");
    let missing = dir.path().join("no/such/dir/r.html");
    refused(
        &dbio(&["report", "--html", missing.to_str().unwrap()]),
        1,
        "cannot write the HTML report to",
    );
    let plan = dir.path().join("p.toml");
    std::fs::write(&plan, "name = \"other\"\n[workload]\nops = 10\n").unwrap();
    refused(
        &dbio(&[
            "report",
            "--html",
            p,
            "--plan",
            "mine",
            "--plan-file",
            plan.to_str().unwrap(),
        ]),
        2,
        "drop one of them",
    );
    refused(
        &dbio(&["report", "--plan-file", plan.to_str().unwrap()]),
        2,
        "--html",
    );
    ok(&dbio(&["report", "--html", p]));
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("These runs do not come from a plan")
    );
}

crate::tests! {
    a_plans_html_report_renders_in_chromium_with_every_chart_drawn [Tool("chromium")],
    the_console_check_sees_a_page_that_reaches_out [Tool("chromium")],
    bad_html_report_arguments_are_refused_in_one_line,
}
