//! Intervals that would flatten a chart: a whisker (a 95% interval) may
//! widen the value axis only so far beyond the points; past that it is
//! drawn to the frame's edge and ends in an arrowhead whose tooltip gives
//! the whole interval (two runs far apart give a log-normal interval of
//! millions over data of thousands: drawn whole, the data would be a flat
//! line at the bottom).

use super::scale::{ScaleKind, value_label};
use super::svg::{Svg, escape, num};

/// How far past the points' range a whisker may widen a linear axis, as a
/// share of that range (or of the largest magnitude when the range is
/// narrower than it).
const LINEAR_REACH: f64 = 1.0;
/// How many decades past the points a whisker may widen a log axis.
const LOG_REACH: f64 = 1.0;

/// The bounds whiskers may widen an axis to, around points spanning
/// `[lo, hi]`; `None` without points (then whiskers set the axis).
pub fn reach(kind: ScaleKind, lo: f64, hi: f64) -> Option<(f64, f64)> {
    if !(lo.is_finite() && hi.is_finite()) || hi < lo {
        return None;
    }
    Some(match kind {
        ScaleKind::Linear => {
            let pad = LINEAR_REACH * (hi - lo).max(lo.abs().max(hi.abs()) * 0.5);
            (lo - pad, hi + pad)
        }
        ScaleKind::Log => {
            let f = 10f64.powf(LOG_REACH);
            (lo / f, hi * f)
        }
    })
}

/// One whisker from `a` to `b` (pixels, `a` the low end) at `x`, of the
/// interval `lo`–`hi`; `clipped_low`/`clipped_high` say which end was cut
/// at the frame: that end gets an arrowhead (class `clipped`) with the
/// whole interval in its tooltip instead of a cap.
pub fn whisker(
    svg: &mut Svg,
    x: f64,
    (a, b): (f64, f64),
    (lo, hi): (f64, f64),
    cut: Cut,
    attrs: &str,
) {
    svg.line(x, a, x, b, attrs);
    let tip = format!(
        "95% interval {} – {}: clipped at the axis",
        value_label(lo),
        value_label(hi)
    );
    for (y, clipped, dir) in [(a, cut.low, 1.0), (b, cut.high, -1.0)] {
        if clipped {
            // An arrowhead pointing off the frame (SVG y grows down: the
            // high end points up).
            svg.raw(&format!(
                "<g class=\"clipped\"><title>{}</title><path d=\"M{} {}L{} {}L{} {}Z\" {attrs}/></g>\n",
                escape(&tip),
                num(x - 4.0),
                num(y - 6.0 * dir),
                num(x + 4.0),
                num(y - 6.0 * dir),
                num(x),
                num(y),
            ));
        } else {
            svg.line(x - 4.0, y, x + 4.0, y, attrs);
        }
    }
}

/// Which ends of a whisker were cut at the frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    pub low: bool,
    pub high: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whiskers_may_reach_a_range_past_the_points_and_no_further() {
        // Data of tens of thousands: a whisker to 1.5e9 cannot stretch it.
        let (lo, hi) = reach(ScaleKind::Linear, 20_000.0, 68_000.0).unwrap();
        assert_eq!((lo, hi), (-28_000.0, 116_000.0));
        // One point: half its size either way.
        assert_eq!(reach(ScaleKind::Linear, 100.0, 100.0), Some((50.0, 150.0)));
        assert_eq!(reach(ScaleKind::Log, 1.0, 10.0), Some((0.1, 100.0)));
        assert_eq!(reach(ScaleKind::Linear, f64::INFINITY, 1.0), None);
    }

    #[test]
    fn a_clipped_end_is_an_arrow_with_the_whole_interval() {
        let mut svg = Svg::new(100.0, 100.0, "t", "t");
        let cut = Cut {
            low: false,
            high: true,
        };
        whisker(
            &mut svg,
            50.0,
            (90.0, 10.0),
            (3.0, 1.5e9),
            cut,
            "stroke=\"#000\"",
        );
        let out = svg.finish();
        assert_eq!(out.matches("class=\"clipped\"").count(), 1, "{out}");
        assert!(out.contains("1.50G: clipped"), "{out}");
        // The stem and the low end's cap.
        assert_eq!(out.matches("<line").count(), 2, "{out}");
    }
}
