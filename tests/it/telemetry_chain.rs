//! Device and host telemetry on real devices: the storage chain under files
//! on loop devices, partitions and tmpfs; iostat -x agreeing with dbio's own
//! rates on a loaded direct-I/O loop device; and the cost of one sample.
//! Loop-device tests need root (they skip otherwise).

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::common::loopdev::LoopDev;
use dbio::samplers::diskstats::DeviceRates;
use dbio::samplers::telemetry::{Telemetry, TelemetryPoint, average, summary};
use dbio::storage::chain::{Chain, DeviceKind, DeviceLink, Link, resolve};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn devices(c: &Chain) -> Vec<&DeviceLink> {
    c.links
        .iter()
        .filter_map(|l| match l {
            Link::Device(d) => Some(d),
            _ => None,
        })
        .collect()
}

/// (fs_type, mount_point, mount_options, path) of a Filesystem link.
fn fs_link(l: &Link) -> (&str, &Path, &str, &Path) {
    match l {
        Link::Filesystem {
            fs_type,
            mount_point,
            mount_options,
            path,
            ..
        } => (fs_type, mount_point, mount_options, path),
        other => panic!("expected a filesystem link, got {other:?}"),
    }
}

fn device_link(l: &Link) -> &DeviceLink {
    match l {
        Link::Device(d) => d,
        other => panic!("expected a device link, got {other:?}"),
    }
}

/// findmnt's view of the filesystem holding `path`: (fstype, mount point).
fn findmnt(path: &Path) -> Option<(String, PathBuf)> {
    let out = Command::new("findmnt")
        .args(["-n", "-o", "FSTYPE,TARGET", "-T"])
        .arg(path)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?;
    let (fstype, target) = line.trim().split_once(char::is_whitespace)?;
    Some((fstype.to_string(), PathBuf::from(target.trim())))
}

/// Kernel names of the device holding `path`'s filesystem, and of its whole
/// disk when that device is a partition, read from sysfs here independently.
fn fs_device_names(path: &Path) -> Vec<String> {
    let dev = fs::metadata(path).unwrap().dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let Ok(sys) = fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")) else {
        return Vec::new();
    };
    let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
    let mut names = vec![name(&sys)];
    if sys.join("partition").exists() {
        names.push(name(sys.parent().unwrap()));
    }
    names
}

fn chain_of_a_file_on_the_root_filesystem() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let chain = resolve(&file).unwrap();
    eprintln!("{}", chain.describe());
    let (fs_type, mount_point, options, path) = fs_link(&chain.links[0]);
    assert_eq!(path, file);
    assert!(
        options.starts_with("rw") || options.starts_with("ro"),
        "{options}"
    );
    if let Some((want_type, want_mp)) = findmnt(&file) {
        assert_eq!(
            (fs_type, mount_point),
            (want_type.as_str(), want_mp.as_path())
        );
    }
    let want = fs_device_names(&file);
    assert_eq!(chain.devices(), want, "{chain:#?}");
    for (d, name) in devices(&chain).iter().zip(&want) {
        assert_eq!(&d.name, name);
        assert!(d.size_bytes.unwrap() > 0);
        assert!(chain.describe().contains(&format!(" /dev/{name} (")));
    }
    if let Some(d) = devices(&chain).last() {
        if d.name.starts_with("vd") {
            // This machine: ext4 on /dev/vda (virtio, mq-deadline, SSD, discard).
            assert_eq!(d.model.as_deref(), Some("virtio"));
            assert_eq!(d.kind, DeviceKind::Disk);
        }
        assert!(d.scheduler.is_some() && d.rotational.is_some() && d.discard.is_some());
        assert!(d.logical_block.unwrap() >= 512);
        assert!(d.physical_block.unwrap() >= d.logical_block.unwrap());
    }
}

fn chain_of_tmpfs_has_no_device() {
    let shm = Path::new("/dev/shm");
    assert!(
        findmnt(shm).is_some_and(|(t, _)| t == "tmpfs"),
        "/dev/shm is tmpfs"
    );
    let chain = resolve(&shm.join("dbio-not-there/x")).unwrap();
    assert_eq!(chain.links.len(), 1, "{chain:?}");
    assert_eq!(fs_link(&chain.links[0]).0, "tmpfs");
    assert!(chain.devices().is_empty());
    assert!(
        chain.describe().contains("on tmpfs ("),
        "{}",
        chain.describe()
    );
}

fn chain_of_ext4_on_a_direct_io_loop_device() {
    let mut dev = LoopDev::new(64 * MIB, true);
    assert!(dev.direct_io(), "losetup --direct-io=on did not take");
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let file = mnt.join("datafile");
    fs::write(&file, b"x").unwrap();

    let chain = resolve(&file).unwrap();
    let text = chain.describe();
    eprintln!("{text}");

    // The file's filesystem: ext4 on the loop device.
    let (fs_type, mount_point, options, _) = fs_link(&chain.links[0]);
    assert_eq!(fs_type, "ext4");
    assert_eq!(mount_point, fs::canonicalize(&mnt).unwrap());
    assert!(options.starts_with("rw"), "{options}");
    // The loop device, its backing file and its direct-I/O mode.
    let lo = device_link(&chain.links[1]);
    assert_eq!(lo.name, dev.name());
    assert_eq!(lo.kind, DeviceKind::Loop);
    assert_eq!(lo.loop_backing.as_deref(), Some(dev.image()));
    assert_eq!(lo.loop_direct_io, Some(true));
    assert_eq!(lo.size_bytes, Some(64 * MIB));
    // The backing file's filesystem, then the device(s) under it.
    let (img_fs, img_mp, _, img_path) = fs_link(&chain.links[2]);
    assert_eq!(img_path, dev.image());
    let (want_type, want_mp) = findmnt(dev.image()).expect("findmnt");
    assert_eq!((img_fs, img_mp), (want_type.as_str(), want_mp.as_path()));
    let mut want = vec![dev.name()];
    want.extend(fs_device_names(dev.image()));
    assert_eq!(chain.devices(), want, "{chain:#?}");

    for piece in [
        format!("{} on ext4 (rw", file.display()),
        format!(
            "on /dev/{} (direct-io) backed by {}",
            dev.name(),
            dev.image().display()
        ),
        format!(" on {want_type} ("),
    ] {
        assert!(text.contains(&piece), "{piece:?} not in {text:?}");
    }
    if let Some(root) = want.get(1) {
        assert!(text.contains(&format!(" on /dev/{root} (")), "{text}");
    }
    let json = serde_json::to_value(&chain).unwrap();
    assert_eq!(json["links"][1]["type"], "device");
    assert_eq!(json["links"][1]["loop_direct_io"], true);
}

fn chain_of_a_partition_of_a_loop_device() {
    let dev = LoopDev::new(64 * MIB, false);
    let parts = dev.partition(2);
    let chain = resolve(&parts[1]).unwrap();
    let text = chain.describe();
    eprintln!("{text}");

    let part = device_link(&chain.links[0]);
    assert_eq!(part.kind, DeviceKind::Partition);
    assert_eq!(Path::new("/dev").join(&part.name), parts[1]);
    let disk = device_link(&chain.links[1]);
    assert_eq!(disk.name, dev.name());
    assert_eq!(disk.kind, DeviceKind::Loop);
    assert_eq!(disk.loop_direct_io, Some(false));
    assert_eq!(disk.loop_backing.as_deref(), Some(dev.image()));
    assert!(part.size_bytes.unwrap() < disk.size_bytes.unwrap());
    assert!(part.size_bytes.unwrap() >= 30 * MIB);
    // A partition's queue attributes are its disk's.
    assert_eq!(part.logical_block, disk.logical_block);
    assert_eq!(part.scheduler, disk.scheduler);
    assert_eq!(fs_link(&chain.links[2]).3, dev.image());
    assert_eq!(&chain.devices()[..2], [part.name.clone(), dev.name()]);
    let piece = format!(
        "{} (partition) of /dev/{} (buffered) backed by {}",
        parts[1].display(),
        dev.name(),
        dev.image().display()
    );
    assert!(
        text.starts_with(&piece),
        "{piece:?} not at the start of {text:?}"
    );
}

/// Removes a device-mapper device on drop.
struct DmDevice(String);

impl Drop for DmDevice {
    fn drop(&mut self) {
        let _ = Command::new("dmsetup").args(["remove", &self.0]).status();
    }
}

fn chain_of_dm_linear_over_a_loop_device() {
    let dev = LoopDev::new(32 * MIB, true);
    let name = format!("dbio-tele-{}", std::process::id());
    let table = format!("0 {} linear {} 0", 32 * MIB / 512, dev.path.display());
    let ok = Command::new("dmsetup")
        .args(["create", &name, "--table", &table])
        .status()
        .unwrap()
        .success();
    assert!(ok, "dmsetup create {name} failed");
    let _dm = DmDevice(name.clone());
    let _ = Command::new("udevadm").arg("settle").status();
    let chain = resolve(&Path::new("/dev/mapper").join(&name)).unwrap();
    eprintln!("{}", chain.describe());
    let top = device_link(&chain.links[0]);
    assert_eq!(top.kind, DeviceKind::Dm);
    let lo = device_link(&chain.links[1]);
    assert_eq!(
        (lo.name.as_str(), lo.kind),
        (dev.name().as_str(), DeviceKind::Loop)
    );
    assert!(
        chain
            .describe()
            .contains(&format!("(dm) over /dev/{}", dev.name()))
    );
}

/// A buffer aligned for O_DIRECT.
struct Aligned {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl Aligned {
    fn new(len: usize, fill: u8) -> Aligned {
        let raw = vec![fill; len + 4096];
        let off = raw.as_ptr().align_offset(4096);
        Aligned { raw, off, len }
    }
    fn buf(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

/// Steady O_DIRECT load on a device: one thread of 8 KiB random reads and
/// one of 16 KiB random writes, each one I/O at a time, within `span` bytes.
/// Stopped and joined on drop.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<u64>>,
}

impl Load {
    fn start(device: &Path, span: u64) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = [
            (8192usize, false, 0x9e37_79b9u64),
            (16384, true, 0x7f4a_7c15),
        ]
        .into_iter()
        .map(|(bs, write, seed)| {
            let stop = stop.clone();
            let f = open_direct(device);
            thread::spawn(move || {
                let mut buf = Aligned::new(bs, 0x5a);
                let mut x = seed;
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let off = (x % (span / bs as u64)) * bs as u64;
                    let r = if write {
                        f.write_at(buf.buf(), off)
                    } else {
                        f.read_at(buf.buf(), off)
                    };
                    assert_eq!(r.expect("direct I/O on the loop device"), bs);
                    n += 1;
                }
                n
            })
        })
        .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn open_direct(device: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .unwrap_or_else(|e| panic!("open {} O_DIRECT: {e}", device.display()))
}

/// Kills a child process on drop (when a test fails before waiting for it).
struct Reaped(Option<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// iostat's per-interval statistics for `dev` from its JSON output.
fn iostat_intervals(json: &Value, dev: &str) -> Vec<Value> {
    json["sysstat"]["hosts"][0]["statistics"]
        .as_array()
        .expect("iostat JSON statistics")
        .iter()
        .filter_map(|s| {
            s["disk"]
                .as_array()?
                .iter()
                .find(|d| d["disk_device"] == dev)
                .cloned()
        })
        .collect()
}

fn within(what: &str, ours: f64, theirs: f64, rel: f64, abs: f64) {
    let ok = (ours - theirs).abs() <= (theirs.abs() * rel).max(abs);
    assert!(ok, "{what}: dbio {ours:.3} vs iostat {theirs:.3}");
}

fn rates_agree_with_iostat_on_a_loaded_direct_io_loop_device() {
    const SECONDS: usize = 6;
    let dev = LoopDev::new(128 * MIB, true);
    assert!(dev.direct_io());
    let span = 64 * MIB;
    {
        // Write the span first, so reads reach the disk rather than holes.
        let f = open_direct(&dev.path);
        let mut chunk = Aligned::new(MIB as usize, 0xa5);
        for i in 0..span / MIB {
            f.write_at(chunk.buf(), i * MIB).unwrap();
        }
    }
    let load = Load::start(&dev.path, span);
    thread::sleep(Duration::from_millis(700)); // let the load settle

    let name = dev.name();
    let mut tele = Telemetry::start(vec![name.clone()]);
    let iostat = Command::new("iostat")
        .args([
            "-x",
            "-d",
            "-y",
            "-o",
            "JSON",
            &name,
            "1",
            &SECONDS.to_string(),
        ])
        .env("LC_ALL", "C")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start iostat");
    let start = tele.mark();
    let mut iostat = Reaped(Some(iostat));
    let t0 = Instant::now();
    let mut points: Vec<TelemetryPoint> = Vec::new();
    let _ = tele.sample(0.0); // per-second points from here on
    let from_s = t0.elapsed().as_secs_f64();
    for k in 1..=SECONDS as u64 {
        let due = Duration::from_secs(k) - Duration::from_millis(20);
        thread::sleep(due.saturating_sub(t0.elapsed()));
        points.push(tele.sample(t0.elapsed().as_secs_f64()));
    }
    let out = iostat
        .0
        .take()
        .unwrap()
        .wait_with_output()
        .expect("iostat output");
    let end = tele.mark();
    drop(load);
    assert!(out.status.success(), "iostat failed");

    let json: Value = serde_json::from_slice(&out.stdout).expect("iostat JSON");
    let intervals = iostat_intervals(&json, &name);
    assert_eq!(intervals.len(), SECONDS, "{json}");
    let col = |k: &str| -> Vec<f64> {
        intervals
            .iter()
            .map(|d| d[k].as_f64().unwrap_or_else(|| panic!("iostat {k}: {d}")))
            .collect()
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let weighted = |v: &[f64], w: &[f64]| {
        let sw: f64 = w.iter().sum();
        v.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw
    };
    let (r, w) = (col("r/s"), col("w/s"));
    let theirs = DeviceRates {
        r_per_s: mean(&r),
        w_per_s: mean(&w),
        rkib_per_s: mean(&col("rkB/s")),
        wkib_per_s: mean(&col("wkB/s")),
        r_await_ms: weighted(&col("r_await"), &r),
        w_await_ms: weighted(&col("w_await"), &w),
        util_pct: mean(&col("util")),
        aqu_sz: mean(&col("aqu-sz")),
        ..DeviceRates::default()
    };

    let window = summary(&start, &end);
    let ours = window.devices[0].rates.clone().expect("loop device rates");
    eprintln!(
        "window {:.3} s\n  dbio:   {ours:?}\n  iostat: {theirs:?}\n  host: {:?}",
        window.seconds, window.host
    );
    assert!(
        ours.r_per_s > 100.0 && ours.w_per_s > 100.0,
        "too little load: {ours:?}"
    );
    within("r/s", ours.r_per_s, theirs.r_per_s, 0.05, 0.0);
    within("w/s", ours.w_per_s, theirs.w_per_s, 0.05, 0.0);
    within("rkB/s", ours.rkib_per_s, theirs.rkib_per_s, 0.05, 0.0);
    within("wkB/s", ours.wkib_per_s, theirs.wkib_per_s, 0.05, 0.0);
    within("r_await", ours.r_await_ms, theirs.r_await_ms, 0.05, 0.05);
    within("w_await", ours.w_await_ms, theirs.w_await_ms, 0.05, 0.05);
    within("%util", ours.util_pct, theirs.util_pct, 0.05, 0.5);
    within("aqu-sz", ours.aqu_sz, theirs.aqu_sz, 0.10, 0.05);
    assert!((ours.rareq_sz_kib - 8.0).abs() < 0.01, "{ours:?}");
    assert!((ours.wareq_sz_kib - 16.0).abs() < 0.01, "{ours:?}");

    // The per-second points, averaged over the same stretch, give the
    // window's rates again (they cover it without gaps).
    let last_t = points.last().unwrap().t_s;
    let rebuilt = average(&points, from_s, last_t);
    let rb = rebuilt.devices[0].rates.clone().unwrap();
    eprintln!(
        "  points: {} over {:.3} s: {rb:?}",
        points.len(),
        rebuilt.seconds
    );
    assert!(points.len() >= SECONDS);
    within("points r/s", rb.r_per_s, ours.r_per_s, 0.05, 0.0);
    within("points w_await", rb.w_await_ms, ours.w_await_ms, 0.05, 0.05);
    within("points %util", rb.util_pct, ours.util_pct, 0.05, 0.5);
    let h = &window.host;
    let cpu = h.user_pct + h.nice_pct + h.system_pct + h.iowait_pct;
    let all = cpu + h.irq_pct + h.softirq_pct + h.steal_pct + h.idle_pct;
    assert!((all - 100.0).abs() < 1e-6 && cpu > 1.0, "{h:?}");
    assert!(h.ctxt_per_s > 1000.0 && h.intr_per_s > 100.0, "{h:?}");
}

fn one_sample_costs_far_less_than_10_ms_of_cpu() {
    // Three devices, like a file on a filesystem on a loop device on a disk.
    let mut names: Vec<String> = dbio::samplers::diskstats::read_all()
        .unwrap()
        .into_keys()
        .collect();
    names.sort();
    names.truncate(3);
    let mut tele = Telemetry::start(names);
    for i in 0..5 {
        std::hint::black_box(tele.sample(f64::from(i)));
    }
    const N: u32 = 200;
    let cpu = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
    };
    let (c0, w0) = (cpu(), Instant::now());
    for i in 0..N {
        std::hint::black_box(tele.sample(f64::from(i)));
    }
    let per_cpu_us = (cpu() - c0) / f64::from(N) * 1e6;
    let per_wall_us = w0.elapsed().as_secs_f64() / f64::from(N) * 1e6;
    eprintln!(
        "Telemetry::sample() for {} devices: {per_cpu_us:.1} µs CPU, {per_wall_us:.1} µs wall per call",
        tele.devices().len()
    );
    assert!(per_cpu_us < 2000.0, "{per_cpu_us} µs per sample");
}

crate::tests! {
    chain_of_a_file_on_the_root_filesystem,
    chain_of_tmpfs_has_no_device,
    chain_of_ext4_on_a_direct_io_loop_device [Root],
    chain_of_a_partition_of_a_loop_device [Root],
    chain_of_dm_linear_over_a_loop_device [Root, DeviceMapper, Tool("dmsetup")],
    rates_agree_with_iostat_on_a_loaded_direct_io_loop_device [Root, Tool("iostat")],
    one_sample_costs_far_less_than_10_ms_of_cpu,
}
