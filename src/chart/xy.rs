//! The x–y chart every line and scatter chart of dbio is: a frame with
//! nice ticks and grid lines on linear or log axes, a legend, series drawn
//! as lines and/or markers (with interval whiskers, dodged apart when
//! series share an x, and hover tooltips), shaded x ranges (a ramp),
//! vertical markers (a knee) and notes at points (a peak, a collapse),
//! their labels moved down until none overlaps another.

use super::clip;
use super::palette::Marker;
pub use super::parts::{Axis, Band, Note, Series, VLine};
use super::scale::{Scale, ScaleKind, label, linear_ticks, log_ticks};
use super::svg::{Anchor, Svg, escape, num, text_width};

/// A chart of series over two axes.
#[derive(Clone, Debug)]
pub struct XyChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub bands: Vec<Band>,
    pub vlines: Vec<VLine>,
    pub notes: Vec<Note>,
    pub width: f64,
    pub height: f64,
}

/// Where the plot area is and how values map into it.
struct Frame {
    xs: Scale,
    ys: Scale,
    /// The plot area: left, right, bottom, top (SVG y grows down).
    px0: f64,
    px1: f64,
    py0: f64,
    py1: f64,
}

impl Frame {
    /// Whether a point falls on both axes.
    fn accepts(&self, x: f64, y: f64) -> bool {
        self.xs.accepts(x) && self.ys.accepts(y)
    }
}

/// One series: its whiskers, its line, its markers with their tooltips.
fn draw_series(svg: &mut Svg, f: &Frame, s: &Series) {
    let attrs = format!(r#"stroke="{}" stroke-width="1.3""#, s.color);
    let px = |x: f64| f.xs.map(x) + s.offset_px;
    for &(x, lo, hi) in &s.whiskers {
        if !(f.accepts(x, lo) && f.accepts(x, hi)) {
            continue;
        }
        let cut = clip::Cut {
            low: lo < f.ys.lo,
            high: hi > f.ys.hi,
        };
        let (a, b) = (f.ys.map(lo.max(f.ys.lo)), f.ys.map(hi.min(f.ys.hi)));
        clip::whisker(svg, px(x), (a, b), (lo, hi), cut, &attrs);
    }
    if s.line {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter(|p| f.accepts(p.0, p.1))
            .map(|&(x, y)| (px(x), f.ys.map(y)))
            .collect();
        svg.polyline(
            &pts,
            &format!(
                r#"class="series" stroke="{}" stroke-width="2"{}"#,
                s.color,
                s.dash.attr()
            ),
        );
    }
    if s.marker != Marker::None {
        let fill = format!(
            r##"class="point" fill="{}" stroke="#fff" stroke-width="0.8""##,
            s.color
        );
        for (i, &(x, y)) in s.points.iter().enumerate() {
            if !f.accepts(x, y) {
                continue;
            }
            let m = s.marker.svg(px(x), f.ys.map(y), s.radius, &fill);
            match s.tips.get(i) {
                Some(t) => svg.raw(&format!("<g><title>{}</title>{m}</g>\n", escape(t))),
                None => svg.raw(&(m + "\n")),
            }
        }
    }
}

const TITLE_H: f64 = 24.0;
const LEGEND_ROW: f64 = 18.0;
const BOTTOM: f64 = 44.0;
const RIGHT: f64 = 18.0;
const INSET: f64 = 10.0;

impl XyChart {
    pub fn new(title: &str, x: Axis, y: Axis) -> XyChart {
        XyChart {
            title: title.to_string(),
            x,
            y,
            series: Vec::new(),
            bands: Vec::new(),
            vlines: Vec::new(),
            notes: Vec::new(),
            width: 640.0,
            height: 340.0,
        }
    }

    /// Whether any series has a point that can be drawn.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| {
            s.points
                .iter()
                .any(|&(x, y)| placeable(self.x.kind, x) && placeable(self.y.kind, y))
        })
    }

    /// The chart as a standalone `<svg>` element.
    pub fn render(&self) -> String {
        let (xlo, xhi, xticks) = self.domain(true);
        let (ylo, yhi, yticks) = self.domain(false);
        let ylabels = tick_labels(self.y.kind, &yticks);
        let left = 30.0
            + ylabels
                .iter()
                .map(|l| text_width(l, 11.0))
                .fold(0.0, f64::max);
        let legend = self.legend_layout(left);
        let rows = legend.iter().map(|i| i.row + 1).max().unwrap_or(0) as f64;
        let top = TITLE_H + rows * LEGEND_ROW + 8.0;
        let (w, h) = (self.width, self.height);
        let (px0, px1, py0, py1) = (left, w - RIGHT, h - BOTTOM, top);
        // Dodged series are drawn apart: their points stay off the frame.
        let inset_x = INSET
            + self
                .series
                .iter()
                .map(|s| s.offset_px.abs())
                .fold(0.0, f64::max);
        let f = Frame {
            xs: Scale {
                kind: self.x.kind,
                lo: xlo,
                hi: xhi,
                r0: px0 + inset_x,
                r1: px1 - inset_x,
            },
            ys: Scale {
                kind: self.y.kind,
                lo: ylo,
                hi: yhi,
                // Inset like x: a value at an axis' end (0 %sys, the
                // highest run) is drawn inside the frame, not on it.
                r0: py0 - INSET,
                r1: py1 + INSET,
            },
            px0,
            px1,
            py0,
            py1,
        };
        let mut svg = Svg::new(w, h, "chart xy", &self.title);
        svg.heading(w, &self.title);
        self.draw_bands(&mut svg, &f);
        self.draw_grid(&mut svg, &f, (&xticks, &yticks), &ylabels);
        // Every label's box, so a later one moves down rather than overlap.
        let mut placed = Labels::default();
        self.draw_vlines(&mut svg, &f, &mut placed);
        for s in &self.series {
            draw_series(&mut svg, &f, s);
        }
        self.draw_notes(&mut svg, &f, &mut placed);
        self.draw_legend(&mut svg, &legend);
        svg.finish()
    }

    /// The shaded x ranges (a ramp), with their labels.
    fn draw_bands(&self, svg: &mut Svg, f: &Frame) {
        let (xlo, xhi) = (f.xs.lo, f.xs.hi);
        for b in &self.bands {
            let (a, z) = (f.xs.map(b.x0.max(xlo)), f.xs.map(b.x1.min(xhi)));
            if z > a {
                svg.rect(
                    a,
                    f.py1,
                    z - a,
                    f.py0 - f.py1,
                    r##"fill="#000" fill-opacity="0.06""##,
                );
                svg.text(
                    a + 3.0,
                    f.py1 + 12.0,
                    Anchor::Start,
                    &b.label,
                    r##"font-size="10" fill="#555""##,
                );
            }
        }
    }

    /// Grid lines, ticks and their labels, the frame and the axis titles.
    fn draw_grid(
        &self,
        svg: &mut Svg,
        f: &Frame,
        (xticks, yticks): (&[f64], &[f64]),
        ylabels: &[String],
    ) {
        let (px0, px1, py0, py1) = (f.px0, f.px1, f.py0, f.py1);
        for (t, l) in yticks.iter().zip(ylabels) {
            let y = f.ys.map(*t);
            svg.line(px0, y, px1, y, r##"stroke="#ddd" stroke-width="1""##);
            svg.text(
                px0 - 6.0,
                y + 4.0,
                Anchor::End,
                l,
                r##"font-size="11" fill="#333""##,
            );
        }
        for (t, l) in xticks.iter().zip(tick_labels(self.x.kind, xticks)) {
            let x = f.xs.map(*t);
            svg.line(x, py0, x, py0 + 5.0, r##"stroke="#333""##);
            svg.line(x, py0, x, py1, r##"stroke="#eee" stroke-width="1""##);
            svg.text(
                x,
                py0 + 17.0,
                Anchor::Middle,
                &l,
                r##"font-size="11" fill="#333""##,
            );
        }
        svg.rect(
            px0,
            py1,
            px1 - px0,
            py0 - py1,
            r##"class="frame" fill="none" stroke="#333" stroke-width="1""##,
        );
        svg.axis_titles(
            (px0, py0, px1, py1),
            self.height,
            &self.x.label,
            &self.y.label,
            !self.has_data(),
        );
    }

    /// The vertical markers (a knee), dashed, with their labels.
    fn draw_vlines(&self, svg: &mut Svg, f: &Frame, placed: &mut Labels) {
        for v in self.vlines.iter().filter(|v| f.xs.accepts(v.x)) {
            let x = f.xs.map(v.x);
            svg.line(
                x,
                f.py0,
                x,
                f.py1,
                &format!(r#"stroke="{}" stroke-dasharray="4 3""#, v.color),
            );
            let y = placed.place(x + 3.0, f.py1 + 24.0, &v.label, Anchor::Start, f.py0);
            svg.text(
                x + 3.0,
                y,
                Anchor::Start,
                &v.label,
                &format!(r#"font-size="11" fill="{}""#, v.color),
            );
        }
    }

    /// The notes at points (a peak, a collapse): a ring and bold text.
    fn draw_notes(&self, svg: &mut Svg, f: &Frame, placed: &mut Labels) {
        for n in &self.notes {
            if !f.accepts(n.x, n.y) {
                continue;
            }
            let (x, y) = (f.xs.map(n.x), f.ys.map(n.y));
            svg.raw(&format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"7\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                num(x),
                num(y),
                n.color
            ));
            // Keep the text inside the frame: to the left on the right half.
            let right_half = x > (f.px0 + f.px1) / 2.0;
            let (tx, anchor) = if right_half {
                (x - 10.0, Anchor::End)
            } else {
                (x + 10.0, Anchor::Start)
            };
            let ty = if y - 10.0 < f.py1 + 10.0 {
                y + 18.0
            } else {
                y - 10.0
            };
            let ty = placed.place(tx, ty, &n.text, anchor, f.py0);
            svg.text(
                tx,
                ty,
                anchor,
                &n.text,
                &format!(r#"font-size="11" font-weight="bold" fill="{}""#, n.color),
            );
        }
    }

    /// The legend: each series' line and marker, and its name.
    fn draw_legend(&self, svg: &mut Svg, legend: &[LegendItem]) {
        for item in legend {
            let s = &self.series[item.series];
            let y = TITLE_H + item.row as f64 * LEGEND_ROW + 8.0;
            if s.line {
                svg.line(
                    item.x,
                    y,
                    item.x + 22.0,
                    y,
                    &format!(r#"stroke="{}" stroke-width="2"{}"#, s.color, s.dash.attr()),
                );
            }
            svg.raw(
                &s.marker
                    .svg(item.x + 11.0, y, 3.8, &format!(r#"fill="{}""#, s.color)),
            );
            svg.text(
                item.x + 27.0,
                y + 4.0,
                Anchor::Start,
                &s.name,
                r##"fill="#222""##,
            );
        }
    }

    /// The bounds and ticks of the x (`true`) or y axis.
    fn domain(&self, is_x: bool) -> (f64, f64, Vec<f64>) {
        let axis = if is_x { &self.x } else { &self.y };
        let mut vals: Vec<f64> = Vec::new();
        for s in &self.series {
            for &(x, y) in &s.points {
                vals.push(if is_x { x } else { y });
            }
            if is_x {
                vals.extend(s.whiskers.iter().map(|w| w.0));
            }
        }
        if !is_x {
            vals.extend(self.whisker_ends(&vals));
        }
        for n in &self.notes {
            vals.push(if is_x { n.x } else { n.y });
        }
        if is_x {
            vals.extend(self.vlines.iter().map(|v| v.x));
            vals.extend(self.bands.iter().flat_map(|b| [b.x0, b.x1]));
        }
        if let Some(t) = &axis.ticks {
            vals.extend(t);
        }
        vals.retain(|&v| placeable(axis.kind, v));
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) };
        let lo = if axis.include_zero && axis.kind == ScaleKind::Linear {
            lo.min(0.0)
        } else {
            lo
        };
        match (&axis.ticks, axis.kind) {
            (Some(t), _) if !t.is_empty() => {
                let t: Vec<f64> = t
                    .iter()
                    .copied()
                    .filter(|&v| placeable(axis.kind, v))
                    .collect();
                let (lo, hi) = if hi > lo {
                    (lo, hi)
                } else {
                    (lo - 1.0, hi + 1.0)
                };
                (lo, hi, t)
            }
            (_, ScaleKind::Linear) => linear_ticks(lo, hi, 5),
            (_, ScaleKind::Log) => log_ticks(lo, hi),
        }
    }

    /// The whiskers' ends, each held within [`clip::reach`] of the y
    /// values `ys` (drawn past it, a whisker is cut and marked).
    fn whisker_ends(&self, ys: &[f64]) -> Vec<f64> {
        let kind = self.y.kind;
        let ys: Vec<f64> = ys.iter().copied().filter(|&v| placeable(kind, v)).collect();
        let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = clip::reach(kind, lo, hi).unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        self.series
            .iter()
            .flat_map(|s| s.whiskers.iter().flat_map(|w| [w.1, w.2]))
            .filter(|&v| placeable(kind, v))
            .map(|v| v.clamp(min, max))
            .collect()
    }

    fn legend_layout(&self, left: f64) -> Vec<LegendItem> {
        let mut out = Vec::new();
        let (mut x, mut row) = (left, 0);
        for (i, s) in self.series.iter().enumerate().filter(|(_, s)| s.legend) {
            let w = 27.0 + text_width(&s.name, 12.0) + 16.0;
            if x + w > self.width - RIGHT && x > left {
                x = left;
                row += 1;
            }
            out.push(LegendItem { series: i, x, row });
            x += w;
        }
        out
    }
}

/// The boxes of the labels drawn so far (11 px text).
#[derive(Default)]
struct Labels {
    boxes: Vec<(f64, f64, f64, f64)>,
}

impl Labels {
    /// The baseline at or below `y` where `text` anchored at `x` overlaps no
    /// label placed before (stopping at `bottom`); the box is kept.
    fn place(&mut self, x: f64, y: f64, text: &str, anchor: Anchor, bottom: f64) -> f64 {
        let w = text_width(text, 11.0);
        let x0 = match anchor {
            Anchor::Start => x,
            Anchor::Middle => x - w / 2.0,
            Anchor::End => x - w,
        };
        let mut y = y;
        let hits = |y: f64, b: &(f64, f64, f64, f64)| {
            x0 < b.2 && x0 + w > b.0 && y - 11.0 < b.3 && y + 2.0 > b.1
        };
        while y < bottom - 4.0 && self.boxes.iter().any(|b| hits(y, b)) {
            y += 14.0;
        }
        self.boxes.push((x0, y - 11.0, x0 + w, y + 2.0));
        y
    }
}

struct LegendItem {
    series: usize,
    x: f64,
    row: usize,
}

fn placeable(kind: ScaleKind, v: f64) -> bool {
    v.is_finite() && (kind == ScaleKind::Linear || v > 0.0)
}

/// Tick labels: on a linear axis with the decimals the smallest step
/// needs; on a log axis each with its own magnitude's.
fn tick_labels(kind: ScaleKind, ticks: &[f64]) -> Vec<String> {
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    ticks
        .iter()
        .map(|&t| match kind {
            ScaleKind::Log => label(t, t),
            ScaleKind::Linear => label(t, if step.is_finite() { step } else { t.abs() }),
        })
        .collect()
}

#[cfg(test)]
#[path = "xy_tests.rs"]
mod tests;
