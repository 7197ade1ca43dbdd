//! `--workload pg` with what a hostile or unlucky user gives it (issue 26):
//! target paths holding shell and config syntax each run correctly or are
//! refused in one line with nothing created, and no command in them ever
//! runs (a canary file never appears); `--pg-set` values reach the server
//! as given; a full filesystem is refused before anything is made when the
//! options cannot fit, and named (ENOSPC, the filesystem, its free space)
//! wherever it fills, after which `dbio clean` removes what was left; after
//! `--ramp` the server's transactions in the window are the client's.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::loopdev::umount_retrying;
use crate::common::server::{dbio, json, processes_under, stderr_lines};
use crate::common::store::temp_store;
use crate::pg::{ONE_AT_A_TIME, PgDir};

/// What a hostile target must do: run correctly (given as an absolute
/// path, or relative to the current directory), or be refused.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Runs,
    RunsRelative,
    Refused,
}

/// The target names: shell syntax, config syntax, whitespace, a leading
/// `-`, bytes that are not UTF-8, and a path too deep for a socket.
/// `$DBIO_CANARY` is the canary's path.
const HOSTILE: &[(&[u8], Expect)] = &[
    (b"sub$(touch $DBIO_CANARY)", Expect::Runs),
    (b"tick`touch $DBIO_CANARY`", Expect::Runs),
    (b"dq\"x\"; touch $DBIO_CANARY; \"", Expect::Runs),
    (b"sq'x'; touch $DBIO_CANARY; '", Expect::Runs),
    (b"back\\slash\\t\\n", Expect::Runs),
    (b"com,ma", Expect::Runs),
    (b"hash#x", Expect::Runs),
    (b"sp ace", Expect::Runs),
    (b"tab\tx", Expect::Runs),
    (b"new\nline", Expect::Runs),
    (b"-lead", Expect::Runs),
    (b"-rel", Expect::RunsRelative),
    (b"bad\xff\xfeutf8", Expect::Refused),
    // Too deep for a unix socket under the target (107 bytes): the socket
    // goes to dbio's own short directory.
    (
        b"deep-0123456789-0123456789-0123456789-0123456789-0123456789-0123456789-0123456789",
        Expect::Runs,
    ),
];

/// A directory of hostile targets the postgres user can reach, and a
/// canary directory it can write; every cluster made there is cleaned
/// (and any server left killed) when dropped.
struct Hostile {
    base: tempfile::TempDir,
    canary_dir: tempfile::TempDir,
}

impl Hostile {
    fn new() -> Hostile {
        let dir = |mode| {
            let d = tempfile::Builder::new()
                .prefix("dbio-pg-hostile-")
                .tempdir_in("/dev/shm")
                .unwrap();
            fs::set_permissions(d.path(), fs::Permissions::from_mode(mode)).unwrap();
            d
        };
        Hostile {
            base: dir(0o755),
            canary_dir: dir(0o777),
        }
    }

    fn canary(&self) -> PathBuf {
        self.canary_dir.path().join("canary")
    }

    /// `dbio ARGS` in the base directory, with the canary's path in the
    /// environment (where a shell in the way would expand it).
    fn dbio(&self, args: &[&OsStr]) -> Output {
        dbio()
            .current_dir(self.base.path())
            .env("DBIO_CANARY", self.canary())
            .args(args)
            .output()
            .unwrap()
    }

    /// `--target=BASE/NAME`, or `--target=NAME` run in BASE.
    fn target_arg(&self, name: &[u8], expect: Expect) -> OsString {
        let mut a = OsString::from("--target=");
        if expect != Expect::RunsRelative {
            a.push(self.base.path().as_os_str());
            a.push("/");
        }
        a.push(OsStr::from_bytes(name));
        a
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        for (name, expect) in HOSTILE {
            let t = self.target_arg(name, *expect);
            let _ = self.dbio(&[OsStr::new("clean"), &t]);
        }
        for pid in processes_under(self.base.path()) {
            // SAFETY: killing a leftover server process of this test.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn num(v: &Value, path: &str) -> f64 {
    path.split('.')
        .fold(v, |v, k| &v[k])
        .as_f64()
        .unwrap_or_else(|| panic!("{path} missing in {v}"))
}

/// A hostile target: the run's outcome as the table says, and the report
/// naming the cluster where it is.
fn check_hostile_target(h: &Hostile, name: &[u8], expect: Expect) {
    let target = h.base.path().join(OsStr::from_bytes(name));
    let t = h.target_arg(name, expect);
    let mut args: Vec<&OsStr> = ["run", "--workload", "pg", "--json"]
        .iter()
        .map(OsStr::new)
        .collect();
    args.push(&t);
    args.extend(
        ["--sessions", "1", "--scale", "100", "--update-pct", "50"]
            .iter()
            .chain(["--work-loop", "10"].iter())
            .map(OsStr::new),
    );
    let out = h.dbio(&args);
    let shown = String::from_utf8_lossy(name);
    match expect {
        Expect::Refused => {
            let err = stderr_lines(&out);
            assert_eq!(out.status.code(), Some(2), "{shown:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{shown:?}: {err}");
            assert!(err.contains("--target"), "{shown:?}: {err}");
            assert!(!target.exists(), "{shown:?}: a refused run made its target");
        }
        Expect::Runs | Expect::RunsRelative => {
            let r = json(&out);
            let pg = &r["pg"];
            assert_eq!(num(pg, "selects") + num(pg, "updates"), 10.0, "{shown:?}");
            assert_eq!(num(pg, "server.xact_commit"), 10.0, "{shown:?}");
            let data = target.join("dbio-pg/data");
            assert_eq!(
                pg["data_dir"].as_str(),
                data.to_str(),
                "{shown:?}: the cluster is where the target says"
            );
            assert!(data.join("PG_VERSION").is_file(), "{shown:?}");
            let out = h.dbio(&[OsStr::new("clean"), &t]);
            assert!(out.status.success(), "{shown:?}: {}", stderr_lines(&out));
            assert!(!target.exists(), "{shown:?}: clean left the target");
        }
    }
    assert!(
        !h.canary().exists(),
        "{shown:?}: a command in the target path ran"
    );
}

fn hostile_target_paths_run_or_are_refused_and_run_no_command() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let h = Hostile::new();
    for (name, expect) in HOSTILE {
        check_hostile_target(&h, name, *expect);
    }
    assert!(!Path::new("/run/dbio").exists() || fs::read_dir("/run/dbio").unwrap().count() == 0);
}

/// `--pg-set` values are written by postgresql.conf's quoting rules: the
/// server reports exactly what was given (a `\` is not an escape, a `'`
/// does not end the value, a `#` is not a comment); a value it cannot
/// carry (a line break) is refused in one line before anything is made;
/// a `--pg-bin` initdb would hand to a shell is refused too.
fn pg_set_values_reach_the_server_as_given() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let given = r#"it's a\tb "c" #d $(e) `f`"#;
    let set = format!("cluster_name={given}");
    let r = json(&d.run(&[
        "--sessions",
        "1",
        "--scale",
        "100",
        "--work-loop",
        "5",
        "--pg-set",
        &set,
    ]));
    let settings = r["pg"]["settings"].as_array().unwrap();
    let cluster_name = settings
        .iter()
        .find(|s| s[0] == "cluster_name")
        .unwrap_or_else(|| panic!("{settings:?}"));
    assert_eq!(cluster_name[1].as_str(), Some(given));
    drop(d);

    let d = PgDir::on_tmpfs();
    let out = d.run(&["--pg-set", "cluster_name=a\rb", "--scale", "100"]);
    let err = stderr_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line break") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!d.target.exists());

    // A --pg-bin whose path initdb would give a shell.
    let bins = tempfile::tempdir().unwrap();
    let canary = bins.path().join("canary");
    let bad = bins.path().join("bin$(touch canary)");
    std::os::unix::fs::symlink("/usr/lib/postgresql/15/bin", &bad).unwrap();
    let out = d
        .command(&["--scale", "100", "--pg-bin"])
        .arg(&bad)
        .current_dir(bins.path())
        .output()
        .unwrap();
    let err = stderr_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--pg-bin") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!canary.exists() && !d.target.exists());
}

/// After `--ramp`, each backend still holds up to a second of counts it has
/// not sent to the statistics system; dbio has them sent as the window
/// opens, so the server's transactions in the window are the client's
/// operations (before: 18% more in this 3 s window).
fn after_a_ramp_the_servers_window_counts_the_clients_operations() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let r = json(&d.run(&[
        "--sessions",
        "4",
        "--scale",
        "300",
        "--update-pct",
        "20",
        "--time",
        "3",
        "--ramp",
        "1.5",
    ]));
    let pg = &r["pg"];
    let client = num(pg, "selects") + num(pg, "updates") + num(pg, "scans");
    let server = num(pg, "server.xact_commit");
    eprintln!("window: client {client} operations, server {server} transactions");
    assert!(client > 100.0, "{pg}");
    assert!(
        (server - client).abs() / client < 0.01,
        "server {server} vs client {client}: {:.2}% apart",
        (server - client) / client * 100.0
    );
}

/// A tmpfs of `size` mounted on a new directory, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn new(size: &str) -> SmallFs {
        let dir = tempfile::Builder::new()
            .prefix("dbio-pg-full-")
            .tempdir_in("/tmp")
            .unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o"])
            .arg(format!("size={size},mode=755"))
            .arg("dbio-it-pg-full")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount tmpfs");
        SmallFs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Takes all but `leave` bytes of the free space.
    fn fill(&self, leave: u64) -> PathBuf {
        let st = rustix::fs::statvfs(self.path()).unwrap();
        let free = st.f_bavail * st.f_frsize;
        let filler = self.path().join("filler");
        let f = fs::File::create(&filler).unwrap();
        let _ = rustix::fs::fallocate(
            &f,
            rustix::fs::FallocateFlags::empty(),
            0,
            free.saturating_sub(leave),
        );
        filler
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        for pid in processes_under(self.path()) {
            // SAFETY: killing a leftover server process of this test.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        if !umount_retrying(self.path()) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(self.path())
                .status();
        }
    }
}

/// `dbio run` on `target` whose filesystem `fs` is filled once `when`
/// holds (checked every millisecond): its output.
fn run_filled_when(
    fs: &SmallFs,
    target: &Path,
    args: &[&str],
    mut when: impl FnMut() -> bool,
) -> Output {
    let mut child: Child = dbio()
        .args(["run", "--workload", "pg", "--json", "--target"])
        .arg(target)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !when() && child.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(120), "never got there");
        std::thread::sleep(Duration::from_millis(1));
    }
    fs.fill(1 << 20);
    child.wait_with_output().unwrap()
}

/// The one error line names ENOSPC, the filesystem and its free space.
fn assert_names_enospc(out: &Output, what: &str) {
    let err = stderr_lines(out);
    eprintln!("{what}: {err}");
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{what}: {err}");
    assert!(
        err.contains("no space left on device (ENOSPC)")
            && err.contains("the filesystem of ")
            && err.contains(" free of 256 MiB)"),
        "{what}: {err}"
    );
}

/// `dbio clean` removes what the failed run left, the target included.
fn assert_clean_removes(target: &Path, what: &str) {
    let out = dbio()
        .args(["clean", "--target"])
        .arg(target)
        .output()
        .unwrap();
    assert!(out.status.success(), "{what}: {}", stderr_lines(&out));
    assert!(!target.exists(), "{what}: clean left {}", target.display());
}

fn a_full_filesystem_is_named_and_clean_removes_what_was_left() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let small = SmallFs::new("256m");
    let target = small.path().join("t");

    // Options that cannot fit: refused before anything is made, naming
    // --scale (not --size) and counting the cluster and its WAL.
    let out = dbio()
        .args(["run", "--workload", "pg", "--target"])
        .arg(&target)
        .args(["--scale", "30000", "--schemas", "1", "--work-loop", "5"])
        .output()
        .unwrap();
    let err = stderr_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not enough free space")
            && err.contains("--scale 30000")
            && err.contains("the cluster")
            && err.contains("WAL")
            && !err.contains("--size"),
        "{err}"
    );
    assert!(!target.exists(), "a refused run made its target");

    // The filesystem fills while initdb writes the cluster.
    let data = target.join("dbio-pg/data");
    let args = ["--scale", "2000", "--sessions", "1", "--work-loop", "5"];
    let out = run_filled_when(&small, &target, &args, || data.is_dir());
    assert_names_enospc(&out, "during initdb");
    assert_clean_removes(&target, "after initdb");
    fs::remove_file(small.path().join("filler")).unwrap();

    // The filesystem fills once the server is up: making the database or
    // loading the tables fails ("could not extend file").
    let socket = target.join("dbio-pg/run/.s.PGSQL.5432");
    let out = run_filled_when(&small, &target, &args, || socket.exists());
    assert_names_enospc(&out, "during the load");
    assert_clean_removes(&target, "after the load");
    fs::remove_file(small.path().join("filler")).unwrap();

    // A fill while the sessions update is not checked here: whether the
    // server then needs new room (a WAL segment) within the run depended on
    // timing, and the case failed 2 full runs in 6 with the run unharmed.
}

crate::tests! {
    hostile_target_paths_run_or_are_refused_and_run_no_command [Root, Postgres],
    pg_set_values_reach_the_server_as_given [Root, Postgres],
    after_a_ramp_the_servers_window_counts_the_clients_operations [Root, Postgres],
    a_full_filesystem_is_named_and_clean_removes_what_was_left [Root, Postgres],
}
