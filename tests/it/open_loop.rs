//! Open-loop load (`--rate`) on a really slow device: a direct-I/O loop
//! device throttled by the blkio cgroup, dbio started inside the cgroup.
//! Above the throttle the due-time latency grows with the backlog while the
//! service time stays bounded, and the run is called saturated; below it both
//! latencies agree, and dbio's achieved rate and service times agree with
//! fio's `--rate_iops --rate_process=poisson` on the same device.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::blkio::Throttle;
use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};

/// Reads per second the device serves.
const THROTTLE: u32 = 400;
/// Sessions (dbio) and jobs (fio), each one request at a time (psync):
/// few above the throttle (they bound the rate), enough below it that a
/// request seldom waits for a free one.
const FEW: u32 = 4;
const ENOUGH: u32 = 40;
/// Seconds each run measures.
const SECS: u32 = 8;

/// A 64 MiB direct-I/O loop device that holds data (not holes, which the
/// filesystem under it would answer without reading), written through the
/// device with O_DIRECT so that none of it waits in a page cache.
pub(crate) fn device() -> LoopDev {
    use std::os::unix::fs::OpenOptionsExt;
    let dev = LoopDev::new(64 << 20, true);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&dev.path)
        .unwrap();
    // A 1 MiB buffer aligned for O_DIRECT, inside a larger allocation.
    let mut buf = vec![0u8; 2 << 20];
    let off = buf.as_ptr().align_offset(4096);
    let chunk = &mut buf[off..off + (1 << 20)];
    for (i, b) in chunk.iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(2654435761).to_le_bytes()[2];
    }
    for _ in 0..64 {
        std::io::Write::write_all(&mut f, chunk).unwrap();
    }
    f.sync_all().unwrap();
    dev
}

/// `dbio run --json` of 4 KiB random reads at `rate` on `dev`, inside `t`.
/// How a command enters the throttle: `Throttle::inside` (nice -15) or
/// `Throttle::inside_fifo` (SCHED_FIFO).
type Enter = fn(&Throttle, &mut Command);

fn dbio_at(t: &Throttle, dev: &Path, sessions: u32, rate: u32, arrival: &str) -> Value {
    dbio_entering(Throttle::inside, t, dev, sessions, rate, arrival)
}

fn dbio_entering(
    enter: Enter,
    t: &Throttle,
    dev: &Path,
    sessions: u32,
    rate: u32,
    arrival: &str,
) -> Value {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    cmd.env("DBIO_DB", store_path()).args([
        "run",
        "--json",
        "--quiet",
        "--target",
        dev.to_str().unwrap(),
        "--pattern",
        "randread",
        "--bs",
        "4k",
        "--engine",
        "psync",
        "--sessions",
        &sessions.to_string(),
        "--time",
        &SECS.to_string(),
        "--rate",
        &rate.to_string(),
        "--arrival",
        arrival,
        "--seed",
        "3",
    ]);
    enter(t, &mut cmd);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// fio's JSON for the same load: `jobs` psync jobs sharing `rate`.
fn fio_at(enter: Enter, t: &Throttle, dev: &Path, jobs: u32, rate: u32, process: &str) -> Value {
    let mut cmd = Command::new("fio");
    cmd.args([
        "--name=ol",
        &format!("--filename={}", dev.display()),
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--ioengine=psync",
        &format!("--numjobs={jobs}"),
        &format!("--rate_iops={}", rate / jobs),
        &format!("--rate_process={process}"),
        "--time_based",
        &format!("--runtime={SECS}"),
        "--group_reporting",
        "--randseed=3",
        "--output-format=json",
    ]);
    enter(t, &mut cmd);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} in {v}"))
}

fn above_a_throttle_due_time_grows_and_the_run_is_saturated() {
    let _store = temp_store();
    let dev = device();
    let t = Throttle::new(&dev.path, THROTTLE, THROTTLE);
    let r = dbio_at(&t, &dev.path, FEW, 2 * THROTTLE, "poisson");
    let ol = &r["open_loop"];
    assert_eq!(ol["saturated"], true, "{ol}");
    let verdict = ol["verdict"].as_str().unwrap();
    // What fell due is named when a Poisson schedule's count strays over
    // 1% from the rate, which a few thousand arrivals do by chance.
    assert!(
        verdict.starts_with("asked 800/s")
            && verdict.contains(", achieved ")
            && verdict.ends_with(": saturated"),
        "{verdict}"
    );
    let achieved = num(ol, "achieved_per_s");
    assert!(
        (0.8 * THROTTLE as f64..1.15 * THROTTLE as f64).contains(&achieved),
        "{achieved}"
    );
    // Half of what was asked was served: the backlog grows through the run,
    // and the last requests waited for seconds of it.
    let due_p50 = num(&r, "read.due.p50_us");
    let due_max = num(&r, "read.due.max_us");
    let service_p99 = num(&r, "read.latency.p99_us");
    assert!(due_max > 1.0e6, "due max {due_max} us");
    assert!(
        due_p50 > 20.0 * num(&r, "read.latency.p50_us"),
        "due p50 {due_p50} us"
    );
    assert!(service_p99 < 200_000.0, "service p99 {service_p99} us");
    assert!(num(&r, "read.due.p99_us") > 5.0 * service_p99);
    assert!(num(ol, "lateness.late_pct") > 50.0, "{ol}");
    // Four psync sessions at this service time cannot issue 800/s.
    let bound = ol["bound"].as_str().expect("the sessions bound the rate");
    assert!(bound.starts_with("4 psync sessions"), "{bound}");
    // The per-second series: service time stays flat from the first
    // measured second to the last.
    let series = r["series"].as_array().unwrap();
    let mean = |p: &Value| num(p, "read.lat_mean_us");
    let (first, last) = (mean(&series[0]), mean(series.last().unwrap()));
    assert!(
        last < 3.0 * first.max(1000.0),
        "service mean {first} us, then {last} us"
    );
}

fn below_a_throttle_due_and_service_agree_and_match_fio() {
    let _store = temp_store();
    let dev = device();
    let t = Throttle::new(&dev.path, THROTTLE, THROTTLE);
    let rate = THROTTLE / 2;
    // Real-time, as the pairs below (why there): a niced session on a
    // loaded machine issues late because it waits for a CPU, not because
    // the device is behind.
    let r = dbio_entering(
        Throttle::inside_fifo,
        &t,
        &dev.path,
        ENOUGH,
        rate,
        "poisson",
    );
    let ol = &r["open_loop"];
    assert_eq!(ol["saturated"], false, "{ol}");
    assert!(ol["bound"].is_null(), "{ol}");
    // Served what fell due (a seeded Poisson count, around rate × time).
    let (achieved, due) = (num(ol, "achieved_per_s"), num(ol, "due_per_s"));
    assert!(
        (achieved / due - 1.0).abs() < 0.03,
        "achieved {achieved}/s of {due}/s due"
    );
    // Counted from the due time, a typical request waited no longer than
    // from its issue: no backlog.
    let (due50, service50) = (num(&r, "read.due.p50_us"), num(&r, "read.latency.p50_us"));
    assert!(
        due50 < 1.25 * service50 + 100.0,
        "p50: due {due50} us, service {service50} us; {ol}"
    );
    // Against fio, evenly spaced and one request at a time (a request takes
    // far less than the 5 ms between two, and one session or job gives both
    // tools the same stream: fio's jobs would start their schedules
    // together and reach the throttle in bursts, dbio's sessions are spread
    // over the interval), both under SCHED_FIFO, in five alternating pairs
    // compared by their medians. Real-time because on a loaded machine a
    // niced thread waits milliseconds for a CPU after each sleep: dbio's
    // session then issued 86% of its requests late (lateness p50 6.7 ms)
    // and caught up back to back (service p50 150-240 us), while fio's p50
    // was 1.8-4.0 ms (its wait after the completion), with or without the
    // throttle; under SCHED_FIFO both gave 100-150 us (bench/README.md,
    // "open-loop.sh --throttle").
    let pairs: Vec<(Value, Value)> = (0..5)
        .map(|_| {
            let r = dbio_entering(Throttle::inside_fifo, &t, &dev.path, 1, rate, "uniform");
            let f = fio_at(Throttle::inside_fifo, &t, &dev.path, 1, rate, "linear");
            (r, f)
        })
        .collect();
    agree(&pairs);
}

/// dbio's runs and fio's of the same load, pair by pair: the medians of the
/// rate within 5%; service p50 within a factor of 1.5 by the median of the
/// pairs' ratios (the two runs of a pair follow each other, so a burst of
/// the disk's other work tends to fall on both); service p99 — a handful of
/// the slowest requests, which the shared disk moves by up to 60x from one
/// run to the next (300 us to 19 ms in one test's five fio runs) — held to
/// the range fio's own runs spanned, widened by 2 either way. No closer:
/// under SCHED_FIFO on this throttled device the medians of three pairs
/// differed by 1.02-1.26x (p50, about 100-150 us); in CI, with PostgreSQL's
/// loads beside it, five pairs gave p99 medians of 1.56 and 1.03 ms, and a
/// later test's median p99 ratio was 0.50. A dbio that timed from the wrong
/// moment or in the wrong unit is off by far more.
fn agree(pairs: &[(Value, Value)]) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let fio = |f: &Value, p: &str| {
        f["jobs"][0]["read"]["clat_ns"]["percentile"][p]
            .as_f64()
            .unwrap()
            / 1e3
    };
    let (achieved, fio_iops) = (
        median(
            pairs
                .iter()
                .map(|(r, _)| num(r, "open_loop.achieved_per_s"))
                .collect(),
        ),
        median(
            pairs
                .iter()
                .map(|(_, f)| num(&f["jobs"][0]["read"], "iops"))
                .collect(),
        ),
    );
    eprintln!("medians: dbio {achieved:.1}/s, fio {fio_iops:.1}/s");
    assert!(
        (achieved / fio_iops - 1.0).abs() < 0.05,
        "dbio {achieved}/s, fio {fio_iops}/s"
    );
    let each = |key: &str, fio_key: &str| -> Vec<(f64, f64)> {
        pairs
            .iter()
            .map(|(r, f)| (num(r, key), fio(f, fio_key)))
            .collect()
    };
    let p50 = each("read.latency.p50_us", "50.000000");
    let ratio = median(p50.iter().map(|(d, f)| d / f).collect());
    eprintln!("p50 (dbio us, fio us) per pair: {p50:?}; median ratio {ratio:.3}");
    assert!(
        (1.0 / 1.5..1.5).contains(&ratio),
        "p50: dbio / fio median ratio {ratio:.3} over {} pairs {p50:?}",
        pairs.len()
    );
    let p99 = each("read.latency.p99_us", "99.000000");
    let dbio = median(p99.iter().map(|(d, _)| *d).collect());
    let (lo, hi) = p99.iter().fold((f64::MAX, 0.0f64), |(lo, hi), (_, f)| {
        (lo.min(*f), hi.max(*f))
    });
    eprintln!(
        "p99 (dbio us, fio us) per pair: {p99:?}; dbio median {dbio:.1}, fio {lo:.1}..{hi:.1}"
    );
    assert!(
        (lo / 2.0..hi * 2.0).contains(&dbio),
        "p99: dbio's median {dbio} us outside fio's runs' {lo}..{hi} us widened by 2: {p99:?}"
    );
}

crate::tests! {
    above_a_throttle_due_time_grows_and_the_run_is_saturated [Root, BlkioThrottle],
    below_a_throttle_due_and_service_agree_and_match_fio [Root, BlkioThrottle, Tool("fio")],
}
