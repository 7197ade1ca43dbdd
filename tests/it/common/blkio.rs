//! A really slow device for the tests: a blkio cgroup (v1) that throttles a
//! block device's I/O per second, and commands started inside it. The
//! cgroup is removed when dropped (its processes moved out first), also when
//! the test fails.

use std::fs;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the blkio controller is mounted.
pub const ROOT: &str = "/sys/fs/cgroup/blkio";

/// A blkio cgroup of the test's own.
pub struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    /// A cgroup that lets `device` serve at most `read_iops` reads and
    /// `write_iops` writes per second to the processes in it.
    pub fn new(device: &Path, read_iops: u32, write_iops: u32) -> Throttle {
        let dir = Path::new(ROOT).join(format!("dbio-test-{}-{}", std::process::id(), unique()));
        fs::create_dir(&dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        let t = Throttle { dir };
        t.limit(device, read_iops, write_iops);
        t
    }

    /// Changes the limits, also while processes in the cgroup do I/O (a
    /// device whose speed drifts mid-run).
    pub fn limit(&self, device: &Path, read_iops: u32, write_iops: u32) {
        let majmin = majmin(device);
        self.set(
            "blkio.throttle.read_iops_device",
            &format!("{majmin} {read_iops}"),
        );
        self.set(
            "blkio.throttle.write_iops_device",
            &format!("{majmin} {write_iops}"),
        );
    }

    fn set(&self, file: &str, value: &str) {
        let p = self.dir.join(file);
        fs::write(&p, value).unwrap_or_else(|e| panic!("write {value:?} to {}: {e}", p.display()));
    }

    /// `cmd`, made to enter the cgroup before it runs its program, at a
    /// high CPU priority (nice -15): the other tests and builds on a busy
    /// machine should not decide when it issues its requests.
    pub fn inside(&self, cmd: &mut Command) {
        self.enter(cmd, Cpu::Nice);
    }

    /// The same under SCHED_FIFO (priority 10), as `chrt -f 10`: on a
    /// loaded machine a niced thread still waits milliseconds for a CPU
    /// after each sleep, which decides the latencies two tools measure
    /// (tests/it/open_loop.rs); a real-time one does not. For short runs
    /// whose threads mostly sleep: the kernel keeps 5% of each second for
    /// the others (`sched_rt_runtime_us`).
    pub fn inside_fifo(&self, cmd: &mut Command) {
        self.enter(cmd, Cpu::Fifo);
    }

    fn enter(&self, cmd: &mut Command, cpu: Cpu) {
        let procs = fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))
            .expect("open the cgroup's cgroup.procs");
        let fd = procs.as_raw_fd();
        // The file stays open in the parent until the child has started
        // (kept alive by the closure, which the Command owns).
        let keep = std::sync::Arc::new(procs);
        // SAFETY: the child only calls setpriority(2), sched_setscheduler(2)
        // and write(2) on an open descriptor (async-signal-safe, no
        // allocation) between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let _ = &keep;
                let set = match cpu {
                    Cpu::Nice => libc::setpriority(libc::PRIO_PROCESS, 0, -15),
                    Cpu::Fifo => {
                        let p = libc::sched_param { sched_priority: 10 };
                        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p)
                    }
                };
                if set != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0": the writing process itself.
                let r = libc::write(fd, b"0".as_ptr().cast(), 1);
                if r == 1 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
}

/// The CPU priority a command inside the cgroup runs at.
#[derive(Clone, Copy)]
enum Cpu {
    /// nice -15.
    Nice,
    /// SCHED_FIFO, priority 10.
    Fifo,
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let root = Path::new(ROOT).join("cgroup.procs");
        let procs = fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = fs::write(&root, pid);
        }
        if let Err(e) = fs::remove_dir(&self.dir) {
            eprintln!("blkio: cannot remove {}: {e}", self.dir.display());
        }
    }
}

fn majmin(device: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let rdev = fs::metadata(device)
        .unwrap_or_else(|e| panic!("{}: {e}", device.display()))
        .rdev();
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
