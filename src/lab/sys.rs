//! Running the system tools the lab drives (losetup, mkfs, mount, umount,
//! fstrim): found in PATH or the sbin directories, started in their own
//! process group so that a Ctrl-C meant for dbio does not cut a mkfs or an
//! umount in half, their output captured for one-line errors.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::LabError;

/// What a tool printed and how long it took.
#[derive(Clone, Debug, Default)]
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
}

/// The path of `name` in PATH or in /usr/sbin, /sbin, /usr/bin, /bin.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let fallback = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from);
    std::env::split_paths(&path)
        .chain(fallback)
        .map(|dir| dir.join(name))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// `tool args` as a shell would show it.
pub fn show<S: AsRef<OsStr>>(tool: &str, args: &[S]) -> String {
    let mut out = tool.to_string();
    for a in args {
        out.push(' ');
        out.push_str(&a.as_ref().to_string_lossy());
    }
    out
}

/// Runs `tool args` (stdin closed, output captured, own process group);
/// an error unless it exits 0, naming the command and the last line it printed.
pub fn run<S: AsRef<OsStr>>(tool: &str, args: &[S]) -> Result<Ran, LabError> {
    run_env(tool, args, &[])
}

/// [`run`] with extra environment variables.
pub fn run_env<S: AsRef<OsStr>>(
    tool: &str,
    args: &[S],
    env: &[(&str, &str)],
) -> Result<Ran, LabError> {
    let command = show(tool, args);
    let program = find_tool(tool).unwrap_or_else(|| PathBuf::from(tool));
    let t = Instant::now();
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| LabError::Command {
            command: command.clone(),
            message: format!("cannot start: {e}"),
        })?;
    let ran = Ran {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        seconds: t.elapsed().as_secs_f64(),
    };
    if out.status.success() {
        Ok(ran)
    } else {
        Err(LabError::Command {
            command,
            message: format!("{} ({})", last_line(&ran), out.status),
        })
    }
}

/// The last non-empty line of stderr, else of stdout.
pub fn last_line(r: &Ran) -> String {
    let pick = |s: &str| {
        s.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| l.trim().to_string())
    };
    pick(&r.stderr)
        .or_else(|| pick(&r.stdout))
        .unwrap_or_else(|| "no output".into())
}

/// The kernel name of a block device node (`/dev/loop3` → `loop3`),
/// following symlinks (`/dev/disk/by-id/...`).
pub fn kernel_name(device: &Path) -> String {
    fs::canonicalize(device)
        .unwrap_or_else(|_| device.to_path_buf())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The sysfs directory of a block device (`/sys/class/block/loop3`).
pub fn sysfs(device: &Path) -> PathBuf {
    Path::new("/sys/class/block").join(kernel_name(device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_tool_is_one_line_with_its_last_words() {
        let e = run("sh", &["-c", "echo first >&2; echo 'it broke' >&2; exit 3"]).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("sh -c") && m.contains("it broke") && m.contains("3"),
            "{m}"
        );
        assert!(!m.contains('\n'), "{m}");
        let ok = run("sh", &["-c", "echo hello"]).unwrap();
        assert_eq!(ok.stdout.trim(), "hello");
        let missing = run("dbio-no-such-tool", &["x"]).unwrap_err().to_string();
        assert!(missing.contains("cannot start"), "{missing}");
    }

    #[test]
    fn kernel_names_follow_symlinks() {
        assert_eq!(kernel_name(Path::new("/dev/loop7")), "loop7");
        assert_eq!(
            sysfs(Path::new("/dev/vda")),
            Path::new("/sys/class/block/vda")
        );
    }
}
