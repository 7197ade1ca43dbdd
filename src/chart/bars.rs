//! Grouped bars: one group per category (a session count, "Overall"), one
//! bar per series (a variable) in its colour, the value printed on each
//! bar, and an optional reference line (the baseline = 1).

use super::scale::{Scale, ScaleKind, label, linear_ticks, value_label};
use super::svg::{Anchor, Svg, escape, num, text_width};

/// One series of bars: a value (or none) per group.
#[derive(Clone, Debug)]
pub struct BarSeries {
    pub name: String,
    pub color: &'static str,
    pub values: Vec<Option<f64>>,
    /// A tooltip per group (empty: none).
    pub tips: Vec<String>,
}

/// A grouped bar chart; bars start at zero.
#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub x_label: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
    /// A horizontal line at this value with this label.
    pub reference: Option<(f64, String)>,
    /// Printed after each bar's value (e.g. "×").
    pub value_suffix: String,
    /// Print each bar's value above it (where it fits beside its
    /// neighbours'); otherwise only in its tooltip.
    pub value_labels: bool,
    /// The top of the value axis, for small multiples on one scale (`None`:
    /// from the tallest bar).
    pub y_max: Option<f64>,
    pub width: f64,
    pub height: f64,
}

impl BarChart {
    pub fn new(title: &str, x_label: &str, y_label: &str, groups: Vec<String>) -> BarChart {
        BarChart {
            title: title.to_string(),
            y_label: y_label.to_string(),
            x_label: x_label.to_string(),
            groups,
            series: Vec::new(),
            reference: None,
            value_suffix: String::new(),
            value_labels: true,
            y_max: None,
            width: 640.0,
            height: 340.0,
        }
    }

    /// Whether any bar has a value.
    pub fn has_data(&self) -> bool {
        self.series
            .iter()
            .any(|s| s.values.iter().flatten().any(|v| v.is_finite()))
    }

    /// The chart as a standalone `<svg>` element.
    pub fn render(&self) -> String {
        let (lo, hi, ticks) = self.value_ticks();
        let step = ticks.get(1).copied().unwrap_or(1.0) - ticks[0];
        let labels: Vec<String> = ticks.iter().map(|&t| label(t, step)).collect();
        let left = 30.0
            + labels
                .iter()
                .map(|l| text_width(l, 11.0))
                .fold(0.0, f64::max);
        let (w, h) = (self.width, self.height);
        let top = 24.0 + 26.0;
        let area = (left, w - 18.0, h - 44.0, top);
        let (px0, px1, py0, py1) = area;
        let ys = Scale {
            kind: ScaleKind::Linear,
            lo,
            hi,
            r0: py0,
            r1: py1,
        };
        let mut svg = Svg::new(w, h, "chart bars", &self.title);
        svg.heading(w, &self.title);
        for (t, l) in ticks.iter().zip(&labels) {
            let y = ys.map(*t);
            svg.line(px0, y, px1, y, r##"stroke="#ddd""##);
            svg.text(
                px0 - 6.0,
                y + 4.0,
                Anchor::End,
                l,
                r##"font-size="11" fill="#333""##,
            );
        }
        let reference_y = self.reference.as_ref().map(|(r, _)| ys.map(*r));
        self.draw_bars(&mut svg, &ys, area, reference_y);
        // The reference line; its label is in the legend.
        if let Some(y) = reference_y {
            svg.line(px0, y, px1, y, &format!("class=\"reference\" {REFERENCE}"));
        }
        svg.rect(
            px0,
            py1,
            px1 - px0,
            py0 - py1,
            r##"class="frame" fill="none" stroke="#333""##,
        );
        svg.axis_titles(
            (px0, py0, px1, py1),
            h,
            &self.x_label,
            &self.y_label,
            !self.has_data(),
        );
        self.draw_legend(&mut svg, px0);
        svg.finish()
    }

    /// The value axis from zero: bounds and ticks, with room above the
    /// tallest bar (or the reference) for its value.
    fn value_ticks(&self) -> (f64, f64, Vec<f64>) {
        let mut hi = self
            .series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        if let Some((r, _)) = &self.reference {
            hi = hi.max(*r);
        }
        match self.y_max {
            Some(top) => linear_ticks(0.0, top.max(hi), 5),
            None => linear_ticks(0.0, hi * 1.08, 5),
        }
    }

    /// Each group's name and bars in the plot area (left, right, bottom,
    /// top), each bar's value above it where it fits and clear of the
    /// reference line at `reference_y`.
    fn draw_bars(
        &self,
        svg: &mut Svg,
        ys: &Scale,
        (px0, px1, py0, _): (f64, f64, f64, f64),
        reference_y: Option<f64>,
    ) {
        let n = self.series.len().max(1) as f64;
        let gw = (px1 - px0) / self.groups.len().max(1) as f64;
        let bw = (gw * 0.8 / n).min(48.0);
        for (g, name) in self.groups.iter().enumerate() {
            let gx = px0 + gw * g as f64 + (gw - bw * n) / 2.0;
            svg.text(
                px0 + gw * (g as f64 + 0.5),
                py0 + 17.0,
                Anchor::Middle,
                name,
                r##"font-size="11" fill="#333""##,
            );
            for (i, s) in self.series.iter().enumerate() {
                let Some(v) = s.values.get(g).copied().flatten().filter(|v| v.is_finite()) else {
                    continue;
                };
                let x = gx + bw * i as f64;
                let y = ys.map(v.max(0.0));
                let bar = format!(
                    "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                    num(x + 1.0),
                    num(y),
                    num(bw - 2.0),
                    num((py0 - y).max(0.0)),
                    s.color
                );
                match s.tips.get(g) {
                    Some(t) => svg.raw(&format!("<g><title>{}</title>{bar}</g>\n", escape(t))),
                    None => svg.raw(&(bar + "\n")),
                }
                let text = format!("{}{}", value_label(v), self.value_suffix);
                // Only where the text fits in its bar's width: wider text
                // runs into the next bar's value.
                if self.value_labels && bw >= text_width(&text, 10.0) {
                    svg.text(
                        x + bw / 2.0,
                        label_baseline(y, reference_y),
                        Anchor::Middle,
                        &text,
                        r##"font-size="10" fill="#222""##,
                    );
                }
            }
        }
    }

    /// The legend from `x`: each series' colour and name, then the
    /// reference line's label.
    fn draw_legend(&self, svg: &mut Svg, mut x: f64) {
        for s in &self.series {
            svg.rect(x, 30.0, 14.0, 10.0, &format!(r#"fill="{}""#, s.color));
            svg.text(x + 18.0, 39.0, Anchor::Start, &s.name, r##"fill="#222""##);
            x += 18.0 + text_width(&s.name, 12.0) + 16.0;
        }
        if let Some((_, l)) = &self.reference {
            svg.line(x, 35.0, x + 22.0, 35.0, REFERENCE);
            svg.text(x + 27.0, 39.0, Anchor::Start, l, r##"fill="#222""##);
        }
    }
}

/// Where a bar's value label sits: 4 px above the bar's top, or above
/// the reference line where the line would cross it (a bar just short of
/// the baseline: "0.98×" struck through).
fn label_baseline(bar_top: f64, reference_y: Option<f64>) -> f64 {
    let y = bar_top - 4.0;
    match reference_y {
        // The 10 px text spans about y − 10 … y + 3.
        Some(r) if r > y - 11.0 && r < y + 4.0 => r - 5.0,
        _ => y,
    }
}

/// How the reference line is drawn, in the chart and in the legend.
const REFERENCE: &str = r##"stroke="#000" stroke-width="1.5" stroke-dasharray="6 3""##;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_drawn_per_value_with_a_reference_line() {
        let mut c = BarChart::new(
            "rel",
            "sessions",
            "× RAW",
            vec!["1".into(), "4".into(), "Overall".into()],
        );
        c.series.push(BarSeries {
            name: "RAW".into(),
            color: "#0072B2",
            values: vec![Some(1.0), Some(1.0), Some(1.0)],
            tips: vec![],
        });
        c.series.push(BarSeries {
            name: "X<FS".into(),
            color: "#D55E00",
            values: vec![Some(0.5), None, Some(3.4)],
            tips: vec!["a".into(), "b".into(), "c".into()],
        });
        c.reference = Some((1.0, "RAW = 1".into()));
        let out = c.render();
        assert_eq!(out.matches("class=\"bar\"").count(), 5, "{out}");
        assert!(out.contains("X&lt;FS") && !out.contains("X<FS"));
        assert!(out.contains("RAW = 1"));
        // The tallest bar (3.4) reaches near the top: the axis goes to 4.
        assert!(out.contains(">4<"), "{out}");
    }

    #[test]
    fn a_value_label_the_reference_line_would_cross_moves_above_it() {
        // A bar 6 px short of the line: its label would be struck through.
        assert_eq!(label_baseline(106.0, Some(100.0)), 95.0);
        // Clear of the line: 4 px above the bar.
        assert_eq!(label_baseline(50.0, Some(100.0)), 46.0);
        assert_eq!(label_baseline(100.0, Some(100.0)), 96.0);
        assert_eq!(label_baseline(106.0, None), 102.0);
    }

    #[test]
    fn an_empty_chart_says_so() {
        let c = BarChart::new("t", "x", "y", vec!["1".into()]);
        assert!(!c.has_data());
        assert!(c.render().contains("no data"));
    }
}
