//! The live status line on stderr, like fio's: elapsed and ETA, current IOPS
//! and MiB/s per direction, current mean latency. Only shown when stderr is a
//! terminal and the report is not JSON.

use std::io::{IsTerminal, Write};

use crate::samplers::series::{KindPoint, SecondPoint};
use crate::units::{fmt_count, fmt_latency_ns};

pub struct StatusLine {
    /// Total planned seconds (ramp + time), when the run is time-bound.
    total_s: Option<f64>,
    ramp_s: f64,
}

impl StatusLine {
    /// A status line if stderr is a terminal (and `wanted`), else None.
    pub fn for_stderr(wanted: bool, total_s: Option<f64>, ramp_s: f64) -> Option<Self> {
        (wanted && std::io::stderr().is_terminal()).then_some(StatusLine { total_s, ramp_s })
    }

    /// Renders the line for the second just over.
    pub fn render(&self, p: &SecondPoint, elapsed_s: f64) -> String {
        let phase = if elapsed_s <= self.ramp_s {
            " ramp"
        } else {
            ""
        };
        let clock = match self.total_s {
            Some(t) => format!(
                "{:>4.0}s/{:.0}s eta {:.0}s{phase}",
                elapsed_s,
                t,
                (t - elapsed_s).max(0.0)
            ),
            None => format!("{elapsed_s:>4.0}s{phase}"),
        };
        let dir = |name: &str, k: &KindPoint| {
            format!(
                "{name} {} IOPS {:.1} MiB/s {}",
                fmt_count(k.ops as f64),
                k.bytes as f64 / (1 << 20) as f64,
                fmt_latency_ns(k.lat_mean_us * 1e3)
            )
        };
        let mut parts = vec![format!("[{clock}]")];
        if p.read.ops > 0 {
            parts.push(dir("read", &p.read));
        }
        if p.write.ops > 0 {
            parts.push(dir("write", &p.write));
        }
        if p.read.ops == 0 && p.write.ops == 0 {
            parts.push("no I/O completed".into());
        }
        parts.join("  ")
    }

    pub fn update(&mut self, p: &SecondPoint, elapsed_s: f64) {
        let line = self.render(p, elapsed_s);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
    }

    /// Clears the line so the report starts on a clean one.
    pub fn finish(&mut self) {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_rates_per_direction_and_eta() {
        let s = StatusLine {
            total_s: Some(65.0),
            ramp_s: 5.0,
        };
        let mut p = SecondPoint {
            t_s: 9,
            ramp: false,
            read: Default::default(),
            write: Default::default(),
            sync: Default::default(),
        };
        p.read = KindPoint {
            ops: 12_345,
            bytes: 12_345 * 8192,
            lat_mean_us: 320.0,
            lat_p99_us: 900.0,
        };
        let line = s.render(&p, 10.0);
        assert!(line.contains("10s/65s eta 55s"), "{line}");
        assert!(
            line.contains("read 12.3K IOPS 96.4 MiB/s 320.0us"),
            "{line}"
        );
        assert!(!line.contains("write"), "{line}");
        assert!(s.render(&p, 3.0).contains("ramp"));
    }
}
