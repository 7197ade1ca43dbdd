//! `--workload replay`: fio iologs made by fio in the test replayed at
//! their captured times, twice as fast and as fast as they go (every
//! request, the times kept, the faithfulness report's numbers against the
//! run's own); offsets mapped onto a smaller device (modulo and scale land
//! where they should, nothing else written; a trace past the device with
//! no mapping refused, nothing written) with its flushes reaching the
//! device; and the validation: a SLOB run captured on XFS over a direct-io
//! loop device, replayed on a second one, the second device's counters
//! against the capture.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio, num};
use crate::common::store::temp_store;
use crate::common::trace::{Capturing, disk_fields, tracefs_to_myself};

crate::tests! {
    fio_iologs_replay_at_their_times_and_faster [Root, Tool("fio")],
    offsets_map_onto_a_smaller_device_and_flushes_reach_it [Root],
    a_slob_run_captured_on_xfs_replays_on_another_device [Root, BlockTracing, Tool("mkfs.xfs")],
    a_run_captured_with_capture_is_kept_converted_and_replayed [Root, BlockTracing],
    a_capture_holds_the_run_not_the_layout_before_it [Root, BlockTracing],
    capture_on_a_target_without_a_device_is_refused_before_anything,
    rt_runs_the_sessions_and_the_feed_under_sched_fifo [Root],
    requests_that_waited_for_room_in_a_full_ring_are_counted_apart,
}

const MIB: u64 = 1 << 20;

/// fio's randrw at `iops` reads and `iops` writes a second, `ios` requests, into `log`.
fn fio_iolog(dir: &Path, log: &Path, iops: u32, ios: u32) {
    let (ios, iops) = (format!("--number_ios={ios}"), format!("--rate_iops={iops}"));
    crate::common::trace::fio_iolog(dir, log, &[&ios, &iops]);
}

/// Each /proc/diskstats field's change from `before` to `after`.
fn delta(after: &[u64], before: &[u64]) -> Vec<f64> {
    after
        .iter()
        .zip(before)
        .map(|(x, y)| *x as f64 - *y as f64)
        .collect()
}

/// The requests of `op` on one side of a replay's faithfulness report.
fn side_op(r: &Value, side: &str, op: &str) -> u64 {
    r["replay"][side]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == op)
        .map_or(0, |o| o["requests"].as_u64().unwrap())
}

fn replay(target: &Path, trace: &Path, extra: &[&str]) -> Value {
    Run::raw(target)
        .args(&["--workload", "replay", "--trace", trace.to_str().unwrap()])
        .args(extra)
        .json()
}

fn fio_iologs_replay_at_their_times_and_faster() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fio.iolog");
    // About 0.6 s of requests, 500 reads and 500 writes a second.
    fio_iolog(dir.path(), &log, 500, 600);
    let text = std::fs::read_to_string(&log).unwrap();
    let count = |act: &str| {
        text.lines()
            .filter(|l| l.contains(&format!(" {act} ")))
            .count() as u64
    };
    let (reads, writes) = (count("read"), count("write"));
    // On tmpfs: the timing is the subject, not a device shared with
    // other builds.
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("t");
    // Real-time, as the SLOB validation below (why there).
    let asked = replay(&target, &log, &["--rt"]);
    let span = num(&asked, "replay.captured.span_s");
    assert!(span > 0.4 && span < 2.0, "fio's requests span {span} s");
    let mut spans = Vec::new();
    for (speed, engine) in [
        ("1x", "psync"),
        ("1x", "io_uring"),
        ("2x", "psync"),
        ("max", "psync"),
    ] {
        let r = if speed == "1x" && engine == "psync" {
            asked.clone()
        } else {
            replay(
                &target,
                &log,
                &["--speed", speed, "--engine", engine, "--rt"],
            )
        };
        // Every request, as the run counts them and as the report does.
        assert_eq!(num(&r, "read.requests") as u64, reads, "{speed} {engine}");
        assert_eq!(num(&r, "write.requests") as u64, writes, "{speed} {engine}");
        assert_eq!(side_op(&r, "replayed", "read"), reads);
        assert_eq!(side_op(&r, "captured", "write"), writes);
        assert_eq!(num(&r, "read.bytes"), (reads * 4096) as f64);
        let replayed = num(&r, "replay.replayed.span_s");
        if speed != "max" {
            // Tens of µs on a quiet host; 1.2 ms seen at load average 38
            // on 2 cores (every helper's release build at once).
            let p50 = num(&r, "replay.issue_error.p50_us");
            assert!(p50 < 5000.0, "{speed} {engine}: issue error p50 {p50} us");
        }
        spans.push((speed, engine, replayed));
    }
    // The times kept: as captured, half of it at 2x, far less at max.
    let near = |got: f64, want: f64| (got - want).abs() <= want * 0.1 + 0.01;
    assert!(near(spans[0].2, span), "{spans:?} against {span}");
    assert!(near(spans[1].2, span), "{spans:?} against {span}");
    assert!(near(spans[2].2, span / 2.0), "{spans:?} against {span}");
    assert!(spans[3].2 < span / 4.0, "{spans:?} against {span}");
}

/// Whether 4 KiB at `offset` of `dev` holds anything but zeros.
fn written(dev: &Path, offset: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(dev).unwrap();
    let mut b = vec![0u8; 4096];
    f.read_exact_at(&mut b, offset).unwrap();
    b.iter().any(|&x| x != 0)
}

fn offsets_map_onto_a_smaller_device_and_flushes_reach_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    // Ten 4 KiB writes at 20 MiB of a 32 MiB trace, then five syncs.
    let mut text = String::from("fio version 3 iolog\n0 /f add\n0 /f open\n");
    for k in 0..10 {
        text += &format!("{} /f write {} 4096\n", 100 + k, 20 * MIB + k * 4096);
    }
    for k in 0..5 {
        text += &format!("{} /f sync 0 0\n", 200 + k);
    }
    text += &format!("300 /f read {} 4096\n", 32 * MIB - 4096);
    let log = dir.path().join("map.iolog");
    std::fs::write(&log, text).unwrap();
    let dev = LoopDev::new(16 * MIB, true);
    let name = dev.path.file_name().unwrap().to_str().unwrap().to_string();
    // Past the device with no mapping: one line, exit 2, nothing written.
    let before = disk_fields(&name);
    let out = Run::raw(&dev.path)
        .args(&["--workload", "replay", "--trace", log.to_str().unwrap()])
        .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--map") && err.contains("33554432"), "{err}");
    assert_eq!(disk_fields(&name)[4], before[4], "nothing written");
    // Modulo: 20 MiB lands at 4 MiB; scale (16 of 32 MiB): at 10 MiB.
    let flushes = disk_fields(&name)[15];
    let r = replay(&dev.path, &log, &["--map", "modulo"]);
    assert_eq!(num(&r, "write.requests"), 10.0);
    assert_eq!(
        num(&r, "sync.requests"),
        5.0,
        "the syncs replayed as fdatasync"
    );
    let flushed = disk_fields(&name)[15] - flushes;
    assert!(flushed >= 5, "{flushed} flushes reached the device");
    for k in 0..10 {
        assert!(written(&dev.path, 4 * MIB + k * 4096), "modulo block {k}");
        assert!(
            !written(&dev.path, 10 * MIB + k * 4096),
            "scale's place, not yet"
        );
    }
    let r = replay(
        &dev.path,
        &log,
        &[
            "--map",
            "scale",
            "--destroy-device",
            dev.path.to_str().unwrap(),
        ],
    );
    assert_eq!(num(&r, "read.requests"), 1.0);
    for k in 0..10 {
        // Scaled by a half: 2 KiB apart (sector-aligned), each 4 KiB long.
        assert!(written(&dev.path, 10 * MIB + k * 2048), "scale block {k}");
    }
    assert!(!written(&dev.path, 10 * MIB + 24 * 1024), "past the last");
    assert!(!written(&dev.path, 0), "nothing at the start");
}

/// The validation of issue 30: a SLOB run on XFS over a direct-io loop
/// device captured, and replayed as captured on a second such device.
fn a_slob_run_captured_on_xfs_replays_on_another_device() {
    let _tracefs = tracefs_to_myself();
    let _store = temp_store();
    let mut a = LoopDev::new(512 * MIB, true);
    let b = LoopDev::new(512 * MIB, true);
    a.mkfs("xfs");
    let mnt = a.mount();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("slob.dbtrace");
    // Laid out first, so the capture holds the run alone.
    Run::slob(&mnt)
        .args(&["--time", "1", "--scale", "16M"])
        .json();
    let cap = Capturing::start(&[&a.path], &trace);
    Run::slob(&mnt)
        .args(&["--time", "4", "--scale", "16M", "--update-pct", "30"])
        .json();
    std::thread::sleep(Duration::from_millis(300));
    let (json, err) = cap.stop();
    let c = &json["capture"]["summary"];
    assert_eq!(json["capture"]["lost_events"].as_u64(), Some(0), "{err}");
    let name = b.path.file_name().unwrap().to_str().unwrap().to_string();
    // io_uring: one session per captured thread, as many in flight as it
    // had (psync would need a thread per request in flight: the DB
    // writer's 64). B is the test's own empty device: --destroy-device
    // lets the one-write replay below and this one write it alike.
    let b_path = b.path.to_str().unwrap();
    // Not real-time: the loop device's requests are served by the kernel's
    // worker threads at normal priority, which real-time sessions take the
    // CPUs from. Until session 16 io_uring's workers also inherited the
    // sessions' SCHED_FIFO (reads 7.7 ms at p50 under the whole suite
    // against the capture's 81 us); they no longer do, and six --rt
    // replays alone at load 46-77 kept the span to 30 us, but under this
    // test binary (another --rt replay at the same time, a capture of
    // 18,500 requests/s) an --rt replay still fell 0.87 s behind.
    let opts = ["--engine", "io_uring", "--destroy-device", b_path];
    // What dbio itself reads of a device it is to write (its write gate
    // checks the device: megabytes in a few requests, the same each run)
    // is measured by replaying one 4 KiB write first and taken off:
    // against a small capture (a slow host's) it moved the mean read size
    // past 5% (8,994 B against 8,195 at load 60).
    let one = dir.path().join("one.iolog");
    std::fs::write(
        &one,
        "fio version 3 iolog\n0 b add\n0 b open\n1 b write 0 4096\n2 b close\n",
    )
    .unwrap();
    let before = disk_fields(&name);
    replay(&b.path, &one, &opts);
    let mut checks = delta(&disk_fields(&name), &before);
    checks[4] -= 1.0; // the write replayed
    checks[6] -= 8.0; // its sectors
    let before = disk_fields(&name);
    let r = replay(&b.path, &trace, &opts);
    let d: Vec<f64> = delta(&disk_fields(&name), &before)
        .iter()
        .zip(&checks)
        .map(|(x, c)| x - c)
        .collect();
    let cn = |k: &str| c[k].as_u64().unwrap() as f64;
    // The captured threads (the SLOB sessions, its DB writers, XFS's log
    // worker) share at most one session per CPU: fewer threads to wake
    // on a small host than one per captured thread (docs/replay.md,
    // "Fewer sessions"), each thread's requests in one ring.
    let threads = r["config"]["replay"]["facts"]["threads"]
        .as_array()
        .map_or(0, Vec::len);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        num(&r, "config.sessions") as usize,
        cpus.min(threads).max(1),
        "{threads} captured threads on {cpus} CPUs: {}",
        r["config"]["replay"]["sessions"]
    );
    let (cspan, rspan) = (
        num(&r, "replay.captured.span_s"),
        num(&r, "replay.replayed.span_s"),
    );
    // A replayed flush is an fdatasync of the device: the block layer
    // counts its empty preflush write as a write of no sectors, beside
    // the flush. The writes with data are the others.
    let fdatasyncs = num(&r, "sync.requests");
    let (reads, writes, flushes) = (d[0], d[4] - fdatasyncs, d[15]);
    let report = format!(
        "captured {c}\ndevice, less dbio's checks (reads {}, sectors {}): reads {reads} writes with data {writes} (all {}) sectors r/w {} {} flushes {flushes}\nspans {cspan} {rspan}\n{}",
        checks[0], checks[2], d[4], d[2], d[6], r["replay"]
    );
    eprintln!("{report}");
    let within = |got: f64, want: f64| (got - want).abs() <= want * 0.05;
    // Reads and writes a second, mean sizes and flushes within 5%.
    assert!(
        within(reads / rspan, cn("reads") / cspan),
        "reads/s\n{report}"
    );
    assert!(
        within(writes / rspan, cn("writes") / cspan),
        "writes/s\n{report}"
    );
    assert!(
        within(d[2] * 512.0 / reads, cn("read_bytes") / cn("reads")),
        "read size\n{report}"
    );
    assert!(
        within(d[6] * 512.0 / writes, cn("write_bytes") / cn("writes")),
        "write size\n{report}"
    );
    // Every captured flush replayed (an fdatasync each); the device's
    // count is lower where two sessions' fdatasyncs overlapped and the
    // block layer merged them into one flush — the later the replay's
    // issues, the more overlap (245 of 292 at load average 10, 109 of 203
    // at 38; XFS's own flushes in the capture did not overlap). So the
    // test holds the replayed count exact and the device's to at most it.
    assert_eq!(fdatasyncs, cn("flushes"), "{report}");
    assert!(
        flushes <= cn("flushes") * 1.05 && flushes > 0.0,
        "flushes\n{report}"
    );
    // Issue times: p99 < 100 µs is the aim. A request due while its
    // session's ring was full waited for the target (B, a loop device over
    // the virtio disk every helper writes to, fell behind: its reads' p99
    // went from 7 ms to 20-140 ms in the same minute) and is counted apart;
    // the others' issue error is the replay's own timing. Session 16 at
    // load 35-111 without --rt: p50 of those 2.7-49 us, p99 1.4-51 ms
    // (with --rt 67-84 us at load 46-77); all requests' p99 1.6-246 ms.
    // So the test asserts what holds on a loaded host — the replay kept
    // to open loop (p50 under 250 ms) and the requests that had room were
    // issued on time at the median (under 1 ms) — and prints the p99s.
    let (p50, p99) = (
        num(&r, "replay.issue_error.p50_us"),
        num(&r, "replay.issue_error.p99_us"),
    );
    let (waited, own_p50, own_p99) = (
        num(&r, "replay.waited_for_room"),
        num(&r, "replay.issue_error_had_room.p50_us"),
        num(&r, "replay.issue_error_had_room.p99_us"),
    );
    eprintln!(
        "issue error p50 {p50} us, p99 {p99} us; {waited} waited for room, the others' p50 {own_p50} us, p99 {own_p99} us; inter-arrival p50 captured {} us, replayed {} us (per captured thread); {threads} threads in {} sessions",
        num(&r, "replay.captured.inter_arrival.p50_us"),
        num(&r, "replay.replayed.inter_arrival.p50_us"),
        num(&r, "config.sessions"),
    );
    assert!(
        own_p50 < 100.0,
        "issue error p50 with room {own_p50} us\n{report}"
    );
    assert!(p50 < 250_000.0, "issue error p50 {p50} us\n{report}");
}

fn a_run_captured_with_capture_is_kept_converted_and_replayed() {
    let _tracefs = tracefs_to_myself();
    let _store = temp_store();
    let a = LoopDev::new(64 * MIB, true);
    let b = LoopDev::new(64 * MIB, true);
    let out = Run::raw(&a.path)
        .args(&[
            "--pattern",
            "randwrite",
            "--ops",
            "2000",
            "--bs",
            "4k",
            "--capture",
        ])
        .args(&["--json"])
        .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = run["run_id"].as_i64().unwrap().to_string();
    assert!(err.contains("lost events: 0"), "{err}");
    assert!(err.contains(&format!("kept with run {id}")), "{err}");
    // Out of the store as a fio iolog: the run's 2000 writes of 4 KiB.
    let text = stored_as_iolog(&id);
    let writes: Vec<&str> = text.lines().filter(|l| l.contains(" write ")).collect();
    assert_eq!(writes.len(), 2000);
    assert!(
        writes.iter().all(|l| l.ends_with(" 4096")),
        "{:?}",
        &writes[..3]
    );
    // Replayed from the store on another device: the same writes.
    let r = Run::raw(&b.path)
        .args(&["--workload", "replay", "--trace", &id])
        .json();
    assert_eq!(num(&r, "write.requests"), 2000.0);
    assert_eq!(r["config"]["replay"]["source"], format!("run {id}"));
    // No such run: one line, exit 2.
    let o = Run::raw(&b.path)
        .args(&["--workload", "replay", "--trace", "999"])
        .output();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("no run 999"), "{e}");
}

fn a_capture_holds_the_run_not_the_layout_before_it() {
    let _tracefs = tracefs_to_myself();
    let _store = temp_store();
    let mut a = LoopDev::new(256 * MIB, true);
    a.mkfs("xfs");
    let mnt = a.mount();
    // A fresh directory: dbio lays out 32 MiB in 1 MiB writes, then reads.
    let out = Run::raw(&mnt.join("t"))
        .args(&["--pattern", "randread", "--size", "32M", "--bs", "4k"])
        .args(&["--ops", "3000", "--capture", "--json"])
        .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let layout = &run["target"]["layout"];
    assert_eq!(layout["reused"], false, "a fresh layout: {layout}");
    assert_eq!(layout["bytes"], 32 << 20, "{layout}");
    let id = run["run_id"].as_i64().unwrap().to_string();
    let text = stored_as_iolog(&id);
    let size = |l: &str| l.rsplit(' ').next().and_then(|n| n.parse::<u64>().ok());
    let reads = text.lines().filter(|l| l.contains(" read ")).count();
    // The layout wrote 32 MiB (in requests the device split); a read run
    // writes at most some filesystem metadata.
    let written: u64 = text
        .lines()
        .filter(|l| l.contains(" write "))
        .filter_map(size)
        .sum();
    assert!(reads >= 3000, "{reads} reads captured");
    assert!(
        written < 1 << 20,
        "{written} bytes of writes captured: the layout's"
    );
}

/// Run `id`'s stored trace, written out by `dbio trace convert` as a fio iolog.
fn stored_as_iolog(id: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("run.iolog");
    let conv = dbio()
        .args(["trace", "convert", "--to", "iolog", "--output"])
        .arg(&log)
        .arg(id)
        .output()
        .unwrap();
    assert!(
        conv.status.success(),
        "{}",
        String::from_utf8_lossy(&conv.stderr)
    );
    std::fs::read_to_string(&log).unwrap()
}

fn capture_on_a_target_without_a_device_is_refused_before_anything() {
    let _store = temp_store();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("t");
    let out = Run::raw(&target)
        .args(&["--size", "4M", "--time", "1", "--capture"])
        .output();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--capture") && err.contains("no block device"),
        "{err}"
    );
    assert!(!target.exists(), "nothing made");
}

/// A thread's scheduling as /proc shows it while it runs.
#[derive(Debug)]
struct Sched {
    name: String,
    /// Field 41 of /proc/PID/task/TID/stat: 0 SCHED_OTHER, 1 SCHED_FIFO.
    policy: u32,
    /// Field 19.
    nice: i32,
    /// `se.slice` of /proc/PID/task/TID/sched, ns (None where not shown).
    slice: Option<u64>,
}

/// The scheduling of each of `pid`'s threads whose name starts with one
/// of `names`.
fn policies(pid: u32, names: &[&str]) -> Vec<Sched> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
            continue;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = &stat[open + 1..close];
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        if names.iter().any(|n| name.starts_with(n)) {
            let slice = std::fs::read_to_string(t.path().join("sched"))
                .ok()
                .and_then(|s| {
                    let l = s.lines().find(|l| l.starts_with("se.slice"))?;
                    l.rsplit(' ').next()?.parse().ok()
                });
            out.push(Sched {
                name: name.to_string(),
                policy: fields[38].parse().unwrap(),
                nice: fields[16].parse().unwrap(),
                slice,
            });
        }
    }
    out
}

/// `--rt`: while a timed replay runs, its sessions and its feed are
/// SCHED_FIFO threads (policy 1); without it, ordinary ones (0) at nice
/// −10, the sessions asking for a 100 µs time slice. Either way the io_uring workers
/// the kernel starts for a session (tmpfs reads go through them) are
/// ordinary threads at nice 0: they used to inherit the session's
/// priority and compete with it for the CPU. The trace is 3000 reads
/// 1 ms apart, replayed with io_uring on tmpfs.
fn rt_runs_the_sessions_and_the_feed_under_sched_fifo() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("timed.iolog");
    let mut text = String::from("fio version 3 iolog\n0 data add\n0 data open\n");
    for i in 1..=3000u64 {
        text += &format!("{} data read {} 4096\n", i * 1000, (i * 7919 % 4096) * 4096);
    }
    text += "3000000 data close\n";
    std::fs::write(&log, text).unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("t");
    for rt in [false, true] {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("dbio"));
        cmd.env("DBIO_DB", crate::common::store::store_path())
            .args([
                "run",
                "--workload",
                "replay",
                "--engine",
                "io_uring",
                "--json",
                "--target",
            ])
            .arg(&target)
            .arg("--trace")
            .arg(&log);
        if rt {
            cmd.arg("--rt");
        }
        let child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let names = ["dbio-session", "dbio-replay-fee", "iou-wrk"];
        let (mut ours, mut workers) = (Vec::new(), Vec::new());
        let t0 = std::time::Instant::now();
        while (ours.len() < 2 || workers.is_empty()) && t0.elapsed() < Duration::from_secs(20) {
            let seen = policies(child.id(), &names);
            (workers, ours) = seen
                .into_iter()
                .partition(|s| s.name.starts_with("iou-wrk"));
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        assert_eq!(ours.len(), 2, "the session and the feed, running: {ours:?}");
        let want = u32::from(rt);
        assert!(ours.iter().all(|s| s.policy == want), "--rt {rt}: {ours:?}");
        if !rt {
            assert!(ours.iter().all(|s| s.nice == -10), "{ours:?}");
            // The slice is shown where the kernel has EEVDF (6.6+) and
            // kept where it takes one (6.12+).
            // The feed keeps the default slice: a session preempts it too.
            let session_slice = |s: &Sched| match s.name.starts_with("dbio-session") {
                true => s.slice.is_none_or(|x| x == 100_000),
                false => s.slice.is_none_or(|x| x != 100_000),
            };
            assert!(ours.iter().all(session_slice), "{ours:?}");
        }
        assert!(!workers.is_empty(), "io_uring workers, running: {ours:?}");
        assert!(
            workers.iter().all(|w| w.policy == 0 && w.nice == 0),
            "--rt {rt}: the workers run below the sessions: {workers:?}"
        );
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["config"]["replay"]["rt"].as_bool().unwrap_or(false), rt);
        eprintln!(
            "--rt {rt}: issue error p50 {} us, p99 {} us, max {} us",
            num(&r, "replay.issue_error.p50_us"),
            num(&r, "replay.issue_error.p99_us"),
            num(&r, "replay.issue_error.max_us"),
        );
    }
}

/// A fio iolog of `n` 4 KiB reads of one file, the k-th at `at(k)` µs.
fn reads_iolog(path: &Path, n: u64, at: impl Fn(u64) -> u64) {
    let mut text = String::from("fio version 3 iolog\n0 data add\n0 data open\n");
    for k in 0..n {
        text += &format!("{} data read {} 4096\n", at(k), (k * 7919 % 1024) * 4096);
    }
    std::fs::write(path, text).unwrap();
}

/// The issue error is split by cause: a request due while its session's
/// ring is full waits for room (the target fell behind, or the trace asks
/// more at once than the ring holds) and is counted apart; the others'
/// issue error is the replay's own timing. 200 reads due at the same
/// instant through a ring of 4: all but the first few wait. 100 reads
/// 5 ms apart through a ring of 16: none does (a session would have to
/// wait 80 ms for a CPU to fill it).
fn requests_that_waited_for_room_in_a_full_ring_are_counted_apart() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = shm.path().join("t");
    let opts = ["--engine", "io_uring", "--iodepth", "4", "--size", "8M"];
    let burst = dir.path().join("burst.iolog");
    reads_iolog(&burst, 200, |_| 1000);
    let out = Run::raw(&target)
        .args(&["--workload", "replay", "--trace", burst.to_str().unwrap()])
        .args(&opts)
        .output();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("waited for room in a full ring"), "{text}");
    let r = replay(&target, &burst, &opts);
    assert_eq!(num(&r, "read.requests"), 200.0);
    let waited = num(&r, "replay.waited_for_room");
    assert!((196.0..=200.0).contains(&waited), "{waited} of 200 waited");
    assert_eq!(num(&r, "replay.issue_error.count"), 200.0);
    let spaced = dir.path().join("spaced.iolog");
    reads_iolog(&spaced, 100, |k| 1000 + 5000 * k);
    let r = replay(
        &target,
        &spaced,
        &[&opts[..3], &["16"], &opts[4..]].concat(),
    );
    assert_eq!(num(&r, "replay.waited_for_room"), 0.0, "{}", r["replay"]);
    assert_eq!(num(&r, "replay.issue_error_had_room.count"), 100.0);
    eprintln!(
        "5 ms apart: issue error p99 {} us, with room {} us",
        num(&r, "replay.issue_error.p99_us"),
        num(&r, "replay.issue_error_had_room.p99_us")
    );
}
