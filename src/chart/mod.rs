//! Hand-written SVG charts: no font files, no network, no dependencies.
//! The output is plain SVG text that a browser draws inline in an HTML
//! page or from a `.svg` file.
//!
//! * [`svg`]: escaping, compact numbers, an element writer.
//! * [`scale`]: linear and log scales, nice ticks, short labels.
//! * [`palette`]: the Okabe–Ito colour-blind-safe colours, dashes, markers.
//! * [`xy`]: line and scatter charts, made of [`parts`] (axes, series with
//!   whiskers, bands, vertical lines, notes).
//! * [`clip`]: whiskers held near the data, cut and marked past it.
//! * [`bars`]: grouped bar charts with a reference line.
//! * [`hbars`]: horizontal bars for long names ranked by value.
//!
//! What dbio draws with them is in `report::html::charts`.

pub mod bars;
pub mod clip;
pub mod hbars;
pub mod palette;
pub mod parts;
pub mod scale;
pub mod svg;
pub mod xy;

pub use bars::{BarChart, BarSeries};
pub use hbars::{HBar, HBarChart};
pub use palette::{Dash, Marker, color};
pub use scale::ScaleKind;
pub use svg::escape;
pub use xy::{Axis, Band, Note, Series, VLine, XyChart};
