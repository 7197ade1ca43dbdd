//! `dbio report --stats` and `--scaling` on real runs: a small plan (2
//! variables × 4 session counts × 3 repeats, buffered, exact op counts) in a
//! temporary store; the numbers are checked against the stored values read
//! back with `dbio runs export` and computed here independently.

use std::collections::BTreeMap;
use std::path::Path;

use crate::common::cli::{dbio, ok};

use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Runs a plan of `variables` × `sessions` × `repeats` into `db`.
fn run_plan(dir: &Path, db: &Path, name: &str, sessions: &str, repeats: u32, variables: &str) {
    let plan = dir.join(format!("{name}.toml"));
    std::fs::write(
        &plan,
        format!(
            r#"name = "{name}"
repeats = {repeats}

[workload]
size = "2M"
pattern = "randrw"
io = "buffered"
ops = 2000

[sweep]
sessions = [{sessions}]

[variables]
{variables}
"#
        ),
    )
    .unwrap();
    ok(dbio(db, &["plan", "run", plan.to_str().unwrap()]));
}

/// total.iops of the plan's counted runs by (variable, sessions), with
/// their ids, read back from the store.
fn stored(db: &Path, plan: &str) -> BTreeMap<(String, u32), Vec<(i64, f64)>> {
    let rows: Value = serde_json::from_str(&ok(dbio(
        db,
        &["runs", "export", "--format", "json", "--plan", plan],
    )))
    .unwrap();
    let mut m: BTreeMap<(String, u32), Vec<(i64, f64)>> = BTreeMap::new();
    for r in rows.as_array().unwrap() {
        if r["warmup"].as_bool().unwrap() || r["status"] != "completed" {
            continue;
        }
        m.entry((
            r["variable"].as_str().unwrap().to_string(),
            r["sessions"].as_u64().unwrap() as u32,
        ))
        .or_default()
        .push((r["id"].as_i64().unwrap(), r["total_iops"].as_f64().unwrap()));
    }
    m
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn var(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
}

/// SLOB.R's myavg: every copy of the min and the max dropped, the rest
/// averaged; the plain mean where nothing is left.
fn trimmed(v: &[f64]) -> f64 {
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let kept: Vec<f64> = v
        .iter()
        .copied()
        .filter(|&x| x != min && x != max)
        .collect();
    if kept.is_empty() {
        mean(v)
    } else {
        mean(&kept)
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn t975(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975)
}

fn stats_and_scaling_agree_with_the_stored_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let d = dir.path().display();
    run_plan(
        dir.path(),
        &db,
        "st",
        "1, 2, 3, 4",
        3,
        &format!("A = {{ target = \"{d}/a\" }}\nB = {{ target = \"{d}/b\", bs = \"4k\" }}"),
    );
    let runs = stored(&db, "st");
    assert_eq!(runs.len(), 8);
    assert!(runs.values().all(|v| v.len() == 3));

    let json: Value = serde_json::from_str(&ok(dbio(
        &db,
        &[
            "report",
            "--plan",
            "st",
            "--stats",
            "--scaling",
            "--format",
            "json",
        ],
    )))
    .unwrap();
    // The SLOB.R table is still there, the statistics beside it.
    assert_eq!(json["metric"], "total.iops");
    assert_eq!(json["rows"].as_array().unwrap().len(), 2);
    let stats = &json["stats"];
    assert_eq!(stats["baseline"], "A");
    assert_eq!(stats["baseline_given"], false);

    // Every cell: n, mean, CV and the t interval, computed here.
    let cells = stats["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * (4 + 1));
    for ((variable, sessions), rs) in &runs {
        let c = cells
            .iter()
            .find(|c| c["variable"] == variable.as_str() && c["sessions"] == *sessions)
            .unwrap();
        let v: Vec<f64> = rs.iter().map(|r| r.1).collect();
        let (m, s) = (mean(&v), var(&v).sqrt());
        assert_eq!(c["n"], 3);
        assert!(close(c["mean"].as_f64().unwrap(), m), "{c}");
        assert!(close(c["cv"].as_f64().unwrap(), s / m), "{c}");
        let half = t975(2.0) * s / 3f64.sqrt();
        let t = &c["ci95_t"];
        assert_eq!(t["method"], "student_t", "{c}");
        assert!(close(t["low"].as_f64().unwrap(), m - half), "{c}");
        assert!(close(t["high"].as_f64().unwrap(), m + half), "{c}");
        // Three runs are never called skewed: the t interval is shown,
        // unless it reaches zero (IOPS are positive: the log-normal one).
        let want = if m - half > 0.0 {
            "student_t"
        } else {
            "log_normal"
        };
        assert_eq!(c["ci95"]["method"], want, "{c}");
        // Tukey's fences need 4 runs.
        assert_eq!(c["outliers"], serde_json::json!([]));
    }
    // Overall: all 12 runs of the variable.
    let overall = cells
        .iter()
        .find(|c| c["variable"] == "B" && c["sessions"].is_null())
        .unwrap();
    let all_b: Vec<f64> = runs
        .iter()
        .filter(|(k, _)| k.0 == "B")
        .flat_map(|(_, rs)| rs.iter().map(|r| r.1))
        .collect();
    assert_eq!(overall["n"], 12);
    assert!(close(overall["mean"].as_f64().unwrap(), mean(&all_b)));

    // Welch's test of B against A at each session count, by hand.
    let cmp = stats["comparisons"].as_array().unwrap();
    assert_eq!(cmp.len(), 4);
    let text = ok(dbio(&db, &["report", "--plan", "st", "--stats"]));
    assert!(
        text.contains("Against A (the first variable; choose another with --relative-to)"),
        "{text}"
    );
    for c in cmp {
        let n = c["sessions"].as_u64().unwrap() as u32;
        let get = |v: &str| -> Vec<f64> { runs[&(v.to_string(), n)].iter().map(|r| r.1).collect() };
        let (b, a) = (get("B"), get("A"));
        let (sb, sa) = (var(&b) / 3.0, var(&a) / 3.0);
        let t = (mean(&b) - mean(&a)) / (sa + sb).sqrt();
        let df = (sa + sb).powi(2) / (sa * sa / 2.0 + sb * sb / 2.0);
        let p = 2.0 * StudentsT::new(0.0, 1.0, df).unwrap().cdf(-t.abs());
        let w = &c["welch"];
        assert!(close(w["t"].as_f64().unwrap(), t), "{c}");
        assert!(close(w["df"].as_f64().unwrap(), df), "{c}");
        assert!((w["p_two_sided"].as_f64().unwrap() - p).abs() < 1e-9, "{c}");
        let verdict = if p < 0.05 {
            "significant difference"
        } else {
            "no significant difference"
        };
        assert_eq!(c["verdict"], verdict);
        // The text says the same on the line of that session count.
        let against = &text[text.find("Against A").unwrap()..];
        let line = against
            .lines()
            .find(|l| l.starts_with(&format!("B         {n} ")))
            .unwrap_or_else(|| panic!("no B {n} line in\n{text}"));
        assert!(line.ends_with(verdict), "{line}");
    }

    // Scaling: the peak is the highest per-count value; the USL fit's R²
    // recomputed here from its λ, σ, κ over every run.
    for s in json["scaling"].as_array().unwrap() {
        let v = s["variable"].as_str().unwrap();
        assert_eq!(s["session_counts"], serde_json::json!([1, 2, 3, 4]));
        // The peak is the table's value of its cell (SLOB.R's trimmed
        // mean: the middle of three distinct runs), not the plain mean.
        let means: Vec<(u32, f64)> = runs
            .iter()
            .filter(|(k, _)| k.0 == v)
            .map(|(k, rs)| (k.1, trimmed(&rs.iter().map(|r| r.1).collect::<Vec<_>>())))
            .collect();
        let best = means
            .iter()
            .fold(means[0], |b, m| if m.1 > b.1 { *m } else { b });
        assert!(
            close(s["peak"]["throughput"].as_f64().unwrap(), best.1),
            "{s}"
        );
        assert_eq!(s["peak"]["sessions"].as_f64().unwrap(), best.0 as f64);
        let f = &s["usl"];
        let (l, sg, k) = (
            f["lambda"].as_f64().unwrap(),
            f["sigma"].as_f64().unwrap(),
            f["kappa"].as_f64().unwrap(),
        );
        assert!(sg >= 0.0 && k >= 0.0 && l > 0.0, "{s}");
        let pts: Vec<(f64, f64)> = runs
            .iter()
            .filter(|(key, _)| key.0 == v)
            .flat_map(|(key, rs)| rs.iter().map(move |r| (key.1 as f64, r.1)))
            .collect();
        let xbar = mean(&pts.iter().map(|p| p.1).collect::<Vec<_>>());
        let ss_tot: f64 = pts.iter().map(|p| (p.1 - xbar).powi(2)).sum();
        let ss_res: f64 = pts
            .iter()
            .map(|&(n, x)| (x - l * n / (1.0 + sg * (n - 1.0) + k * n * (n - 1.0))).powi(2))
            .sum();
        assert!(
            (f["r2"].as_f64().unwrap() - (1.0 - ss_res / ss_tot)).abs() < 1e-9,
            "{s}"
        );
        if k > 0.0 && sg < 1.0 {
            assert!(close(
                f["peak_n"].as_f64().unwrap(),
                ((1.0 - sg) / k).sqrt()
            ));
        }
        assert!(s["no_fit"].is_null());
    }
    let text = ok(dbio(&db, &["report", "--plan", "st", "--scaling"]));
    assert!(
        text.contains("Scaling of total.iops over sessions"),
        "{text}"
    );
    assert!(text.contains("USL peak N") && text.contains("R²"), "{text}");

    // Markdown and CSV for a wiki or a spreadsheet, B as the baseline.
    let md = ok(dbio(
        &db,
        &[
            "report",
            "--plan",
            "st",
            "--stats",
            "--relative-to",
            "B",
            "--format",
            "markdown",
        ],
    ));
    assert!(
        md.starts_with("| variable | 1 | 2 | 3 | 4 | Overall |"),
        "{md}"
    );
    assert!(
        md.contains("Against B: ratio") && md.contains("| A | 1 | "),
        "{md}"
    );
    let csv = ok(dbio(
        &db,
        &["report", "--plan", "st", "--stats", "--format", "csv"],
    ));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 10, "{csv}");
    assert!(lines[0].starts_with("variable,sessions,n,value,trimmed,mean,"));
    let a1: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("A,1,"))
        .unwrap()
        .split(',')
        .collect();
    let want = mean(
        &runs[&("A".to_string(), 1)]
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
    );
    assert!(close(a1[5].parse().unwrap(), want), "{csv}");
}

fn outliers_no_fit_and_bad_requests_are_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    // One variable, three session counts: no USL fit; 5 repeats at
    // sessions 1 leave room for Tukey's fences.
    run_plan(
        dir.path(),
        &db,
        "few",
        "1, 2, 3",
        5,
        &format!("X = {{ target = \"{}/x\" }}", dir.path().display()),
    );
    let json: Value = serde_json::from_str(&ok(dbio(
        &db,
        &[
            "report",
            "--plan",
            "few",
            "--stats",
            "--scaling",
            "--format",
            "json",
        ],
    )))
    .unwrap();
    let fit = &json["scaling"][0];
    assert!(fit["usl"].is_null());
    assert_eq!(
        fit["no_fit"],
        "needs at least 4 distinct session counts, got 3"
    );
    // A single variable: nothing to compare, no baseline.
    assert!(json["stats"]["baseline"].is_null());
    assert_eq!(json["stats"]["comparisons"], serde_json::json!([]));
    // Outliers are the runs outside Tukey's fences of their 5 values,
    // recomputed here (quartiles as R's type 7).
    let runs = stored(&db, "few");
    for ((_, sessions), rs) in &runs {
        let mut v: Vec<f64> = rs.iter().map(|r| r.1).collect();
        v.sort_by(f64::total_cmp);
        let q = |p: f64| {
            let h = (v.len() - 1) as f64 * p;
            let lo = h.floor() as usize;
            v[lo] + (h - lo as f64) * (v[(lo + 1).min(v.len() - 1)] - v[lo])
        };
        let (q1, q3) = (q(0.25), q(0.75));
        let (lo, hi) = (q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1));
        let mut want: Vec<i64> = rs
            .iter()
            .filter(|r| r.1 < lo || r.1 > hi)
            .map(|r| r.0)
            .collect();
        let cell = json["stats"]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["sessions"] == *sessions)
            .unwrap();
        let mut got: Vec<i64> = cell["outliers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["run"].as_i64().unwrap())
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want, "{cell}");
    }
    let text = ok(dbio(&db, &["report", "--plan", "few", "--scaling"]));
    assert!(
        text.contains("X: no USL fit: needs at least 4 distinct session counts, got 3"),
        "{text}"
    );

    for (args, says) in [
        (
            &["--scaling", "--metric", "total.p99_us"][..],
            "not a throughput metric",
        ),
        (&["--stats", "--scaling", "--format", "csv"], "not both"),
        (&["--stats", "--relative-to", "Y"], "no such variable"),
    ] {
        let mut all = vec!["report", "--plan", "few"];
        all.extend(args);
        let out = dbio(&db, &all);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// An awr_info.sh file (SLOB.R's columns) whose PREADS are chosen: WIDE's
/// three runs at 8 sessions spread so far that Student's t interval goes
/// below zero and their plain mean (701667) beats the 16-session cell whose
/// trimmed mean (510000) beats 8's (435000); STEADY has eight runs at 8
/// sessions and two ten times higher at 16.
fn chosen_values() -> String {
    let mut t = String::from("FILE|READERS|WRITERS|ELAPSED|PREADS|PWRITES|REDO|TOP WAIT|\n");
    let mut row = |var: &str, i: usize, sessions: u32, preads: f64| {
        t += &format!(
            "SLOB-AWR-{var}-{i}.0.{sessions}|{sessions}|0|300|{preads}|2|1000|db file sequential read|\n"
        );
    };
    for (i, p) in [220_000.0, 1_450_000.0, 435_000.0].into_iter().enumerate() {
        row("WIDE", i, 8, p);
    }
    for (i, p) in [500_000.0, 510_000.0, 520_000.0].into_iter().enumerate() {
        row("WIDE", i, 16, p);
    }
    for i in 0..8 {
        row("STEADY", i, 8, 1000.0 + 10.0 * i as f64);
    }
    row("STEADY", 0, 16, 10_000.0);
    row("STEADY", 1, 16, 10_100.0);
    t
}

fn intervals_peaks_outliers_and_ratios_keep_to_one_definition() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.sqlite");
    let file = dir.path().join("awrinfo");
    std::fs::write(&file, chosen_values()).unwrap();
    ok(dbio(
        &db,
        &[
            "import",
            "awr-info",
            file.to_str().unwrap(),
            "--variable-regex",
            r"-(?P<variable>WIDE|STEADY)-\d+\.",
        ],
    ));
    let json: Value = serde_json::from_str(&ok(dbio(
        &db,
        &[
            "report",
            "--metric",
            "db.physical_reads_s",
            "--stats",
            "--scaling",
            "--format",
            "json",
        ],
    )))
    .unwrap();
    let cell = |v: &str, s: Option<u64>| {
        json["stats"]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variable"] == v && c["sessions"].as_u64() == s)
            .unwrap()
            .clone()
    };
    // A rate's interval stays positive: the t interval would reach below
    // zero, so the modified Cox interval (log-normal) is shown.
    let wide8 = cell("WIDE", Some(8));
    let x = [220_000.0f64, 1_450_000.0, 435_000.0];
    let (m, sd) = (mean(&x), var(&x).sqrt());
    assert!(m - t975(2.0) * sd / 3f64.sqrt() < 0.0);
    assert_eq!(wide8["ci95"]["method"], "log_normal", "{wide8}");
    let l: Vec<f64> = x.iter().map(|v| v.ln()).collect();
    let (ly, ls2) = (mean(&l), var(&l));
    let se = (ls2 / 3.0 + ls2 * ls2 / 4.0).sqrt();
    let (lo, hi) = (
        (ly + ls2 / 2.0 - t975(2.0) * se).exp(),
        (ly + ls2 / 2.0 + t975(2.0) * se).exp(),
    );
    assert!(close(wide8["ci95"]["low"].as_f64().unwrap(), lo), "{wide8}");
    assert!(
        close(wide8["ci95"]["high"].as_f64().unwrap(), hi),
        "{wide8}"
    );
    assert!(lo > 0.0);
    let text = ok(dbio(
        &db,
        &["report", "--metric", "db.physical_reads_s", "--stats"],
    ));
    let line = text
        .lines()
        .find(|l| l.starts_with("WIDE      8 "))
        .unwrap_or_else(|| panic!("{text}"));
    let negative = line
        .split_whitespace()
        .any(|w| w.starts_with('-') && w[1..].starts_with(|c: char| c.is_ascii_digit()));
    assert!(line.contains("log-normal") && !negative, "{line}");

    // Tukey's fences within a cell only: pooled, STEADY's two 16-session
    // runs would be outliers of its Overall.
    let steady: Vec<f64> = (0..8)
        .map(|i| 1000.0 + 10.0 * i as f64)
        .chain([10_000.0, 10_100.0])
        .collect();
    let mut sorted = steady.clone();
    sorted.sort_by(f64::total_cmp);
    let q = |p: f64| {
        let h = 9.0 * p;
        let lo = h.floor() as usize;
        sorted[lo] + (h - lo as f64) * (sorted[(lo + 1).min(9)] - sorted[lo])
    };
    assert!(
        steady
            .iter()
            .any(|&v| v > q(0.75) + 1.5 * (q(0.75) - q(0.25)))
    );
    assert_eq!(cell("STEADY", None)["outliers"], serde_json::json!([]));
    assert_eq!(cell("STEADY", None)["n"], 10);

    // The peak is the table's cell, not a plain mean: 16 sessions (510000),
    // where the plain means would have said 8 (701667).
    let wide = json["scaling"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["variable"] == "WIDE")
        .unwrap();
    assert_eq!(wide["peak"]["sessions"], 16.0, "{wide}");
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variable"] == "WIDE")
        .unwrap();
    let col = json["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s == 16)
        .unwrap();
    assert_eq!(wide["peak"]["throughput"], row["cells"][col]["value"]);
    assert_eq!(row["cells"][col]["value"], 510_000.0);

    // A relative table has one precision: 420 times and 1 time alike.
    let text = ok(dbio(
        &db,
        &[
            "report",
            "--metric",
            "db.physical_reads_s",
            "--relative-to",
            "STEADY",
        ],
    ));
    let decimals: std::collections::BTreeSet<usize> = text
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with('*'))
        .flat_map(|l| l.split_whitespace().skip(1))
        .filter(|c| *c != "-")
        .map(|c| {
            c.trim_end_matches('*')
                .split('.')
                .nth(1)
                .map_or(0, str::len)
        })
        .collect();
    assert_eq!(decimals.len(), 1, "{text}");
}

crate::tests! {
    stats_and_scaling_agree_with_the_stored_runs,
    outliers_no_fit_and_bad_requests_are_said_plainly,
    intervals_peaks_outliers_and_ratios_keep_to_one_definition,
}
