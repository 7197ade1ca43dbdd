use super::*;
use crate::chart::Dash;

fn two_lines() -> XyChart {
    let mut c = XyChart::new(
        "total.iops vs sessions",
        Axis::linear("sessions").with_ticks(vec![1.0, 2.0, 4.0, 8.0]),
        Axis::linear("IOPS").from_zero(),
    );
    let mut a = Series::new("PSYNC", "#0072B2");
    a.points = vec![
        (1.0, 11903.0),
        (2.0, 15710.0),
        (4.0, 28073.0),
        (8.0, 41663.0),
    ];
    a.whiskers = vec![(1.0, 11000.0, 12500.0), (8.0, 40000.0, 43000.0)];
    a.tips = vec!["PSYNC 1".into(); 4];
    let mut b = Series::new("URING", "#D55E00");
    b.dash = Dash::Dashed;
    b.marker = Marker::Square;
    b.points = vec![
        (1.0, 25518.0),
        (2.0, 43803.0),
        (4.0, 51769.0),
        (8.0, 65068.0),
    ];
    c.series = vec![a, b];
    c.vlines.push(VLine {
        x: 4.0,
        label: "knee".into(),
        color: "#555",
    });
    c.notes.push(Note {
        x: 8.0,
        y: 65068.0,
        text: "peak 65.1K".into(),
        color: "#D55E00",
    });
    c.bands.push(Band {
        x0: 1.0,
        x1: 2.0,
        label: "ramp".into(),
    });
    c
}

#[test]
fn a_two_line_chart_snapshot() {
    insta::assert_snapshot!(two_lines().render());
}

#[test]
fn lines_markers_and_whiskers_are_all_drawn() {
    let out = two_lines().render();
    assert_eq!(out.matches("class=\"series\"").count(), 2);
    assert_eq!(out.matches("class=\"point\"").count(), 8);
    // 2 whiskers x (stem + 2 caps)
    assert_eq!(out.matches("stroke-width=\"1.3\"").count(), 6);
    assert!(
        out.contains(">80K<"),
        "the y axis reaches a nice 80K: {out}"
    );
    assert!(out.contains("<title>PSYNC 1</title>"));
    assert!(out.contains(">knee<") && out.contains(">peak 65.1K<") && out.contains(">ramp<"));
}

#[test]
fn log_axes_drop_values_they_cannot_place() {
    let mut c = XyChart::new("lat", Axis::linear("s"), Axis::log("ms"));
    let mut s = Series::new("p99", "#000");
    s.points = vec![(1.0, 0.0), (2.0, 0.2), (3.0, 3.0)];
    c.series.push(s);
    let out = c.render();
    assert_eq!(out.matches("class=\"point\"").count(), 2);
    assert!(out.contains(">0.2<") && out.contains(">5<"), "{out}");
}

#[test]
fn a_chart_without_points_says_no_data() {
    let c = XyChart::new("empty", Axis::linear("x"), Axis::linear("y"));
    assert!(!c.has_data());
    let out = c.render();
    assert!(out.contains(">no data<") && !out.contains("NaN"), "{out}");
}

#[test]
fn the_legend_wraps_onto_more_rows() {
    let mut c = XyChart::new("many", Axis::linear("x"), Axis::linear("y"));
    for i in 0..12 {
        let mut s = Series::new(&format!("a-long-variable-name-{i}"), crate::chart::color(i));
        s.points = vec![(i as f64, i as f64)];
        c.series.push(s);
    }
    let out = c.render();
    let rows: std::collections::BTreeSet<&str> = out
        .lines()
        .filter(|l| l.contains(">a-long-variable-name-"))
        .filter_map(|l| l.split("y=\"").nth(1)?.split('"').next())
        .collect();
    assert!(rows.len() >= 3, "{rows:?}");
}
