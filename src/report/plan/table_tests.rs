//! Tests of the SLOB.R table: trimmed means, Overall, the baseline, one
//! precision per relative table, the interval each cell shows.

use super::*;

fn p(v: &str, s: u32, x: f64) -> Point {
    Point {
        variable: v.into(),
        sessions: s,
        value: x,
    }
}

#[test]
fn a_skewed_cell_gets_the_bootstrap_interval_and_says_so() {
    let mut pts: Vec<Point> = (0..9).map(|i| p("A", 1, 100.0 + f64::from(i))).collect();
    pts.push(p("A", 1, 1000.0)); // one run far out: skewed
    pts.extend((0..10).map(|i| p("B", 1, 100.0 + f64::from(i % 5))));
    let t = build("m", &pts, None).unwrap();
    let cell = |row: usize| t.rows[row].cells[0].clone().unwrap();
    assert_eq!(cell(0).ci95.unwrap().method, CiMethod::Bootstrap);
    assert_eq!(cell(1).ci95.unwrap().method, CiMethod::StudentT);
    let ci = cell(0).ci95.unwrap();
    assert!(ci.low < ci.high);
    // The JSON shape is report --stats's: {low, high, method}.
    let json = serde_json::to_value(cell(1)).unwrap();
    assert_eq!(json["ci95"]["method"], "student_t");
    assert!(json["ci95"]["low"].as_f64().unwrap() < json["ci95"]["high"].as_f64().unwrap());
    assert!(json.get("ci95_method").is_none());
}

#[test]
fn cells_are_slob_trimmed_means_and_overall_spans_every_session_count() {
    let pts = vec![
        p("XFS", 1, 10.0),
        p("XFS", 1, 20.0),
        p("XFS", 1, 30.0),
        p("XFS", 1, 40.0),
        p("XFS", 4, 50.0),
        p("XFS", 4, 70.0),
        p("EXT4", 1, 5.0),
        p("EXT4", 1, 5.0),
        p("EXT4", 1, 6.0),
        p("EXT4", 1, 9.0),
    ];
    let t = build("total.iops", &pts, None).unwrap();
    assert_eq!(t.sessions, vec![1, 4]);
    let xfs = t.rows.iter().find(|r| r.variable == "XFS").unwrap();
    let c1 = xfs.cells[0].as_ref().unwrap();
    assert_eq!((c1.n, c1.value, c1.trimmed), (4, 25.0, true)); // drops 10 and 40
    let c4 = xfs.cells[1].as_ref().unwrap();
    assert_eq!((c4.value, c4.trimmed), (60.0, false)); // n = 2: plain mean, marked
    let overall = xfs.cells[2].as_ref().unwrap();
    assert_eq!(overall.value, (20.0 + 30.0 + 40.0 + 50.0) / 4.0); // drops 10 and 70
    let ext4 = t.rows.iter().find(|r| r.variable == "EXT4").unwrap();
    assert_eq!(ext4.cells[0].as_ref().unwrap().value, 6.0); // drops both 5s and the 9
    assert!(ext4.cells[1].is_none());
    let text = text(&t);
    assert!(
        text.contains("60.00*") && text.contains("Overall"),
        "{text}"
    );
    assert_eq!(csv(&t).lines().next().unwrap(), "variable,1,4,Overall");
}

#[test]
fn a_relative_table_has_one_precision() {
    // Ratios of 1, 0.0452 and 123.4: grid::num would print 2, 4 and 0
    // decimals.
    let pts = vec![
        p("A", 1, 1000.0),
        p("B", 1, 45.2),
        p("C", 1, 123_400.0),
        p("A", 2, 2000.0),
        p("B", 2, 1500.0),
    ];
    let t = build("read.iops", &pts, Some("A")).unwrap();
    let printed: Vec<String> = grid(&t)
        .into_iter()
        .flatten()
        .filter(|c| c != "-")
        .collect();
    assert_eq!(
        printed,
        [
            "1.0000*",
            "1.0000*",
            "1.0000*",
            "0.0452*",
            "0.7500*",
            "0.5151*",
            "123.4000*",
            "82.2667*"
        ],
    );
    for cell in &printed {
        let decimals = cell.trim_end_matches('*').split('.').nth(1).unwrap().len();
        assert_eq!(decimals, 4, "{printed:?}");
    }
    assert_eq!(relative_decimals([1.0, 0.5]), 3);
    assert_eq!(relative_decimals([1.0, 2.5]), 2);
    assert_eq!(relative_decimals([0.0, f64::NAN]), 2);
    assert_eq!(relative_decimals([1e-9]), 6);
    // Without a baseline the cells keep dbio's rounding.
    let t = build("read.iops", &pts, None).unwrap();
    assert_eq!(grid(&t)[0][0], "1000*");
}

#[test]
fn relative_to_scales_each_column_by_the_baseline_cell() {
    let pts = vec![
        p("RAW", 1, 100.0),
        p("RAW", 1, 100.0),
        p("XFS", 1, 50.0),
        p("XFS", 1, 50.0),
    ];
    let t = build("read.iops", &pts, Some("RAW")).unwrap();
    let v = |name: &str| {
        t.rows.iter().find(|r| r.variable == name).unwrap().cells[0]
            .as_ref()
            .unwrap()
            .value
    };
    assert_eq!((v("RAW"), v("XFS")), (1.0, 0.5));
    // One precision for every cell of a relative table.
    let text = text(&t);
    assert!(text.contains("1.000*") && text.contains("0.500*"), "{text}");
    assert!(
        build("read.iops", &pts, Some("ZFS"))
            .unwrap_err()
            .to_string()
            .contains("no such variable")
    );
}
