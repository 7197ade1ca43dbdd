//! The live page at `/`: one self-contained HTML document (no CDN, no
//! font or script from the network) whose script polls `/api/live` every
//! second and draws the running run's charts on canvases — throughput,
//! bandwidth, latency percentiles per operation, device utilisation, host
//! CPU — and the plan's progress. Run labels (a target path, a plan name)
//! are put in the page as text nodes, never as markup.

/// The page.
pub const HTML: &str = include_str!("page.html");
