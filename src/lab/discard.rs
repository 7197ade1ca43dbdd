//! `dbio lab discard`: seed 004's TRIM experiments as one command. On a
//! loop device over a new image (or a named device the user gave up):
//! mkfs with and without discard; N files of S bytes written, then removed
//! with the filesystem mounted `-o discard` and without; `fstrim -v`. Each
//! step is timed and the device's discard counters (/proc/diskstats: d/s,
//! dkB/s as iostat -x shows them) are taken around it. On a loop device the
//! kernel passes discards to the backing file as hole punching, which the
//! report says, with the image's allocated size after each step.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::backing;
use super::cleanup::Guard;
use super::discard_table::{Report, Step, notes, render, trimmed_bytes};
use super::state::{self, State};
use super::{LabError, fs, prereq, sys};
use crate::plan::FsKind;
use crate::samplers::diskstats::{self, DiskDelta};
use crate::units::fmt_size;

/// What `dbio lab discard` was asked to do (`commands::lab` parses it).
#[derive(Clone, Debug)]
pub struct Discard {
    pub fs: FsKind,
    /// A block device to use instead of a loop device.
    pub device: Option<PathBuf>,
    /// The device the user allows to be destroyed (must be `device`).
    pub destroy_device: Option<PathBuf>,
    /// Size of the image under the loop device.
    pub image_size: u64,
    /// Directory for the image.
    pub image_dir: PathBuf,
    /// Loop device direct I/O on the image.
    pub direct_io: bool,
    /// Files written before each rm.
    pub files: u32,
    /// Size of each file.
    pub file_size: u64,
    /// The table as JSON rather than text.
    pub json: bool,
}

/// Runs the experiment; the table (text or JSON) to print.
pub fn execute(args: &Discard, is_root: bool, interrupt: &AtomicBool) -> Result<String, LabError> {
    let fs = args.fs;
    prereq::check_root(is_root, "discard")?;
    let tool = fs.mkfs_tool().expect("a filesystem");
    for (t, pkg) in [
        (tool, fs.package().unwrap_or("")),
        ("fstrim", "util-linux"),
        ("losetup", "mount"),
    ] {
        if sys::find_tool(t).is_none() {
            return Err(LabError::Prereq(format!(
                "{t} not found: install the Debian package {pkg} (apt-get install {pkg})"
            )));
        }
    }
    if let Some(d) = &args.device {
        if args.destroy_device.as_deref() != Some(d.as_path()) {
            return Err(LabError::Refused(format!(
                "--device {} is destroyed by the experiment (mkfs, twice): repeat it as --destroy-device {}",
                d.display(),
                d.display()
            )));
        }
    } else {
        prereq::check_space(&args.image_dir, args.image_size, 1)?;
    }
    let need = u64::from(args.files) * args.file_size;
    let cap = args.image_size;
    if args.device.is_none() && need as f64 > cap as f64 * prereq::FILL_LIMIT {
        return Err(LabError::Refused(format!(
            "--files {} x --file-size {} = {} does not fit a {} image: raise --image-size or write less",
            args.files,
            fmt_size(args.file_size),
            fmt_size(need),
            fmt_size(cap)
        )));
    }
    let st = State::create("lab discard", None)
        .map_err(|e| LabError::io("create a state file in", &state::lab_dir(), e))?;
    let mut guard = Guard::new(st);
    let result = experiment(args, fs, guard.state(), interrupt);
    let report = guard.finish(result)?;
    Ok(if args.json {
        serde_json::to_string_pretty(&report).expect("report serializes") + "\n"
    } else {
        render(&report)
    })
}

fn experiment(
    args: &Discard,
    fs_kind: FsKind,
    st: &mut State,
    interrupt: &AtomicBool,
) -> Result<Report, LabError> {
    let dev = match &args.device {
        Some(d) => backing::named(d, "--destroy-device")?,
        None => {
            let name = format!("dbio-lab-discard-{}.img", std::process::id());
            backing::loop_over_new_image(
                st,
                &args.image_dir.join(name),
                args.image_size,
                args.direct_io,
            )?
        }
    };
    let name = sys::kernel_name(&dev.device);
    let discard_max =
        std::fs::read_to_string(sys::sysfs(&dev.device).join("queue/discard_max_bytes"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
    let mnt = fs::make_dirs(
        st,
        &state::lab_dir()
            .join("mnt")
            .join(format!("discard-{}", std::process::id())),
    )?;
    let (with, _) = discard_flags(fs_kind);
    let run = Rounds {
        args,
        fs_kind,
        tool: fs_kind.mkfs_tool().expect("a filesystem"),
        device: &dev.device,
        mnt: &mnt,
        probe: Probe {
            name: &name,
            image: dev.image.as_deref(),
        },
        interrupt,
    };
    let label = if with.is_empty() {
        format!("{} (discards by default)", run.tool)
    } else {
        format!("{} {with}", run.tool)
    };
    let mut steps = vec![run.probe.step(&label, || {
        fs::mkfs(fs_kind, &split(with), &dev.device).map(|_| ())
    })?];
    run.stop()?;
    let mut trimmed = None;
    for mount_discard in [true, false] {
        let t = run.round(st, mount_discard, &mut steps)?;
        if !mount_discard {
            trimmed = t;
        }
        run.stop()?;
    }
    Ok(Report {
        schema: "dbio.lab.discard.v2",
        fs: fs_kind.name().to_string(),
        device: dev.to_json(),
        discard_max_bytes: discard_max,
        files: args.files,
        file_size_bytes: args.file_size,
        steps,
        fstrim_trimmed_bytes: trimmed,
        notes: notes(&dev, discard_max),
    })
}

/// What every round of the experiment works on.
struct Rounds<'a> {
    args: &'a Discard,
    fs_kind: FsKind,
    /// The mkfs program.
    tool: &'static str,
    device: &'a Path,
    mnt: &'a Path,
    probe: Probe<'a>,
    interrupt: &'a AtomicBool,
}

impl Rounds<'_> {
    /// Ctrl-C between steps ends the experiment (the guard removes all).
    fn stop(&self) -> Result<(), LabError> {
        if self.interrupt.load(Ordering::Relaxed) {
            Err(LabError::Interrupted(
                "lab discard interrupted; everything it made is removed".into(),
            ))
        } else {
            Ok(())
        }
    }

    /// One round, each step timed into `steps`: mkfs without discard,
    /// mount with `-o discard` or without, write the files, rm them, sync +
    /// umount; without discard, then `fstrim -v`, whose trimmed bytes it
    /// returns.
    fn round(
        &self,
        st: &mut State,
        mount_discard: bool,
        steps: &mut Vec<Step>,
    ) -> Result<Option<u64>, LabError> {
        let (args, fs_kind, probe) = (self.args, self.fs_kind, &self.probe);
        let (device, mnt) = (self.device, self.mnt);
        let (_, without) = discard_flags(fs_kind);
        let label = if mount_discard {
            "mounted -o discard"
        } else {
            "mounted without discard"
        };
        steps.push(probe.step(&format!("{} {without}", self.tool), || {
            fs::mkfs(fs_kind, &split(without), device).map(|_| ())
        })?);
        fs::mount(st, fs_kind, device, mnt, mount_discard.then_some("discard"))?;
        let files: Vec<PathBuf> = (0..args.files)
            .map(|i| mnt.join(format!("file{i}")))
            .collect();
        steps.push(probe.step(
            &format!(
                "write {} x {} ({label})",
                args.files,
                fmt_size(args.file_size)
            ),
            || write_files(&files, args.file_size, self.interrupt),
        )?);
        self.stop()?;
        steps.push(
            probe.step(&format!("rm {} files ({label})", args.files), || {
                for f in &files {
                    std::fs::remove_file(f).map_err(|e| LabError::io("remove", f, e))?;
                }
                Ok(())
            })?,
        );
        // With -o discard the filesystem sends its discards when the
        // journal commits, after rm returned: the sync and the unmount
        // (and the device going idle) are where they show.
        steps.push(probe.step(&format!("sync + umount ({label})"), || {
            let dir = File::open(mnt).map_err(|e| LabError::io("open", mnt, e))?;
            rustix::fs::syncfs(&dir).map_err(|e| LabError::io("syncfs", mnt, e.into()))?;
            drop(dir);
            unmount(st, device, mnt)
        })?);
        if mount_discard {
            return Ok(None);
        }
        fs::mount(st, fs_kind, device, mnt, None)?;
        let mut out = String::new();
        steps.push(probe.step(&format!("fstrim -v ({label})"), || {
            out = sys::run("fstrim", &[OsStr::new("-v"), mnt.as_os_str()])?.stdout;
            Ok(())
        })?);
        let trimmed = trimmed_bytes(&out);
        unmount(st, device, mnt)?;
        Ok(trimmed)
    }
}

/// Unmounts what `fs::mount` mounted and forgets it.
fn unmount(st: &mut State, device: &Path, mnt: &Path) -> Result<(), LabError> {
    fs::umount(device, mnt)?;
    st.remove(&super::state::Item::Mount {
        device: device.to_path_buf(),
        mountpoint: mnt.to_path_buf(),
    })
    .map_err(LabError::state(st))
}

/// The mkfs options that make a filesystem with and without discarding the
/// device first.
fn discard_flags(fs: FsKind) -> (&'static str, &'static str) {
    match fs {
        FsKind::Ext4 => ("-E discard", "-E nodiscard"),
        _ => ("", "-K"),
    }
}

fn split(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

/// Takes the device's counters and the image's allocation around a step.
struct Probe<'a> {
    name: &'a str,
    image: Option<&'a Path>,
}

impl Probe<'_> {
    fn counters(&self) -> diskstats::DiskCounters {
        diskstats::read_all()
            .ok()
            .and_then(|m| m.get(self.name).copied())
            .unwrap_or_default()
    }

    /// Waits (up to 30 s) until the device has no I/O in flight, so a
    /// step's discards are counted in that step.
    fn wait_idle(&self) {
        let end = Instant::now() + std::time::Duration::from_secs(30);
        while self.counters().in_flight > 0 && Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Times `f` until the device is idle again, with the device's
    /// counters around it.
    fn step(
        &self,
        label: &str,
        f: impl FnOnce() -> Result<(), LabError>,
    ) -> Result<Step, LabError> {
        let before = self.counters();
        let t = Instant::now();
        f()?;
        self.wait_idle();
        let seconds = t.elapsed().as_secs_f64();
        let d = DiskDelta::between(&before, &self.counters());
        let r = d.rates(seconds);
        Ok(Step {
            step: label.trim().to_string(),
            seconds,
            discards: d.discards,
            discarded_bytes: d.sectors_discarded * 512.0,
            d_per_s: r.d_per_s,
            dkib_per_s: r.dkib_per_s,
            wkib_per_s: r.wkib_per_s,
            image_allocated_bytes: self
                .image
                .and_then(|i| std::fs::metadata(i).ok())
                .map(|m| m.blocks() * 512),
        })
    }
}

/// Writes each file with `size` bytes of non-zero data and fsyncs it.
fn write_files(files: &[PathBuf], size: u64, interrupt: &AtomicBool) -> Result<(), LabError> {
    let chunk: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 1)
        .collect();
    for f in files {
        let mut file = File::create_new(f).map_err(|e| LabError::io("create", f, e))?;
        let mut left = size;
        while left > 0 && !interrupt.load(Ordering::Relaxed) {
            let n = left.min(chunk.len() as u64) as usize;
            file.write_all(&chunk[..n])
                .map_err(|e| LabError::io("write", f, e))?;
            left -= n as u64;
        }
        file.sync_all().map_err(|e| LabError::io("fsync", f, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mkfs_discard_flags_per_filesystem() {
        assert_eq!(discard_flags(FsKind::Ext4), ("-E discard", "-E nodiscard"));
        assert_eq!(discard_flags(FsKind::Xfs).1, "-K");
        assert!(split(discard_flags(FsKind::Xfs).0).is_empty());
    }
}
