//! Colours and line styles for series: the Okabe–Ito palette, which stays
//! distinguishable with the common colour-vision deficiencies, with a dash
//! pattern and a marker shape as second and third cues (for grey-scale
//! print and for more series than colours).

/// Okabe & Ito (2008), ordered so the first colours are the most distinct
/// on white (the yellow, faint on white, comes last).
pub const COLORS: [&str; 8] = [
    "#0072B2", // blue
    "#D55E00", // vermillion
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#E69F00", // orange
    "#56B4E9", // sky blue
    "#000000", // black
    "#F0E442", // yellow
];

/// The colour of series `i`.
pub fn color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// A line style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    DashDot,
}

impl Dash {
    /// The `stroke-dasharray` attribute (empty for solid lines).
    pub fn attr(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => r#" stroke-dasharray="7 4""#,
            Dash::Dotted => r#" stroke-dasharray="2 3""#,
            Dash::DashDot => r#" stroke-dasharray="8 3 2 3""#,
        }
    }

    /// The style of series `i` (changes after each round of colours).
    pub fn nth(i: usize) -> Dash {
        [Dash::Solid, Dash::Dashed, Dash::Dotted, Dash::DashDot][i % 4]
    }
}

/// The marker drawn at each point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    None,
    Circle,
    Square,
    Triangle,
    Diamond,
}

impl Marker {
    /// The marker of series `i`.
    pub fn nth(i: usize) -> Marker {
        [
            Marker::Circle,
            Marker::Square,
            Marker::Triangle,
            Marker::Diamond,
        ][i % 4]
    }

    /// The marker centred on (x, y), `r` its half size, as SVG.
    pub fn svg(self, x: f64, y: f64, r: f64, attrs: &str) -> String {
        use super::svg::num;
        match self {
            Marker::None => String::new(),
            Marker::Circle => format!(
                r#"<circle cx="{}" cy="{}" r="{}" {attrs}/>"#,
                num(x),
                num(y),
                num(r)
            ),
            Marker::Square => format!(
                r#"<rect x="{}" y="{}" width="{}" height="{}" {attrs}/>"#,
                num(x - r * 0.9),
                num(y - r * 0.9),
                num(r * 1.8),
                num(r * 1.8)
            ),
            Marker::Triangle => format!(
                r#"<path d="M{},{}L{},{}L{},{}Z" {attrs}/>"#,
                num(x),
                num(y - r * 1.15),
                num(x + r * 1.1),
                num(y + r * 0.85),
                num(x - r * 1.1),
                num(y + r * 0.85)
            ),
            Marker::Diamond => format!(
                r#"<path d="M{},{}L{},{}L{},{}L{},{}Z" {attrs}/>"#,
                num(x),
                num(y - r * 1.2),
                num(x + r * 1.2),
                num(y),
                num(x),
                num(y + r * 1.2),
                num(x - r * 1.2),
                num(y)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_get_distinct_cues() {
        assert_ne!(color(0), color(1));
        assert_eq!(color(8), color(0));
        assert_eq!(Dash::nth(1).attr(), r#" stroke-dasharray="7 4""#);
        assert!(Marker::Square.svg(5.0, 5.0, 3.0, "").starts_with("<rect"));
        assert_eq!(Marker::None.svg(0.0, 0.0, 1.0, ""), "");
    }
}
