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
    assert_eq!(
        svgs.len(),
        6 + 1,
        "the timeline's and the latency histogram"
    );
    for svg in svgs.iter().filter(|s| !s.contains("Latency distribution")) {
        assert!(svg.contains("class=\"series\""), "a line over time: {svg}");
    }
    let r = render(&browser, &run_page, dir.path(), 1400);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let (ink, _, hits) = pixels(&r.png, &[BLUE]);
    assert!(ink > 0.05 && hits[0] > 200, "{ink} {hits:?}");
    // The host CPU panel's %sys and %iowait (near 0) inside the frame.
    assert!(html.contains(">%sys<"), "the host CPU panel");
    let problems = layout_problems(&run_page, &html, dir.path(), 2400);
    assert!(problems.starts_with("checked 0"), "{problems}");
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

/// The cell of `row` (a `<tr>` of the percentile table starting with
/// `name`) under `column`.
fn cell<'a>(html: &'a str, name: &str, column: usize) -> &'a str {
    let table = &html[html
        .find("<table class=\"pct\">")
        .expect("the percentile table")..];
    let table = &table[..table.find("</table>").unwrap()];
    let row = table
        .split("<tr>")
        .find(|r| r.starts_with(&format!("<td>{name}</td>")))
        .unwrap_or_else(|| panic!("no row {name} in {table}"));
    let cells: Vec<&str> = row
        .split("<td")
        .skip(1)
        .map(|c| c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()].trim())
        .collect();
    cells[column]
}

/// A script that lists, in the DOM Chromium dumps, every element of the
/// page wider than its box or than the page, overlapping chart labels, a
/// point drawn on a chart's frame, a label the reference line crosses, and
/// every section with nothing in it (the page's own policy forbids
/// scripts: the test's copy drops it).
const LAYOUT_CHECK: &str = r#"<script>
addEventListener('load', () => {
  const bad = [];
  const width = document.querySelector('main').getBoundingClientRect().right + 1;
  for (const el of document.querySelectorAll('main *')) {
    const r = el.getBoundingClientRect();
    const spills = el instanceof HTMLElement && el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === 'visible';
    if (r.width > 0 && (spills || r.right > width)) {
      bad.push(el.tagName + '.' + (el.getAttribute('class') || '') + ' right ' + Math.round(r.right) + ' of ' + Math.round(width) + ', scroll ' + el.scrollWidth + ' client ' + el.clientWidth + ': ' + (el.textContent || '').slice(0, 40));
    }
  }
  for (const svg of document.querySelectorAll('main svg')) {
    const texts = [...svg.querySelectorAll('text')].map(t => [t, t.getBoundingClientRect()]).filter(([, r]) => r.width > 0);
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      const [a, ra] = texts[i], [b, rb] = texts[j];
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (w > 1 && h > 1) bad.push('overlapping labels "' + a.textContent + '" and "' + b.textContent + '"');
    }
  }
  for (const svg of document.querySelectorAll('main svg')) {
    const frame = svg.querySelector('.frame');
    if (frame) {
      const f = frame.getBoundingClientRect();
      for (const p of svg.querySelectorAll('.point')) {
        const r = p.getBoundingClientRect();
        const cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
        if (Math.abs(cy - f.top) < 1.5 || Math.abs(cy - f.bottom) < 1.5 || Math.abs(cx - f.left) < 1.5 || Math.abs(cx - f.right) < 1.5) bad.push('a point on the frame of "' + svg.querySelector('title').textContent + '"');
      }
    }
    for (const line of svg.querySelectorAll('.reference')) {
      const l = line.getBoundingClientRect();
      for (const t of svg.querySelectorAll('text')) {
        const r = t.getBoundingClientRect();
        if (r.width > 0 && r.left < l.right && r.right > l.left && r.top < l.bottom && r.bottom > l.top) bad.push('the reference line crosses "' + t.textContent + '"');
      }
    }
  }
  for (const h of document.querySelectorAll('main h2')) {
    const next = h.nextElementSibling;
    if (!next || next.tagName === 'H2' || next.getBoundingClientRect().height < 4) bad.push('empty section ' + h.id);
  }
  const out = document.createElement('pre');
  out.id = 'layout-check';
  out.textContent = 'checked ' + bad.length + '\n' + bad.join('\n');
  document.body.appendChild(out);
});
</script>"#;

/// Renders `page` (whose text is `html`) in Chromium: no console message;
/// then a copy without the page's policy and with [`LAYOUT_CHECK`]: what
/// the check found (`checked 0` and nothing else when all is well).
fn layout_problems(
    page: &std::path::Path,
    html: &str,
    dir: &std::path::Path,
    height: u32,
) -> String {
    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let r = render(&browser, page, dir, height);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let checked = dir.join("checked.html");
    let csp = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let csp_end = csp + html[csp..].find('>').unwrap() + 1;
    let copy = format!("{}{}", &html[..csp], &html[csp_end..])
        .replace("</body>", &format!("{LAYOUT_CHECK}</body>"));
    std::fs::write(&checked, copy).unwrap();
    let r = render(&browser, &checked, dir, height);
    let out = &r.dom[r.dom.find("id=\"layout-check\">").expect("the check ran")..];
    out[out.find('>').unwrap() + 1..out.find("</pre>").unwrap()].to_string()
}

fn a_raw_runs_page_shows_headline_percentiles_histogram_and_its_command_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let args = [
        "run",
        "--target",
        t.to_str().unwrap(),
        "--size",
        "4M",
        "--io",
        "buffered",
        "--pattern",
        "randrw",
        "--read-pct",
        "70",
        "--sessions",
        "2",
        "--ops",
        "3000",
        "--json",
        "--quiet",
    ];
    let report: serde_json::Value = serde_json::from_str(&ok(&dbio(&args))).unwrap();
    let id = report["run_id"].as_i64().unwrap().to_string();
    let page = dir.path().join("run.html");
    ok(&dbio(&[
        "runs",
        "show",
        &id,
        "--html",
        page.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(&page).unwrap();

    // The headline: total IOPS and p99 as the report has them.
    let tile =
        |v: &str, k: &str| format!("<span class=\"v\">{v}</span><span class=\"k\">{k}</span>");
    let iops = dbio::units::fmt_count(report["total"]["iops"].as_f64().unwrap());
    assert!(html.contains(&tile(&iops, "IOPS")), "headline IOPS {iops}");
    let lat = |v: &serde_json::Value| dbio::units::fmt_latency_ns(v.as_f64().unwrap() * 1e3);
    let p99 = lat(&report["total"]["latency"]["p99_us"]);
    assert!(
        html.contains(&tile(&p99, "p99 latency")),
        "headline p99 {p99}"
    );
    // A row per operation, min … p99.99, max in the report's numbers.
    for (kind, name) in [("read", "read"), ("write", "write"), ("total", "total")] {
        let k = &report[kind];
        assert_eq!(
            cell(&html, name, 1),
            dbio::units::fmt_count(k["requests"].as_f64().unwrap())
        );
        for (col, field) in [
            (4, "min_us"),
            (8, "p99_us"),
            (10, "p99_99_us"),
            (11, "max_us"),
        ] {
            assert_eq!(
                cell(&html, name, col),
                lat(&k["latency"][field]),
                "{kind} {field}"
            );
        }
    }
    let requests = report["read"]["requests"].as_u64().unwrap()
        + report["write"]["requests"].as_u64().unwrap();
    assert_eq!(requests, 3000);
    // The histogram: a bar series per operation.
    let hist = charts(&html)
        .into_iter()
        .find(|s| s.contains("Latency distribution"))
        .expect("the latency histogram");
    assert!(drawn(hist), "{hist}");
    assert!(
        hist.contains(">read<") && hist.contains(">write<"),
        "{hist}"
    );
    // The settings as a command line that makes the same run again.
    let pre = &html[html.find("<pre class=\"cmd\">").unwrap() + 17..];
    let line = pre[..pre.find("</pre>").unwrap()].to_string();
    assert!(
        line.starts_with("dbio run --target ") && line.contains("--read-pct 70"),
        "{line}"
    );
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    let again: serde_json::Value =
        serde_json::from_str(&ok(&dbio(&[&words[..], &["--json", "--quiet"]].concat()))).unwrap();
    assert_eq!(again["config"], report["config"], "{line}");
    for group in ["Target", "Workload", "Engine", "Timing"] {
        assert!(
            html.contains(&format!("<th colspan=\"2\" class=\"group\">{group}</th>")),
            "{group}"
        );
    }

    // In Chromium: nothing wider than its box or the page, no empty section.
    let problems = layout_problems(&page, &html, dir.path(), 2400);
    assert!(problems.starts_with("checked 0"), "{problems}");
}

/// `dbio compare --html`: the sides, the load lines with their Welch
/// verdicts as `--format json` has them, the change chart; in Chromium
/// nothing overflows and no labels overlap.
fn a_comparison_page_shows_both_sides_and_each_lines_change() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    for pattern in ["randread", "randread", "randrw", "randrw"] {
        ok(&dbio(&[
            "run",
            "--target",
            t.to_str().unwrap(),
            "--size",
            "4M",
            "--io",
            "buffered",
            "--pattern",
            pattern,
            "--ops",
            "2000",
            "--quiet",
        ]));
    }
    let page = dir.path().join("cmp.html");
    let out = dbio(&["compare", "1,2", "3,4", "--html", page.to_str().unwrap()]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("wrote"));
    let html = std::fs::read_to_string(&page).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&ok(&dbio(&["compare", "1,2", "3,4", "--format", "json"]))).unwrap();
    let load = &html[html.find("<table class=\"load\">").expect("the load table")..];
    let load = &load[..load.find("</table>").unwrap()];
    let tests = json["tests"].as_array().unwrap();
    assert!(!tests.is_empty(), "{json}");
    for t in tests {
        let name = t["name"].as_str().unwrap();
        let row = load
            .split("<tr>")
            .find(|r| r.starts_with(&format!("<td>{name}</td>")))
            .unwrap_or_else(|| panic!("no row {name}: {load}"));
        let p = t["p_two_sided"]
            .as_f64()
            .or_else(|| t["welch"]["p_two_sided"].as_f64())
            .unwrap();
        assert!(row.contains(&format!("(p = {p:.3})")), "{name}: {row}");
    }
    assert!(
        html.contains("<td>pattern</td><td>randread</td><td>randrw</td>"),
        "the setting that differs"
    );
    let chart = charts(&html)
        .into_iter()
        .find(|s| s.contains("Change, 2nd against 1st"))
        .expect("the change chart");
    assert!(drawn(chart));

    let problems = layout_problems(&page, &html, dir.path(), 1400);
    assert!(problems.starts_with("checked 0"), "{problems}");
}

/// An awr_info.sh file of three filesystems over 1–32 sessions (readers):
/// EXT4 falls at 32 sessions in three close runs; XFS has two runs at 32
/// sessions far apart (20K and 68K under a peak of 60K: a log-normal
/// interval reaching past a billion, a fall the runs do not support);
/// BTRFS sits just under EXT4 (ratios of 0.97–0.99, labels at the
/// baseline).
fn awr_info_of_three_filesystems() -> String {
    /// A session count and its runs' physical reads per second.
    type Cell<'a> = (u32, &'a [u32]);
    let cells: [(&str, &[Cell]); 3] = [
        (
            "EXT4",
            &[
                (1, &[9000, 9100, 9050]),
                (4, &[30000, 31000, 30500]),
                (16, &[40000, 41000, 40500]),
                (32, &[25000, 26000, 25500]),
            ],
        ),
        (
            "XFS",
            &[
                (1, &[10000, 10500, 9800]),
                (4, &[36000, 37000, 35500]),
                (16, &[60000, 61000, 59000]),
                (32, &[20000, 68000]),
            ],
        ),
        (
            "BTRFS",
            &[
                (1, &[8900, 8950, 9000]),
                (4, &[29800, 30300, 30100]),
                (16, &[39200, 39700, 39500]),
                (32, &[25100, 25300, 25200]),
            ],
        ),
    ];
    let mut t = String::from("FILE|READERS|WRITERS|ELAPSED|PREADS|PWRITES|REDO|TOP WAIT|\n");
    for (fs, by_sessions) in cells {
        for (sessions, reads) in by_sessions {
            for (i, r) in reads.iter().enumerate() {
                t += &format!(
                    "SLOB-AWR-{fs}-{i}.0.{sessions}|{sessions}|0|300|{r}|2|1000|db file sequential read|\n"
                );
            }
        }
    }
    t
}

/// The y axis' tick labels of a chart (`950`, `12.5K`, `1.2M`) as numbers.
fn y_ticks(svg: &str) -> Vec<f64> {
    svg.split("<text ")
        .filter(|t| t.contains("text-anchor=\"end\" font-size=\"11\""))
        .filter_map(|t| {
            let l = &t[t.find('>')? + 1..t.find("</text>")?];
            let (num, mult) = match l.chars().last()? {
                'K' => (&l[..l.len() - 1], 1e3),
                'M' => (&l[..l.len() - 1], 1e6),
                'G' => (&l[..l.len() - 1], 1e9),
                _ => (l, 1.0),
            };
            Some(num.parse::<f64>().ok()? * mult)
        })
        .collect()
}

/// A plan report's charts fit their data: an interval far wider than the
/// runs is cut at the axis and marked (not stretching it a thousandfold),
/// no point sits on a frame, no ratio label is struck through by the
/// baseline or overlaps another, and a fall after the peak is flagged as a
/// collapse only where the runs support it (Welch's test).
fn a_plan_reports_charts_fit_their_data_and_flag_only_supported_collapses() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let awr = dir.path().join("awr_info.txt");
    std::fs::write(&awr, awr_info_of_three_filesystems()).unwrap();
    ok(&dbio(&[
        "import",
        "awr-info",
        awr.to_str().unwrap(),
        "--plan",
        "fs",
    ]));
    let metric = [
        "report",
        "--plan",
        "fs",
        "--metric",
        "db.physical_reads_per_s",
    ];
    let stats: serde_json::Value = serde_json::from_str(&ok(&dbio(
        &[&metric[..], &["--stats", "--format", "json"]].concat(),
    )))
    .unwrap();
    let xfs = stats["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variable"] == "SLOB-AWR-XFS")
        .unwrap();
    let wide = &xfs["cells"][3]["ci95"];
    assert_eq!(wide["method"], "log_normal", "{wide}");
    let wide_high = wide["high"].as_f64().unwrap();

    let page = dir.path().join("fs.html");
    ok(&dbio(
        &[
            &metric[..],
            &[
                "--relative-to",
                "SLOB-AWR-EXT4",
                "--html",
                page.to_str().unwrap(),
            ],
        ]
        .concat(),
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    let svgs = charts(&html);
    let over = svgs
        .iter()
        .find(|s| s.contains("db.physical_reads_per_s vs sessions"))
        .expect("the metric over sessions");
    let top = y_ticks(over).into_iter().fold(0.0, f64::max);
    assert!(
        top > 68_000.0 && top <= 200_000.0,
        "the y axis ends at {top}, not near the runs' 68K (the interval reaches {wide_high})"
    );
    assert!(wide_high > 100.0 * top, "{wide_high} against {top}");
    let clipped = dbio::chart::scale::value_label(wide_high);
    assert_eq!(
        over.matches("class=\"clipped\"").count(),
        1,
        "one interval cut: {over}"
    );
    assert!(
        over.contains(&format!("{clipped}: clipped at the axis")),
        "{over}"
    );

    // EXT4's fall is flagged; XFS's, from two runs far apart, is not.
    let scaling = |var: &str| {
        *svgs
            .iter()
            .find(|s| s.contains(&format!("{var}: scaling of")))
            .unwrap()
    };
    assert!(scaling("SLOB-AWR-EXT4").contains("collapse −37%"));
    assert!(!scaling("SLOB-AWR-XFS").contains("collapse"));
    let table = &html[html.find("<h2 id=\"scaling\"").unwrap()..];
    let row = |var: &str| {
        table
            .split("<tr>")
            .find(|r| r.starts_with(&format!("<td>{var}</td>")))
            .unwrap()
            .to_string()
    };
    assert!(
        row("SLOB-AWR-EXT4").contains(
            "class=\"flag\">40.5K → 25.5K at 32 sessions (−37%), significant at 3+3 runs"
        ),
        "{}",
        row("SLOB-AWR-EXT4")
    );
    assert!(
        row("SLOB-AWR-XFS").contains("<td>no (−27% at 32 is not significant at 3+2 runs"),
        "{}",
        row("SLOB-AWR-XFS")
    );
    let text = ok(&dbio(&[&metric[..], &["--scaling"]].concat()));
    assert!(text.contains("no (−27% at 32 is not significant"), "{text}");

    let problems = layout_problems(&page, &html, dir.path(), 4000);
    assert!(problems.starts_with("checked 0"), "{problems}");
}

crate::tests! {
    a_plan_reports_charts_fit_their_data_and_flag_only_supported_collapses [Tool("chromium")],
    a_comparison_page_shows_both_sides_and_each_lines_change,
    a_raw_runs_page_shows_headline_percentiles_histogram_and_its_command_line,
    a_plans_html_report_renders_in_chromium_with_every_chart_drawn [Tool("chromium")],
    the_console_check_sees_a_page_that_reaches_out [Tool("chromium")],
    bad_html_report_arguments_are_refused_in_one_line,
}
