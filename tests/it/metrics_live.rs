//! Live metrics with the real parts (`--metrics-listen`, docs/metrics.md):
//! Debian's Prometheus scrapes a 10 s run every second and its `rate()` of
//! dbio's request counter agrees with the stored IOPS; label values with
//! quotes, backslashes and a newline reach Prometheus intact; the live page
//! in headless Chromium draws charts that change; the Grafana board queries
//! only metrics a plan's exposition has; the textfile passes promtool; and
//! a port in use, an address not on this host or a bad textfile directory
//! is one line, exit 2, nothing laid out.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::browser::{chromium, pixels};
use crate::common::prometheus::{Prometheus, free_port, get, request};
use crate::common::run::{dbio, num};
use crate::common::store::{store_path, temp_store};

/// What a test asks to serve on: the loopback, a port the kernel chooses.
pub(crate) const ANY_PORT: &str = "127.0.0.1:0";

/// A raw run of `secs` seconds on `target` serving metrics on `addr`, started in the background.
fn spawn_run(target: &Path, addr: &str, secs: u32, extra: &[&str]) -> Serving {
    let raw = ["--size", "8M", "--pattern", "randrw", "--io", "buffered"];
    let secs = secs.to_string();
    let length = ["--sessions", "2", "--time", &secs, "--metrics-listen", addr];
    spawn_dbio(target, &[&raw[..], &length, extra].concat())
}

/// `dbio run --json --target TARGET ARGS…` in the background, serving metrics.
fn spawn_dbio(target: &Path, args: &[&str]) -> Serving {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store_path())
        .args(["run", "--json"])
        .arg("--target")
        .arg(target)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Serving::start(c.spawn().unwrap())
}

/// A dbio process serving metrics: the address is the one it says on
/// stderr (a test asks for port 0, so that no other test can take its port
/// between choosing and binding), the rest of stderr is kept for the failure
/// message, and the process is killed on drop unless it was waited for (a
/// failing test leaves no dbio behind).
pub(crate) struct Serving {
    child: Option<Child>,
    pub(crate) addr: String,
    /// Every address said, in order (an MPI job's rank 0 says every rank's).
    pub(crate) addrs: Vec<String>,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Serving {
    /// Waits for `child` to say where it serves (after a pg run's initdb, say).
    pub(crate) fn start(child: Child) -> Serving {
        Serving::start_n(child, 1)
    }

    /// Waits for `child` to say `n` addresses it serves at.
    pub(crate) fn start_n(mut child: Child, n: usize) -> Serving {
        let err = child.stderr.take().expect("stderr piped");
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            let mut all = String::new();
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if let Some((_, rest)) = line.split_once("live metrics at http://") {
                    let _ = tx.send(rest.split('/').next().unwrap_or_default().to_owned());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let mut s = Serving {
            child: Some(child),
            addr: String::new(),
            addrs: Vec::new(),
            stderr: Some(reader),
        };
        while s.addrs.len() < n {
            match rx.recv_timeout(Duration::from_secs(300)) {
                Ok(addr) => s.addrs.push(addr),
                Err(e) => s.fail(&format!(
                    "{} metrics address(es) said of {n} ({e})",
                    s.addrs.len()
                )),
            }
        }
        s.addr = s.addrs[0].clone();
        s
    }

    /// Panics with `why` and what the process said, killing it first.
    pub(crate) fn fail(&mut self, why: &str) -> ! {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
        }
        let out = self.collect();
        panic!("{why}; dbio said: {}", stderr(&out))
    }

    fn collect(&mut self) -> Output {
        let mut out = self.child.take().unwrap().wait_with_output().unwrap();
        out.stderr = self.stderr.take().unwrap().join().unwrap().into_bytes();
        out
    }

    /// True while the process has not ended.
    pub(crate) fn running(&mut self) -> bool {
        self.child.as_mut().unwrap().try_wait().unwrap().is_none()
    }

    /// Waits for the process to end; its stdout and whole stderr.
    pub(crate) fn wait(mut self) -> Output {
        self.collect()
    }

    /// Waits until `/api/live` says the run has `secs` seconds collected;
    /// fails at once when the process ended first.
    pub(crate) fn wait_elapsed(&mut self, secs: f64) -> Value {
        let t = Instant::now();
        let mut seen;
        loop {
            match get(&self.addr, "/api/live", None) {
                Ok(r) => match serde_json::from_str::<Value>(&r.body) {
                    Ok(v) if v["run"]["elapsed_s"].as_f64().unwrap_or(0.0) >= secs => return v,
                    Ok(v) => seen = format!("elapsed {} s", v["run"]["elapsed_s"]),
                    Err(e) => seen = format!("unreadable /api/live ({e})"),
                },
                Err(e) => seen = format!("GET /api/live failed ({e})"),
            }
            let ended = self.child.as_mut().unwrap().try_wait().unwrap();
            if ended.is_some() || t.elapsed() > Duration::from_secs(120) {
                let why = match ended {
                    Some(status) => format!("the process ended ({status})"),
                    None => "120 s passed".to_string(),
                };
                self.fail(&format!(
                    "the run at {} never reached {secs} s: {why} after {:.1} s of polling, last seen: {seen}",
                    self.addr,
                    t.elapsed().as_secs_f64()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The value of an instant vector's only sample.
fn only(result: &[Value], what: &str) -> f64 {
    assert_eq!(result.len(), 1, "{what}: {result:?}");
    result[0]["value"][1].as_str().unwrap().parse().unwrap()
}

fn prometheus_rate_of_the_request_counter_is_the_stored_iops() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // User text in a label: a quote, a backslash and a newline in the target's path.
    let parent = dir.path().join("q\"b\\c\nd");
    std::fs::create_dir(&parent).unwrap();
    let target = parent.join("t");
    let addr = format!("127.0.0.1:{}", free_port());
    let prom = Prometheus::start(&addr);
    let run = spawn_run(&target, &addr, 10, &["--rate", "3000"]);
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored_iops = num(&report, "total.iops");

    // The run's start: the time of its first sample (elapsed 0).
    let raw = prom.query("dbio_run_elapsed_seconds[5m]", None);
    assert_eq!(raw.len(), 1, "one run: {raw:?}\n{}", prom.targets());
    let labels = &raw[0]["metric"];
    assert_eq!(
        labels["target"],
        target.to_str().unwrap(),
        "the label value as given"
    );
    assert_eq!(labels["workload"], "raw");
    assert_eq!(labels["sessions"], "2");
    let first = &raw[0]["values"][0];
    assert_eq!(first[1], "0", "the first sample is the start: {raw:?}");
    let start = first[0].as_f64().unwrap();
    let started_ms = num(&report, "started_unix_ms");
    assert!(
        (start * 1e3 - started_ms).abs() < 2.0,
        "{start} vs {started_ms}"
    );

    // rate() from the start to the last second Prometheus scraped (the
    // 10th second's sample is served only until the process ends, which a
    // 1 s scrape may miss): within 5% of the stored IOPS.
    let values = raw[0]["values"].as_array().unwrap();
    let last: f64 = values.last().unwrap()[1].as_str().unwrap().parse().unwrap();
    assert!(
        last >= 8.0,
        "Prometheus scraped up to second {last}: {raw:?}"
    );
    let at = Some(start + last);
    let rate = only(
        &prom.query(&format!("sum(rate(dbio_requests_total[{last}s]))"), at),
        "rate",
    );
    let ratio = rate / stored_iops;
    eprintln!("Prometheus rate {rate:.1}/s, stored IOPS {stored_iops:.1}: ratio {ratio:.4}");
    assert!(
        (ratio - 1.0).abs() <= 0.05,
        "rate {rate} vs stored {stored_iops}"
    );

    // The histogram's median and p90 from Prometheus, over the same
    // seconds, agree with the stored ones within the buckets' width (a
    // factor 1.5) and histogram_quantile's interpolation.
    // The run is paced: the due-time histogram too, at its median only —
    // the seconds Prometheus saw are not the whole run, and on a loaded
    // machine the requests a late second delays (due-time latency's tail)
    // can all fall in the last, unscraped one.
    for (q, family, stored) in [
        ("0.5", "service", "read.latency.p50_us"),
        ("0.9", "service", "read.latency.p90_us"),
        ("0.5", "due", "read.due.p50_us"),
    ] {
        let query = format!(
            "histogram_quantile({q}, sum by (le) (rate(dbio_request_{family}_seconds_bucket{{op=\"read\"}}[{last}s])))"
        );
        let got = only(&prom.query(&query, at), q);
        let want = num(&report, stored) / 1e6;
        eprintln!("Prometheus {family} quantile {q} {got:.9} s, stored {want:.9} s");
        assert!(
            got > want / 2.0 && got < want * 2.0,
            "{family} {q}: {got} vs stored {want}"
        );
    }
    // Bytes: 8 KiB a request.
    let bytes = only(
        &prom.query(&format!("sum(rate(dbio_request_bytes_total[{last}s]))"), at),
        "bytes",
    );
    assert!(
        (bytes / rate - 8192.0).abs() < 1.0,
        "{bytes} bytes/s for {rate} requests/s"
    );
}

/// A chromium screenshot of `url` after its scripts ran for `ms` of virtual time.
fn screenshot(browser: &Path, url: &str, dir: &Path, name: &str) -> (Vec<u8>, String) {
    let shot = dir.join(name);
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--virtual-time-budget=2500",
    ];
    let out = Command::new(browser)
        .args(common)
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,1400")
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let dom = Command::new(browser)
        .args(common)
        .arg("--dump-dom")
        .arg(url)
        .output()
        .unwrap();
    (
        std::fs::read(&shot).unwrap(),
        String::from_utf8_lossy(&dom.stdout).into_owned(),
    )
}

fn the_live_page_draws_charts_that_change() {
    let _store = temp_store();
    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let dir = tempfile::tempdir().unwrap();
    // Long enough for two screenshots however slow Chromium starts; ended by Ctrl-C.
    let mut run = spawn_run(&dir.path().join("t"), ANY_PORT, 300, &["--rate", "2000"]);
    run.wait_elapsed(3.0);
    let url = format!("http://{}/", run.addr);
    let (first, dom) = screenshot(&browser, &url, dir.path(), "1.png");
    let now = run.wait_elapsed(0.0)["run"]["elapsed_s"].as_f64().unwrap();
    run.wait_elapsed(now + 3.0);
    let (second, _) = screenshot(&browser, &url, dir.path(), "2.png");
    for caption in [
        "Throughput",
        "Bandwidth",
        "read latency",
        "write latency",
        "Host CPU",
        "Device utilisation",
        // The run is paced: due-time p99 beside the service percentiles.
        "due-time p99",
    ] {
        assert!(dom.contains(caption), "no {caption} chart: {dom}");
    }
    assert!(dom.contains("running"), "{dom}");
    // The read and write lines' colours are drawn, and the charts moved on.
    let (ink, _, hits) = pixels(&first, &[[0x1f, 0x77, 0xb4], [0xd6, 0x27, 0x28]]);
    assert!(
        ink > 0.02 && hits.iter().all(|&h| h > 200),
        "ink {ink}, line pixels {hits:?}"
    );
    assert_ne!(first, second, "the charts changed between the screenshots");
    let pid = run.child.as_ref().unwrap().id() as i32;
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = run.wait();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
}

/// `dbio_…` names a dashboard expression uses.
fn metric_names(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("dbio_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

fn exprs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "query" | "definition", Value::String(s)) => out.push(s.clone()),
                    _ => exprs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| exprs(x, out)),
        _ => {}
    }
}

/// contrib/grafana/dbio.json, parsed.
fn board() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("contrib/grafana/dbio.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the dashboard is JSON")
}

/// Every `dbio_…` metric the board's queries and variables name.
fn board_metrics() -> Vec<String> {
    let mut all = Vec::new();
    exprs(&board(), &mut all);
    let mut names: Vec<String> = all.iter().flat_map(|e| metric_names(e)).collect();
    names.sort();
    names.dedup();
    names
}

fn a_plans_exposition_has_every_metric_the_grafana_board_queries() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("live.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"live \\\"plan\\\"\"\nrepeats = 2\norder = \"sequential\"\nmetrics_listen = \"{ANY_PORT}\"\n\n\
             [workload]\nsize = \"4M\"\ntime = \"6s\"\npattern = \"randrw\"\nio = \"buffered\"\nrate = 2000\n\n\
             [variables]\nA = {{ target = \"{}\" }}\n",
            dir.path().join("a").display()
        ),
    )
    .unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(["plan", "run"])
        .arg(&plan)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Serving::start(child);
    // The second run: the plan has one run done.
    let t = Instant::now();
    let (live, exposition) = loop {
        let v = child.wait_elapsed(2.0);
        if v["plan"]["done"] == 1 {
            let om = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
            break (v, get(&child.addr, "/metrics", Some(om)).unwrap());
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{v}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(live["plan"]["total"], 2);
    assert!(
        exposition
            .head
            .contains("application/openmetrics-text; version=1.0.0"),
        "{}",
        exposition.head
    );
    let body = exposition.body;
    assert!(body.ends_with("# EOF\n"));
    assert!(
        body.contains("dbio_plan_runs_done{plan=\"live \\\"plan\\\"\"} 1\n"),
        "{body}"
    );
    assert!(body.contains("variable=\"A\""), "{body}");

    let board = board();
    let names = board_metrics();
    assert!(
        names.len() >= 10,
        "the board queries dbio's metrics: {names:?}"
    );
    // A database run's waits are checked against a pg run's exposition
    // (a_pg_runs_waits_are_exposed_and_the_board_queries_them).
    for n in names.iter().filter(|n| !n.starts_with("dbio_db_")) {
        assert!(
            body.lines().any(|l| l.starts_with(&format!("{n}{{"))),
            "the board queries {n}, which the exposition does not have"
        );
    }
    let vars: Vec<&str> = board["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    for v in ["run", "plan", "target"] {
        assert!(vars.contains(&v), "variable {v}: {vars:?}");
    }
    let out = child.wait();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `promtool check metrics` accepts `text` (the exposition of `what`):
/// its lint is about names and help; a parse error fails it.
pub(crate) fn promtool_accepts(what: &str, text: &str) {
    use std::io::Write;
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = check.stdin.take().unwrap();
    input.write_all(text.as_bytes()).unwrap();
    drop(input);
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
}

/// The textfile once it holds a state of the run: its writer thread
/// replaces it after each second, and on a loaded host the write (a
/// synced file and a rename) can come after `/api/live` shows the second.
/// Fails when the run ends first or after 60 s.
fn textfile_with_a_state(run: &mut Serving, file: &Path) -> String {
    let t0 = Instant::now();
    loop {
        let text = std::fs::read_to_string(file).unwrap();
        if text.contains("dbio_requests_total{") {
            return text;
        }
        if !run.running() || t0.elapsed() > Duration::from_secs(60) {
            run.fail(&format!("the textfile never held a state: {text}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn the_textfile_and_the_endpoint_pass_promtool() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let textdir = dir.path().join("textfile");
    std::fs::create_dir(&textdir).unwrap();
    let mut run = spawn_run(
        &dir.path().join("t"),
        ANY_PORT,
        8,
        &["--metrics-textfile", textdir.to_str().unwrap()],
    );
    run.wait_elapsed(2.0);
    let addr = run.addr.clone();
    // Everything asked of the endpoint first, while the run (8 s) serves:
    // on a loaded host two promtool starts can take seconds.
    let plain = get(&addr, "/metrics", None).unwrap();
    assert_eq!(get(&addr, "/other", None).unwrap().status, 404);
    assert_eq!(
        request(&addr, "POST", "/metrics", None).unwrap().status,
        405
    );
    assert!(
        plain.head.contains("text/plain; version=0.0.4"),
        "{}",
        plain.head
    );
    let file = textfile_with_a_state(&mut run, &textdir.join("dbio.prom"));
    for (what, text) in [("endpoint", &plain.body), ("textfile", &file)] {
        assert!(text.contains("dbio_requests_total{"), "{what}: {text}");
        promtool_accepts(what, text);
    }
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    let names: Vec<String> = std::fs::read_dir(&textdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["dbio.prom"], "no temporary file left");
    // The run's last state is in it: ended, and the id it was stored as.
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let last = std::fs::read_to_string(textdir.join("dbio.prom")).unwrap();
    let id = report["run_id"].as_i64().unwrap();
    let stored = last
        .lines()
        .find(|l| l.starts_with("dbio_run_stored_id{"))
        .unwrap_or_else(|| panic!("{last}"));
    assert!(stored.ends_with(&format!("}} {id}")), "{stored}");
    assert!(
        last.lines()
            .any(|l| l.starts_with("dbio_run_running{") && l.ends_with("} 0")),
        "{last}"
    );
}

fn refused(args: &[&str], target: &Path, says: &[&str]) {
    let out = dbio()
        .args(["run", "--size", "4M", "--time", "1"])
        .arg("--target")
        .arg(target)
        .args(args)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for s in says {
        assert!(err.contains(s), "{args:?}: {err}");
    }
    assert!(!target.exists(), "{args:?}: nothing laid out");
}

fn a_bad_listen_address_or_textfile_dir_is_one_line_exit_2_nothing_laid_out() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    refused(
        &["--metrics-listen", &format!("127.0.0.1:{port}")],
        &t,
        &["--metrics-listen", "in use"],
    );
    // TEST-NET-3: on no interface here.
    refused(
        &["--metrics-listen", "203.0.113.7:9464"],
        &t,
        &["--metrics-listen", "203.0.113.7:9464"],
    );
    refused(
        &["--metrics-listen", "localhost:9464"],
        &t,
        &["--metrics-listen", "ADDR:PORT"],
    );
    refused(
        &[
            "--metrics-textfile",
            dir.path().join("none").to_str().unwrap(),
        ],
        &t,
        &["--metrics-textfile"],
    );
    // Someone else's dbio.prom is left alone.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("dbio.prom"), "mine 1\n").unwrap();
    refused(
        &["--metrics-textfile", other.to_str().unwrap()],
        &t,
        &["not written by dbio"],
    );
    assert_eq!(
        std::fs::read_to_string(other.join("dbio.prom")).unwrap(),
        "mine 1\n"
    );
    // A plan's address in use: refused before its first run.
    let plan = dir.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"p\"\nrepeats = 1\nmetrics_listen = \"127.0.0.1:{port}\"\n[workload]\nsize = \"4M\"\ntime = \"1s\"\ntarget = \"{}\"\n",
            t.display()
        ),
    )
    .unwrap();
    let out = dbio().args(["plan", "run"]).arg(&plan).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("in use"), "{}", stderr(&out));
    assert!(!t.exists());
    // In a plan's [workload], the option is refused (it is the plan's).
    std::fs::write(
        &plan,
        "name = \"p\"\n[workload]\nmetrics-listen = \"127.0.0.1:9464\"\n",
    )
    .unwrap();
    let out = dbio().args(["plan", "run"]).arg(&plan).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("metrics_listen"), "{}", stderr(&out));
    drop(held);
}

/// The samples of `family` in `text` whose line has every one of `labels`.
fn samples(text: &str, family: &str, labels: &[&str]) -> Vec<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{family}{{")))
        .filter(|l| labels.iter().all(|x| l.contains(x)))
        .map(|l| {
            let v = l.rsplit_once('}').unwrap().1;
            v.split_whitespace().next().unwrap().parse().unwrap()
        })
        .collect()
}

/// The one sample of `family` with `labels`.
fn sample(text: &str, family: &str, labels: &[&str]) -> f64 {
    let v = samples(text, family, labels);
    assert_eq!(v.len(), 1, "{family} {labels:?}: {text}");
    v[0]
}

/// `event`'s `waits` in a stored SLOB run's event table (0 when absent).
fn stored_waits(report: &Value, event: &str) -> f64 {
    report["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == event)
        .map_or(0.0, |e| e["waits"].as_f64().unwrap())
}

fn a_slob_runs_waits_commits_and_writes_are_live_and_end_at_the_runs_totals() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let textdir = dir.path().join("textfile");
    std::fs::create_dir(&textdir).unwrap();
    let model = [
        "--workload",
        "slob",
        "--seed",
        "7",
        "--sessions",
        "4",
        "--scale",
        "2000",
        "--cache",
        "1M",
        "--update-pct",
        "30",
        "--redo-file-size",
        "2M",
        "--log-buffer",
        "512K",
        "--time",
        "6",
        "--metrics-listen",
        ANY_PORT,
        "--metrics-textfile",
        textdir.to_str().unwrap(),
    ];
    let mut run = spawn_dbio(&dir.path().join("data"), &model);
    // A scrape while the sessions run: the counts are there already (not
    // only at the end), and below the run's final ones.
    run.wait_elapsed(2.0);
    let during = get(&run.addr, "/metrics", None).unwrap().body;
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
    // The textfile holds the view once every session ended: what the
    // sessions counted to their end, the stored run's whole-run totals.
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let last = std::fs::read_to_string(textdir.join("dbio.prom")).unwrap();
    let read = [
        "process=\"session\"",
        "event=\"db file sequential read\"",
        "class=\"User I/O\"",
        "workload=\"slob\"",
    ];
    let commits = |t: &str| sample(t, "dbio_db_commits_total", &[]);
    let log = ["writer=\"log\""];
    // The log writer is a background process in its own event.
    let lgwr = [
        "process=\"background\"",
        "event=\"log file parallel write\"",
    ];
    for (what, family, labels) in [
        ("reads waited", "dbio_db_waits_total", &read[..]),
        ("read wait time", "dbio_db_wait_seconds_total", &read[..]),
        ("commits", "dbio_db_commits_total", &[][..]),
        ("log writer writes", "dbio_db_writer_writes_total", &log[..]),
        ("log writer waits", "dbio_db_waits_total", &lgwr[..]),
    ] {
        let (a, b) = (
            sample(&during, family, labels),
            sample(&last, family, labels),
        );
        assert!(0.0 < a && a < b, "{what} at 2 s of 6: {a}, at the end {b}");
    }
    let total = |k: &str| report["slob"]["run_totals"][k].as_f64().unwrap();
    assert_eq!(commits(&last), total("transactions"), "{last}");
    let waits = |event: &str| {
        let e = format!("event=\"{event}\"");
        samples(&last, "dbio_db_waits_total", &[&e])
            .iter()
            .sum::<f64>()
    };
    // Every commit waits once in log file sync; every read request is a read event.
    assert_eq!(waits("log file sync"), total("transactions"));
    assert_eq!(
        waits("db file sequential read") + waits("db file scattered read"),
        total("read_requests")
    );
    // The report's event table counts the window only: never more.
    assert!(stored_waits(&report, "db file sequential read") <= waits("db file sequential read"));
    assert!(
        stored_waits(&report, "db file sequential read") > 0.9 * waits("db file sequential read")
    );
    // Every metric the board queries for a database is in a SLOB run's view.
    for n in board_metrics().iter().filter(|n| n.starts_with("dbio_db_")) {
        assert!(!samples(&last, n, &[]).is_empty(), "{n}: {last}");
    }
}

crate::tests! {
    prometheus_rate_of_the_request_counter_is_the_stored_iops [Tool("prometheus")],
    a_slob_runs_waits_commits_and_writes_are_live_and_end_at_the_runs_totals,
    the_live_page_draws_charts_that_change [Tool("chromium")],
    a_plans_exposition_has_every_metric_the_grafana_board_queries,
    the_textfile_and_the_endpoint_pass_promtool [Tool("promtool")],
    a_bad_listen_address_or_textfile_dir_is_one_line_exit_2_nothing_laid_out,
    a_pg_runs_waits_commits_and_writer_io_are_live [Root, Postgres],
    a_mysql_runs_waits_commits_and_writer_io_are_live [Root, MariaDB],
}

/// A database server's run, started by `spawn`, serves its sampled waits
/// (with the workload's label), commits that grow while it runs, and its
/// writers' bytes (and log writes where the server counts them); waits the
/// server counts itself (MariaDB's performance_schema) are counted and
/// timed server-wide. Every database metric the board queries is there but
/// the waits' count where the server only shows its activity (PostgreSQL).
/// The run is paced: every transaction served has its due-time latency.
fn a_servers_run_is_live(child: Child, workload: &str, counts: bool) {
    let mut run = Serving::start(child);
    // initdb and the load come first; then the sampler publishes about once a second.
    let t = Instant::now();
    let scrape = |run: &Serving| match get(&run.addr, "/metrics", None) {
        Ok(r) if r.body.contains("dbio_db_commits_total{") => Some(r.body),
        _ => None,
    };
    let first = loop {
        if let Some(body) = scrape(&run) {
            break body;
        }
        if !run.running() || t.elapsed() > Duration::from_secs(300) {
            run.fail("no commits served");
        }
        std::thread::sleep(Duration::from_millis(250));
    };
    std::thread::sleep(Duration::from_secs(3));
    let Some(later) = scrape(&run) else {
        run.fail("the run ended 3 s after its first commits were served")
    };
    let wl = format!("workload=\"{workload}\"");
    let commits = |t: &str| sample(t, "dbio_db_commits_total", &[&wl]);
    assert!(
        commits(&first) < commits(&later),
        "commits grow: {} then {}",
        commits(&first),
        commits(&later)
    );
    let log_bytes = |t: &str| sample(t, "dbio_db_writer_written_bytes_total", &["writer=\"log\""]);
    assert!(
        log_bytes(&first) < log_bytes(&later),
        "updates write the log"
    );
    sample(
        &later,
        "dbio_db_writer_written_bytes_total",
        &["writer=\"db\""],
    );
    // PostgreSQL counts WAL writes; MariaDB no redo writes.
    let log_count = samples(&later, "dbio_db_writer_writes_total", &["writer=\"log\""]);
    assert_eq!(log_count.len(), usize::from(!counts), "{later}");
    let session = ["process=\"session\"", &wl];
    assert!(
        !samples(&later, "dbio_db_wait_seconds_total", &session).is_empty(),
        "{later}"
    );
    let counted = samples(&later, "dbio_db_waits_total", &[]);
    if counts {
        // InnoDB's data file I/O, counted and timed by the server.
        let log = [
            "process=\"server\"",
            "event=\"wait/io/file/innodb/innodb_data_file\"",
            "class=\"wait/io/file\"",
        ];
        let n = |t: &str| sample(t, "dbio_db_waits_total", &log);
        assert!(0.0 < n(&first) && n(&first) < n(&later), "{later}");
        assert!(sample(&later, "dbio_db_wait_seconds_total", &log) > 0.0);
    } else {
        assert!(counted.is_empty(), "sampled: no count");
    }
    for n in board_metrics()
        .iter()
        .filter(|n| n.starts_with("dbio_db_") && (counts || *n != "dbio_db_waits_total"))
    {
        assert!(!samples(&later, n, &[]).is_empty(), "{n}: {later}");
    }
    // Paced: each transaction's latency from its due time beside its
    // service time, selects as read and updates as write.
    for op in ["op=\"read\"", "op=\"write\""] {
        let count = |family: &str| sample(&later, family, &[&wl, op]);
        let due = count("dbio_request_due_seconds_count");
        assert!(due > 0.0, "{op}: {later}");
        assert_eq!(due, count("dbio_request_service_seconds_count"), "{op}");
    }
    let out = run.wait();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A small update-heavy SLOB mix on a server, 10 s, paced, serving metrics.
/// Paced far above what two sessions on a 300-row table do, so the
/// sessions are always busy (the sampler, ten times a second, finds them
/// waiting) and every transaction still has a due time.
const SERVER_RUN: [&str; 14] = [
    "--sessions",
    "2",
    "--rate",
    "50000",
    "--scale",
    "300",
    "--cache",
    "16M",
    "--update-pct",
    "30",
    "--time",
    "10",
    "--metrics-listen",
    ANY_PORT,
];

fn a_pg_runs_waits_commits_and_writer_io_are_live() {
    let _one = crate::pg::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = crate::pg::PgDir::on_tmpfs();
    a_servers_run_is_live(d.spawn(&SERVER_RUN), "pg", false);
}

fn a_mysql_runs_waits_commits_and_writer_io_are_live() {
    let _one = crate::mysql::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = crate::mysql::MyDir::on_tmpfs();
    a_servers_run_is_live(d.spawn(&SERVER_RUN), "mysql", true);
}
