//! Writing SVG by hand: escaping text for XML/HTML, compact numbers for
//! coordinates, and a small writer for the handful of elements charts use.

use std::fmt::Write;

/// Escapes `&`, `<`, `>`, `"` and `'` so any text (a variable name, a mount
/// option, a hostname) is safe in an SVG or HTML element or attribute.
pub fn escape(text: &str) -> String {
    let mut o = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if c.is_control() && c != '\n' && c != '\t' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// A coordinate with at most two decimals and no trailing zeros: `12`,
/// `3.5`, `0.25`.
pub fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// An SVG document being written; every method appends one element.
pub struct Svg {
    out: String,
}

/// How a text is anchored on its x coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

impl Anchor {
    fn name(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

impl Svg {
    /// Opens an `<svg>` of `width` x `height` user units that scales to its
    /// container (viewBox), with an accessible title.
    pub fn new(width: f64, height: f64, class: &str, title: &str) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="{}" viewBox="0 0 {} {}" width="{}" height="{}" role="img" font-family="sans-serif" font-size="12"><title>{}</title>"#,
            escape(class),
            num(width),
            num(height),
            num(width),
            num(height),
            escape(title)
        );
        out.push('\n');
        Svg { out }
    }

    /// Appends raw markup (already escaped).
    pub fn raw(&mut self, markup: &str) {
        self.out.push_str(markup);
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, attrs: &str) {
        let _ = writeln!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" {attrs}/>"#,
            num(x),
            num(y),
            num(w.max(0.0)),
            num(h.max(0.0))
        );
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, attrs: &str) {
        let _ = writeln!(
            self.out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" {attrs}/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2)
        );
    }

    /// A polyline through `points` as one `<path>`; nothing for fewer than
    /// two points.
    pub fn polyline(&mut self, points: &[(f64, f64)], attrs: &str) {
        if points.len() < 2 {
            return;
        }
        let mut d = String::new();
        for (i, (x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{},{}",
                if i == 0 { "M" } else { "L" },
                num(*x),
                num(*y)
            );
        }
        let _ = writeln!(self.out, r#"<path d="{d}" fill="none" {attrs}/>"#);
    }

    /// A text; `text` is escaped here.
    pub fn text(&mut self, x: f64, y: f64, anchor: Anchor, text: &str, attrs: &str) {
        let _ = writeln!(
            self.out,
            r#"<text x="{}" y="{}" text-anchor="{}" {attrs}>{}</text>"#,
            num(x),
            num(y),
            anchor.name(),
            escape(text)
        );
    }

    /// The chart's title, bold and centred at the top of a chart `width` wide.
    pub fn heading(&mut self, width: f64, title: &str) {
        self.text(
            width / 2.0,
            16.0,
            Anchor::Middle,
            title,
            r#"font-size="14" font-weight="bold""#,
        );
    }

    /// The axis titles of a plot area `(x0, y0, x1, y1)` (y0 its bottom) in
    /// a chart `height` high: x centred at the foot, y turned at the left;
    /// and "no data" in the middle of an `empty` plot.
    pub fn axis_titles(
        &mut self,
        (x0, y0, x1, y1): (f64, f64, f64, f64),
        height: f64,
        x_label: &str,
        y_label: &str,
        empty: bool,
    ) {
        self.text(
            (x0 + x1) / 2.0,
            height - 8.0,
            Anchor::Middle,
            x_label,
            r##"fill="#222""##,
        );
        self.raw(&format!(
            "<text transform=\"translate(13,{}) rotate(-90)\" text-anchor=\"middle\" fill=\"#222\">{}</text>\n",
            num((y0 + y1) / 2.0),
            escape(y_label)
        ));
        if empty {
            self.text(
                (x0 + x1) / 2.0,
                (y0 + y1) / 2.0,
                Anchor::Middle,
                "no data",
                r##"fill="#888""##,
            );
        }
    }

    /// Closes the document.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// A rough width of `text` at `size` px in a sans-serif font (no font files
/// are read: layout only needs to keep labels apart).
pub fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * 0.6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape(r#"<a href="x">R&D's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;R&amp;D&#39;s&lt;/a&gt;"
        );
        assert_eq!(escape("ok\u{7}"), "ok\u{fffd}");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(3.5), "3.5");
        assert_eq!(num(0.254), "0.25");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn a_document_holds_escaped_text_and_paths() {
        let mut s = Svg::new(100.0, 50.0, "chart", "a < b");
        s.polyline(&[(0.0, 0.0), (10.0, 5.0)], r#"stroke="black""#);
        s.polyline(&[(0.0, 0.0)], r#"stroke="black""#);
        s.text(1.0, 2.0, Anchor::End, "x&y", "");
        let out = s.finish();
        assert!(out.contains("<title>a &lt; b</title>"), "{out}");
        assert_eq!(out.matches("<path").count(), 1);
        assert!(out.contains(r#"d="M0,0L10,5""#));
        assert!(out.contains(">x&amp;y</text>"));
        assert!(out.ends_with("</svg>\n"));
    }
}
