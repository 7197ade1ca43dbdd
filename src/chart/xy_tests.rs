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

/// The box (x0, y0, x1, y1) of the 11 px `<text>` whose content is `label`.
fn text_box(svg: &str, label: &str) -> (f64, f64, f64, f64) {
    let line = svg
        .lines()
        .find(|l| l.starts_with("<text") && l.contains(&format!(">{label}<")))
        .unwrap_or_else(|| panic!("{label} in {svg}"));
    let attr = |name: &str| -> String {
        let v = line.split(&format!("{name}=\"")).nth(1).unwrap();
        v[..v.find('"').unwrap()].to_string()
    };
    let (x, y): (f64, f64) = (attr("x").parse().unwrap(), attr("y").parse().unwrap());
    let w = super::text_width(label, 11.0);
    let x0 = match attr("text-anchor").as_str() {
        "end" => x - w,
        "middle" => x - w / 2.0,
        _ => x,
    };
    (x0, y - 11.0, x0 + w, y + 2.0)
}

#[test]
fn a_knee_and_a_peak_at_the_same_place_do_not_overlap() {
    // The scaling chart's case: the knee at the peak's session count, the
    // peak at the top of the frame ("knee 16peak 64.0K" before).
    let mut c = XyChart::new(
        "scaling",
        Axis::linear("sessions").with_ticks(vec![1.0, 4.0, 16.0, 32.0]),
        Axis::linear("IOPS").from_zero(),
    );
    let mut s = Series::new("runs", "#0072B2");
    s.points = vec![
        (1.0, 8000.0),
        (4.0, 30000.0),
        (16.0, 64000.0),
        (32.0, 60000.0),
    ];
    c.series.push(s);
    c.vlines.push(VLine {
        x: 16.0,
        label: "knee 16".into(),
        color: "#555",
    });
    c.vlines.push(VLine {
        x: 17.0,
        label: "USL peak N≈17.0".into(),
        color: "#000",
    });
    c.notes.push(Note {
        x: 16.0,
        y: 64000.0,
        text: "peak 64.0K".into(),
        color: "#0072B2",
    });
    let out = c.render();
    let boxes = [
        text_box(&out, "knee 16"),
        text_box(&out, "USL peak N≈17.0"),
        text_box(&out, "peak 64.0K"),
    ];
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let overlap = a.0 < b.2 && a.2 > b.0 && a.1 < b.3 && a.3 > b.1;
            assert!(!overlap, "{a:?} overlaps {b:?}");
        }
    }
}

#[test]
fn dodged_series_draw_their_whiskers_apart() {
    let mut c = XyChart::new("d", Axis::linear("x"), Axis::linear("y"));
    for (i, off) in [-4.5, 4.5].into_iter().enumerate() {
        let mut s = Series::new(&format!("s{i}"), crate::chart::color(i));
        s.points = vec![(1.0, 10.0), (2.0, 12.0)];
        s.whiskers = vec![(1.0, 8.0, 12.0)];
        s.offset_px = off;
        c.series.push(s);
    }
    let out = c.render();
    let stems: Vec<f64> = out
        .lines()
        .filter(|l| l.contains("stroke-width=\"1.3\""))
        .map(|l| {
            let v = l.split("x1=\"").nth(1).unwrap();
            v[..v.find('"').unwrap()].parse().unwrap()
        })
        .collect();
    // stem, cap, cap per whisker: the stems 9 px apart.
    assert_eq!(stems.len(), 6);
    assert!((stems[3] - stems[0] - 9.0).abs() < 0.02, "{stems:?}");
}

/// The `cy` of every circle marker of a point (not the legend's).
fn circle_ys(svg: &str) -> Vec<f64> {
    svg.split("<circle")
        .skip(1)
        .filter(|c| c[..c.find("/>").unwrap_or(c.len())].contains("class=\"point\""))
        .filter_map(|c| {
            let at = c.find("cy=\"")? + 4;
            c[at..at + c[at..].find('"')?].parse().ok()
        })
        .collect()
}

#[test]
fn points_at_an_axis_end_are_drawn_inside_the_frame() {
    // A host CPU panel: %sys at 0 and %user at 100, the axis from zero.
    let mut c = XyChart::new(
        "host CPU",
        Axis::linear("s"),
        Axis::linear("% of all CPUs").from_zero(),
    );
    let mut sys = Series::new("%sys", "#0072B2");
    sys.marker = Marker::Circle;
    sys.points = vec![(1.0, 0.0), (2.0, 0.0), (3.0, 100.0)];
    c.series.push(sys);
    let out = c.render();
    let frame = &out[out.find("class=\"frame\"").unwrap()..];
    let attr = |name: &str| -> f64 {
        let at = out[..out.find("class=\"frame\"").unwrap()]
            .rfind(&format!("{name}=\""))
            .unwrap()
            + name.len()
            + 2;
        out[at..at + out[at..].find('"').unwrap()].parse().unwrap()
    };
    let (top, bottom) = (attr("y"), attr("y") + attr("height"));
    let ys = circle_ys(&out);
    assert_eq!(ys.len(), 3, "{frame}");
    for y in ys {
        assert!(
            y > top + 5.0 && y < bottom - 5.0,
            "a point at y {y} on the frame {top}..{bottom}"
        );
    }
}

#[test]
fn a_whisker_far_wider_than_the_points_is_cut_and_marked() {
    let mut c = XyChart::new("t", Axis::linear("n"), Axis::linear("x").from_zero());
    let mut s = Series::new("XFS", "#0072B2");
    s.points = vec![(1.0, 60_000.0), (2.0, 44_000.0)];
    s.whiskers = vec![(2.0, 1.8, 1.5e9), (1.0, 57_000.0, 62_000.0)];
    c.series.push(s);
    let out = c.render();
    assert_eq!(out.matches("class=\"clipped\"").count(), 1, "{out}");
    // The axis ends near the data (120K), not at 1.5G.
    assert!(!out.contains(">2G<") && !out.contains(">1.5G<"), "{out}");
}
