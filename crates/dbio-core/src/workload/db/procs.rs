//! Finding a database server's processes and what a killed one left: a pid
//! file's live process (not a zombie: a killed server nobody reaps, as under
//! a container's init, is dead for dbio's purposes), processes working in a
//! directory, and the memory cgroup recorded beside a server's files.

use std::fs;
use std::path::Path;

use rustix::process::{Pid, Signal, kill_process, kill_process_group, test_kill_process};

use super::cgroup;

/// Sends `sig` to process `pid` (a server dbio started, or one its pid file
/// names). A process already gone, or a pid that is no process, is left be.
pub fn signal(pid: u32, sig: Signal) {
    if let Some(p) = to_pid(pid) {
        let _ = kill_process(p, sig);
    }
}

/// Sends SIGKILL to the process group `leader` leads (a command dbio
/// started in its own group: `user::ServerUser::command`).
pub(crate) fn kill_group(leader: u32) {
    if let Some(p) = to_pid(leader) {
        let _ = kill_process_group(p, Signal::KILL);
    }
}

/// `pid` as a process id: positive and within a pid's range (0 and the
/// negative numbers mean groups to kill(2)).
fn to_pid(pid: u32) -> Option<Pid> {
    Pid::from_raw(i32::try_from(pid).ok()?)
}

/// The pid on the first line of `pid_file`, if that process is alive, not a
/// zombie, and its command name is `comm`.
pub(crate) fn live_pid_in(pid_file: &Path, comm: &str) -> Option<u32> {
    let text = fs::read_to_string(pid_file).ok()?;
    let pid: u32 = text.lines().next()?.trim().parse().ok()?;
    live(pid, comm).then_some(pid)
}

/// Whether `pid` is a live (not zombie) process named `comm`.
pub fn live(pid: u32, comm: &str) -> bool {
    let alive = to_pid(pid).is_some_and(|p| test_kill_process(p).is_ok());
    let named = fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == comm);
    let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false);
    alive && named && !zombie
}

/// Whether a process works in `dir` (servers work in their data directory).
pub(crate) fn processes_in(dir: &Path) -> bool {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
                && fs::read_link(e.path().join("cwd")).is_ok_and(|c| c.starts_with(dir))
        })
}

/// A cgroup's name for a data directory (stable, so a later run finds it):
/// `prefix` and a hash of the path.
pub(crate) fn cgroup_name(prefix: &str, data: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in data.as_os_str().as_encoded_bytes() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{prefix}-{h:016x}")
}

/// `--pg-memory`, `--mysql-memory`: makes the server's memory cgroup
/// (`prefix` and a hash of `data`: `cgroup_name`), records it in
/// `root/cgroup` for a later run or `dbio clean`, and drops `dirs` from the
/// page cache so the limit holds from the server's first read.
pub(crate) fn limit_memory(
    prefix: &str,
    option: &str,
    root: &Path,
    data: &Path,
    dirs: &[&Path],
    limit: u64,
) -> Result<cgroup::MemCgroup, super::ServerError> {
    let cg = cgroup::MemCgroup::create(&cgroup_name(prefix, data), limit, option)?;
    remember_cgroup(root, &cg).map_err(|e| super::failed("write the cgroup's path", e))?;
    for d in dirs {
        cgroup::evict(d);
    }
    Ok(cg)
}

/// Records the cgroup a server runs in, in `root/cgroup`.
pub(crate) fn remember_cgroup(root: &Path, cg: &cgroup::MemCgroup) -> std::io::Result<()> {
    fs::write(root.join("cgroup"), cg.path.as_os_str().as_encoded_bytes())
}

/// Removes the memory cgroup recorded in `root/cgroup`, if any (its
/// processes must be gone).
pub(crate) fn forget_cgroup(root: &Path) {
    let file = root.join("cgroup");
    if let Ok(p) = fs::read_to_string(&file) {
        cgroup::remove(Path::new(p.trim()));
        let _ = fs::remove_file(file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_live_and_named() {
        let me = std::process::id();
        let comm = fs::read_to_string("/proc/self/comm").unwrap();
        assert!(live(me, comm.trim()));
        assert!(!live(me, "surely-not-this"));
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("x.pid");
        fs::write(&pid_file, format!("{me}\n")).unwrap();
        assert_eq!(live_pid_in(&pid_file, comm.trim()), Some(me));
        fs::write(&pid_file, "garbage").unwrap();
        assert_eq!(live_pid_in(&pid_file, comm.trim()), None);
    }

    #[test]
    fn a_signalled_process_ends_and_a_killed_group_ends_whole() {
        use std::os::unix::process::CommandExt;
        use std::process::Command;
        // A child takes its new name a moment after its parent is released
        // from the spawn (vfork's parent wakes before exec renames the child).
        let named = |pid: u32| {
            let t0 = std::time::Instant::now();
            while !live(pid, "sleep") {
                assert!(t0.elapsed().as_secs() < 10, "{pid} never ran sleep");
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        let mut one = Command::new("sleep").arg("30").spawn().unwrap();
        named(one.id());
        signal(one.id(), Signal::TERM);
        assert!(!one.wait().unwrap().success());
        assert!(!live(one.id(), "sleep"), "reaped: no such process");
        // A shell leading its own group, with a child of its own in it.
        let mut group = Command::new("sh")
            .args(["-c", "sleep 30 & echo $!; wait"])
            .process_group(0)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(group.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let child: u32 = line.trim().parse().unwrap();
        // The shell prints the child's pid when it forks.
        named(child);
        kill_group(group.id());
        assert!(!group.wait().unwrap().success());
        let t0 = std::time::Instant::now();
        while live(child, "sleep") {
            assert!(t0.elapsed().as_secs() < 10, "the group's child lives on");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // Not a process: nothing is sent anywhere (0 would be our own group).
        signal(0, Signal::KILL);
        kill_group(0);
        assert!(!live(0, "sleep"));
    }

    #[test]
    fn cgroup_names_are_stable_per_directory() {
        let a = cgroup_name("dbio-pg", Path::new("/a/data"));
        assert_eq!(a, cgroup_name("dbio-pg", Path::new("/a/data")));
        assert_ne!(a, cgroup_name("dbio-pg", Path::new("/b/data")));
        assert!(a.starts_with("dbio-pg-"));
    }
}
