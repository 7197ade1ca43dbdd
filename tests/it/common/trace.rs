//! What the trace tests share (capture, replay): one capture at a time in
//! the test binary, a running `dbio capture` stopped with Ctrl-C, and a
//! device's counters from /proc/diskstats.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// One capture at a time in this test binary: each test checks what its
/// own capture left in tracefs (instances, the mount) without another
/// test's capture changing it meanwhile.
pub static TRACEFS: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn tracefs_to_myself() -> std::sync::MutexGuard<'static, ()> {
    TRACEFS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running `dbio capture`, stopped with SIGINT (Ctrl-C) by the test, or
/// killed if the test fails first.
pub struct Capturing {
    pub child: Option<Child>,
    stderr: std::sync::mpsc::Receiver<String>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Capturing {
    pub fn start(devices: &[&Path], output: &Path) -> Capturing {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
        cmd.arg("capture").arg("--json").arg("--output").arg(output);
        for d in devices {
            cmd.arg("--device").arg(d);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start dbio capture");
        let err = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let c = Capturing {
            child: Some(child),
            stderr: rx,
            reader: Some(reader),
        };
        let line = c
            .stderr
            .recv_timeout(Duration::from_secs(20))
            .expect("capture says it is capturing");
        assert!(line.starts_with("capturing block requests"), "{line}");
        c
    }

    /// Ctrl-C, then its JSON and stderr.
    pub fn stop(mut self) -> (Value, String) {
        let child = self.child.take().unwrap();
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::INT,
        )
        .unwrap();
        let out = child.wait_with_output().unwrap();
        // Every line it wrote, once its stderr is closed.
        let _ = self.reader.take().unwrap().join();
        let err: Vec<String> = self.stderr.try_iter().collect();
        let err = err.join("\n");
        assert!(out.status.success(), "capture failed: {err}");
        (serde_json::from_slice(&out.stdout).expect("JSON"), err)
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Reads and writes completed on `name`, from /proc/diskstats.
pub fn diskstats(name: &str) -> (u64, u64) {
    let f = disk_fields(name);
    (f[0], f[4])
}

/// The counters of `name`'s line in /proc/diskstats, from reads completed
/// (index 0) on: writes completed 4, sectors read 2 and written 6, flushes
/// completed 15.
pub fn disk_fields(name: &str) -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap();
    let f: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f[2] == name)
        .unwrap_or_else(|| panic!("{name} not in /proc/diskstats"));
    f[3..].iter().map(|x| x.parse().unwrap()).collect()
}

/// Runs fio's 4 KiB randrw with psync over a 4 MiB file in `dir`, with
/// `extra` options, writing its iolog to `log`.
pub fn fio_iolog(dir: &Path, log: &Path, extra: &[&str]) {
    let out = Command::new("fio")
        .arg("--name=iolog")
        .arg(format!("--filename={}", dir.join("data").display()))
        .args(["--size=4M", "--rw=randrw", "--bs=4k", "--ioengine=psync"])
        .args(extra)
        .arg(format!("--write_iolog={}", log.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
