//! The filesystem lab end to end, on real loop devices, filesystems and
//! mounts (root; skipped with a message otherwise): `dbio lab run` builds
//! every arm, runs the plan and leaves no mount, loop device, image or state
//! file behind — after success, after Ctrl-C in the middle of an arm, and
//! (through `dbio lab cleanup`) after kill -9, where cleanup removes exactly
//! what the lab made. Refusals: a named device without its destroy_devices
//! entry, a mounted device, not root. `dbio lab discard` on a loop device.
//!
//! Every test works in its own temporary directory (images, state, mount
//! points, store), and "left behind" means a line of /proc/mounts or
//! `losetup -a` naming that directory, so loop devices of other tests or
//! other processes on the machine do not count.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};

/// Removes what a lab of this test left (and stops its dbio), even when
/// the test fails. Declare it after the temporary directory.
pub(crate) struct Leftovers {
    lab_dir: PathBuf,
    child: Option<Child>,
}

impl Leftovers {
    fn new(lab_dir: &Path) -> Leftovers {
        Leftovers {
            lab_dir: lab_dir.to_path_buf(),
            child: None,
        }
    }
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        if let Some(c) = &mut self.child {
            let _ = c.kill();
            let _ = c.wait();
        }
        if self.lab_dir.exists() {
            let _ = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
                .args(["lab", "cleanup"])
                .env("DBIO_LAB_DIR", &self.lab_dir)
                .output();
        }
    }
}

/// A root test's surroundings: its store, a temporary directory (images,
/// plans) with the lab directory in it, and the guard that cleans up.
pub(crate) struct Case {
    left: Leftovers,
    pub(crate) lab_dir: PathBuf,
    pub(crate) tmp: tempfile::TempDir,
    _store: crate::common::store::TempStore,
}

impl Case {
    /// Starts `dbio lab run PLAN` (kept in the guard) and waits until it
    /// has mounted its first arm.
    fn start_until_mounted(&mut self, plan: &Path) -> &mut Child {
        let child = dbio(&self.lab_dir)
            .args(["lab", "run"])
            .arg(plan)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.left.child = Some(child);
        let tmp = self.tmp.path().to_path_buf();
        wait_for("the first arm's mount", Duration::from_secs(30), || {
            left_in(&tmp).iter().any(|l| l.contains("/mnt/"))
        });
        self.left.child.as_mut().expect("just started")
    }
}

/// A case with its own store and state directory (the tests that use it need root).
pub(crate) fn root_case() -> Case {
    let store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let lab_dir = tmp.path().join("state");
    Case {
        left: Leftovers::new(&lab_dir),
        lab_dir,
        tmp,
        _store: store,
    }
}

pub(crate) fn dbio(lab_dir: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("dbio"));
    c.env("DBIO_DB", store_path()).env("DBIO_LAB_DIR", lab_dir);
    c
}

/// `dbio lab run PLAN`, to completion.
fn lab_run(lab_dir: &Path, plan: &Path) -> Output {
    dbio(lab_dir)
        .args(["lab", "run"])
        .arg(plan)
        .output()
        .unwrap()
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Lines of /proc/mounts and `losetup -a` that name `dir`.
fn left_in(dir: &Path) -> Vec<String> {
    let key = dir.display().to_string();
    let mounts = fs::read_to_string("/proc/mounts").unwrap();
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    mounts
        .lines()
        .map(str::to_string)
        .chain(
            String::from_utf8_lossy(&loops.stdout)
                .lines()
                .map(str::to_string),
        )
        .filter(|l| l.contains(&key))
        .collect()
}

/// No mount or loop device naming `tmp`, no image in it, no state file.
pub(crate) fn assert_nothing_left(tmp: &Path, lab_dir: &Path) {
    let left = left_in(tmp);
    assert!(left.is_empty(), "left mounted or attached: {left:?}");
    assert!(files_ending(tmp, ".img").is_empty(), "images left");
    assert!(files_ending(lab_dir, ".json").is_empty(), "state file left");
}

/// Files in `dir` whose name ends with `suffix` (images, state files).
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect()
}

fn wait_for(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(50));
    }
}

/// A plan with a [lab] of loop images in `dir`. `run` is the workload's
/// length (`ops = 200` or `time = 30`), `arms` the [lab.arms] lines.
pub(crate) fn write_plan(dir: &Path, name: &str, run: &str, lab: &str, arms: &str) -> PathBuf {
    let p = dir.join(format!("{name}.toml"));
    fs::write(
        &p,
        format!(
            r#"name = "{name}"
repeats = 1

[workload]
pattern = "randwrite"
size = "32M"
{run}

[sweep]
sessions = [1, 2]

[lab]
image_dir = "{}"
image_size = "320M"
{lab}

[lab.arms]
{arms}
"#,
            dir.display()
        ),
    )
    .unwrap();
    p
}

fn sqlite(query: &str) -> String {
    let out = Command::new("sqlite3")
        .arg(store_path())
        .arg(query)
        .output()
        .expect("the sqlite3 shell");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn interrupt(child: &Child, signal: i32) {
    // SAFETY: kill(2) on the pid of a child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

const THREE_ARMS: &str = r#"EXT4 = { fs = "ext4", mkfs = "-E nodiscard", mount = "noatime" }
XFS = { fs = "xfs", mount = "noatime,nodiratime" }
RAW = { fs = "none" }"#;

fn lab_run_builds_each_arm_runs_the_plan_and_leaves_nothing_behind() {
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let plan = write_plan(
        tmp.as_path(),
        "lab-e2e",
        "ops = 200",
        "same_device = true\nscheduler = \"mq-deadline\"",
        THREE_ARMS,
    );
    assert!(left_in(tmp.as_path()).is_empty());

    let out = lab_run(&lab_dir, &plan);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        6,
        "{}",
        text(&out)
    );
    assert_nothing_left(&tmp, &lab_dir);

    // Every run is stored with its arm, the tool's version and the mount options.
    assert_eq!(
        sqlite("select count(*) from runs where plan = 'lab-e2e' and status = 'completed'"),
        "6"
    );
    let xfs = sqlite(
        "select distinct json_extract(environment_json, '$.lab.mkfs.tool') || ' ' || \
         json_extract(environment_json, '$.lab.mount.options') from runs where variable = 'XFS'",
    );
    assert_eq!(xfs, "mkfs.xfs noatime,nodiratime");
    let tags = sqlite(
        "select group_concat(tag, ' ') from run_tags join runs on id = run_id where variable = 'EXT4' and id = (select min(id) from runs where variable = 'EXT4')",
    );
    assert!(
        tags.contains("fs=ext4") && tags.contains("mkfs.ext4="),
        "{tags}"
    );
    let sched =
        sqlite("select distinct json_extract(environment_json, '$.lab.scheduler') from runs");
    assert_eq!(sched, "mq-deadline");
    // The shared device is discarded before every arm but the first (a new
    // sparse image), so every arm starts from the same state.
    let discarded = sqlite(
        "select count(distinct variable) from runs where plan = 'lab-e2e' and \
         json_extract(environment_json, '$.lab.discarded_s') is not null",
    );
    assert_eq!(discarded, "2", "{}", text(&out));
    let raw = sqlite("select distinct target from runs where variable = 'RAW'");
    assert!(
        raw.starts_with("/dev/loop"),
        "the raw arm ran on the lab's device: {raw}"
    );
    let shown = sqlite("select report_text from runs where variable = 'XFS' limit 1");
    assert!(shown.contains("lab      XFS: xfs by mkfs.xfs"), "{shown}");

    // The lab's runs make an IObench-style HTML report: one line per arm.
    let html = tmp.join("lab.html");
    let out = dbio(&lab_dir)
        .args(["report", "--plan", "lab-e2e", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    for arm in ["EXT4", "XFS", "RAW"] {
        assert!(page.contains(arm), "the page names arm {arm}");
    }
    assert!(page.matches("<svg").count() >= 3, "charts drawn");
    std::fs::remove_file(&html).unwrap();

    // Everything is done: running it again builds nothing.
    let again = lab_run(&lab_dir, &plan);
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("nothing to build"),
        "{}",
        text(&again)
    );
    assert!(!text(&again).contains("building arm"), "{}", text(&again));
}

fn an_arm_whose_runs_are_complete_is_not_built_again() {
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let one = r#"EXT4 = { fs = "ext4" }"#;
    let plan = write_plan(
        tmp.as_path(),
        "lab-resume",
        "ops = 200",
        "direct_io = false",
        one,
    );
    let out = lab_run(&lab_dir, &plan);
    assert!(out.status.success(), "{}", text(&out));
    // A second arm on its own device: only it is built, and only its runs are made.
    let two = r#"EXT4 = { fs = "ext4" }
RAW = { fs = "none" }"#;
    write_plan(
        tmp.as_path(),
        "lab-resume",
        "ops = 200",
        "direct_io = false",
        two,
    );
    let out = lab_run(&lab_dir, &plan);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("building arm RAW") && !t.contains("building arm EXT4"),
        "{t}"
    );
    assert!(t.contains("2 runs completed now, 2 already done"), "{t}");
    assert_nothing_left(&tmp, &lab_dir);
}

fn ctrl_c_in_the_middle_of_an_arm_tears_everything_down() {
    let mut case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let arms = r#"EXT4 = { fs = "ext4" }
XFS = { fs = "xfs" }"#;
    let plan = write_plan(
        tmp.as_path(),
        "lab-int",
        "time = 30",
        "same_device = true",
        arms,
    );
    case.start_until_mounted(&plan);
    thread::sleep(Duration::from_secs(2)); // into the first run
    assert!(
        !files_ending(&lab_dir, ".json").is_empty(),
        "a state file while running"
    );
    let child = case.left.child.take().unwrap();
    interrupt(&child, libc::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(text(&out).contains("interrupted"), "{}", text(&out));
    assert_nothing_left(&tmp, &lab_dir);
}

fn cleanup_after_kill_9_removes_exactly_what_the_lab_made() {
    let mut case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    // Not the lab's: a loop device with a mounted filesystem of its own.
    let mut decoy = LoopDev::new(64 << 20, false);
    decoy.mkfs("ext4");
    let decoy_mnt = decoy.mount();
    let arms = r#"XFS = { fs = "xfs" }"#;
    let plan = write_plan(tmp.as_path(), "lab-kill", "time = 30", "", arms);
    let child = case.start_until_mounted(&plan);
    thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL: no teardown
    child.wait().unwrap();
    case.left.child = None;
    let left = left_in(tmp.as_path());
    assert_eq!(left.len(), 2, "a mount and a loop device left: {left:?}");
    assert_eq!(files_ending(tmp.as_path(), ".img").len(), 1);
    let status = dbio(&lab_dir).args(["lab", "status"]).output().unwrap();
    assert!(text(&status).contains("not running"), "{}", text(&status));

    let out = dbio(&lab_dir).args(["lab", "cleanup"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_nothing_left(&tmp, &lab_dir);
    // The decoy is untouched: still attached and mounted.
    let mounts = fs::read_to_string("/proc/mounts").unwrap();
    assert!(
        mounts.contains(&decoy_mnt.display().to_string()),
        "decoy unmounted"
    );
    assert!(decoy.path.exists());
    let again = dbio(&lab_dir).args(["lab", "cleanup"]).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("0 thing(s) undone"),
        "{}",
        text(&again)
    );
}

fn a_named_device_is_used_and_given_back_attached_unmounted_with_its_scheduler() {
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let dev = LoopDev::new(320 << 20, true);
    let sched = |d: &LoopDev| {
        fs::read_to_string(format!("/sys/block/{}/queue/scheduler", d.name())).unwrap()
    };
    let before = sched(&dev);
    let d = dev.path.display();
    let p = tmp.join("named.toml");
    fs::write(
        &p,
        format!(
            "name = \"named-ok\"\nrepeats = 1\n[workload]\npattern = \"randwrite\"\nsize = \"32M\"\nops = 100\n\
             [lab]\ndevices = [\"{d}\"]\ndestroy_devices = [\"{d}\"]\nsame_device = true\nscheduler = \"kyber\"\n\
             [lab.arms]\nXFS = {{ fs = \"xfs\" }}\nRAW = {{ fs = \"none\" }}\n"
        ),
    )
    .unwrap();
    let out = lab_run(&lab_dir, &p);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        sqlite("select distinct json_extract(environment_json, '$.lab.device.kind') from runs"),
        "device"
    );
    // The device is the user's: still attached, not mounted, scheduler as it was.
    assert!(
        dev.path.exists()
            && fs::read_to_string(format!("/sys/block/{}/loop/backing_file", dev.name())).is_ok()
    );
    let mounts = fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(&format!("{d} ")), "{mounts}");
    assert_eq!(sched(&dev), before);
    assert!(files_ending(&lab_dir, ".json").is_empty());
    // A named device holds whatever it held: discarded before each arm.
    assert_eq!(
        sqlite(
            "select count(*) from runs where plan = 'named-ok' and \
             json_extract(environment_json, '$.lab.discarded_s') is null"
        ),
        "0"
    );
}

fn discarding_a_loop_device_makes_its_image_sparse_and_reads_zeros() {
    let _case = root_case();
    use std::io::{Read, Write};
    use std::os::unix::fs::MetadataExt;
    let dev = LoopDev::new(16 << 20, true);
    let mut f = fs::OpenOptions::new().write(true).open(&dev.path).unwrap();
    f.write_all(&vec![0xA5u8; 16 << 20]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let allocated = |p: &Path| fs::metadata(p).unwrap().blocks() * 512;
    assert!(allocated(dev.image()) >= 16 << 20);
    let took = dbio::lab::backing::discard_all(&dev.path).unwrap();
    assert!(took.is_some(), "a loop device takes discards");
    assert!(
        allocated(dev.image()) < 1 << 20,
        "{} bytes still allocated",
        allocated(dev.image())
    );
    let mut back = vec![1u8; 1 << 20];
    fs::File::open(&dev.path)
        .unwrap()
        .read_exact(&mut back)
        .unwrap();
    assert!(back.iter().all(|&b| b == 0));
    // Mounted, the kernel refuses it (O_EXCL): nothing is lost.
    let mut dev = dev;
    dev.mkfs("ext4");
    dev.mount();
    let e = dbio::lab::backing::discard_all(&dev.path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("cannot open") && e.contains(&dev.path.display().to_string()),
        "{e}"
    );
    dev.umount();
    assert!(dev.fsck_clean());
}

fn a_named_device_needs_its_destroy_devices_entry() {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("named.toml");
    fs::write(
        &p,
        "name = \"named\"\n\n[lab]\ndevices = [\"/dev/sdz\"]\nsame_device = true\n\n[lab.arms]\nXFS = { fs = \"xfs\" }\n",
    )
    .unwrap();
    let out = dbio(&tmp.path().join("state"))
        .args(["lab", "run", "--dry-run"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("named.toml:4: [lab] devices: /dev/sdz is not repeated in destroy_devices"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

fn a_mounted_device_is_refused_even_when_listed_for_destruction() {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let mut dev = LoopDev::new(64 << 20, false);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    fs::write(mnt.join("precious"), "data").unwrap();
    let d = dev.path.display();
    let p = tmp.path().join("mounted.toml");
    fs::write(
        &p,
        format!(
            "name = \"mounted\"\n[workload]\nops = 100\n[lab]\ndevices = [\"{d}\"]\ndestroy_devices = [\"{d}\"]\nsame_device = true\n[lab.arms]\nEXT4 = {{ fs = \"ext4\" }}\n"
        ),
    )
    .unwrap();
    let out = dbio(&tmp.path().join("state"))
        .args(["lab", "run"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to write to")
            && err.contains("is mounted at")
            && err.contains("(destroy_devices cannot override this)"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(mnt.join("precious")).unwrap(), "data");
}

fn not_root_is_refused_before_anything_is_made() {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shared");
    fs::create_dir(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let plan = write_plan(
        &dir,
        "lab-user",
        "ops = 100",
        "",
        r#"EXT4 = { fs = "ext4" }"#,
    );
    fs::set_permissions(&plan, fs::Permissions::from_mode(0o644)).unwrap();
    // The same binary as an unprivileged user (nobody).
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["lab", "run"])
        .arg(&plan)
        .env("DBIO_DB", dir.join("store.sqlite"))
        .env("DBIO_LAB_DIR", dir.join("state"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs root"), "{err}");
    assert!(!dir.join("state").exists() && files_ending(&dir, ".img").is_empty());
}

fn dbio_plan_run_sends_a_lab_plan_to_dbio_lab_run() {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/iobench-files.toml");
    let out = dbio(&tmp.path().join("state"))
        .args(["plan", "run"])
        .arg(&example)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("has a [lab] section: run it with dbio lab run"),
        "{}",
        text(&out)
    );
    // A refused command leaves no store behind (nor a run in one).
    assert!(!store_path().exists(), "no store was created");
}

fn the_shipped_example_parses_and_dry_runs() {
    let _store = temp_store();
    let tmp = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/iobench-files.toml");
    let out = dbio(&tmp.path().join("state"))
        .args(["lab", "run", "--dry-run"])
        .arg(&example)
        .output()
        .unwrap();
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("lab: 2 arm(s) on loop devices (direct-io on)"),
        "{t}"
    );
    assert!(t.contains("98 run(s) to make"), "{t}");
    assert!(
        t.contains("--io direct") && t.contains("--pattern randwrite"),
        "{t}"
    );
    assert!(
        !tmp.path().join("state").exists(),
        "a dry run makes nothing"
    );
}

fn lab_discard_times_mkfs_rm_and_fstrim_with_and_without_discard() {
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    let out = dbio(&lab_dir)
        .args([
            "lab",
            "discard",
            "--image-size",
            "256M",
            "--files",
            "2",
            "--file-size",
            "8M",
            "--json",
        ])
        .arg("--image-dir")
        .arg(tmp.as_path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = |prefix: &str| -> f64 {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["step"].as_str().unwrap().starts_with(prefix))
            .map(|s| s["discards"].as_f64().unwrap())
            .sum()
    };
    assert!(step("mkfs.ext4 -E discard") > 0.0, "{r}");
    assert_eq!(step("mkfs.ext4 -E nodiscard"), 0.0, "{r}");
    let online =
        step("rm 2 files (mounted -o discard)") + step("sync + umount (mounted -o discard)");
    assert!(online > 0.0, "-o discard sends discards when files go: {r}");
    let offline = step("rm 2 files (mounted without") + step("sync + umount (mounted without");
    assert_eq!(offline, 0.0, "without -o discard nothing is discarded: {r}");
    assert!(
        step("fstrim") > 0.0 && r["fstrim_trimmed_bytes"].as_u64().unwrap() > 0,
        "{r}"
    );
    assert!(
        r["notes"][0].as_str().unwrap().contains("hole punching"),
        "{r}"
    );
    // Rates are named per second, sizes in KiB (the run document's rule).
    assert_eq!(r["schema"], "dbio.lab.discard.v2");
    for s in r["steps"].as_array().unwrap() {
        for k in ["d_per_s", "dkib_per_s", "wkib_per_s"] {
            assert!(s[k].is_number(), "{k} in {s}");
        }
        assert!(
            s.as_object()
                .unwrap()
                .keys()
                .all(|k| !k.ends_with("kb_s") && k != "d_s"),
            "{s}"
        );
    }
    assert_nothing_left(&tmp, &lab_dir);
}

fn lab_discard_on_a_named_device_needs_it_repeated_and_gives_it_back() {
    let case = root_case();
    let dev = LoopDev::new(256 << 20, true);
    let d = dev.path.to_str().unwrap();
    let args = [
        "lab",
        "discard",
        "--files",
        "2",
        "--file-size",
        "8M",
        "--json",
    ];
    let out = dbio(&case.lab_dir)
        .args(args)
        .args(["--device", d])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("repeat it as --destroy-device {d}")),
        "{}",
        text(&out)
    );
    let out = dbio(&case.lab_dir)
        .args(args)
        .args(["--device", d, "--destroy-device", d])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["device"]["kind"], "device");
    assert!(r["fstrim_trimmed_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(dev.path.exists(), "the device is the user's: not detached");
    let mounts = fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains(&format!("{d} ")), "{mounts}");
    assert!(files_ending(&case.lab_dir, ".json").is_empty());
}

/// Runs a lab plan whose arms start a database server `server` (which runs
/// as its own user: that user must reach the mounts under the test's
/// directory), one test at a time under `lock`; `plan` is the plan's TOML,
/// its `{image_dir}` the test's directory. Checks that neither the lab nor
/// the server left anything, and returns the case, whose store holds the
/// runs.
fn run_server_lab(lock: &std::sync::Mutex<()>, server: &str, plan: &str) -> Case {
    use std::os::unix::fs::PermissionsExt;
    let _one = lock.lock().unwrap_or_else(|p| p.into_inner());
    let case = root_case();
    let (tmp, lab_dir) = (case.tmp.path().to_path_buf(), case.lab_dir.clone());
    fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755)).unwrap();
    let file = tmp.join("plan.toml");
    fs::write(
        &file,
        plan.replace("{image_dir}", &tmp.display().to_string()),
    )
    .unwrap();
    let out = lab_run(&lab_dir, &file);
    assert!(out.status.success(), "{}", text(&out));
    assert_nothing_left(&tmp, &lab_dir);
    assert!(
        crate::common::server::processes_left(&tmp).is_empty(),
        "a {server} left"
    );
    case
}

/// `path` in the report of plan `plan`'s completed run of arm `arm`.
fn arm_value(plan: &str, arm: &str, path: &str) -> String {
    sqlite(&format!(
        "select json_extract(report_json, '$.{path}') from runs \
         where plan = '{plan}' and variable = '{arm}' and status = 'completed'"
    ))
}

/// A tiny version of examples/innodb-lab.toml: MariaDB in two arms (XFS,
/// one data file, O_DIRECT; EXT4, four, fsync), two sessions on one table.
fn a_lab_plan_with_mysql_arms_runs_innodb_on_each_filesystem() {
    let _case = run_server_lab(
        &crate::mysql::ONE_AT_A_TIME,
        "mariadbd",
        r#"name = "innodb-tiny"
repeats = 1

[workload]
workload = "mysql"
schemas = 1
scale = "1000"
work_unit = 16
work_loop = 30
update_pct = 50
cache = "16M"

[sweep]
threads_per_schema = [2]

[lab]
image_dir = "{image_dir}"
image_size = "640M"
target = "dbio-innodb"

[lab.arms]
XFS-1f-direct = { fs = "xfs", files = 1, io = "direct" }
EXT4-4f-fsync = { fs = "ext4", mkfs = "-E nodiscard", files = 4, io = "fsync" }
"#,
    );
    let arm = |arm: &str, path: &str| arm_value("innodb-tiny", arm, path);
    for (name, files, method) in [
        ("XFS-1f-direct", "1", "O_DIRECT"),
        ("EXT4-4f-fsync", "4", "fsync"),
    ] {
        assert_eq!(arm(name, "config.files"), files, "{name}");
        assert_eq!(arm(name, "config.mysql.flush_method"), method, "{name}");
        // 2 sessions x 30 work loops, half updates: each one commit the server counted.
        let count = |path: &str| arm(name, path).parse::<f64>().unwrap_or(-1.0);
        assert_eq!(count("mysql.updates"), 30.0, "{name}");
        assert_eq!(count("mysql.server.Com_commit"), 30.0, "{name}");
    }
}

/// The same with PostgreSQL: the cluster dbio starts lives on each
/// filesystem arm (XFS, EXT4), the server is stopped after each run.
fn a_lab_plan_with_pg_arms_runs_postgresql_on_each_filesystem() {
    let _case = run_server_lab(
        &crate::pg::ONE_AT_A_TIME,
        "postgres",
        r#"name = "pg-tiny"
repeats = 1

[workload]
workload = "pg"
schemas = 1
scale = "300"
work_unit = 16
work_loop = 20
update_pct = 50
cache = "16M"

[sweep]
threads_per_schema = [2]

[lab]
image_dir = "{image_dir}"
image_size = "640M"
target = "dbio-pg"

[lab.arms]
XFS = { fs = "xfs" }
EXT4 = { fs = "ext4", mkfs = "-E nodiscard" }
"#,
    );
    let arm = |arm: &str, path: &str| arm_value("pg-tiny", arm, path);
    for (name, fs_type) in [("XFS", "xfs"), ("EXT4", "ext4")] {
        assert_eq!(arm(name, "config.workload"), "pg", "{name}");
        // The cluster's data directory is on the arm's filesystem.
        assert_eq!(arm(name, "storage.links[0].fs_type"), fs_type, "{name}");
        assert!(arm(name, "pg.data_dir").contains("/dbio-pg"), "{name}");
        // 2 sessions x 20 work loops, half updates; every select and every
        // update a transaction the server counted.
        let count = |path: &str| arm(name, path).parse::<f64>().unwrap_or(-1.0);
        assert_eq!(count("pg.updates"), 20.0, "{name}");
        assert_eq!(count("pg.server.xact_commit"), 40.0, "{name}");
        assert!(count("pg.server.wal_bytes") > 0.0, "{name}");
    }
}

crate::tests! {
    a_lab_plan_with_mysql_arms_runs_innodb_on_each_filesystem [Root, MariaDB, Tool("mkfs.xfs")],
    a_lab_plan_with_pg_arms_runs_postgresql_on_each_filesystem [Root, Postgres, Tool("mkfs.xfs")],
    lab_run_builds_each_arm_runs_the_plan_and_leaves_nothing_behind [Root],
    an_arm_whose_runs_are_complete_is_not_built_again [Root],
    ctrl_c_in_the_middle_of_an_arm_tears_everything_down [Root],
    cleanup_after_kill_9_removes_exactly_what_the_lab_made [Root],
    a_named_device_is_used_and_given_back_attached_unmounted_with_its_scheduler [Root],
    discarding_a_loop_device_makes_its_image_sparse_and_reads_zeros [Root],
    a_named_device_needs_its_destroy_devices_entry,
    a_mounted_device_is_refused_even_when_listed_for_destruction [Root],
    not_root_is_refused_before_anything_is_made [Root],
    dbio_plan_run_sends_a_lab_plan_to_dbio_lab_run,
    the_shipped_example_parses_and_dry_runs,
    lab_discard_times_mkfs_rm_and_fstrim_with_and_without_discard [Root],
    lab_discard_on_a_named_device_needs_it_repeated_and_gives_it_back [Root],
}
