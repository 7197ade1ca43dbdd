//! Faults of a run under the real Open MPI that do not end a rank: a rank
//! that hangs (stopped with SIGSTOP in its window, as a stuck device would
//! hold it) is named in one line after `--mpi-grace`, and rank 0 stores
//! what the other ranks measured as a failed run and ends the job.
//! Compiled only with `--features mpi`.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use crate::common::store::{store_path, temp_store};
use crate::mpi::{alone, job};

crate::tests! {
    a_hung_rank_is_named_after_the_grace_and_the_others_results_are_stored [Tool("mpirun")],
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
        let t0 = Instant::now();
        while !std::fs::read_to_string(&err).unwrap().contains("where") {
            assert!(
                t0.elapsed() < Duration::from_secs(60),
                "the job did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        let pid = rank_pid(&child, 1).expect("rank 1 among mpirun's children");
        // SAFETY: signals a rank of the test's own job.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        let stopped = Stopped(pid);
        let at = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if at.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                panic!("the job did not end with rank 1 stopped");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
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
}
