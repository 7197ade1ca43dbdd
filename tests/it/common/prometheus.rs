//! Debian's real Prometheus for the live metrics tests: started as a plain
//! process on 127.0.0.1 with a port, a configuration and a data directory
//! of its own (never the packaged service's), scraping one endpoint every
//! second; stopped and its directory removed when dropped, pass or fail.
//! Also a minimal HTTP GET over `std::net` for its API and dbio's endpoint.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A port nobody listens on right now (bound, then released).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A response: status code, head, body.
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// `GET path` on `addr` (`127.0.0.1:PORT`) with an optional Accept header.
pub fn get(addr: &str, path: &str, accept: Option<&str>) -> std::io::Result<Response> {
    request(addr, "GET", path, accept)
}

pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    accept: Option<&str>,
) -> std::io::Result<Response> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    let accept = accept
        .map(|a| format!("Accept: {a}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{accept}Connection: close\r\n\r\n"
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    Ok(Response {
        status,
        head: head.to_string(),
        body: body.to_string(),
    })
}

/// Percent-encodes a query parameter.
pub fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus of the test's own.
pub struct Prometheus {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    /// Starts Prometheus scraping `http://target/metrics` every second, and
    /// waits until it is ready.
    pub fn start(target: &str) -> Prometheus {
        let dir = tempfile::Builder::new()
            .prefix("dbio-prometheus-")
            .tempdir()
            .unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: dbio\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("prometheus (scripts/test.sh installs it)");
        let p = Prometheus {
            child,
            addr,
            _dir: dir,
        };
        let t = Instant::now();
        while !get(&p.addr, "/-/ready", None).is_ok_and(|r| r.status == 200) {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "Prometheus not ready in 60 s: {}",
                p.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        // Its discovery hands the target to the scrape loop a few seconds
        // after the start: wait for the first scrape (the target may be down).
        let scraped =
            |t: &str| t.contains("\"health\":\"down\"") || t.contains("\"health\":\"up\"");
        while !scraped(&p.targets()) {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "no scrape in 60 s: {}",
                p.targets()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self._dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// `/api/v1/query` of `query` at UNIX time `at` (now if None): its `data.result`.
    pub fn query(&self, query: &str, at: Option<f64>) -> Vec<Value> {
        let mut path = format!("/api/v1/query?query={}", encode(query));
        if let Some(t) = at {
            path += &format!("&time={t:.3}");
        }
        let r = get(&self.addr, &path, None).unwrap();
        let v: Value =
            serde_json::from_str(&r.body).unwrap_or_else(|e| panic!("{query}: {e}: {}", r.body));
        assert_eq!(v["status"], "success", "{query}: {v}");
        v["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The scrape targets' health (`up`, last error) as the API reports them.
    pub fn targets(&self) -> String {
        get(&self.addr, "/api/v1/targets", None)
            .map(|r| r.body)
            .unwrap_or_default()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        // SIGTERM, then SIGKILL if it has not gone in 10 s.
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
