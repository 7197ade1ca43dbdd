//! `dbio capture` and `dbio trace`: a raw run on a direct-io loop device
//! captured through the kernel's block tracepoints (requests, sizes and
//! operations against the run's own count and /proc/diskstats, nothing
//! lost, the reader at nice 10, the tracing instance gone after Ctrl-C); fio iologs made by fio
//! in the test read, converted and replayed by fio; blktrace files built
//! byte by byte from `blktrace_api.h`; bad input in one line, exit 2.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::run::{Run, dbio};
use crate::common::server::ServerDir;
use crate::common::store::temp_store;
use crate::common::trace::{Capturing, disk_fields, diskstats, tracefs_to_myself};

crate::tests! {
    a_raw_run_is_captured_whole_and_nothing_is_left [Root, BlockTracing],
    a_partition_is_captured_through_its_disk [Root, BlockTracing],
    a_killed_capture_s_instance_is_removed_by_the_next [Root, BlockTracing],
    a_pg_run_s_capture_holds_its_sessions_not_the_server_s_start_load_or_stop [Root, BlockTracing, Postgres, Tool("mkfs.xfs")],
    bad_capture_input_is_one_line_and_exit_2,
    fio_iologs_made_by_fio_import_and_convert [Tool("fio")],
    blktrace_files_built_from_the_layout_import,
    damaged_traces_are_named_with_file_and_place,
}

const MIB: u64 = 1 << 20;
const INSTANCES: &str = "/sys/kernel/tracing/instances";

fn our_instances() -> Vec<String> {
    std::fs::read_dir(INSTANCES)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("dbio-capture-"))
                .collect()
        })
        .unwrap_or_default()
}

fn tracefs_mounted() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/sys/kernel/tracing"))
}

/// `dbio ARGS`, which must succeed.
fn ok(cmd: &mut assert_cmd::Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn show(paths: &[&Path]) -> Value {
    let out = ok(dbio().args(["trace", "show", "--json"]).args(paths));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["trace"].clone()
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

fn a_raw_run_is_captured_whole_and_nothing_is_left() {
    let _tracefs = tracefs_to_myself();
    let _store = temp_store();
    let dev = LoopDev::new(256 * MIB, true);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.dbtrace");
    let mounted_before = tracefs_mounted();
    let before = diskstats(&dev.name());
    let cap = Capturing::start(&[&dev.path], &trace);
    // The reader runs below the threads whose I/O it records (nice 10, or
    // lower where it was started lower): a woken session need not wait
    // behind it for a CPU. Field 19 of /proc/PID/stat, the 17th after the
    // command's closing parenthesis.
    let pid = cap.child.as_ref().unwrap().id();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_comm = stat.rsplit_once(')').unwrap().1;
    let nice: i32 = after_comm
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap();
    assert!(nice >= 10, "the capture's reader at nice {nice}: {stat}");
    let mut total = 0;
    for args in [
        &["--pattern", "randwrite", "--ops", "3000"][..],
        &[
            "--pattern",
            "randwrite",
            "--engine",
            "io_uring",
            "--iodepth",
            "16",
            "--ops",
            "4000",
        ],
    ] {
        let run = Run::raw(&dev.path).args(&["--bs", "8k"]).args(args).json();
        total += run["write"]["requests"].as_u64().unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = diskstats(&dev.name());
    let (json, err) = cap.stop();
    let c = &json["capture"];
    assert_eq!(n(c, "lost_events"), 0, "{err}");
    let s = &c["summary"];
    // Every write the runs made, each one 8 KiB request (nothing merges
    // O_DIRECT random writes of one block), and the reads dbio's own
    // checks of the device made, as the device counted them.
    assert_eq!(total, 7000);
    assert_eq!(
        n(s, "writes"),
        after.1 - before.1,
        "writes against /proc/diskstats"
    );
    assert_eq!(n(s, "writes"), total);
    assert_eq!(n(s, "write_bytes"), total * 8192);
    assert_eq!(
        n(s, "reads"),
        after.0 - before.0,
        "reads against /proc/diskstats"
    );
    assert_eq!(n(s, "incomplete"), 0);
    assert!(err.contains("lost events: 0"), "{err}");
    // The reader sleeps in poll until a buffer is a quarter full or 100 ms
    // pass, then reads whole pages: about 10 wakes a second at these
    // rates. (It used to read again at once while events came, a few at a
    // time, and sleep 20 ms only when the buffers were empty: 50 or more.)
    let (wakes, secs) = (n(c, "reader_wakes") as f64, c["seconds"].as_f64().unwrap());
    assert!(wakes <= 12.0 * secs + 3.0, "{wakes} wakes in {secs:.1} s");
    eprintln!(
        "reader: {wakes} wakes in {secs:.1} s, {:.3} s of CPU for {} requests",
        c["reader_cpu_s"].as_f64().unwrap(),
        n(s, "requests")
    );
    // The file holds what the capture counted.
    let t = show(&[&trace]);
    assert_eq!(n(&t, "writes"), total);
    assert_eq!(n(&t, "requests"), n(s, "requests"));
    // Ctrl-C removed the instance; tracefs as it was found.
    assert!(
        our_instances().is_empty(),
        "left behind: {:?}",
        our_instances()
    );
    assert_eq!(tracefs_mounted(), mounted_before);
}

/// A pg run with `--capture` on XFS over a direct-io loop device: dbio
/// makes the cluster, starts the server and loads 47 MiB of tables (then
/// checkpoints them), all written to the device; the capture holds only
/// what happened while the sessions ran — their commits' WAL writes and
/// flushes, none of the load's data — and no request later than the
/// sessions' end (the server's shutdown checkpoint comes after).
fn a_pg_run_s_capture_holds_its_sessions_not_the_server_s_start_load_or_stop() {
    let _tracefs = tracefs_to_myself();
    let _one = crate::pg::ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let mut dev = LoopDev::new(1 << 30, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let d = ServerDir::under(&mnt, "pg", "dbio-pg/run/.s.PGSQL.5432");
    let written = || disk_fields(&dev.name())[6] * 512;
    let before = written();
    let out = d.run(&[
        "--sessions",
        "2",
        "--scale",
        "3000",
        "--update-pct",
        "20",
        "--work-loop",
        "100",
        "--capture",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let device_wrote = written() - before;
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = run["run_id"].as_i64().unwrap().to_string();
    assert!(err.contains("lost events: 0"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.dbtrace");
    ok(dbio()
        .args(["trace", "convert", "--output"])
        .arg(&file)
        .arg(&id));
    let t = show(&[&file]);
    eprintln!(
        "device wrote {device_wrote} bytes in the run; captured: {t}\nrun: {}",
        run["pg"]
    );
    // The load wrote its tables (47 MiB) and checkpointed them: the
    // device saw them, the capture did not.
    assert!(
        device_wrote > 40 << 20,
        "the device wrote {device_wrote} bytes"
    );
    assert!(
        n(&t, "write_bytes") < 8 << 20,
        "{} bytes of writes captured (the load's?) of {device_wrote}",
        n(&t, "write_bytes")
    );
    // The sessions' 200 transactions, a fifth of them updates: their
    // commits wrote WAL and flushed it.
    assert!(n(&t, "writes") > 0 && n(&t, "flushes") > 0, "{t}");
    // Nothing after the sessions ended: the last request was issued within
    // the run's time (ns from the capture's start, just before the clock).
    let secs = run["ramp_s"].as_f64().unwrap_or(0.0) + run["measured_s"].as_f64().unwrap();
    let last_s = n(&t, "last_issue_ns") as f64 / 1e9;
    assert!(
        last_s < secs + 0.5,
        "a request {last_s:.2} s after the capture began; the run took {secs:.2} s"
    );
    drop(d);
    drop(dev);
}

fn a_partition_is_captured_through_its_disk() {
    let _tracefs = tracefs_to_myself();
    let _store = temp_store();
    let dev = LoopDev::new(128 * MIB, true);
    let parts = dev.partition(2);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("p2.dbtrace");
    let cap = Capturing::start(&[&parts[1]], &trace);
    // 10 writes to the first partition (not captured), 20 to the second.
    for (p, count) in [(&parts[0], 10), (&parts[1], 20)] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags_direct()
            .open(p)
            .unwrap();
        let buf = AlignedBlock::new();
        for i in 0..count {
            use std::os::unix::fs::FileExt;
            f.write_at(buf.bytes(), i * 4096).unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let (json, _) = cap.stop();
    let s = &json["capture"]["summary"];
    assert_eq!(n(s, "writes"), 20, "{s}");
    // Offsets from the partition's start, not the disk's.
    let iolog = dir.path().join("p2.iolog");
    ok(dbio()
        .args(["trace", "convert", "--to", "iolog", "--output"])
        .arg(&iolog)
        .arg(&trace));
    let text = std::fs::read_to_string(&iolog).unwrap();
    let mut offsets: Vec<u64> = text
        .lines()
        .filter(|l| l.contains(" write "))
        .map(|l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        .collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..20).map(|i| i * 4096).collect::<Vec<_>>());
}

/// Unmounts tracefs at the end of a test if it was not mounted before it.
struct TracefsAsFound(bool);

impl Drop for TracefsAsFound {
    fn drop(&mut self) {
        if !self.0 && tracefs_mounted() {
            let _ = Command::new("umount").arg("/sys/kernel/tracing").status();
        }
    }
}

fn a_killed_capture_s_instance_is_removed_by_the_next() {
    let _store = temp_store();
    let _serial = tracefs_to_myself();
    let _tracefs = TracefsAsFound(tracefs_mounted());
    let dev = LoopDev::new(32 * MIB, true);
    let dir = tempfile::tempdir().unwrap();
    let mut cap = Capturing::start(&[&dev.path], &dir.path().join("killed.dbtrace"));
    let pid = cap.child.as_ref().unwrap().id();
    let mine = format!("dbio-capture-{pid}");
    assert!(our_instances().contains(&mine), "{:?}", our_instances());
    let mut child = cap.child.take().unwrap();
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(
        our_instances().contains(&mine),
        "kill -9 leaves the instance"
    );
    let out = ok(dbio()
        .args(["capture", "--time", "0.2", "--output"])
        .arg(dir.path().join("next.dbtrace"))
        .arg("--device")
        .arg(&dev.path));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "removed the tracing instance /sys/kernel/tracing/instances/{mine}"
        )),
        "{err}"
    );
    assert!(our_instances().is_empty(), "{:?}", our_instances());
}

/// O_DIRECT for a test's own writes.
trait DirectOpen {
    fn custom_flags_direct(&mut self) -> &mut Self;
}

impl DirectOpen for std::fs::OpenOptions {
    fn custom_flags_direct(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_DIRECT)
    }
}

/// A 4 KiB buffer aligned for O_DIRECT.
struct AlignedBlock(Vec<u8>, usize);

impl AlignedBlock {
    fn new() -> AlignedBlock {
        let v = vec![0x5Au8; 8192];
        let off = v.as_ptr().align_offset(4096);
        AlignedBlock(v, off)
    }
    fn bytes(&self) -> &[u8] {
        &self.0[self.1..self.1 + 4096]
    }
}

fn one_line_exit_2(args: &[&str], want: &str) {
    let out = dbio().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(want), "{args:?}: {err} lacks {want}");
}

fn bad_capture_input_is_one_line_and_exit_2() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"not a device").unwrap();
    let f = file.to_str().unwrap();
    let out = dir.path().join("t.dbtrace");
    let o = out.to_str().unwrap();
    one_line_exit_2(
        &["capture", "--device", f, "--output", o],
        "not a block device",
    );
    one_line_exit_2(
        &["capture", "--device", "/nonexistent/dev", "--output", o],
        "--device /nonexistent/dev",
    );
    one_line_exit_2(&["capture", "--device", f, "--output", f], "exists");
    one_line_exit_2(
        &["capture", "--device", f, "--output", o, "--time", "0"],
        "--time 0",
    );
    let nowhere = dir.path().join("no/such/dir/t.dbtrace");
    one_line_exit_2(
        &[
            "capture",
            "--device",
            f,
            "--output",
            nowhere.to_str().unwrap(),
        ],
        "does not exist",
    );
    assert!(!out.exists(), "nothing written");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        b"not a device",
        "nothing destroyed"
    );
}

/// Runs fio writing its iolog of 300 requests to `log`.
fn fio_iolog(dir: &Path, log: &Path) {
    crate::common::trace::fio_iolog(dir, log, &["--number_ios=300"]);
}

fn fio_iologs_made_by_fio_import_and_convert() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("fio.iolog");
    fio_iolog(dir.path(), &log);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.starts_with("fio version 3 iolog\n"),
        "fio 3.31+ writes v3"
    );
    let count = |t: &str, act: &str| {
        t.lines()
            .filter(|l| l.contains(&format!(" {act} ")))
            .count() as u64
    };
    let (reads, writes) = (count(&text, "read"), count(&text, "write"));
    assert!(reads + writes >= 300, "{reads} + {writes}");
    let t = show(&[&log]);
    assert_eq!((n(&t, "reads"), n(&t, "writes")), (reads, writes));
    assert_eq!(n(&t, "read_bytes"), reads * 4096);
    // v3 → dbio's format → iolog v3: the same requests, times, offsets.
    let native = dir.path().join("fio.dbtrace");
    let back = dir.path().join("back.iolog");
    for (input, output, to) in [(&log, &native, "native"), (&native, &back, "iolog")] {
        ok(dbio()
            .args(["trace", "convert", "--to", to, "--output"])
            .arg(output)
            .arg(input));
    }
    let io_lines = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains(" read ") || l.contains(" write "))
            .map(String::from)
            .collect()
    };
    let again = std::fs::read_to_string(&back).unwrap();
    assert_eq!(io_lines(&again), io_lines(&text));
    // fio reads what dbio wrote: its replay issues the same requests.
    let out = Command::new("fio")
        .args(["--name=replay", "--output-format=json"])
        .arg(format!("--read_iolog={}", back.display()))
        .args(["--replay_no_stall=1", "--ioengine=psync"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fio replay: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["jobs"][0]["read"]["total_ios"].as_u64(), Some(reads));
    assert_eq!(j["jobs"][0]["write"]["total_ios"].as_u64(), Some(writes));
    // The same log as v2 (fio 3.33 writes only v3; v2 is v3 without times).
    let v2 = dir.path().join("fio.v2.iolog");
    let v2_text: String = std::iter::once("fio version 2 iolog\n".to_string())
        .chain(
            text.lines()
                .skip(1)
                .map(|l| format!("{}\n", l.split_once(' ').unwrap().1)),
        )
        .collect();
    std::fs::write(&v2, v2_text).unwrap();
    let t2 = show(&[&v2]);
    assert_eq!((n(&t2, "reads"), n(&t2, "writes")), (reads, writes));
}

/// One blk_io_trace record (little-endian, as x86 writes it).
#[allow(clippy::too_many_arguments)]
fn record(
    time: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    pid: u32,
    dev: u32,
    pdu: &[u8],
) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(0x6561_7407u32.to_le_bytes());
    b.extend(1u32.to_le_bytes()); // sequence
    b.extend(time.to_le_bytes());
    b.extend(sector.to_le_bytes());
    b.extend(bytes.to_le_bytes());
    b.extend(action.to_le_bytes());
    b.extend(pid.to_le_bytes());
    b.extend(dev.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // cpu
    b.extend(0u16.to_le_bytes()); // error
    b.extend((pdu.len() as u16).to_le_bytes());
    assert_eq!(b.len(), 48);
    b.extend(pdu);
    b
}

const TC_READ: u32 = 1;
const TC_WRITE: u32 = 2;
const TC_FLUSH: u32 = 4;
const TC_SYNC: u32 = 8;
const TC_QUEUE: u32 = 1 << 4;
const TC_ISSUE: u32 = 1 << 6;
const TC_COMPLETE: u32 = 1 << 7;
const TC_NOTIFY: u32 = 1 << 10;
const TC_FUA: u32 = 1 << 15;
const ISSUE: u32 = 7;
const COMPLETE: u32 = 8;
const QUEUE: u32 = 1;
const DEV: u32 = (8 << 20) | 16; // sdb

fn act(cat: u32, code: u32) -> u32 {
    (cat << 16) | code
}

/// Two per-CPU files: a write and a read issued on cpu 0 and completed on
/// cpu 1 out of order, a FUA write, a flush, queue events that are not
/// requests, and a process notification naming pid 42.
fn blktrace_files(dir: &Path) -> Vec<PathBuf> {
    let mut cpu0 = Vec::new();
    cpu0.extend(record(0, 0, 0, act(TC_NOTIFY, 0), 42, DEV, b"postgres\0"));
    cpu0.extend(record(
        1_000,
        100,
        8192,
        act(TC_WRITE | TC_SYNC | TC_QUEUE, QUEUE),
        42,
        DEV,
        &[],
    ));
    cpu0.extend(record(
        2_000,
        100,
        8192,
        act(TC_WRITE | TC_SYNC | TC_ISSUE, ISSUE),
        42,
        DEV,
        &[],
    ));
    cpu0.extend(record(
        3_000,
        500,
        4096,
        act(TC_READ | TC_ISSUE, ISSUE),
        42,
        DEV,
        &[],
    ));
    cpu0.extend(record(
        9_000,
        900,
        4096,
        act(TC_WRITE | TC_FUA | TC_ISSUE, ISSUE),
        42,
        DEV,
        &[],
    ));
    cpu0.extend(record(
        9_500,
        0,
        0,
        act(TC_FLUSH | TC_ISSUE, ISSUE),
        42,
        DEV,
        &[],
    ));
    let mut cpu1 = Vec::new();
    cpu1.extend(record(
        5_000,
        500,
        4096,
        act(TC_READ | TC_COMPLETE, COMPLETE),
        0,
        DEV,
        &[],
    ));
    cpu1.extend(record(
        7_000,
        100,
        8192,
        act(TC_WRITE | TC_SYNC | TC_COMPLETE, COMPLETE),
        0,
        DEV,
        &[],
    ));
    cpu1.extend(record(
        9_900,
        900,
        4096,
        act(TC_WRITE | TC_FUA | TC_COMPLETE, COMPLETE),
        0,
        DEV,
        &[],
    ));
    cpu1.extend(record(
        9_990,
        0,
        0,
        act(TC_FLUSH | TC_COMPLETE, COMPLETE),
        0,
        DEV,
        &[],
    ));
    let paths = vec![dir.join("sdb.blktrace.0"), dir.join("sdb.blktrace.1")];
    std::fs::write(&paths[0], cpu0).unwrap();
    std::fs::write(&paths[1], cpu1).unwrap();
    paths
}

fn blktrace_files_built_from_the_layout_import() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let files = blktrace_files(dir.path());
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let t = show(&paths);
    assert_eq!(n(&t, "requests"), 4);
    assert_eq!(
        (n(&t, "reads"), n(&t, "writes"), n(&t, "flushes")),
        (1, 2, 1)
    );
    assert_eq!(
        (n(&t, "fua"), n(&t, "sync"), n(&t, "incomplete")),
        (1, 1, 0)
    );
    assert_eq!(t["devices"], serde_json::json!(["8:16"]));
    // In issue order (each paired with its completion: none incomplete
    // above), as an iolog v3 (times in µs).
    let iolog = dir.path().join("out.iolog");
    ok(dbio()
        .args(["trace", "convert", "--to", "iolog", "--output"])
        .arg(&iolog)
        .args(&files));
    let text = std::fs::read_to_string(&iolog).unwrap();
    let io: Vec<&str> = text
        .lines()
        .filter(|l| !l.ends_with(" add") && !l.ends_with(" open") && !l.ends_with(" close"))
        .skip(1)
        .collect();
    assert_eq!(
        io,
        [
            "2 8:16 write 51200 8192",
            "3 8:16 read 256000 4096",
            "9 8:16 write 460800 4096",
            "9 8:16 sync 0 0"
        ]
    );
}

fn damaged_traces_are_named_with_file_and_place() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let files = blktrace_files(dir.path());
    let whole = std::fs::read(&files[0]).unwrap();
    // Cut inside the third record (after the 57-byte notify and one 48-byte record).
    let cut = dir.path().join("cut.blktrace.0");
    std::fs::write(&cut, &whole[..57 + 48 + 20]).unwrap();
    let c = cut.to_str().unwrap();
    one_line_exit_2(
        &["trace", "show", c],
        &format!("{c}: byte 105: truncated record (20 of 48 bytes)"),
    );
    let mut bad = whole.clone();
    bad[60] = 0; // the second record's magic (its last byte, little-endian)
    let garbled = dir.path().join("bad.blktrace.0");
    std::fs::write(&garbled, &bad).unwrap();
    let g = garbled.to_str().unwrap();
    one_line_exit_2(&["trace", "show", g], &format!("{g}: byte 57: bad magic"));
    let log = dir.path().join("bad.iolog");
    std::fs::write(&log, "fio version 3 iolog\n0 /x add\n5 /x read 4096\n").unwrap();
    let l = log.to_str().unwrap();
    one_line_exit_2(&["trace", "show", l], &format!("{l}: line 3: no length"));
    let out = dir.path().join("never.dbtrace");
    let o = out.to_str().unwrap();
    one_line_exit_2(&["trace", "convert", "--output", o, l], "line 3");
    assert!(!out.exists(), "a half-written output is removed");
    one_line_exit_2(&["trace", "show", o], "cannot open");
}
