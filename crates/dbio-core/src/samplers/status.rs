//! The run's progress each second, like fio's status line: elapsed and
//! ETA, current IOPS and MiB/s per direction, current mean latency — redrawn
//! on a terminal, a plain line per second in a log, or the second's series
//! point as a JSON object (`--progress`, [`Progress`]).

use std::io::Write;

use crate::samplers::progress::{Progress, round3};
use crate::samplers::series::{KindPoint, SecondPoint};
use crate::units::{fmt_count, fmt_latency_ns};

pub struct StatusLine {
    /// Total planned seconds (ramp + time), when the run is time-bound.
    total_s: Option<f64>,
    ramp_s: f64,
    how: Progress,
}

impl StatusLine {
    /// Progress shown `how`, or None when it is off.
    pub fn new(how: Progress, total_s: Option<f64>, ramp_s: f64) -> Option<Self> {
        how.is_on().then_some(StatusLine {
            total_s,
            ramp_s,
            how,
        })
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

    /// The second's point as one JSON object (`event` `second`).
    pub fn json(&self, p: &SecondPoint, elapsed_s: f64) -> serde_json::Value {
        let mut v = serde_json::json!({ "event": "second", "elapsed_s": elapsed_s });
        if let Some(t) = self.total_s {
            v["eta_s"] = round3((t - elapsed_s).max(0.0)).into();
        }
        if let (Some(o), Ok(serde_json::Value::Object(point))) =
            (v.as_object_mut(), serde_json::to_value(p))
        {
            o.extend(point);
        }
        v
    }

    pub fn update(&mut self, p: &SecondPoint, elapsed_s: f64) {
        match &self.how {
            Progress::Off => {}
            Progress::Tty => {
                let line = self.render(p, elapsed_s);
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{line}");
                let _ = err.flush();
            }
            Progress::Plain(sink) => sink.line(&self.render(p, elapsed_s)),
            Progress::Jsonl(sink) => sink.line(&self.json(p, elapsed_s).to_string()),
        }
    }

    /// Clears the terminal line so the report starts on a clean one.
    pub fn finish(&mut self) {
        if let Progress::Tty = self.how {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
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
            how: Progress::Off,
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
        let j = s.json(&p, 10.0);
        assert_eq!(j["event"], "second");
        assert_eq!(j["t_s"], 9);
        assert_eq!(j["eta_s"], 55.0);
        assert_eq!(j["read"]["ops"], 12_345);
        assert_eq!(j["write"]["ops"], 0);
    }
}
