//! The replay in-process: offsets mapped onto a target (modulo, scale,
//! sector-aligned, kept inside a data file; a trace past the target
//! refused without a mapping), and a trace replayed whole by the null
//! engine through the harness — at its times, twice as fast, and at max
//! keeping each thread's requests in flight.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::faith::{Faithfulness, Part};
use super::feed::Mapper;
use super::{MapMode, Replay, ReplayConfig, Sessions, Speed, TraceFacts, facts, session_depth};
use crate::config::replay::ThreadFacts;
use crate::config::{EngineKind, IoMode, RunConfig, RunLength, WorkloadConfig};
use crate::harness::{self, Options};
use crate::storage::{Target, TargetKind};
use crate::trace::{Comm, Device, Entry, Flags, Op, Request, native};
use crate::workload::Shared;

const KIB: u64 = 1024;

/// A directory target of `files` files of 64 blocks of 4 KiB.
fn target(dir: &Path, files: u32) -> Target {
    let paths: Vec<PathBuf> = (0..files).map(|i| dir.join(format!("f{i}"))).collect();
    for p in &paths {
        std::fs::File::create(p)
            .unwrap()
            .set_len(256 * KIB)
            .unwrap();
    }
    Target {
        kind: TargetKind::Directory,
        path: dir.to_path_buf(),
        files: paths,
        block_size: 4096,
        blocks_per_file: 64,
        id: 0,
        logical_sector: None,
        layout: None,
        region: None,
        locks: Default::default(),
    }
}

fn replay_config(
    trace: PathBuf,
    facts: TraceFacts,
    speed: Speed,
    map: Option<MapMode>,
) -> ReplayConfig {
    ReplayConfig {
        trace: vec![trace],
        source: "test".into(),
        speed,
        map,
        rt: false,
        sessions: Sessions::PerThread {
            per_thread_in_flight: false,
        },
        facts,
        uring: None,
    }
}

/// A timed replay's ring holds twice what its captured thread had in
/// flight (the replayed request is in flight longer than the block layer
/// saw it); at `--speed max` and for a pool the run's depth stands.
#[test]
fn a_timed_replay_has_room_beyond_each_threads_captured_bursts() {
    let thread = |tid, max_in_flight| ThreadFacts {
        tid,
        requests: 100,
        max_in_flight,
    };
    let facts = TraceFacts {
        threads: vec![thread(7, 64), thread(8, 1), thread(9, 3000)],
        max_in_flight: 3000,
        ..TraceFacts::default()
    };
    let rc = |speed| replay_config(PathBuf::new(), facts.clone(), speed, None);
    let timed = rc(Speed::Factor(1.0));
    assert_eq!(session_depth(64, &timed, 0), 128, "the DB writer's bursts");
    assert_eq!(session_depth(64, &timed, 1), 64, "--iodepth stands");
    assert_eq!(session_depth(3000, &timed, 2), 4096, "at most a ring's");
    assert_eq!(session_depth(64, &rc(Speed::Factor(2.0)), 0), 128);
    assert_eq!(
        session_depth(64, &rc(Speed::Max), 0),
        64,
        "max: as captured"
    );
    let mut pool = timed.clone();
    pool.sessions = Sessions::Pool(2);
    assert_eq!(session_depth(64, &pool, 0), 64);
    // Shared by two sessions: the biggest thread (by requests) alone, the
    // other two together, each ring what their own would have been, summed.
    let mut shared = timed.clone();
    shared.facts.threads[2].requests = 500;
    shared.facts.threads[2].max_in_flight = 100;
    shared.sessions = Sessions::Shared(2);
    assert_eq!(session_depth(64, &shared, 0), 200, "thread 9 alone");
    assert_eq!(session_depth(64, &shared, 1), 128 + 64, "threads 7 and 8");
    assert_eq!(super::shared::lanes(&shared, 1), 2);
}

/// Shared sessions: the threads spread by their requests, each thread
/// in one session, its lane its place there.
#[test]
fn shared_sessions_spread_the_threads_by_their_requests() {
    use super::shared::{Place, places};
    let thread = |tid, requests| ThreadFacts {
        tid,
        requests,
        max_in_flight: 1,
    };
    let threads = [
        thread(1, 10),
        thread(2, 1000),
        thread(3, 600),
        thread(4, 500),
        thread(5, 10),
    ];
    let p = |session, lane| Place { session, lane };
    assert_eq!(
        places(&threads, 2),
        [p(0, 1), p(0, 0), p(1, 0), p(1, 1), p(0, 2)],
        "1000 + 10 + 10 | 600 + 500: each to the lighter session"
    );
    assert!(places(&threads, 1).iter().all(|x| x.session == 0));
    assert_eq!(places(&threads, 9).iter().filter(|x| x.lane > 0).count(), 0);
    assert!(places(&[], 2).is_empty());
}

/// One session issuing both captured threads' requests at their times:
/// everything replayed, and the inter-arrival still each thread's (2 ms),
/// not the session's (1 ms).
#[test]
fn a_shared_session_keeps_each_threads_inter_arrival() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.dbtrace");
    write_trace(&trace, 50);
    let (f, parts) = replay_with(&trace, Speed::Factor(1.0), Sessions::Shared(1));
    assert_eq!(
        parts.iter().filter(|p| p.replayed.requests[0] > 0).count(),
        1
    );
    assert_eq!(
        f.replayed.requests + f.skipped_discards,
        f.captured.requests
    );
    let (c, r) = (
        f.captured.inter_arrival.as_ref().unwrap(),
        f.replayed.inter_arrival.as_ref().unwrap(),
    );
    assert!((c.p50_us - 2000.0).abs() < 50.0, "{c:?}");
    // The replayed gaps are the due times' (2 ms) give or take a late
    // issue: a busy host's, not the session's 1 ms between threads.
    assert!((r.p50_us - 2000.0).abs() < 700.0, "{r:?}");
}

#[test]
fn offsets_land_modulo_scaled_aligned_and_inside_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let t = target(dir.path(), 2); // 512 KiB in two files
    let facts = TraceFacts {
        extent_bytes: 1024 * KIB,
        max_len_bytes: 8192,
        ..TraceFacts::default()
    };
    let rc = |map| replay_config(PathBuf::new(), facts.clone(), Speed::Factor(1.0), map);
    let e = Mapper::new(&rc(None), &t).unwrap_err();
    assert!(e.contains("--map") && e.contains("1048576"), "{e}");
    let m = Mapper::new(&rc(Some(MapMode::Modulo)), &t).unwrap();
    assert_eq!(m.map(600 * KIB, 4096), (0, 88 * KIB));
    assert_eq!(m.map(800 * KIB, 4096), (1, 32 * KIB));
    assert_eq!(m.map(1000, 512), (0, 512), "aligned down to the sector");
    assert_eq!(m.map(254 * KIB, 8192), (0, 248 * KIB), "kept inside file 0");
    let s = Mapper::new(&rc(Some(MapMode::Scale)), &t).unwrap();
    assert_eq!(s.map(600 * KIB, 4096), (1, 44 * KIB));
    assert_eq!(s.map(1020 * KIB, 4096), (1, 252 * KIB));
    let long = TraceFacts {
        max_len_bytes: 512 * 1024,
        ..facts.clone()
    };
    let r = replay_config(PathBuf::new(), long, Speed::Max, Some(MapMode::Modulo));
    assert!(
        Mapper::new(&r, &t)
            .unwrap_err()
            .contains("longer than a data file")
    );
}

/// A trace of 2 threads: thread 1 a read every 2 ms, thread 2 a write
/// every 2 ms (1 ms after), each in flight 3 ms (so 2 at once), then a
/// flush and a discard on thread 2.
fn write_trace(path: &Path, per_thread: u64) {
    let mut w = native::Writer::create(path).unwrap();
    w.write(&Entry::Device(Device {
        index: 0,
        name: "/dev/test".into(),
        number: None,
    }))
    .unwrap();
    let req = |issue_ns: u64, tid: u32, op: Op, offset: u64| Request {
        issue_ns,
        complete_ns: Some(issue_ns + 3_000_000),
        device: 0,
        offset,
        len: if matches!(op, Op::Flush) { 0 } else { 4096 },
        op,
        flags: Flags::default(),
        pid: Some(tid),
        tid: Some(tid),
        comm: Comm::new(b"t"),
    };
    for i in 0..per_thread {
        let at = i * 2_000_000;
        w.write(&Entry::Request(req(at, 1, Op::Read, i * 4096)))
            .unwrap();
        w.write(&Entry::Request(req(at + 1_000_000, 2, Op::Write, i * 8192)))
            .unwrap();
    }
    let end = per_thread * 2_000_000;
    w.write(&Entry::Request(req(end, 2, Op::Flush, 0))).unwrap();
    w.write(&Entry::Request(req(end, 2, Op::Discard, 0)))
        .unwrap();
    w.finish().unwrap();
}

fn config(target: &Target, rc: ReplayConfig) -> RunConfig {
    RunConfig {
        target: target.path.clone(),
        files: 1,
        size_bytes: Some(target.size_bytes()),
        block_size: 4096,
        sessions: rc.session_count(),
        iodepth: 4,
        engine: EngineKind::Null,
        io_mode: IoMode::Buffered,
        length: RunLength::Ops {
            ops: rc.facts.requests(),
        },
        hotspot: None,
        rate_iops: None,
        arrival: None,
        seed: 7,
        load_parallel: 1,
        outlier_ms: 500.0,
        interval_s: 1.0,
        destroy_device: None,
        allow_root_fs: false,
        content: Default::default(),
        steady: None,
        workload: WorkloadConfig::Replay(rc),
    }
}

fn replay(trace: &Path, speed: Speed) -> (Faithfulness, Vec<Part>) {
    let per_thread = Sessions::PerThread {
        per_thread_in_flight: false,
    };
    replay_with(trace, speed, per_thread)
}

fn replay_with(trace: &Path, speed: Speed, sessions: Sessions) -> (Faithfulness, Vec<Part>) {
    let dir = tempfile::tempdir().unwrap();
    let t = target(dir.path(), 1);
    let facts = facts::scan(&[trace.to_path_buf()]).unwrap();
    let mut rc = replay_config(trace.to_path_buf(), facts, speed, Some(MapMode::Modulo));
    rc.sessions = sessions;
    let cfg = config(&t, rc);
    let WorkloadConfig::Replay(rc) = &cfg.workload else {
        unreachable!("a replay's config")
    };
    let shared = Shared::new(0.0);
    let work = Replay::new(&cfg, rc, &t, &shared).unwrap();
    let interrupt = AtomicBool::new(false);
    let opts = Options {
        time_s: None,
        interval_s: 1.0,
        interrupt: &interrupt,
        status: None,
        observer: None,
        steady: None,
        window: None,
    };
    let out = harness::run(&work, &shared, opts);
    assert_eq!(out.result.error, None);
    (Faithfulness::of(rc, &out.parts), out.parts)
}

#[test]
fn a_trace_replays_whole_at_its_times_faster_and_at_max() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.dbtrace");
    write_trace(&trace, 50);
    let facts = facts::scan(std::slice::from_ref(&trace)).unwrap();
    assert_eq!(facts.requests(), 102);
    assert_eq!(facts.threads.len(), 2);
    // Two at once per thread; three at the end (a write, the flush and
    // the discard, issued together).
    assert_eq!(facts.max_in_flight, 3);
    assert_eq!(
        facts
            .threads
            .iter()
            .map(|t| t.max_in_flight)
            .collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(facts.extent_bytes, 49 * 8192 + 4096);
    let mut spans = Vec::new();
    for speed in [Speed::Factor(1.0), Speed::Factor(2.0), Speed::Max] {
        let (f, parts) = replay(&trace, speed);
        let by = |side: &super::faith::SideSummary, op: &str| {
            side.ops
                .iter()
                .find(|o| o.op == op)
                .map_or(0, |o| o.requests)
        };
        for op in ["read", "write", "flush"] {
            assert_eq!(by(&f.replayed, op), by(&f.captured, op), "{speed} {op}");
        }
        assert_eq!((by(&f.replayed, "read"), by(&f.replayed, "flush")), (50, 1));
        assert_eq!(f.skipped_discards, 1, "the discard counted, not replayed");
        // Sessions 0 and 1 took thread 1's and thread 2's requests.
        assert_eq!(parts[0].replayed.requests[0], 50);
        assert_eq!(parts[1].replayed.requests[1], 50);
        assert_eq!(f.captured.span_s, 0.1);
        match speed {
            Speed::Max => assert!(f.issue_error.is_none()),
            Speed::Factor(_) => {
                // Tens of µs on a quiet host; a session kept off the CPU
                // for 25 ms on a busy one made the median 1.2 ms once.
                let e = f.issue_error.as_ref().unwrap();
                assert!(e.p50_us < 5000.0, "{speed}: {e:?}");
            }
        }
        spans.push(f.replayed.span_s);
    }
    // A woken session may wait for a CPU on a busy host (10 ms seen on 2
    // shared cores): one late last request stretches a span by that much.
    let near = |got: f64, want: f64| (got - want).abs() <= want * 0.1 + 0.015;
    assert!(near(spans[0], 0.1) && near(spans[1], 0.05), "{spans:?}");
    assert!(spans[2] < 0.02, "{spans:?}");
}

/// The calling thread's nice value and its time slice (ns, from
/// /proc/thread-self/sched; None where the kernel does not show it).
fn nice_and_slice() -> (i32, Option<u64>) {
    // SAFETY: plain system calls on this thread's own id.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
    let slice = std::fs::read_to_string("/proc/thread-self/sched")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("se.slice"))
                .and_then(|l| l.rsplit(' ').next()?.parse().ok())
        });
    (nice, slice)
}

/// A replay thread runs at nice −10 with a 100 µs slice where the process
/// may (root), and a thread it starts — as the kernel starts io_uring's
/// workers from a session — gets neither: nice 0, the default slice.
#[test]
fn a_replay_threads_priority_is_not_passed_on_to_threads_it_starts() {
    let root = unsafe { libc::geteuid() } == 0;
    let (own, started) = std::thread::spawn(|| {
        super::priority::fine_timers(false, super::priority::Role::Session).unwrap();
        let own = nice_and_slice();
        (own, std::thread::spawn(nice_and_slice).join().unwrap())
    })
    .join()
    .unwrap();
    assert_eq!(started.0, 0, "a started thread's nice (own {own:?})");
    if !root {
        eprintln!("not root: the replay thread's own priority is left as it was");
        return;
    }
    assert_eq!(own.0, super::priority::REPLAY_NICE);
    if let (Some(own_slice), Some(started_slice)) = (own.1, started.1) {
        assert_eq!(own_slice, super::priority::SLICE_NS);
        assert_ne!(started_slice, super::priority::SLICE_NS, "{started:?}");
    }
}
