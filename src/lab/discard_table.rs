//! What `dbio lab discard` reports: each step's time and the device's
//! discard statistics, as a table on the terminal or JSON
//! (`dbio.lab.discard.v2`), with notes on what the numbers mean.

use serde::Serialize;

use super::backing::Backing;
use crate::units::fmt_size;

/// One timed step and what the device saw during it.
#[derive(Clone, Debug, Serialize)]
pub struct Step {
    pub step: String,
    pub seconds: f64,
    pub discards: f64,
    pub discarded_bytes: f64,
    /// iostat -x's d/s, dkB/s and wkB/s over the step (per second; KiB).
    pub d_per_s: f64,
    pub dkib_per_s: f64,
    pub wkib_per_s: f64,
    /// Bytes the loop device's image occupies after the step.
    pub image_allocated_bytes: Option<u64>,
}

/// The whole experiment, as `--json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub fs: String,
    pub device: serde_json::Value,
    pub discard_max_bytes: Option<u64>,
    pub files: u32,
    pub file_size_bytes: u64,
    pub steps: Vec<Step>,
    pub fstrim_trimmed_bytes: Option<u64>,
    pub notes: Vec<String>,
}

/// `/mnt: 1.9 GiB (2034597888 bytes) trimmed` or `/mnt: 2034597888 bytes were trimmed`.
pub fn trimmed_bytes(out: &str) -> Option<u64> {
    let line = out.lines().find(|l| l.contains("trimmed"))?;
    let inner = line.split('(').nth(1).unwrap_or(line);
    inner
        .split_whitespace()
        .zip(inner.split_whitespace().skip(1))
        .find(|(_, unit)| unit.starts_with("bytes"))
        .and_then(|(n, _)| n.parse().ok())
}

/// What the reader should know about the device.
pub(super) fn notes(dev: &Backing, discard_max: Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(img) = &dev.image {
        let host = crate::storage::chain::resolve(img)
            .map(|c| c.describe())
            .unwrap_or_else(|_| img.display().to_string());
        out.push(format!(
            "{} is a loop device: the kernel turns its discards into hole punching (fallocate PUNCH_HOLE) in the image, {host}; the times are that filesystem's, not an SSD's or an array's TRIM (the image's allocated size shows the holes)",
            dev.device.display()
        ));
    }
    if discard_max == Some(0) {
        out.push(format!(
            "{} does not support discard (queue/discard_max_bytes is 0): its discard counters stay at zero",
            dev.device.display()
        ));
    }
    out
}

/// The table on the terminal.
pub fn render(r: &Report) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let dev = r.device["device"].as_str().unwrap_or("?");
    let _ = writeln!(
        out,
        "dbio lab discard: {} on {dev}, {} files of {}",
        r.fs,
        r.files,
        fmt_size(r.file_size_bytes)
    );
    let w = r
        .steps
        .iter()
        .map(|s| s.step.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "{:<w$}  {:>9}  {:>9}  {:>13}  {:>9}  {:>12}  {:>12}",
        "step", "seconds", "discards", "MiB discarded", "d/s", "dkB/s", "image MiB"
    );
    for s in &r.steps {
        let img = s
            .image_allocated_bytes
            .map(|b| format!("{:.1}", b as f64 / 1048576.0))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<w$}  {:>9.3}  {:>9.0}  {:>13.1}  {:>9.1}  {:>12.1}  {:>12}",
            s.step,
            s.seconds,
            s.discards,
            s.discarded_bytes / 1048576.0,
            s.d_per_s,
            s.dkib_per_s,
            img
        );
    }
    if let Some(t) = r.fstrim_trimmed_bytes {
        let _ = writeln!(out, "fstrim -v trimmed {}", fmt_size(t));
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_fstrim_trimmed_in_both_formats() {
        assert_eq!(
            trimmed_bytes("/mnt: 1.9 GiB (2034597888 bytes) trimmed\n"),
            Some(2034597888)
        );
        assert_eq!(trimmed_bytes("/mnt: 4096 bytes were trimmed"), Some(4096));
        assert_eq!(trimmed_bytes("nothing"), None);
    }
}
