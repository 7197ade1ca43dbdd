//! PostgreSQL arms through the rest of dbio, with the real server: a plan
//! with a `--workload pg` arm beside a `--workload slob` arm gives SLOB.R
//! tables (`dbio report`, `--model`), a `runs export` and an HTML report
//! Chromium renders; a plan sweeping a server setting (`pg_set`) stores the
//! setting per cell and the server applied it. (The lab's pg arm is in
//! `lab.rs`, beside its MariaDB arm.) They share pg.rs's lock: "nothing
//! left" is checked machine-wide there.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::browser::{charts, chromium, drawn, render};
use crate::common::run::dbio;
use crate::common::server::processes_left;
use crate::common::store::{store_path, temp_store};
use crate::pg::{ONE_AT_A_TIME, PgDir};

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(args: &[&str]) -> Output {
    dbio().args(args).output().unwrap()
}

/// Writes `toml` as `dir`/`name`.toml and runs it with `dbio plan run`.
fn plan_run(dir: &Path, name: &str, toml: &str) {
    let plan = dir.join(format!("{name}.toml"));
    fs::write(&plan, toml).unwrap();
    ok(&run(&["plan", "run", plan.to_str().unwrap()]));
}

/// The stored reports of a plan's completed runs, by variable and sessions.
fn reports(plan: &str) -> Vec<(String, String, Value)> {
    let conn = rusqlite::Connection::open(store_path()).unwrap();
    let mut q = conn
        .prepare(
            "SELECT variable, cell_key, report_json FROM runs \
             WHERE plan = ?1 AND status = 'completed' ORDER BY id",
        )
        .unwrap();
    q.query_map([plan], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })
    .unwrap()
    .map(|r| {
        let (v, k, j) = r.unwrap();
        (v, k, serde_json::from_str(&j).unwrap())
    })
    .collect()
}

/// The line of a SLOB.R table that starts with `variable`, and its numbers.
fn row(table: &str, variable: &str) -> Vec<f64> {
    let line = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(variable))
        .unwrap_or_else(|| panic!("no {variable} row in:\n{table}"));
    line.split_whitespace()
        .skip(1)
        .filter_map(|w| w.trim_end_matches('*').replace(',', "").parse().ok())
        .collect()
}

fn a_plan_with_a_pg_arm_and_a_model_arm_gives_slob_r_tables_and_an_html_report() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let pg = PgDir::on_tmpfs();
    let model = pg.base.join("model");
    plan_run(
        &pg.base,
        "pg-vs-model",
        &format!(
            r#"name = "pg-vs-model"
repeats = 1

[workload]
schemas = 1
scale = "300"
work_unit = 16
work_loop = 20
update_pct = 20
cache = "16M"

[sweep]
threads_per_schema = [1, 2]

[variables]
PG = {{ workload = "pg", target = "{}" }}
MODEL = {{ workload = "slob", target = "{}", redo_file_size = "2M", log_buffer = "512K" }}
"#,
            pg.target.display(),
            model.display()
        ),
    );
    let runs = reports("pg-vs-model");
    assert_eq!(runs.len(), 4, "2 arms x 2 session counts");
    for (var, _, r) in &runs {
        let want = if var == "PG" { "pg" } else { "slob" };
        assert_eq!(r["config"]["workload"], want, "{var}");
    }

    // SLOB.R tables: a row per arm, a number per session count.
    let reads = ok(&run(&[
        "report",
        "--plan",
        "pg-vs-model",
        "--metric",
        "db.physical_reads_per_s",
    ]));
    for v in ["PG", "MODEL"] {
        let cells = row(&reads, v);
        assert!(
            cells.len() >= 2 && cells[..2].iter().all(|x| *x > 0.0),
            "{v}: {cells:?} in\n{reads}"
        );
    }
    let redo = ok(&run(&[
        "report",
        "--plan",
        "pg-vs-model",
        "--metric",
        "db.redo_bytes_per_s",
    ]));
    assert!(row(&redo, "PG")[..2].iter().all(|x| *x > 0.0), "{redo}");
    // SLOB.R's models: 300 rows in a 16M cache write no data block in 20
    // operations, so both arms' runs are REDO runs (redo bytes over
    // physical writes of 8 KiB > 2), in its table with their redo MiB/s.
    let redo_model = ok(&run(&[
        "report",
        "--plan",
        "pg-vs-model",
        "--model",
        "redo",
    ]));
    for v in ["PG", "MODEL"] {
        let cells = row(&redo_model, v);
        assert!(
            cells.len() >= 2 && cells[..2].iter().all(|x| *x > 0.0),
            "{v}: {cells:?} in\n{redo_model}"
        );
    }
    // One export row per run, the arms' shared metrics side by side.
    let csv = ok(&run(&[
        "runs",
        "export",
        "--plan",
        "pg-vs-model",
        "--metrics",
        "db.physical_reads_per_s,db.transactions_per_s",
    ]));
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");

    // The HTML report: every chart drawn, and Chromium renders it.
    let page = pg.base.join("pg-vs-model.html");
    let out = run(&[
        "report",
        "--plan",
        "pg-vs-model",
        "--metric",
        "db.physical_reads_per_s",
        "--html",
        page.to_str().unwrap(),
    ]);
    ok(&out);
    let html = fs::read_to_string(&page).unwrap();
    for id in ["table", "charts", "environment", "plan"] {
        assert!(
            html.contains(&format!("<h2 id=\"{id}\"")),
            "section {id} missing"
        );
    }
    assert!(html.contains(">PG<") && html.contains(">MODEL<"));
    let svgs = charts(&html);
    assert!(!svgs.is_empty());
    for (i, svg) in svgs.iter().enumerate() {
        assert!(
            drawn(svg),
            "chart {i} has no data drawn: {}",
            &svg[..svg.len().min(400)]
        );
    }
    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let shots = tempfile::tempdir().unwrap();
    let r = render(&browser, &page, shots.path(), 5000);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    assert_eq!(
        charts(&r.dom).len(),
        svgs.len(),
        "Chromium parsed every chart"
    );
    // dbio stopped the server after each run: nothing works under the
    // test's directory (PgDir's drop is only the backstop).
    assert!(processes_left(&pg.base).is_empty(), "a postgres left");
}

fn a_plan_sweeping_a_server_setting_stores_it_per_cell() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let pg = PgDir::on_tmpfs();
    plan_run(
        &pg.base,
        "pg-shared-buffers",
        &format!(
            r#"name = "pg-shared-buffers"
repeats = 1

[workload]
workload = "pg"
target = "{}"
schemas = 1
scale = "300"
work_unit = 16
work_loop = 10
update_pct = 50

[sweep]
pg_set = ["shared_buffers=16MB", "shared_buffers=24MB"]

[variables]
PG = {{}}
"#,
            pg.target.display()
        ),
    );
    let runs = reports("pg-shared-buffers");
    assert_eq!(runs.len(), 2);
    let mut seen = Vec::new();
    for (_, key, r) in &runs {
        let want = ["16MB", "24MB"]
            .into_iter()
            .find(|w| key.contains(&format!("pg-set=shared_buffers={w}|")))
            .unwrap_or_else(|| panic!("cell key {key} names no swept value"));
        seen.push(want);
        // The setting as the server applied it (pg_settings).
        let applied = r["pg"]["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s[0] == "shared_buffers")
            .map(|s| s[1].as_str().unwrap().to_string());
        assert_eq!(applied.as_deref(), Some(want), "{key}");
    }
    seen.sort_unstable();
    assert_eq!(seen, ["16MB", "24MB"], "one run per swept value");
    // The sweep is the plan's, and the report says what it swept.
    let table = ok(&run(&[
        "report",
        "--plan",
        "pg-shared-buffers",
        "--metric",
        "db.transactions_per_s",
    ]));
    assert!(table.contains("PG"), "{table}");
    let page = pg.base.join("sb.html");
    ok(&run(&[
        "report",
        "--plan",
        "pg-shared-buffers",
        "--metric",
        "db.transactions_per_s",
        "--html",
        page.to_str().unwrap(),
    ]));
    let html = fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("swept: pg_set") || html.contains("swept: pg-set"),
        "the plan section names the swept setting"
    );
    assert!(html.contains("shared_buffers=16MB") && html.contains("shared_buffers=24MB"));
    assert!(processes_left(&pg.base).is_empty(), "a postgres left");
}

crate::tests! {
    a_plan_with_a_pg_arm_and_a_model_arm_gives_slob_r_tables_and_an_html_report [Root, Postgres, Tool("chromium")],
    a_plan_sweeping_a_server_setting_stores_it_per_cell [Root, Postgres],
}
