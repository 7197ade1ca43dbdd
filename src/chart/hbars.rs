//! Horizontal bars, one row per category with its name to the left and its
//! value at the end of the bar: for long names ranked by value (AWR's top
//! timed events by share of DB time).

use super::scale::{Scale, ScaleKind, label, linear_ticks};
use super::svg::{Anchor, Svg, escape, num, text_width};

/// One bar.
#[derive(Clone, Debug)]
pub struct HBar {
    pub name: String,
    pub value: f64,
    /// Printed after the bar (the value and what else the reader needs).
    pub text: String,
    pub color: &'static str,
    /// A tooltip (empty: none).
    pub tip: String,
}

/// Rows of horizontal bars from zero, in the order given.
#[derive(Clone, Debug)]
pub struct HBarChart {
    pub title: String,
    pub x_label: String,
    pub bars: Vec<HBar>,
    pub width: f64,
}

const ROW: f64 = 22.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 44.0;

impl HBarChart {
    pub fn new(title: &str, x_label: &str) -> HBarChart {
        HBarChart {
            title: title.to_string(),
            x_label: x_label.to_string(),
            bars: Vec::new(),
            width: 720.0,
        }
    }

    /// Whether any bar has a value.
    pub fn has_data(&self) -> bool {
        self.bars.iter().any(|b| b.value.is_finite())
    }

    /// The chart as a standalone `<svg>` element, as tall as its rows.
    pub fn render(&self) -> String {
        let hi = self
            .bars
            .iter()
            .map(|b| b.value)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let (lo, hi, ticks) = linear_ticks(0.0, hi, 5);
        let step = ticks.get(1).copied().unwrap_or(1.0) - ticks[0];
        let left = 12.0
            + self
                .bars
                .iter()
                .map(|b| text_width(&b.name, 12.0))
                .fold(60.0, f64::max);
        let right = 12.0
            + self
                .bars
                .iter()
                .map(|b| text_width(&b.text, 11.0))
                .fold(0.0, f64::max);
        let w = self.width.max(left + right + 160.0);
        let h = TOP + ROW * self.bars.len().max(1) as f64 + BOTTOM;
        let (px0, px1, py0, py1) = (left, w - right, h - BOTTOM, TOP);
        let xs = Scale {
            kind: ScaleKind::Linear,
            lo,
            hi,
            r0: px0,
            r1: px1,
        };
        let mut svg = Svg::new(w, h, "chart hbars", &self.title);
        svg.heading(w, &self.title);
        for t in &ticks {
            let x = xs.map(*t);
            svg.line(x, py1, x, py0, r##"stroke="#e4e4e4""##);
            svg.text(
                x,
                py0 + 17.0,
                Anchor::Middle,
                &label(*t, step),
                r##"font-size="11" fill="#333""##,
            );
        }
        for (i, b) in self.bars.iter().enumerate() {
            let y = py1 + ROW * i as f64;
            svg.text(
                px0 - 6.0,
                y + ROW / 2.0 + 4.0,
                Anchor::End,
                &b.name,
                r##"fill="#222""##,
            );
            if !b.value.is_finite() {
                continue;
            }
            let x1 = xs.map(b.value.max(0.0));
            let bar = format!(
                "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                num(px0),
                num(y + 3.0),
                num((x1 - px0).max(0.0)),
                num(ROW - 6.0),
                b.color
            );
            if b.tip.is_empty() {
                svg.raw(&(bar + "\n"));
            } else {
                svg.raw(&format!("<g><title>{}</title>{bar}</g>\n", escape(&b.tip)));
            }
            svg.text(
                x1 + 4.0,
                y + ROW / 2.0 + 4.0,
                Anchor::Start,
                &b.text,
                r##"font-size="11" fill="#222""##,
            );
        }
        svg.line(px0, py1, px0, py0, r##"stroke="#333""##);
        svg.line(px0, py0, px1, py0, r##"stroke="#333""##);
        svg.axis_titles((px0, py0, px1, py1), h, &self.x_label, "", !self.has_data());
        svg.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_per_row_with_its_name_and_text() {
        let mut c = HBarChart::new("Top events", "% of DB time");
        for (name, v) in [("log file sync", 61.5), ("db file <read>", 20.0)] {
            c.bars.push(HBar {
                name: name.into(),
                value: v,
                text: format!("{v}%"),
                color: "#0072B2",
                tip: format!("{name}: {v}"),
            });
        }
        let out = c.render();
        assert_eq!(out.matches("class=\"bar\"").count(), 2);
        assert!(out.contains(">log file sync<") && out.contains("db file &lt;read&gt;"));
        assert!(out.contains(">61.5%<"));
        // The longer bar is the longer rect.
        let widths: Vec<f64> = out
            .split("class=\"bar\"")
            .skip(1)
            .map(|s| {
                let w = s.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        assert!(widths[0] > 2.5 * widths[1], "{widths:?}");
        assert!(!out.contains("no data"));
        assert!(HBarChart::new("t", "x").render().contains("no data"));
    }
}
