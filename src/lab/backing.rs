//! The devices under a lab: sparse image files with loop devices over them
//! (direct I/O on by default, so the runs reach the disk and not the page
//! cache), or named block devices that passed the write gate, and the I/O
//! scheduler of either. Everything made is recorded in the [`State`] first.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use super::LabError;
use super::state::{Item, State};
use super::sys::{self, sysfs};
use crate::storage::device;

/// How long to wait for a detached loop device to let go of its image.
const DETACH_TIMEOUT: Duration = Duration::from_secs(10);

/// A device a lab uses for its arms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backing {
    pub device: PathBuf,
    /// The image file under a loop device.
    pub image: Option<PathBuf>,
    pub image_size: Option<u64>,
    /// Whether the loop driver does direct I/O on the image (None: not a loop).
    pub direct_io: Option<bool>,
}

impl Backing {
    /// The device with what it stands on, for reports.
    pub fn describe(&self) -> String {
        match &self.image {
            Some(img) => format!(
                "{} (loop, direct-io {}) over {}",
                self.device.display(),
                if self.direct_io == Some(true) {
                    "on"
                } else {
                    "off"
                },
                img.display()
            ),
            None => format!("{} (named device)", self.device.display()),
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "device": self.device,
            "kind": if self.image.is_some() { "loop" } else { "device" },
            "image": self.image,
            "image_size_bytes": self.image_size,
            "direct_io": self.direct_io,
        })
    }
}

/// Creates a sparse image of `size` bytes at `path` (which must not exist)
/// and attaches a loop device over it.
pub fn loop_over_new_image(
    state: &mut State,
    path: &Path,
    size: u64,
    direct_io: bool,
) -> Result<Backing, LabError> {
    if path.exists() {
        return Err(LabError::Refused(format!(
            "{} already exists; the lab only creates new image files (remove it or choose another image_dir)",
            path.display()
        )));
    }
    let item = Item::Image {
        path: path.to_path_buf(),
    };
    state.add(item.clone()).map_err(LabError::state(state))?;
    let made = File::create_new(path).and_then(|f| f.set_len(size));
    if let Err(e) = made {
        let _ = fs::remove_file(path);
        let _ = state.remove(&item);
        return Err(LabError::io("create the image", path, e));
    }
    let mut args = vec!["-f".to_string(), "--show".into()];
    if direct_io {
        args.push("--direct-io=on".into());
    }
    args.push(path.display().to_string());
    let out = sys::run("losetup", &args)?;
    let dev = PathBuf::from(out.stdout.trim());
    state
        .add(Item::Loop {
            device: dev.clone(),
            image: path.to_path_buf(),
        })
        .map_err(LabError::state(state))?;
    let dio = fs::read_to_string(sysfs(&dev).join("loop/dio")).is_ok_and(|s| s.trim() == "1");
    if direct_io && !dio {
        eprintln!(
            "warning: {} did not enable direct I/O on {} (its filesystem may not support O_DIRECT): the page cache will absorb I/O",
            dev.display(),
            path.display()
        );
    }
    Ok(Backing {
        device: dev,
        image: Some(path.to_path_buf()),
        image_size: Some(size),
        direct_io: Some(dio),
    })
}

/// A named device the plan may destroy: refused when it is not a block
/// device, mounted, held, swap or otherwise in use (dbio run's gate; the
/// plan's `destroy_devices` entry allows only the overwriting of data).
/// `allowed_by` names what allowed it in messages (`destroy_devices`,
/// `--destroy-device`).
pub fn named(device_path: &Path, allowed_by: &str) -> Result<Backing, LabError> {
    device::check_writable(device_path, Some(device_path))
        .map_err(|e| LabError::Refused(e.to_string().replace(device::DESTROY_FLAG, allowed_by)))?;
    Ok(Backing {
        device: device_path.to_path_buf(),
        image: None,
        image_size: None,
        direct_io: None,
    })
}

/// The image a loop device is bound to, if any.
pub fn backing_file(device: &Path) -> Option<PathBuf> {
    let s = fs::read_to_string(sysfs(device).join("loop/backing_file")).ok()?;
    let s = s.trim_end_matches('\n');
    Some(PathBuf::from(s.strip_suffix(" (deleted)").unwrap_or(s)))
}

/// Every loop device bound to `image`.
pub fn loops_over(image: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| Path::new("/dev").join(e.file_name()))
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("loop"))
        })
        .filter(|d| backing_file(d).as_deref() == Some(image))
        .collect();
    out.sort();
    out
}

/// Detaches `device` if it is still bound to `image`, and waits until it
/// lets go; Ok(false) when it was not bound to it (nothing done).
pub fn detach(device: &Path, image: &Path) -> Result<bool, LabError> {
    if backing_file(device).as_deref() != Some(image) {
        return Ok(false);
    }
    sys::run("losetup", &[OsStr::new("-d"), device.as_os_str()])?;
    let deadline = Instant::now() + DETACH_TIMEOUT;
    while backing_file(device).as_deref() == Some(image) {
        if Instant::now() > deadline {
            return Err(LabError::Command {
                command: format!("losetup -d {}", device.display()),
                message: format!(
                    "the device still holds {} after {} s (someone has it open)",
                    image.display(),
                    DETACH_TIMEOUT.as_secs()
                ),
            });
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok(true)
}

/// The schedulers a device offers and the active one (`[mq-deadline] none`).
pub fn schedulers(device: &Path) -> io::Result<(Vec<String>, Option<String>)> {
    let text = fs::read_to_string(sysfs(device).join("queue/scheduler"))?;
    let mut all = Vec::new();
    let mut active = None;
    for w in text.split_whitespace() {
        match w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(a) => {
                active = Some(a.to_string());
                all.push(a.to_string());
            }
            None => all.push(w.to_string()),
        }
    }
    Ok((all, active))
}

/// Sets the I/O scheduler of `device`, recording the previous one to
/// restore when it differs.
pub fn set_scheduler(state: &mut State, device: &Path, name: &str) -> Result<(), LabError> {
    let file = sysfs(device).join("queue/scheduler");
    let (all, active) = schedulers(device).map_err(|e| LabError::io("read", &file, e))?;
    if !all.iter().any(|s| s == name) {
        return Err(LabError::Refused(format!(
            "{} offers the I/O schedulers {}, not {name}: change scheduler in [lab]",
            device.display(),
            all.join(", ")
        )));
    }
    if active.as_deref() == Some(name) {
        return Ok(());
    }
    if let Some(previous) = active {
        state
            .add(Item::Scheduler {
                device: device.to_path_buf(),
                previous,
            })
            .map_err(LabError::state(state))?;
    }
    fs::write(&file, name).map_err(|e| LabError::io("write", &file, e))
}

/// Puts `previous` back as the scheduler of `device`, if it still exists.
pub fn restore_scheduler(device: &Path, previous: &str) -> Result<bool, LabError> {
    let file = sysfs(device).join("queue/scheduler");
    if !file.exists() {
        return Ok(false);
    }
    fs::write(&file, previous).map_err(|e| LabError::io("write", &file, e))?;
    Ok(true)
}

/// `BLKDISCARD`, `_IO(0x12, 119)`: discard a byte range of a block device.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// Discards every block of `device`: TRIM on an SSD or a thin LUN; on a loop
/// device the kernel punches the blocks out of the image file, which is
/// sparse again. Returns the seconds it took, or None when the device takes
/// no discards (`queue/discard_max_bytes` is 0). Opened O_EXCL, so a mounted
/// device is refused by the kernel.
pub fn discard_all(device: &Path) -> Result<Option<f64>, LabError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let mut dir = sysfs(device);
    if dir.join("partition").exists() {
        dir = dir.join("..");
    }
    let max: u64 = fs::read_to_string(dir.join("queue/discard_max_bytes"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    if max == 0 {
        return Ok(None);
    }
    let size = device::probe(device)
        .map_err(|e| LabError::Failed(e.to_string()))?
        .size_bytes;
    let file = fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_EXCL)
        .open(device)
        .map_err(|e| {
            LabError::Failed(format!(
                "cannot open {} to discard it: {e}",
                device.display()
            ))
        })?;
    let range: [u64; 2] = [0, size];
    let t = Instant::now();
    // SAFETY: BLKDISCARD reads two u64 (start, length) from the pointer.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    if rc != 0 {
        return Err(LabError::Failed(format!(
            "discarding {} failed: {}; set discard = false in [lab] to skip it",
            device.display(),
            io::Error::last_os_error()
        )));
    }
    Ok(Some(t.elapsed().as_secs_f64()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_scheduler_list_of_a_real_device() {
        let Ok(entries) = fs::read_dir("/sys/class/block") else {
            return;
        };
        for e in entries.flatten() {
            let dev = Path::new("/dev").join(e.file_name());
            if let Ok((all, active)) = schedulers(&dev) {
                assert!(!all.is_empty());
                if let Some(a) = active {
                    assert!(all.contains(&a));
                }
                return;
            }
        }
    }

    #[test]
    fn a_file_that_is_no_loop_backing_has_no_loops() {
        assert!(loops_over(Path::new("/nonexistent/dbio-test.img")).is_empty());
        assert_eq!(backing_file(Path::new("/dev/dbio-no-such-dev")), None);
    }
}
