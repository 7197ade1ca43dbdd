//! `dbio` as the tests call it: the binary with the test's own store, a
//! builder for `dbio run` (`Run::slob(dir).sessions(4).json()`), and numbers
//! out of a report by their dotted path.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::store::store_path;

/// The `dbio` binary, saving its runs in the current test's store.
pub fn dbio() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("dbio").unwrap();
    c.env("DBIO_DB", store_path());
    c
}

/// A refusal of bad input: exit 2 and one line on stderr that says `says`
/// (`what`: the input, for the message).
pub fn refused_in_one_line(out: &Output, what: &str, says: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(err.contains(says), "{what}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
}

/// A `dbio run` being put together.
pub struct Run {
    args: Vec<String>,
    /// Started under SCHED_FIFO ([`Run::fifo`]).
    fifo: bool,
}

impl Run {
    /// A raw run on `target`.
    pub fn raw(target: &Path) -> Run {
        Run {
            args: vec![
                "run".into(),
                "--target".into(),
                target.display().to_string(),
            ],
            fifo: false,
        }
    }

    /// A small, fast model run on `target`: seed 7, 2 MiB redo logs and a
    /// 512 KiB log buffer unless the test sets its own.
    pub fn slob(target: &Path) -> Run {
        Run::raw(target)
            .args(&["--workload", "slob", "--seed", "7"])
            .default("--redo-file-size", "2M")
            .default("--log-buffer", "512K")
    }

    pub fn args(mut self, args: &[&str]) -> Run {
        for a in args {
            // A later value of an option replaces a default set before it.
            if let Some(i) = self.defaults_at(a) {
                self.args.drain(i..i + 2);
            }
            self.args.push(a.to_string());
        }
        self
    }

    pub fn sessions(self, n: u32) -> Run {
        self.args(&["--sessions", &n.to_string()])
    }

    /// An option with a value that the test may override later.
    fn default(mut self, opt: &str, value: &str) -> Run {
        self.args.extend([format!("{opt}\u{0}"), value.to_string()]);
        self
    }

    fn defaults_at(&self, opt: &str) -> Option<usize> {
        let marked = format!("{opt}\u{0}");
        self.args.iter().position(|a| *a == marked)
    }

    fn command_line(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| a.trim_end_matches('\u{0}').to_string())
            .collect()
    }

    /// Runs it under SCHED_FIFO (priority 10, as `chrt -f 10`; needs
    /// root), its threads too: on a loaded host a paced thread of the
    /// default class waits milliseconds for a CPU after each sleep, a
    /// real-time one does not. For runs whose threads mostly sleep (the
    /// kernel keeps 5% of each second for the others).
    pub fn fifo(mut self) -> Run {
        self.fifo = true;
        self
    }

    /// Runs it and waits.
    pub fn output(self) -> Output {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"));
        c.env("DBIO_DB", store_path()).args(self.command_line());
        if self.fifo {
            use std::os::unix::process::CommandExt;
            // SAFETY: the child only calls sched_setscheduler(2) between
            // fork and exec (async-signal-safe, no allocation).
            unsafe {
                c.pre_exec(|| {
                    let p = libc::sched_param { sched_priority: 10 };
                    match libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) {
                        0 => Ok(()),
                        _ => Err(std::io::Error::last_os_error()),
                    }
                });
            }
        }
        c.output().unwrap()
    }

    /// Runs it with `--json`; it must succeed. The report.
    pub fn json(self) -> Value {
        let line = self.command_line();
        let out = self.args(&["--json"]).output();
        assert!(
            out.status.success(),
            "dbio {line:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("one JSON document")
    }
}

/// The number at a dotted `path` of a report (`slob.counters.redo_bytes`).
pub fn num(v: &Value, path: &str) -> f64 {
    let mut cur = v;
    for k in path.split('.') {
        cur = cur
            .get(k)
            .unwrap_or_else(|| panic!("{path}: no {k} in {cur}"));
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
}

/// CPU time (user + system, every thread) process `pid` has used, or None
/// once it has gone.
pub fn cpu_used(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command's closing parenthesis: state is the first,
    // utime the 12th and stime the 13th, in clock ticks.
    let f: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(std::time::Duration::from_nanos(ticks * 1_000_000_000 / hz))
}

/// Waits until the child has used `cpu` of CPU time, so that a signal sent
/// next lands while it works however loaded the machine is (a fixed sleep
/// can end before a starved run has begun). Panics if the child ends first
/// or has not got there in two minutes.
pub fn wait_for_cpu(child: &std::process::Child, cpu: std::time::Duration) {
    let t = std::time::Instant::now();
    loop {
        match cpu_used(child.id()) {
            Some(used) if used >= cpu => return,
            Some(_) => {}
            None => panic!(
                "dbio (pid {}) ended before using {cpu:?} of CPU",
                child.id()
            ),
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(120),
            "dbio (pid {}) used less than {cpu:?} of CPU in 2 minutes",
            child.id()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
