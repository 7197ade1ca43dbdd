//! Faults of a run under the real Open MPI that do not end a rank: a rank
//! that hangs (stopped with SIGSTOP in its window, as a stuck device would
//! hold it) is named in one line after `--mpi-grace`, and rank 0 stores
//! what the other ranks measured as a failed run and ends the job; Ctrl-C
//! on mpirun (or SIGINT to rank 0 alone) during `plan run --mpi` stores the
//! interrupted run, stops the plan on every rank, and the plan resumes.
//! Before the start: a rank stopped while it lays out its files (rank 1,
//! or rank 0) is named after `--mpi-grace` of silence and the job ends with
//! no process left; a rank whose layout fails (a read-only target) fails
//! the job naming it at once (the other ranks stop laying out); a layout
//! longer than the grace is not a hang.
//! Compiled only with `--features mpi`.

use std::path::Path;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use crate::common::store::{store_path, temp_store};
use crate::mpi::{alone, job, launch, nothing_stored, wait_for_text};

crate::tests! {
    a_hung_rank_is_named_after_the_grace_and_the_others_results_are_stored [Tool("mpirun")],
    ctrl_c_stops_a_plan_under_mpi_storing_the_interrupted_run_and_it_resumes [Tool("mpirun")],
    sigint_to_rank_0_alone_stops_the_plan_on_every_rank [Tool("mpirun")],
    a_rank_stopped_while_laying_out_is_named_and_the_job_ends [Tool("mpirun")],
    rank_0_stopped_while_laying_out_is_named_by_rank_1 [Tool("mpirun")],
    a_rank_whose_layout_fails_fails_the_job_naming_it [Root, Tool("mpirun")],
    a_layout_longer_than_the_grace_is_not_a_hang [Tool("mpirun")],
}

/// The pid of rank `rank` among `mpirun`'s children (it forks the ranks
/// on this host itself), from their `OMPI_COMM_WORLD_RANK`.
fn rank_pid(mpirun: &Child, rank: u32) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        // `pid (comm) state ppid ...`: the fields after the last ')'.
        let ppid: u32 = stat
            .rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        (ppid == mpirun.id() && env.split(|&b| b == 0).any(|v| v == want.as_bytes())).then_some(pid)
    })
}

/// Waits for `child` to end, at most `secs` seconds (else kills it and fails with `why`).
fn wait_exit(child: &mut Child, secs: u64, why: &str) -> ExitStatus {
    let at = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if at.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            panic!("{why}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Continues and kills a process the test stopped, if still there.
struct Stopped(i32);

impl Drop for Stopped {
    fn drop(&mut self) {
        if Path::new(&format!("/proc/{}", self.0)).exists() {
            // SAFETY: signals a rank of the test's own job.
            unsafe {
                libc::kill(self.0, libc::SIGKILL);
                libc::kill(self.0, libc::SIGCONT);
            }
        }
    }
}

fn a_hung_rank_is_named_after_the_grace_and_the_others_results_are_stored() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let args = [
        "--target",
        &target,
        "--size",
        "4m",
        "--sessions",
        "1",
        "--time",
        "3",
        "--mpi-grace",
        "2",
        "--json",
    ];
    let ((status, ended_in, stopped), left) = alone(|| {
        let mut child = job(2, &args)
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        // Rank 0 says where its target is once every rank passed its checks.
        wait_for_text(&err, "where", 60);
        let t0 = Instant::now();
        let pid = rank_pid(&child, 1).expect("rank 1 among mpirun's children");
        // Rank 1 is in its window once it has made 300 read calls since
        // its checks passed (laying out writes a few large blocks; its
        // samplers read a few files a second). Counted from there, not per
        // tenth of a second: at load 70 a rank read 0-600 times a tenth of
        // a second, never the 1000 the test once waited for.
        let reads = || -> u64 {
            let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
            io.lines()
                .find_map(|l| l.strip_prefix("syscr: "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0)
        };
        let before = reads();
        while reads() < before + 300 {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "rank 1's window did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: signals a rank of the test's own job.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let stopped = Stopped(pid);
        let at = Instant::now();
        let status = wait_exit(&mut child, 60, "the job did not end with rank 1 stopped");
        (status, at.elapsed(), stopped)
    });
    drop(stopped);
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(!status.success(), "{err}");
    // The window (3 s) and the grace (2 s), not mpirun's --timeout.
    assert!(ended_in < Duration::from_secs(20), "{ended_in:?}: {err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    let line: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(line.len(), 1, "{err}");
    assert!(
        line[0].contains("rank 1 (") && line[0].contains("did not report within 2 s"),
        "{err}"
    );
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1, "rank 0 stored what it had: {err}");
    assert_eq!(runs[0].status, "failed");
    let r = store.get(runs[0].id).unwrap().report;
    assert_eq!(r["mpi"]["missing_ranks"], serde_json::json!([1]));
    assert_eq!(r["mpi"]["ranks"], 1);
    let ranks = r["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 1);
    assert_eq!(ranks[0]["rank"], 0);
    assert!(r["total"]["requests"].as_u64().unwrap() > 0);
    assert_eq!(r["total"]["requests"], ranks[0]["total"]["requests"]);
    assert!(r["error"].as_str().unwrap().contains("rank 1 ("));
    // The per-rank table has a row for the rank that never reported.
    let shown = crate::common::run::dbio()
        .args(["runs", "show", &runs[0].id.to_string()])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&shown.stdout);
    let row = table.lines().find(|l| l.contains("did not report (hung?)"));
    assert!(
        row.is_some_and(|l| l.trim_start().starts_with("1 ")),
        "{table}"
    );
}

/// mpirun's children: the ranks it forked on this host.
fn ranks_of(mpirun: &Child) -> Vec<i32> {
    (0..2).filter_map(|r| rank_pid(mpirun, r)).collect()
}

/// Whether `pid` is still running (a zombie waiting for init is not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|f| f.trim_start().to_string()))
        .is_some_and(|f| !f.starts_with('Z'))
}

/// The cell key of run `n` of 3 in the plan's progress lines.
fn cell_of(err: &str, n: u32) -> String {
    let tag = format!("run {n}/3 ");
    let line = err
        .lines()
        .find(|l| l.contains(&tag))
        .expect("progress line");
    let key = line.split(&tag).nth(1).unwrap();
    key.split_whitespace().next().unwrap().to_string()
}

/// Runs a 3-cell plan of 4-second runs on 2 ranks, sends SIGINT to the
/// process `whom` picks 1.5 s into run 2, and checks that the plan stopped
/// there on every rank with run 1 completed and run 2 stored interrupted.
/// Returns the plan file.
fn interrupt_plan(dir: &Path, whom: fn(&Child) -> i32) -> String {
    let plan = dir.join("three.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"three\"\nrepeats = 1\n\n[workload]\ntarget = \"{}/r{{rank}}\"\nsize = \"4M\"\ntime = 4\n\n[sweep]\nsessions = [1, 2, 3]\n",
            dir.display()
        ),
    )
    .unwrap();
    let plan = plan.display().to_string();
    let err = dir.join("err");
    let ((status, ranks), left) = alone(|| {
        let mut child = launch(2, &["plan", "run", &plan, "--mpi"])
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        wait_for_text(&err, "run 2/3", 90);
        std::thread::sleep(Duration::from_millis(1500));
        let ranks = ranks_of(&child);
        // SAFETY: signals our own child or one of its ranks.
        unsafe { libc::kill(whom(&child), libc::SIGINT) };
        let status = wait_exit(&mut child, 30, "the plan did not stop after Ctrl-C");
        (status, ranks)
    });
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(!status.success(), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    assert_eq!(ranks.len(), 2, "both ranks were running: {err}");
    std::thread::sleep(Duration::from_millis(500));
    for pid in ranks {
        assert!(!running(pid), "rank pid {pid} left running");
    }
    assert!(!err.contains("run 3/3"), "the plan went on: {err}");
    assert!(err.contains("2 left (interrupted"), "{err}");
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let rows = store.list(&Default::default()).unwrap();
    let status_of = |key: &str| -> Vec<&str> {
        rows.iter()
            .filter(|r| r.cell_key.as_deref() == Some(key))
            .map(|r| r.status.as_str())
            .collect()
    };
    assert_eq!(status_of(&cell_of(&err, 1)), ["completed"], "{err}");
    assert_eq!(status_of(&cell_of(&err, 2)), ["interrupted"], "{err}");
    assert_eq!(rows.len(), 2);
    let stopped = rows.iter().find(|r| r.status == "interrupted").unwrap();
    let r = store.get(stopped.id).unwrap().report;
    assert_eq!(r["mpi"]["ranks"], 2);
    assert!(r["total"]["requests"].as_u64().unwrap() > 0);
    plan
}

fn ctrl_c_stops_a_plan_under_mpi_storing_the_interrupted_run_and_it_resumes() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = interrupt_plan(dir.path(), |mpirun| mpirun.id() as i32);
    // Resume: the interrupted cell and the one left are run, the first skipped.
    let (again, left) = alone(|| {
        launch(2, &["plan", "run", &plan, "--mpi"])
            .output()
            .unwrap()
    });
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    assert!(
        err.contains("2 runs completed now, 1 already done"),
        "{err}"
    );
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let done = store.list(&Default::default()).unwrap();
    assert_eq!(done.iter().filter(|r| r.status == "completed").count(), 3);
}

fn sigint_to_rank_0_alone_stops_the_plan_on_every_rank() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    interrupt_plan(dir.path(), |mpirun| {
        rank_pid(mpirun, 0).expect("rank 0 among mpirun's children")
    });
}

/// `dbio run --mpi` on 2 ranks, each laying out `size` of files in
/// `dir/r{rank}`, with `--mpi-grace 2`; rank `stop` is stopped with SIGSTOP
/// once its layout has begun. Returns how the job ended, how long after the
/// stop, its stderr, and whether a rank was left running.
fn stop_while_laying_out(dir: &Path, stop: u32) -> (ExitStatus, Duration, String, bool) {
    let target = format!("{}/r{{rank}}", dir.display());
    let err = dir.join("err");
    let args = [
        "--target",
        &target,
        "--size",
        "512m",
        "--ops",
        "1000",
        "--mpi-grace",
        "2",
    ];
    let ((status, ended_in, ranks, stopped), left) = alone(|| {
        let mut child = job(2, &args)
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        // The rank's first data file appears as its layout begins.
        let file = dir.join(format!("r{stop}/dbio-data-0000.dat"));
        let t0 = Instant::now();
        while !file.exists() {
            assert!(t0.elapsed() < Duration::from_secs(60), "no layout began");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        let ranks = ranks_of(&child);
        let pid = rank_pid(&child, stop).expect("the rank among mpirun's children");
        // SAFETY: signals a rank of the test's own job.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let stopped = Stopped(pid);
        let at = Instant::now();
        let status = wait_exit(&mut child, 60, "the job did not end with a rank stopped");
        (status, at.elapsed(), ranks, stopped)
    });
    assert!(left.is_empty(), "segments left: {left:?}");
    std::thread::sleep(Duration::from_millis(500));
    let left_running = ranks.iter().any(|&p| running(p));
    drop(stopped);
    let err = std::fs::read_to_string(&err).unwrap();
    (status, ended_in, err, left_running)
}

/// The job's one error line, checked to name `rank` on this host.
fn error_line(err: &str, rank: u32) -> &str {
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let named = format!("error: rank {rank} ({}): ", host.trim());
    assert!(lines[0].starts_with(&named), "{err}");
    lines[0]
}

/// The job's one error line names `rank`, its silence and what it was doing.
fn check_silence_line(err: &str, rank: u32) {
    let line = error_line(err, rank);
    assert!(line.contains("): no word for "), "{err}");
    assert!(line.contains("while laying out its files"), "{err}");
    assert!(line.contains("nothing stored"), "{err}");
}

/// Stops rank `rank` while it lays out its files: the job ends within the
/// grace and a few seconds, with one line naming it, nothing stored and no
/// rank left.
fn a_rank_stopped_while_laying_out_is_named(rank: u32) {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let (status, ended_in, err, left_running) = stop_while_laying_out(dir.path(), rank);
    assert_eq!(status.code(), Some(1), "{err}");
    // The grace (2 s) and a few seconds, not mpirun's --timeout.
    assert!(ended_in < Duration::from_secs(12), "{ended_in:?}: {err}");
    // Silence counts from its last heartbeat, up to 0.4 s before the stop.
    assert!(
        ended_in > Duration::from_millis(1500),
        "{ended_in:?}: {err}"
    );
    check_silence_line(&err, rank);
    assert!(!left_running, "a rank was left running: {err}");
    assert!(nothing_stored(), "{err}");
}

fn a_rank_stopped_while_laying_out_is_named_and_the_job_ends() {
    a_rank_stopped_while_laying_out_is_named(1);
}

fn rank_0_stopped_while_laying_out_is_named_by_rank_1() {
    a_rank_stopped_while_laying_out_is_named(0);
}

/// A read-only tmpfs mounted on a fresh directory, unmounted on drop.
struct ReadOnly(tempfile::TempDir);

impl ReadOnly {
    fn mount(at: &Path) -> ReadOnly {
        let dir = tempfile::Builder::new().tempdir_in(at).unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1g", "dbio-it-ro"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount a read-only tmpfs");
        ReadOnly(dir)
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        if !crate::common::loopdev::umount_retrying(self.0.path()) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.0.path())
                .status();
        }
    }
}

fn a_rank_whose_layout_fails_fails_the_job_naming_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    // Rank 1's target is read-only: it passes the checks (it exists, it
    // has room) and fails as it writes its layout.
    std::fs::create_dir(dir.path().join("r0")).unwrap();
    let ro = ReadOnly::mount(dir.path());
    std::os::unix::fs::symlink(ro.0.path(), dir.path().join("r1")).unwrap();
    let target = format!("{}/r{{rank}}/t", dir.path().display());
    std::fs::create_dir(dir.path().join("r0/t")).unwrap();
    // Rank 0's layout would take seconds; it stops it when rank 1 fails.
    let (out, left) = alone(|| {
        job(2, &["--target", &target, "--size", "512m", "--ops", "1000"])
            .output()
            .unwrap()
    });
    let err = crate::mpi::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        error_line(&err, 1).contains("Read-only file system"),
        "{err}"
    );
    assert!(left.is_empty(), "segments left: {left:?}");
    assert!(nothing_stored(), "{err}");
    // Rank 0 gave up its layout (and removed what it had written).
    let data = dir.path().join("r0/t/dbio-data-0000.dat");
    assert!(!data.exists(), "rank 0 finished its layout: {err}");
}

fn a_layout_longer_than_the_grace_is_not_a_hang() {
    // Short, so that even a fast machine's layout outlasts it several
    // times: a debug build lays out 768 MiB per rank in seconds.
    const GRACE: &str = "0.5";
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let err = dir.path().join("err");
    let args = [
        "--target",
        &target,
        "--size",
        "768m",
        "--ops",
        "1000",
        "--mpi-grace",
        GRACE,
    ];
    let ((status, laid_out_in), left) = alone(|| {
        let mut child = job(2, &args)
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&err).unwrap())
            .spawn()
            .unwrap();
        let file = dir.path().join("r0/dbio-data-0000.dat");
        let t0 = Instant::now();
        while !file.exists() && t0.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let began = Instant::now();
        let status = wait_exit(&mut child, 600, "the job did not end");
        (status, began.elapsed())
    });
    let err = std::fs::read_to_string(&err).unwrap();
    assert!(status.success(), "{err}");
    assert!(left.is_empty(), "segments left: {left:?}");
    // The layout (and the short run after it) outlasted the grace several
    // times over; else this test shows nothing.
    let grace = Duration::from_secs_f64(GRACE.parse().unwrap());
    assert!(
        laid_out_in > 3 * grace,
        "the layout took {laid_out_in:?}, not longer than 3 x --mpi-grace: give a bigger --size"
    );
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let runs = store.list(&Default::default()).unwrap();
    assert_eq!(runs.len(), 1, "{err}");
    assert_eq!(runs[0].status, "completed");
}
