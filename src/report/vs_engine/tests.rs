use super::*;

fn run(side: Side, sessions: u32, scale: f64) -> Measured {
    let mut values = [Some(1.0); 9];
    values[0] = Some(1000.0 * scale);
    values[1] = Some(2.0 * scale);
    // No buffer writes at all (a read-only cell), on both sides.
    values[2] = Some(0.0);
    values[8] = None;
    Measured {
        side,
        cell: Cell {
            update_pct: 25,
            sessions,
        },
        values,
    }
}

fn pg_pair() -> (Flavor, Pair) {
    *paired_flavors()
        .iter()
        .find(|(_, p)| p.engine == Engine::Pg)
        .expect("postgres is paired with pg")
}

#[test]
fn the_postgres_flavor_is_held_against_pg_and_oracle_against_nothing() {
    let (f, p) = pg_pair();
    assert_eq!(flavor_name(f), "postgres");
    assert_eq!(p.page, "8k");
    assert_eq!(pair_of(Flavor::Oracle), None);
    // Every pair names a flavor's page size dbio run takes.
    for p in PAIRS {
        assert!(p.page.ends_with('k'), "{p:?}");
    }
}

#[test]
fn a_cell_compares_the_model_with_its_engine_only() {
    let (f, _) = pg_pair();
    let model = Side::Model(f);
    let pg = Side::Engine(Engine::Pg);
    let runs = vec![
        run(model, 8, 1.0),
        run(pg, 8, 0.5),
        run(model, 8, 1.1),
        run(pg, 8, 0.55),
        run(model, 8, 0.9),
        run(pg, 8, 0.45),
        // Another session count with the model only: no cell.
        run(model, 64, 1.0),
        // The Oracle flavor has no engine: left out.
        run(Side::Model(Flavor::Oracle), 8, 1.0),
    ];
    let runs: Vec<(String, Measured)> = runs
        .into_iter()
        .enumerate()
        .map(|(i, m)| (format!("run {i}"), m))
        .collect();
    let t = VsEngine::build("p", &runs, vec!["run 99 (pg): no slob section".into()]);
    assert_eq!(t.pairs.len(), 1);
    let p = &t.pairs[0];
    assert_eq!((p.flavor, p.engine), ("postgres", Engine::Pg));
    assert_eq!(p.cells.len(), 1);
    let c = &p.cells[0];
    assert_eq!((c.sessions, c.model_runs, c.engine_runs), (8, 3, 3));
    let Ratio::Known(ops) = &c.quantities[0].ratio else {
        panic!("{:?}", c.quantities[0])
    };
    assert!((ops.ratio - 2.0).abs() < 1e-9, "{ops:?}");
    assert!(ops.low < 2.0 && ops.high > 2.0, "{ops:?}");
    assert!(matches!(&c.quantities[2].ratio, Ratio::None { no_ratio } if no_ratio == "both zero"));
    // The one given, the lone 64-session run and the Oracle run.
    assert_eq!(
        t.left_out,
        [
            "run 99 (pg): no slob section",
            "run 6: no cell with both the model and its engine",
            "run 7: no cell with both the model and its engine",
        ]
    );

    let md = markdown(&t);
    assert!(
        md.contains("### `--flavor postgres against --workload pg`"),
        "{md}"
    );
    assert!(md.contains("| 25 | 8 | 3/3 | 2.00 ["), "{md}");
    let txt = text(&t);
    assert!(txt.contains("ops/s"), "{txt}");
    let v: serde_json::Value = serde_json::from_str(&json(&t)).unwrap();
    assert_eq!(v["schema"], SCHEMA);
    let q = &v["pairs"][0]["cells"][0]["quantities"][0];
    assert_eq!(q["quantity"], "ops_per_s");
    assert!(q["low"].as_f64().unwrap() < 2.0, "{q}");
    assert_eq!(
        v["pairs"][0]["cells"][0]["quantities"][2]["no_ratio"],
        "both zero"
    );
}

#[test]
fn no_pair_says_so() {
    let runs = [(
        "run 1 (pg)".to_string(),
        run(Side::Engine(Engine::Pg), 1, 1.0),
    )];
    let t = VsEngine::build("p", &runs, Vec::new());
    assert!(t.pairs.is_empty());
    let txt = text(&t);
    assert!(txt.starts_with("no cell of plan p"), "{txt}");
    assert!(
        txt.contains("left out: run 1 (pg): no cell with both"),
        "{txt}"
    );
}

#[test]
fn the_findings_say_which_ratios_are_outside_their_range() {
    let (f, _) = pg_pair();
    // ops/s 1.2x (within 0.8-1.25), reads/op 1.2x (outside 0.9-1.1).
    let runs: Vec<(String, Measured)> = [1.19, 1.2, 1.21, 0.99, 1.0, 1.01]
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let side = if i < 3 {
                Side::Model(f)
            } else {
                Side::Engine(Engine::Pg)
            };
            (format!("run {i}"), run(side, 8, s))
        })
        .collect();
    let t = VsEngine::build("p", &runs, Vec::new());
    let cx = Context {
        command: "dbio lab vs-engine --name p".into(),
        arms: vec![("pg".into(), "--workload pg".into())],
        runs: &[],
        per_session: false,
    };
    let docs = findings(&t, &cx);
    assert_eq!(docs.len(), 1);
    let (name, doc) = &docs[0];
    assert_eq!(name, "vs-engine-postgres.md");
    assert!(
        doc.starts_with("## `--flavor postgres against --workload pg`, one table every session shares (generated)"),
        "{doc}"
    );
    // The other layout's findings are kept apart: their own file and heading.
    let per = Context {
        per_session: true,
        ..cx
    };
    let (name, doc2) = &findings(&t, &per)[0];
    assert_eq!(name, "vs-engine-postgres-per-session.md");
    assert!(
        doc2.contains("`, a table per session (generated)"),
        "{doc2}"
    );
    let verdict = doc
        .lines()
        .find(|l| l.starts_with("| 25 | 8 | ") && l.contains(" of "))
        .unwrap_or_else(|| panic!("no verdict row in\n{doc}"));
    assert!(verdict.contains("reads/op 1.20 ["), "{verdict}");
    // At a glance: the ratios alone, the one outside in bold.
    let glance = doc
        .lines()
        .skip_while(|l| !l.starts_with("### At a glance"))
        .find(|l| l.starts_with("| 25 | 8 | "))
        .unwrap_or_else(|| panic!("no glance row in\n{doc}"));
    assert!(glance.contains("| **1.20** |"), "{glance}");
    assert!(!glance.contains('['), "no intervals at a glance: {glance}");
    assert!(!verdict.contains("ops/s"), "ops/s 1.2 is within: {verdict}");
    assert!(doc.contains("dbio lab vs-engine --name p"), "{doc}");
    assert!(
        doc.contains("Load average (1 minute, the mean over each run's window): not recorded"),
        "{doc}"
    );
}
