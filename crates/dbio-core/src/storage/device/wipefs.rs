//! Asking util-linux which signatures a block device carries.
//!
//! `wipefs --no-act --json DEV` probes with libblkid (superblocks and
//! partition tables, every signature util-linux knows: Oracle ASM, OCFS2,
//! JFS, DRBD, VDO, ...) and, unlike `blkid -p`, lists every signature it finds
//! instead of giving up on an ambivalent device. It only reads (it opens the
//! device `O_RDONLY`). dbio does not link libblkid: it runs the tool with a
//! timeout, and keeps its own table (`signatures`) for hosts without it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long wipefs may take before the device counts as not probed.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What asking wipefs gave.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Probe {
    /// Signatures by blkid name, with the byte offset of each.
    Found(Vec<(String, u64)>),
    /// No wipefs on this host: only dbio's own table applies.
    Unavailable,
    /// wipefs ran but gave no answer (error, timeout, unreadable output).
    Failed(String),
}

/// Probes `device` with the wipefs found in PATH or the sbin directories.
pub(super) fn probe(device: &Path) -> Probe {
    match find_wipefs() {
        Some(tool) => probe_with(&tool, device, TIMEOUT),
        None => Probe::Unavailable,
    }
}

fn find_wipefs() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|d| d.join("wipefs"))
        .find(|p| p.is_file())
}

/// Runs `tool --no-act --json device`, killed after `timeout`.
pub(super) fn probe_with(tool: &Path, device: &Path, timeout: Duration) -> Probe {
    let mut cmd = Command::new(tool);
    cmd.args(["--no-act", "--json"]).arg(device);
    run(cmd, timeout)
}

/// Runs `cmd` and reads its JSON answer, killing it after `timeout`.
fn run(mut cmd: Command, timeout: Duration) -> Probe {
    let child = cmd
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Probe::Unavailable,
        Err(e) => return Probe::Failed(format!("cannot run wipefs: {e}")),
    };
    // Read both pipes in threads so a chatty tool never blocks on a full pipe.
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                // A tool stuck in the kernel may not die at once: reap it elsewhere.
                std::thread::spawn(move || child.wait());
                return Probe::Failed(format!("wipefs gave no answer in {} s", timeout.as_secs()));
            }
            Err(e) => return Probe::Failed(format!("cannot wait for wipefs: {e}")),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let why = stderr.lines().next().unwrap_or("").trim().to_string();
        return Probe::Failed(format!("wipefs failed ({status}): {why}"));
    }
    match parse(&stdout) {
        Ok(found) => Probe::Found(found),
        Err(e) => Probe::Failed(format!("cannot read wipefs's output: {e}")),
    }
}

#[derive(serde::Deserialize)]
struct Output {
    signatures: Vec<Signature>,
}

#[derive(serde::Deserialize)]
struct Signature {
    offset: String,
    #[serde(rename = "type")]
    kind: String,
}

/// Why wipefs's output cannot be read.
#[derive(Debug, thiserror::Error)]
pub(super) enum ParseError {
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("offset {0:?} is not hexadecimal")]
    Offset(String),
}

/// wipefs's JSON (empty output = nothing found, as older versions print).
pub(super) fn parse(json: &[u8]) -> Result<Vec<(String, u64)>, ParseError> {
    if json.iter().all(u8::is_ascii_whitespace) {
        return Ok(Vec::new());
    }
    let out: Output = serde_json::from_slice(json)?;
    out.signatures
        .into_iter()
        .map(|s| {
            let hex = s.offset.trim_start_matches("0x");
            u64::from_str_radix(hex, 16)
                .map(|o| (s.kind, o))
                .map_err(|_| ParseError::Offset(s.offset))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_wipefs_json() {
        let json = br#"{
           "signatures": [
              {"device": "loop0", "offset": "0x438", "type": "ext4", "uuid": "ae39", "label": null},
              {"device": "loop0", "offset": "0x20", "type": "oracleasm", "uuid": null, "label": null}
           ]
        }"#;
        assert_eq!(
            parse(json).unwrap(),
            [("ext4".to_string(), 1080), ("oracleasm".to_string(), 32)]
        );
        assert_eq!(parse(b"{\"signatures\": []}").unwrap(), []);
        assert_eq!(parse(b"\n").unwrap(), []);
        assert!(parse(b"{\"signatures\": [{\"offset\": \"zz\", \"type\": \"x\"}]}").is_err());
    }

    #[test]
    fn a_missing_tool_is_unavailable_and_a_slow_one_fails() {
        let none = Path::new("/nonexistent/wipefs");
        assert_eq!(
            probe_with(none, Path::new("/dev/null"), TIMEOUT),
            Probe::Unavailable
        );
        // `sleep` stands in for a tool stuck on a dead device.
        let mut slow = Command::new("sleep");
        slow.arg("5");
        let t = Instant::now();
        let r = run(slow, Duration::from_millis(200));
        assert!(
            matches!(&r, Probe::Failed(m) if m.contains("no answer")),
            "{r:?}"
        );
        assert!(t.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn real_wipefs_finds_an_asm_label_and_nothing_on_zeros() {
        let tool = find_wipefs().expect("wipefs (util-linux) is installed: run scripts/test.sh");
        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("img");
        let f = std::fs::File::create(&img).unwrap();
        f.set_len(8 << 20).unwrap();
        assert_eq!(probe_with(&tool, &img, TIMEOUT), Probe::Found(vec![]));
        std::os::unix::fs::FileExt::write_at(&f, b"ORCLDISK", 32).unwrap();
        assert_eq!(
            probe_with(&tool, &img, TIMEOUT),
            Probe::Found(vec![("oracleasm".into(), 32)])
        );
    }
}
