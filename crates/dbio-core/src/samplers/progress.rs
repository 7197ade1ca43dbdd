//! How a command shows its progress (`--progress`): a line redrawn in
//! place on a terminal, plain lines for logs (`nohup`, CI, `| tee`), or
//! one JSON object per line for scripts — on stderr or in a file — and the
//! meter long steps such as laying out data files report through.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::measure::clock::now_ns;
use crate::units::fmt_size;

/// How progress is shown, once the command line's `auto` is resolved.
#[derive(Clone, Debug, Default)]
pub enum Progress {
    /// Nothing.
    #[default]
    Off,
    /// One line on stderr, redrawn in place (`\r`), cleared at the end.
    Tty,
    /// Plain lines, one per second of a run, and a layout's every few seconds.
    Plain(Sink),
    /// One JSON object per line (`dbio.progress.v1`, docs/json.md).
    Jsonl(Sink),
}

/// Where plain and JSON lines go: stderr, or a file opened for appending.
#[derive(Clone, Debug, Default)]
pub struct Sink(Option<Arc<Mutex<File>>>);

impl Sink {
    /// Lines on stderr.
    pub fn stderr() -> Sink {
        Sink(None)
    }

    /// Lines appended to `path` (created if missing; nothing in it is lost).
    pub fn append(path: &Path) -> std::io::Result<Sink> {
        let f = File::options().create(true).append(true).open(path)?;
        Ok(Sink(Some(Arc::new(Mutex::new(f)))))
    }

    /// Writes `line` and a newline (a failed write is not the run's failure).
    pub fn line(&self, line: &str) {
        match &self.0 {
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{line}");
            }
            Some(f) => {
                let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
                let _ = writeln!(f, "{line}");
            }
        }
    }
}

impl From<bool> for Progress {
    /// `true`: the terminal line (what a bare `progress: bool` meant).
    fn from(tty: bool) -> Progress {
        if tty { Progress::Tty } else { Progress::Off }
    }
}

impl Progress {
    /// True unless progress is off.
    pub(crate) fn is_on(&self) -> bool {
        !matches!(self, Progress::Off)
    }

    /// Writes a JSON object as one line when progress is JSON lines.
    pub fn json(&self, value: &serde_json::Value) {
        if let Progress::Jsonl(sink) = self {
            sink.line(&value.to_string());
        }
    }

    /// Shows `done` of `total` bytes of `what` (`data files`) being laid
    /// out by other threads until `finished` is set: the terminal line four
    /// times a second; a plain line every [`PLAIN_EVERY`], and one at the
    /// end when any was written (a quick layout says nothing); a JSON object
    /// every second and one at the end.
    pub(crate) fn meter(&self, what: &str, done: &AtomicU64, total: u64, finished: &AtomicBool) {
        self.meter_every(what, done, total, finished, PLAIN_EVERY)
    }

    /// [`Progress::meter`] with plain lines every `plain`.
    pub(crate) fn meter_every(
        &self,
        what: &str,
        done: &AtomicU64,
        total: u64,
        finished: &AtomicBool,
        plain: Duration,
    ) {
        let start = now_ns();
        let every = match self {
            Progress::Off => return,
            Progress::Tty => Duration::from_millis(250),
            Progress::Plain(_) => plain,
            Progress::Jsonl(_) => Duration::from_secs(1),
        }
        .as_nanos() as u64;
        let (mut next, mut said) = (every, false);
        while !finished.load(Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            let elapsed = now_ns() - start;
            if elapsed >= next {
                self.meter_point(what, done.load(Relaxed), total, elapsed, false);
                (next, said) = (next + every, true);
            }
        }
        if said || !matches!(self, Progress::Plain(_)) {
            let d = done.load(Relaxed);
            self.meter_point(what, d, total, now_ns() - start, true);
        }
    }

    /// One point of [`Progress::meter`]; `end` for the layout's last.
    fn meter_point(&self, what: &str, done: u64, total: u64, elapsed_ns: u64, end: bool) {
        let secs = elapsed_ns as f64 / 1e9;
        let mib_s = done as f64 / (1 << 20) as f64 / secs.max(1e-9);
        let eta_s = (total.saturating_sub(done) as f64 / (1 << 20) as f64) / mib_s.max(1e-9);
        let pct = 100.0 * done as f64 / total.max(1) as f64;
        match self {
            Progress::Off => {}
            Progress::Tty if end => eprint!("\r\x1b[2K"),
            Progress::Tty => {
                let mut err = std::io::stderr().lock();
                let _ = write!(
                    err,
                    "\rlaying out {} of {what}: {pct:3.0}%  {mib_s:.0} MiB/s  eta {} ",
                    fmt_size(total),
                    fmt_eta(eta_s)
                );
                let _ = err.flush();
            }
            Progress::Plain(sink) if end => sink.line(&format!(
                "laid out {} of {what} in {secs:.1}s ({mib_s:.0} MiB/s)",
                fmt_size(done)
            )),
            Progress::Plain(sink) => sink.line(&format!(
                "laying out {} of {what}: {pct:.0}%  {mib_s:.0} MiB/s  eta {}",
                fmt_size(total),
                fmt_eta(eta_s)
            )),
            Progress::Jsonl(sink) => sink.line(
                &serde_json::json!({
                    "event": "layout",
                    "what": what,
                    "done_bytes": done,
                    "total_bytes": total,
                    "elapsed_s": round3(secs),
                    "mib_per_s": round3(mib_s),
                    "eta_s": round3(eta_s),
                    "end": end,
                })
                .to_string(),
            ),
        }
    }
}

/// How often a plain layout line is written.
pub(crate) const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// Seconds left as `42s`, `3m05s`, `1h02m`.
pub(crate) fn fmt_eta(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A number kept to three decimals in JSON lines.
pub(crate) fn round3(v: f64) -> f64 {
    (v * 1e3).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_reads_as_minutes_and_hours() {
        assert_eq!(fmt_eta(42.4), "42s");
        assert_eq!(fmt_eta(185.0), "3m05s");
        assert_eq!(fmt_eta(3720.0), "1h02m");
        assert_eq!(fmt_eta(-1.0), "0s");
    }

    #[test]
    fn a_meter_writes_plain_and_json_lines_to_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.jsonl");
        std::fs::write(&path, "kept\n").unwrap();
        let p = Progress::Jsonl(Sink::append(&path).unwrap());
        let done = AtomicU64::new(0);
        let finished = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| p.meter("data files", &done, 1000, &finished));
            std::thread::sleep(Duration::from_millis(1200));
            done.store(1000, Relaxed);
            finished.store(true, Relaxed);
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("kept"), "what was in the file is kept");
        let objects: Vec<serde_json::Value> =
            lines.map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(objects.len(), 2, "one a second and one at the end: {text}");
        assert_eq!(objects[0]["event"], "layout");
        assert_eq!(objects[0]["done_bytes"], 0);
        assert_eq!(objects[0]["end"], false);
        assert_eq!(objects[1]["done_bytes"], 1000);
        assert_eq!(objects[1]["what"], "data files");
        assert_eq!(objects[1]["end"], true);

        let plain = dir.path().join("p.txt");
        let p = Progress::Plain(Sink::append(&plain).unwrap());
        let done = AtomicU64::new(1 << 20);
        p.meter("redo logs", &done, 2 << 20, &AtomicBool::new(true));
        let quick = std::fs::read_to_string(&plain).unwrap();
        assert_eq!(quick, "", "a quick layout says nothing in a log");
        let finished = AtomicBool::new(false);
        let every = Duration::from_millis(300);
        std::thread::scope(|s| {
            s.spawn(|| p.meter_every("redo logs", &done, 2 << 20, &finished, every));
            std::thread::sleep(Duration::from_millis(500));
            done.store(2 << 20, Relaxed);
            finished.store(true, Relaxed);
        });
        let text = std::fs::read_to_string(&plain).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("laying out 2 MiB of redo logs: 50%") && lines[0].contains("eta"),
            "{text}"
        );
        assert!(
            lines[1].starts_with("laid out 2 MiB of redo logs in "),
            "{text}"
        );
    }
}
