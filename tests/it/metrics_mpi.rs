//! Live metrics under MPI (`dbio run --mpi --metrics-listen`, docs/metrics.md
//! "Under MPI") with the real Open MPI: every rank serves its own view with
//! a `rank` label and its own sessions, rank 0 says where every rank
//! serves, each rank writes its own textfile, and the ranks' final counts
//! add up to the stored run's; a rank that cannot bind ends the job in one
//! line naming it, exit 2, nothing laid out. Compiled only with `--features mpi`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::prometheus::get;
use crate::common::store::temp_store;
use crate::metrics_live::{ANY_PORT, Serving, stderr};
use crate::mpi::{alone, job, launch, mpirun};

crate::tests! {
    every_rank_serves_its_own_view_with_a_rank_label [Tool("mpirun")],
    a_rank_that_cannot_bind_ends_the_job_in_one_line [Tool("mpirun")],
    a_plan_under_mpi_serves_each_ranks_runs_and_the_plans_progress [Tool("mpirun")],
}

/// The sum of the samples of `family` whose line has `label`.
fn total(text: &str, family: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{family}{{")) && l.contains(label))
        .map(|l| {
            let v = l.rsplit_once('}').unwrap().1;
            v.split_whitespace().next().unwrap().parse::<f64>().unwrap()
        })
        .sum()
}

fn every_rank_serves_its_own_view_with_a_rank_label() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let textdir = dir.path().join("textfile");
    std::fs::create_dir(&textdir).unwrap();
    let args = [
        "--target",
        &target,
        "--size",
        "8m",
        "--sessions",
        "4",
        "--time",
        "5",
        "--json",
        "--metrics-listen",
        ANY_PORT,
        "--metrics-textfile",
        textdir.to_str().unwrap(),
    ];
    let ((out, during), left) = alone(|| {
        let child = job(2, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ranks = Serving::start_n(child, 2);
        // Both ranks serve their own run while it goes.
        let t = Instant::now();
        let mut during = vec![String::new(); 2];
        while during.iter().any(|b| !b.contains("dbio_requests_total{")) {
            for (r, addr) in ranks.addrs.clone().iter().enumerate() {
                if let Ok(resp) = get(addr, "/metrics", None) {
                    during[r] = resp.body;
                }
            }
            if !ranks.running() || t.elapsed() > Duration::from_secs(60) {
                ranks.fail(&format!("not every rank served its run: {during:?}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        (ranks.wait(), during)
    });
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    for (r, body) in during.iter().enumerate() {
        let mine = format!("rank=\"{r}\"");
        let requests: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with("dbio_requests_total{"))
            .collect();
        assert!(!requests.is_empty(), "rank {r}: {body}");
        for l in requests {
            assert!(
                l.contains(&mine) && l.contains("sessions=\"4\""),
                "rank {r}: {l}"
            );
        }
    }
    // Each rank's last view (its own file) adds up to the stored run's requests.
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stored = report["total"]["requests"].as_f64().unwrap();
    let mut live = 0.0;
    for r in 0..2 {
        let file = textdir.join(format!("dbio-rank-{r}.prom"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("dbio_run_running{"), "{text}");
        live += total(&text, "dbio_requests_total", &format!("rank=\"{r}\""));
    }
    assert!(
        (live - stored).abs() <= 0.02 * stored,
        "the ranks served {live} requests, the stored run has {stored}"
    );
    assert!(
        !textdir.join("dbio.prom").exists(),
        "each rank writes its own file"
    );
}

fn a_rank_that_cannot_bind_ends_the_job_in_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = dir.path().join("r{rank}");
    // Rank r listens on the port plus r: hold rank 1's, leave rank 0's free.
    let (port, held) = loop {
        let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = held.local_addr().unwrap().port();
        if p > 1024 && std::net::TcpListener::bind(("127.0.0.1", p - 1)).is_ok() {
            break (p - 1, held);
        }
    };
    let listen = format!("127.0.0.1:{port}");
    let (out, left) = mpirun(
        2,
        &[
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--time",
            "2",
            "--metrics-listen",
            &listen,
        ],
    );
    drop(held);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains("rank 1") && err.contains("in use"), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    for r in 0..2 {
        assert!(
            !dir.path().join(format!("r{r}")).exists(),
            "rank {r} laid out nothing"
        );
    }
}

fn a_plan_under_mpi_serves_each_ranks_runs_and_the_plans_progress() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = dir.path().join("live.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"mpi live\"\nrepeats = 1\norder = \"sequential\"\nmetrics_listen = \"{ANY_PORT}\"\n\n\
             [workload]\nsize = \"8M\"\ntime = \"3s\"\n\n\
             [variables]\nA = {{ target = \"{0}/a{{rank}}\" }}\nB = {{ target = \"{0}/b{{rank}}\" }}\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap().to_string();
    let ((out, seen), left) = alone(|| {
        let child = launch(2, &["plan", "run", &plan, "--mpi"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut ranks = Serving::start_n(child, 2);
        // (rank, variable, runs done) as each rank's endpoint showed them.
        let mut seen: Vec<(usize, String, f64)> = Vec::new();
        let t = Instant::now();
        while ranks.running() && t.elapsed() < Duration::from_secs(90) {
            for (r, addr) in ranks.addrs.clone().iter().enumerate() {
                let Ok(resp) = get(addr, "/metrics", None) else {
                    continue;
                };
                let done = total(&resp.body, "dbio_plan_runs_done", "plan=\"mpi live\"");
                let variable = resp
                    .body
                    .lines()
                    .find(|l| l.starts_with("dbio_requests_total{"))
                    .and_then(|l| l.split("variable=\"").nth(1))
                    .and_then(|v| v.split('"').next())
                    .map(str::to_string);
                if let Some(v) = variable {
                    assert!(
                        resp.body.contains(&format!("rank=\"{r}\"")),
                        "{}",
                        resp.body
                    );
                    seen.push((r, v, done));
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        (ranks.wait(), seen)
    });
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    for r in 0..2 {
        for v in ["A", "B"] {
            assert!(
                seen.iter().any(|(rank, var, _)| *rank == r && var == v),
                "rank {r} served run {v}: {seen:?}"
            );
        }
        // Run B comes after run A is done: the plan's progress on every rank.
        assert!(
            seen.iter()
                .any(|(rank, var, done)| *rank == r && var == "B" && *done >= 1.0),
            "{seen:?}"
        );
    }
}
