//! `dbio lab run --metrics-listen` (docs/metrics.md): the lab serves every
//! run of every arm live, with the arm as the `variable` label and the whole
//! plan's progress (across arms built one after another on one device); an
//! address in use is one line, exit 2, and nothing is built.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::prometheus::get;
use crate::lab::{assert_nothing_left, dbio, root_case, text, write_plan};
use crate::metrics_live::{ANY_PORT, Serving, stderr};

/// A sample's value on a line `NAME{…} VALUE [TIMESTAMP]`.
fn value(line: &str) -> f64 {
    let after = line.rsplit_once('}').map_or(line, |(_, v)| v);
    after.split_whitespace().next().unwrap().parse().unwrap()
}

/// The lines of `body` for family sample `name` (with labels).
fn lines<'a>(body: &'a str, name: &str) -> Vec<&'a str> {
    let head = format!("{name}{{");
    body.lines().filter(|l| l.starts_with(&head)).collect()
}

const TWO_ARMS: &str = r#"EXT4 = { fs = "ext4", mkfs = "-E nodiscard" }
RAW = { fs = "none" }"#;

fn a_lab_run_serves_every_arm_live_with_the_whole_plans_progress() {
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let plan = write_plan(&tmp, "lab-live", "time = 3", "same_device = true", TWO_ARMS);
    // An address in use: one line, exit 2, no arm built, no state file.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let out = dbio(&lab_dir)
        .args(["lab", "run"])
        .arg(&plan)
        .args(["--metrics-listen", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("in use"), "{err}");
    assert_nothing_left(&tmp, &lab_dir);
    drop(held);

    let child = dbio(&lab_dir)
        .args(["lab", "run"])
        .arg(&plan)
        .args(["--metrics-listen", ANY_PORT])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lab = Serving::start(child);
    // (arm, runs done of the plan) as the endpoint showed them, in order.
    let mut seen: Vec<(String, f64)> = Vec::new();
    let t = Instant::now();
    while lab.running() && t.elapsed() < Duration::from_secs(240) {
        if let Ok(r) = get(&lab.addr, "/metrics", None) {
            let done = lines(&r.body, "dbio_plan_runs_done");
            let total = lines(&r.body, "dbio_plan_runs");
            let requests = lines(&r.body, "dbio_requests_total");
            if let (Some(d), Some(n), Some(req)) = (done.first(), total.first(), requests.first()) {
                assert!(d.contains("plan=\"lab-live\""), "{d}");
                assert_eq!(value(n), 4.0, "the whole plan's runs: {n}");
                let arm = req
                    .split("variable=\"")
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                    .unwrap_or_default()
                    .to_string();
                seen.push((arm, value(d)));
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = lab.wait();
    assert!(out.status.success(), "{}", text(&out));
    assert_nothing_left(&tmp, &lab_dir);
    for arm in ["EXT4", "RAW"] {
        assert!(seen.iter().any(|(a, _)| a == arm), "{arm} served: {seen:?}");
    }
    // Progress counts the whole plan: it never goes back, and the second
    // arm's runs come after the first arm's two.
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1), "{seen:?}");
    let first = &seen[0].0;
    let second = seen.iter().find(|(a, _)| a != first).unwrap();
    assert!(second.1 >= 2.0, "{seen:?}");
    assert!(seen.last().unwrap().1 >= 3.0, "{seen:?}");
}

crate::tests! {
    a_lab_run_serves_every_arm_live_with_the_whole_plans_progress [Root],
}
