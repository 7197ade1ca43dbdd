//! `dbio run --mpi` under the real Open MPI (`mpirun`, ranks on this host,
//! shared memory): one stored run whose totals are the sum of the ranks'
//! own counters and whose percentiles are those of one histogram of every
//! rank's latencies; the start skew across ranks; a bad target on one rank
//! failing every rank at once in one line, with no Open MPI shared-memory
//! segment left in /dev/shm. Compiled only with `--features mpi`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use dbio::ranks::wire::hist_from_base64;
use hdrhistogram::Histogram;
use serde_json::Value;

use crate::common::store::{store_path, temp_store};

crate::tests! {
    four_ranks_store_one_run_whose_totals_and_percentiles_are_exact [Tool("mpirun")],
    a_bad_target_on_one_rank_fails_every_rank_in_one_line [Tool("mpirun")],
    ranks_sharing_a_directory_are_refused_before_anything_is_written [Tool("mpirun")],
    ctrl_c_on_mpirun_stores_the_partial_run_marked_interrupted [Tool("mpirun")],
    the_slob_model_on_three_ranks_adds_up_to_one_database_run [Tool("mpirun")],
    an_open_loop_run_on_two_ranks_merges_its_due_times [Tool("mpirun")],
}

/// One MPI job at a time, each with a backing directory of its own for
/// Open MPI's shared-memory segments (`btl_vader_backing_directory`, in
/// /dev/shm like the default): what a job leaves is found there, and only
/// there — never another job's segments in /dev/shm.
static ONE_JOB: Mutex<()> = Mutex::new(());

/// The backing directory of the job running now (set by [`alone`]).
static CURRENT: Mutex<Option<PathBuf>> = Mutex::new(None);

fn backing_dir() -> PathBuf {
    CURRENT
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .expect("an MPI job runs inside alone()")
}

/// Open MPI's shared-memory segments in the current job's directory.
fn segments() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(backing_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("vader_segment."))
        })
        .collect();
    v.sort();
    v
}

/// `mpirun` starting `dbio run --mpi ARGS` as `ranks` ranks on this host.
pub(crate) fn job(ranks: u32, args: &[&str]) -> Command {
    let mut c = launch(ranks, &["run", "--mpi"]);
    c.args(args);
    c
}

/// `mpirun` starting `dbio ARGS` as `ranks` ranks on this host, with the
/// test's store.
pub(crate) fn launch(ranks: u32, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-q",
        "--timeout",
        "120",
    ])
    .args(["--mca", "pml", "ob1", "--mca", "btl", "self,vader"])
    .args(["--mca", "btl_vader_backing_directory"])
    .arg(backing_dir())
    .args(["-np", &ranks.to_string()])
    .arg(assert_cmd::cargo::cargo_bin("dbio"))
    .args(args)
    .env("DBIO_DB", store_path());
    c
}

/// Runs `f` (one MPI job) and returns what it returned and the Open MPI
/// shared-memory segments the job left (removed again here, so that a
/// failing test leaves nothing either).
pub(crate) fn alone<T>(f: impl FnOnce() -> T) -> (T, Vec<PathBuf>) {
    let _one = ONE_JOB.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::Builder::new()
        .prefix("dbio-it-mpi-")
        .tempdir_in("/dev/shm")
        .unwrap();
    *CURRENT.lock().unwrap_or_else(|p| p.into_inner()) = Some(dir.path().to_path_buf());
    let out = f();
    let left = segments();
    *CURRENT.lock().unwrap_or_else(|p| p.into_inner()) = None;
    // The directory and whatever the job left in it go with `dir`.
    drop(dir);
    (out, left)
}

/// Runs `dbio run --mpi ARGS` as `ranks` ranks to its end.
pub(crate) fn mpirun(ranks: u32, args: &[&str]) -> (Output, Vec<PathBuf>) {
    alone(|| job(ranks, args).output().unwrap())
}

/// Waits until the file at `path` holds `text`, at most `secs` seconds.
pub(crate) fn wait_for_text(path: &Path, text: &str, secs: u64) {
    let t0 = Instant::now();
    while !std::fs::read_to_string(path)
        .unwrap_or_default()
        .contains(text)
    {
        assert!(
            t0.elapsed() < Duration::from_secs(secs),
            "{text:?} did not appear in {} within {secs} s",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The latency at quantile `q` as dbio reports it (µs; exact min and max).
fn quantile_us(h: &Histogram<u64>, q: f64, min_ns: u64, max_ns: u64) -> f64 {
    h.value_at_quantile(q).clamp(min_ns, max_ns) as f64 / 1e3
}

fn four_ranks_store_one_run_whose_totals_and_percentiles_are_exact() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let (out, left) = mpirun(
        4,
        &[
            "--target",
            &target,
            "--size",
            "8m",
            "--sessions",
            "2",
            "--ops",
            "4000",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let r: Value = serde_json::from_slice(&out.stdout).expect("one JSON document from rank 0");
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    assert_eq!(r["mpi"]["ranks"], 4);
    assert_eq!(r["config"]["sessions"], 8, "sessions are the job's");
    assert_eq!(r["config"]["target"], target.as_str());
    for (i, k) in ranks.iter().enumerate() {
        assert_eq!(k["rank"], i);
        assert!(!k["host"].as_str().unwrap().is_empty());
        assert_eq!(k["environment"]["hostname"], k["host"]);
        assert_eq!(k["total"]["requests"], 4000, "rank {i} did its --ops");
        assert!(Path::new(&format!("{}/r{i}", dir.path().display())).is_dir());
    }
    // Totals: the sum of the ranks' own counters.
    for kind in ["read", "write", "total"] {
        for field in ["requests", "bytes", "blocks"] {
            let sum: u64 = ranks
                .iter()
                .map(|k| k[kind][field].as_u64().unwrap_or(0))
                .sum();
            assert_eq!(r[kind][field].as_u64().unwrap(), sum, "{kind}.{field}");
        }
    }
    assert_eq!(r["total"]["requests"], 16_000);
    let measured = r["measured_s"].as_f64().unwrap();
    let iops = r["total"]["iops"].as_f64().unwrap();
    assert!((iops - 16_000.0 / measured).abs() < 1e-6 * iops);
    // Percentiles: those of one histogram of every rank's latencies.
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let run = store
        .get(store.list(&Default::default()).unwrap()[0].id)
        .unwrap();
    for kind in ["read", "write"] {
        let mut all: Option<Histogram<u64>> = None;
        for k in ranks {
            let h = hist_from_base64(k["histograms"][kind].as_str().unwrap()).unwrap();
            match &mut all {
                None => all = Some(h),
                Some(a) => a.add(&h).unwrap(),
            }
        }
        let all = all.unwrap();
        let lat = &r[kind]["latency"];
        let (min_ns, max_ns) = (
            (lat["min_us"].as_f64().unwrap() * 1e3).round() as u64,
            (lat["max_us"].as_f64().unwrap() * 1e3).round() as u64,
        );
        for (q, name) in [
            (0.5, "p50_us"),
            (0.9, "p90_us"),
            (0.99, "p99_us"),
            (0.999, "p99_9_us"),
        ] {
            assert_eq!(
                lat[name].as_f64().unwrap(),
                quantile_us(&all, q, min_ns, max_ns),
                "{kind} {name}"
            );
        }
        // The stored histogram is that one too.
        let stored = &run.histograms.iter().find(|(op, _)| op == kind).unwrap().1;
        let stored = dbio::store::decode_histogram(stored).unwrap();
        assert_eq!(stored.len(), all.len());
        assert_eq!(stored.value_at_quantile(0.99), all.value_at_quantile(0.99));
    }
    // The start: every rank within a fraction of a second (2 cores, 4
    // ranks: milliseconds when oversubscribed), and said.
    let skew = r["mpi"]["start_skew_us"].as_f64().unwrap();
    eprintln!("mpi: 4 ranks on 2 cores started within {skew:.0} us");
    assert!((0.0..500_000.0).contains(&skew), "{skew}");
    let (first, last) = (
        r["mpi"]["first_done_s"].as_f64().unwrap(),
        r["mpi"]["last_done_s"].as_f64().unwrap(),
    );
    assert!(first <= last && last > 0.0);
    assert!(r["mpi"]["imbalance"].as_f64().unwrap() >= 1.0);
}

fn a_bad_target_on_one_rank_fails_every_rank_in_one_line() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Ranks 0 and 2 have their parent directory, rank 1 does not.
    for p in ["p0", "p2"] {
        std::fs::create_dir(dir.path().join(p)).unwrap();
    }
    let target = format!("{}/p{{rank}}/dbio", dir.path().display());
    let (out, left) = mpirun(3, &["--target", &target, "--size", "8m", "--ops", "1000"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(lines[0].starts_with("error: rank 1 ("), "{err}");
    assert!(lines[0].contains("p1 does not exist"), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    // No rank wrote anything: the check came before any layout.
    for p in ["p0", "p2"] {
        assert!(
            !dir.path().join(p).join("dbio").exists(),
            "{p}/dbio created"
        );
    }
    assert!(nothing_stored());
}

/// Whether the test's store holds no run (or does not exist).
pub(crate) fn nothing_stored() -> bool {
    !store_path().exists() || {
        let s = dbio::store::Store::open(&store_path()).unwrap();
        s.list(&Default::default()).unwrap().is_empty()
    }
}

fn ranks_sharing_a_directory_are_refused_before_anything_is_written() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = dir.path().join("same");
    let (out, left) = mpirun(2, &["--target", target.to_str().unwrap(), "--ops", "100"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ranks 0 and 1 on host") && err.contains("put {rank} in it"),
        "{err}"
    );
    assert!(!target.exists());
    assert!(left.is_empty(), "segments left: {left:?}");
}

fn ctrl_c_on_mpirun_stores_the_partial_run_marked_interrupted() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let (out, err) = (dir.path().join("out.json"), dir.path().join("err.txt"));
    let args = [
        "--target",
        &target,
        "--size",
        "8m",
        "--sessions",
        "1",
        "--time",
        "60",
        "--json",
    ];
    let ((status, stopped_in), left) = alone(|| {
        let mut child = job(2, &args)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        // Rank 0 says where its target is once every check passed.
        wait_for_text(&err, "where", 60);
        std::thread::sleep(Duration::from_secs(2));
        // SAFETY: signals our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let at = Instant::now();
        let status = child.wait().unwrap();
        (status, at.elapsed())
    });
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(
        stopped_in < Duration::from_secs(15),
        "{stopped_in:?}: {err}"
    );
    assert!(!status.success(), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    // The stored run is whole (mpirun's teardown may cut what was still on
    // its way to stdout).
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1, "the partial run is stored: {err}");
    assert_eq!(runs[0].status, "interrupted");
    let r = store.get(runs[0].id).unwrap().report;
    assert_eq!(r["status"], "interrupted");
    assert_eq!(
        r["interrupted_by"], "SIGTERM",
        "mpirun stops the ranks with SIGTERM"
    );
    assert_eq!(r["mpi"]["ranks"], 2);
    assert!(r["measured_s"].as_f64().unwrap() < 30.0);
    assert!(r["total"]["requests"].as_u64().unwrap() > 0);
    assert!(std::fs::read_to_string(&out).unwrap().starts_with('{'));
}

fn the_slob_model_on_three_ranks_adds_up_to_one_database_run() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/s{{rank}}", dir.path().display());
    let (out, left) = mpirun(
        3,
        &[
            "--workload",
            "slob",
            "--seed",
            "7",
            "--target",
            &target,
            "--sessions",
            "2",
            "--time",
            "2",
            "--redo-file-size",
            "2M",
            "--log-buffer",
            "512K",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    assert_eq!(r["config"]["workload"], "slob");
    let c = &r["slob"]["counters"];
    // The model's counters over the window: the ranks' together.
    for k in [
        "executes",
        "transactions",
        "logical_reads",
        "cache_hits",
        "physical_reads",
        "read_requests",
        "physical_writes",
        "redo_bytes",
        "redo_written_bytes",
    ] {
        let sum: u64 = ranks.iter().map(|x| x["slob"][k].as_u64().unwrap()).sum();
        assert_eq!(c[k].as_u64().unwrap(), sum, "slob.counters.{k}");
    }
    assert!(c["transactions"].as_u64().unwrap() > 0);
    // And the model's invariants hold on the merged whole-run totals.
    let t = |k: &str| r["slob"]["run_totals"][k].as_u64().unwrap();
    assert_eq!(t("logical_reads"), t("cache_hits") + t("physical_reads"));
    assert_eq!(
        t("redo_written_bytes"),
        t("redo_bytes") + t("redo_wastage_bytes")
    );
    assert_eq!(t("executes"), t("selects") + t("updates") + t("scans"));
    // The wait events' histograms are every rank's together.
    let sync = r["slob"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "log file sync")
        .unwrap();
    assert_eq!(
        sync["waits"].as_u64().unwrap(),
        sync["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
    );
    for kind in ["read", "write"] {
        let sum: u64 = ranks
            .iter()
            .map(|k| k[kind]["requests"].as_u64().unwrap())
            .sum();
        assert_eq!(r[kind]["requests"].as_u64().unwrap(), sum, "{kind}");
    }
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let run = store
        .get(store.list(&Default::default()).unwrap()[0].id)
        .unwrap();
    assert!(
        run.histograms
            .iter()
            .any(|(op, _)| op == "event.log_file_sync")
    );
}

/// `--rate` under MPI: each rank paces its own sessions at the rate, the
/// job asked the ranks' rates together, and rank 0 merges the ranks'
/// due-time and lateness histograms into the run's open-loop section.
fn an_open_loop_run_on_two_ranks_merges_its_due_times() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let (out, left) = mpirun(
        2,
        &[
            "--target",
            &target,
            "--size",
            "8M",
            "--pattern",
            "randread",
            "--sessions",
            "2",
            "--time",
            "3",
            "--rate",
            "1000",
            "--seed",
            "3",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ol = &r["open_loop"];
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
    // Two ranks at 1000/s each: the job asked 2000/s and got it.
    assert_eq!(f(ol, "asked_per_s"), 2000.0, "{ol}");
    assert_eq!(ol["saturated"], false, "{ol}");
    assert!(
        (f(ol, "achieved_per_s") / 2000.0 - 1.0).abs() < 0.05,
        "{ol}"
    );
    // Every request of every rank has its lateness and due time merged.
    let ranks = r["ranks"].as_array().unwrap();
    let requests: u64 = ranks
        .iter()
        .map(|k| k["read"]["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(r["read"]["requests"].as_u64().unwrap(), requests);
    assert_eq!(
        ol["lateness"]["requests"].as_u64().unwrap(),
        requests,
        "{ol}"
    );
    assert!(requests > 5_000, "{requests}");
    let (due, service) = (&r["read"]["due"], &r["read"]["latency"]);
    for p in ["p50_us", "p99_us", "max_us"] {
        assert!(
            f(due, p) >= f(service, p),
            "{p}: due {due}, service {service}"
        );
    }
    assert!(r["total"]["due"].is_object(), "{}", r["total"]);
}
