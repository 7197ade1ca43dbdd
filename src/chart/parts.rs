//! The parts an [`XyChart`](super::XyChart) is made of: axes, series
//! (lines, markers, whiskers, tooltips), shaded bands, vertical lines and
//! notes at points.

use super::palette::{Dash, Marker};
use super::scale::ScaleKind;

/// One axis of an [`XyChart`].
#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub kind: ScaleKind,
    /// Ticks to use instead of computed ones (e.g. the session counts
    /// measured); the axis spans the data and these.
    pub ticks: Option<Vec<f64>>,
    /// Start a linear axis at zero (throughput: a line that does not start
    /// at zero exaggerates differences).
    pub include_zero: bool,
}

impl Axis {
    pub fn linear(label: &str) -> Axis {
        Axis {
            label: label.to_string(),
            kind: ScaleKind::Linear,
            ticks: None,
            include_zero: false,
        }
    }

    pub fn log(label: &str) -> Axis {
        Axis {
            kind: ScaleKind::Log,
            ..Axis::linear(label)
        }
    }

    pub fn from_zero(mut self) -> Axis {
        self.include_zero = true;
        self
    }

    pub fn with_ticks(mut self, ticks: Vec<f64>) -> Axis {
        self.ticks = Some(ticks);
        self
    }
}

/// One series: points joined by a line and/or marked.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub dash: Dash,
    pub marker: Marker,
    /// Join the points (in the order given) with a line.
    pub line: bool,
    pub points: Vec<(f64, f64)>,
    /// A tooltip per point (empty: none).
    pub tips: Vec<String>,
    /// (x, low, high): a vertical whisker (an interval).
    pub whiskers: Vec<(f64, f64, f64)>,
    /// Show in the legend.
    pub legend: bool,
    /// Drawn this many pixels right of its x (negative: left): series at
    /// the same x dodged apart so their whiskers do not overlap. The data
    /// and tooltips keep the true x.
    pub offset_px: f64,
    /// Marker radius in pixels.
    pub radius: f64,
}

impl Series {
    /// A line with markers, shown in the legend.
    pub fn new(name: &str, color: &'static str) -> Series {
        Series {
            name: name.to_string(),
            color,
            dash: Dash::Solid,
            marker: Marker::Circle,
            line: true,
            points: Vec::new(),
            tips: Vec::new(),
            whiskers: Vec::new(),
            legend: true,
            offset_px: 0.0,
            radius: 3.8,
        }
    }
}

/// A shaded range of x (e.g. the ramp, not measured).
#[derive(Clone, Debug)]
pub struct Band {
    pub x0: f64,
    pub x1: f64,
    pub label: String,
}

/// A vertical line at x with a label at its top.
#[derive(Clone, Debug)]
pub struct VLine {
    pub x: f64,
    pub label: String,
    pub color: &'static str,
}

/// A ringed point with a text beside it.
#[derive(Clone, Debug)]
pub struct Note {
    pub x: f64,
    pub y: f64,
    pub text: String,
    pub color: &'static str,
}
