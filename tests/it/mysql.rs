//! `--workload mysql` against the real MariaDB dbio starts (Debian's
//! mariadb-server): runs on tmpfs and on XFS over a direct-io loop device,
//! the invariants between what dbio issued and what the server counted
//! (commits = transactions issued; redo with updates; under O_DIRECT the
//! device's reads agree with Innodb_data_reads within 10%), the settings
//! from dbio's options as the server applied them, and that no mariadbd,
//! socket or pid file is left after success, a failed start, Ctrl-C, the
//! server killed under the run, or kill -9 of dbio (then the next run or
//! `dbio clean`); a full filesystem refused before anything is made, or
//! named (ENOSPC, its free space) when the server fills it. The tests share one lock: "nothing left" is checked
//! machine-wide.

use std::fs;
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::common::loopdev::LoopDev;
use crate::common::run::num;
use crate::common::server::{ServerDir, dbio, evict, json, processes_left, stderr_lines};
use crate::common::store::temp_store;

pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The server's socket under the target.
const SOCKET: &str = "dbio-mysql/run/mysqld.sock";

/// A target directory the mysql user can reach (`ServerDir`).
pub(crate) struct MyDir(ServerDir);

impl std::ops::Deref for MyDir {
    type Target = ServerDir;
    fn deref(&self) -> &ServerDir {
        &self.0
    }
}

impl MyDir {
    pub(crate) fn on_tmpfs() -> MyDir {
        MyDir(ServerDir::on_tmpfs("mysql", SOCKET))
    }

    fn under(mountpoint: &Path) -> MyDir {
        MyDir(ServerDir::under(mountpoint, "mysql", SOCKET))
    }
}

/// The server's pid, from its pid file.
fn server_pid(d: &ServerDir) -> i32 {
    fs::read_to_string(d.target.join("dbio-mysql/run/mysqld.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// No server process, socket or pid file of `d`'s instance.
pub(crate) fn assert_nothing_left(d: &ServerDir) {
    assert_eq!(processes_left(&d.base), Vec::<i32>::new(), "mariadbd left");
    assert!(!d.socket().exists(), "socket left");
    assert!(
        !d.target.join("dbio-mysql/run/mysqld.pid").exists(),
        "pid file left"
    );
}

pub fn setting<'a>(my: &'a Value, name: &str) -> &'a str {
    my["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s[0] == name)
        .and_then(|s| s[1].as_str())
        .unwrap_or_else(|| panic!("{name} not in {}", my["settings"]))
}

fn mysql_run_on_tmpfs_meets_the_invariants() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let base = [
        "--sessions",
        "2",
        "--scale",
        "1000",
        "--work-unit",
        "16",
        "--cache",
        "16M",
        "--work-loop",
        "60",
    ];

    // Select only: no transaction committed, (almost) no redo.
    let mut args = base.to_vec();
    args.extend(["--update-pct", "0"]);
    let r = json(&d.run(&args));
    let my = &r["mysql"];
    assert_eq!(my["instance_reused"], false);
    assert_eq!(my["load"]["reused"], false);
    assert!(num(my, "load.mib_per_s") > 0.0);
    assert_eq!(num(my, "selects"), 120.0);
    assert_eq!(num(my, "rows"), 120.0 * 16.0);
    assert_eq!(num(my, "server.Com_commit"), 0.0);
    assert!(
        num(my, "server.Innodb_buffer_pool_read_requests") >= 120.0 * 16.0,
        "{}",
        my["server"]
    );
    assert!(
        num(my, "server.Innodb_os_log_written") < 64.0 * 1024.0,
        "select-only redo: {}",
        my["server"]
    );
    // dbio's settings as the server applied them.
    assert_eq!(setting(my, "innodb_flush_method"), "O_DIRECT");
    assert_eq!(setting(my, "innodb_page_size"), "16384");
    assert_eq!(setting(my, "innodb_flush_log_at_trx_commit"), "1");
    assert_eq!(
        setting(my, "innodb_buffer_pool_size"),
        (16 << 20).to_string()
    );
    assert_eq!(setting(my, "skip_networking"), "ON");
    assert_nothing_left(&d);

    // Half updates, each START TRANSACTION, UPDATE, COMMIT: every commit
    // the server counted is one dbio issued; redo with updates.
    let mut args = base.to_vec();
    args.extend(["--update-pct", "50", "--mysql-set", "innodb_doublewrite=0"]);
    let r = json(&d.run(&args));
    let my = &r["mysql"];
    assert_eq!(my["instance_reused"], true);
    assert_eq!(my["load"]["reused"], true);
    assert_eq!(num(my, "updates"), 60.0);
    assert_eq!(num(my, "commit.requests"), 60.0);
    assert_eq!(num(my, "server.Com_commit"), 60.0);
    assert!(
        num(my, "server.Innodb_os_log_written") > 60.0 * 16.0 * 8.0,
        "{}",
        my["server"]
    );
    assert_eq!(setting(my, "innodb_doublewrite"), "OFF");
    // performance_schema timed InnoDB's file I/O in the window.
    let io = my["ps_waits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["event"] == "wait/io/file/innodb/innodb_data_file")
        .unwrap_or_else(|| panic!("no data file waits: {}", my["ps_waits"]));
    assert!(num(io, "waits") > 0.0 && num(io, "time_ms") > 0.0, "{io}");
    assert_nothing_left(&d);

    // The store has the shared db.* metrics: dbio report reads them.
    for m in [
        "db.executes_s",
        "db.redo_mbs",
        "db.physical_reads_s",
        "db.transactions_s",
    ] {
        let out = dbio()
            .args(["report", "--metric", m, "--format", "csv"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{m}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // AWR's compare period report reads the mysql load profile.
    let out = dbio().args(["compare", "1", "2"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in ["Executes", "Redo bytes", "mysql.update_pct"] {
        assert!(text.contains(line), "{line} missing from compare:\n{text}");
    }

    // Another page size and flush method: a new instance, as asked.
    let mut args = base.to_vec();
    args.extend(["--update-pct", "20", "--bs", "8k", "--io", "fsync"]);
    let r = json(&d.run(&args));
    let my = &r["mysql"];
    assert_eq!(my["instance_reused"], false);
    assert_eq!(setting(my, "innodb_page_size"), "8192");
    assert_eq!(setting(my, "innodb_flush_method"), "fsync");
    assert_eq!(num(my, "server.Com_commit"), num(my, "updates"));
    assert_nothing_left(&d);

    // dbio clean removes the instance.
    let out = d.clean();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!d.target.join("dbio-mysql").exists());
}

/// The .ibd files of dbio's tables in `d`'s instance, with their sizes.
fn data_files(d: &MyDir) -> Vec<(String, u64)> {
    let dir = d.target.join("dbio-mysql/data/dbio");
    let mut files: Vec<(String, u64)> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .filter(|(n, _)| n.starts_with("dbio_t") && n.ends_with(".ibd"))
        .collect();
    files.sort();
    files
}

fn files_partition_one_table_into_that_many_ibd_files() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    // Two sessions on one table of 2,000 rows (1,000 pages of 16k) in four
    // data files, half updates.
    let args = |files: &'static str| {
        [
            "--schemas",
            "1",
            "--threads-per-schema",
            "2",
            "--scale",
            "2000",
            "--work-unit",
            "16",
            "--cache",
            "16M",
            "--work-loop",
            "40",
            "--update-pct",
            "50",
            "--files",
            files,
        ]
    };
    let r = json(&d.run(&args("4")));
    assert_eq!(r["config"]["files"], 4, "{}", r["config"]);
    let my = &r["mysql"];
    let files = data_files(&d);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "dbio_t0#P#p0.ibd",
            "dbio_t0#P#p1.ibd",
            "dbio_t0#P#p2.ibd",
            "dbio_t0#P#p3.ibd"
        ]
    );
    // The rows spread evenly: each file holds a quarter of the 1,000 pages.
    let sizes: Vec<u64> = files.iter().map(|(_, b)| *b).collect();
    let (lo, hi) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
    assert!(
        lo >= 250 * 16384 * 9 / 10,
        "a partition smaller than its rows: {files:?}"
    );
    assert!(hi <= lo * 3 / 2, "rows not spread evenly: {files:?}");
    // The invariants hold over partitions: a commit per update issued, every
    // row of a work unit found, redo written.
    assert_eq!(num(my, "updates"), 40.0);
    assert_eq!(num(my, "server.Com_commit"), 40.0);
    assert_eq!(num(my, "rows"), 80.0 * 16.0, "{my}");
    assert!(num(my, "server.Innodb_os_log_written") > 40.0 * 16.0 * 8.0);
    assert_nothing_left(&d);

    // One file again: the same instance, the table made again unpartitioned.
    let r = json(&d.run(&args("1")));
    let my = &r["mysql"];
    assert_eq!(my["instance_reused"], true);
    assert_eq!(my["load"]["reused"], false);
    let names: Vec<String> = data_files(&d).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["dbio_t0.ibd"]);
    assert_eq!(num(my, "server.Com_commit"), 40.0);
    assert_nothing_left(&d);
}

fn the_terminal_report_speaks_innodb() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let out = dbio()
        .args(["run", "--workload", "mysql", "--quiet", "--target"])
        .arg(&d.target)
        .args([
            "--sessions",
            "2",
            "--scale",
            "500",
            "--update-pct",
            "50",
            "--work-loop",
            "20",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "Load Profile",
        "Transactions (Com_commit)",
        "Redo bytes (os_log_written)",
        "Top Events",
        "buffer pool",
        "doublewrite",
        "Innodb_data_reads",
        "innodb_flush_method=O_DIRECT",
        "Wait events (performance_schema)",
        "wait/io/file/innodb/innodb_data_file",
    ] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    assert_nothing_left(&d);
}

fn no_mariadb_is_one_line_naming_the_package() {
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let empty = tempfile::tempdir().unwrap();
    let out = d.run(&["--mysql-bin", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("mariadb-server"), "{err}");
    assert!(!d.target.exists(), "a refused run made its target");
}

fn a_bad_setting_fails_in_one_line_and_leaves_nothing_running() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    // Refused before anything is made.
    let out = d.run(&["--mysql-set", "innodb_doublewrite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.target.exists(), "a refused run made its target");
    // Refused by the server: one line with the log's last lines, exit 1.
    let out = d.run(&[
        "--scale",
        "100",
        "--mysql-set",
        "innodb_no_such_thing=3",
        "--time",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_lines(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("did not start") && err.contains("innodb_no_such_thing"),
        "{err}"
    );
    assert_nothing_left(&d);
    // The same on an installed instance: the start fails, the log says why.
    json(&d.run(&["--scale", "100", "--work-loop", "2"]));
    let out = d.run(&[
        "--scale",
        "100",
        "--mysql-set",
        "innodb_no_such_thing=3",
        "--time",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_lines(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("did not start: it exited") && err.contains("innodb_no_such_thing"),
        "{err}"
    );
    assert_nothing_left(&d);
}

fn ctrl_c_stops_the_server_and_keeps_what_was_measured() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let r = d.interrupted(&[
        "--sessions",
        "2",
        "--scale",
        "500",
        "--update-pct",
        "20",
        "--time",
        "120",
    ]);
    assert!(num(&r["mysql"], "selects") > 0.0);
    assert!(num(&r["mysql"], "server.Com_commit") > 0.0);
    assert_nothing_left(&d);
}

fn kill_9_leaves_a_server_the_next_run_and_clean_stop() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    d.kill_9(
        &["--sessions", "1", "--scale", "200", "--time", "120"],
        &["--sessions", "1", "--scale", "200", "--work-loop", "5"],
        "dbio-mysql",
        |_| {},
        assert_nothing_left,
    );
}

fn a_server_killed_mid_run_fails_the_run_and_is_cleaned_up() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = MyDir::on_tmpfs();
    let args = [
        "--sessions",
        "2",
        "--scale",
        "500",
        "--update-pct",
        "20",
        "--time",
        "120",
    ];
    let r = d.server_killed(&args, server_pid);
    assert!(
        num(&r["mysql"], "selects") > 0.0,
        "what was measured is kept"
    );
    // The dead server's socket and pid file are gone too.
    assert_nothing_left(&d);
    // InnoDB recovers from its redo at the next start.
    json(&d.run(&[
        "--sessions",
        "2",
        "--scale",
        "500",
        "--update-pct",
        "20",
        "--work-loop",
        "10",
    ]));
    assert_nothing_left(&d);
}

fn o_direct_reads_on_xfs_agree_with_the_device() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let mut dev = LoopDev::new(1 << 30, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let d = MyDir::under(&mnt);
    // 2 x 4000 rows of 6.5 KiB = 50 MiB of table against 8 MiB of buffer pool.
    let args = [
        "--sessions",
        "2",
        "--scale",
        "4000",
        "--cache",
        "8M",
        "--update-pct",
        "20",
        "--work-loop",
        "200",
    ];
    json(&d.run(&args));
    evict(&d.target);
    let r = json(&d.run(&args));
    let my = &r["mysql"];
    let reads = &my["physical_reads"];
    assert_eq!(
        reads["device"].as_str(),
        Some(dev.name().as_str()),
        "{reads}"
    );
    let (innodb, device) = (num(reads, "innodb_requests"), num(reads, "device_requests"));
    eprintln!("InnoDB and the device: {reads}");
    assert!(innodb > 500.0, "{reads}");
    assert!(
        (device - innodb).abs() <= 0.10 * innodb,
        "device {device} vs Innodb_data_reads {innodb}: {reads}"
    );
    assert_eq!(reads["agree"], true, "{reads}");
    assert_eq!(num(my, "server.Com_commit"), num(my, "updates"));
    assert!(num(my, "server.Innodb_os_log_written") > 0.0);
    assert!(r["storage"].to_string().contains("xfs"), "{}", r["storage"]);
    drop(d);
    drop(dev);
}

/// A run of `args` on `d` that must end within two minutes (a server
/// waiting for disk space would hang it): its output.
fn run_within(d: &ServerDir, args: &[&str]) -> std::process::Output {
    let mut child = d.spawn(args);
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!(
                "dbio did not end within 120 s: {:?}",
                child.wait_with_output()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

/// A failure that names a full filesystem: exit 1, one line with ENOSPC,
/// the filesystem and its free space; no server, socket or instance left.
fn assert_names_enospc(d: &ServerDir, out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(1), "{}", stderr_lines(out));
    let err = stderr_lines(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let data = d.target.join("dbio-mysql/data");
    let fs = format!(
        "no space left on device (ENOSPC) on the filesystem of {} (",
        data.display()
    );
    assert!(err.contains(&fs) && err.contains(" free of "), "{err}");
    assert_nothing_left(d);
}

/// `dbio clean` removes what a failed run left (the instance, the target
/// dbio made).
fn assert_clean_removes_the_target(d: &ServerDir) {
    let out = d.clean();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!d.target.exists(), "clean left {}", d.target.display());
}

fn a_full_filesystem_is_named_with_its_free_space() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let mut dev = LoopDev::new(96 << 20, false);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let d = MyDir::under(&mnt);
    let small = ["--sessions", "1", "--scale", "100", "--work-loop", "5"];

    // The check before anything is made counts the server's own files:
    // dbio's 128 MiB redo log does not fit in 96 MiB.
    let out = d.run(&small);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_lines(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    for want in [
        "not enough free space in ",
        "--scale 100 rows x 1 schemas",
        "128 MiB of redo log (innodb_log_file_size)",
        " free; ",
    ] {
        assert!(err.contains(want), "{want} missing: {err}");
    }
    assert!(!d.target.exists(), "a refused run made its target");

    // With a smaller redo log it fits, but a system tablespace of 100 MiB
    // (a setting the check does not read) fills the filesystem during the
    // bootstrap: MariaDB's Aria then waits for space for ever; dbio stops
    // it and names the cause.
    let redo = [
        "--mysql-set",
        "innodb_log_file_size=8M",
        "--update-pct",
        "0",
    ];
    let args = [
        &small[..],
        &redo,
        &["--mysql-set", "innodb_data_file_path=ibdata1:100M"],
    ]
    .concat();
    let out = run_within(&d, &args);
    assert_names_enospc(&d, &out);
    assert!(
        !d.target.join("dbio-mysql").exists(),
        "a failed install left its files"
    );
    assert_clean_removes_the_target(&d);

    // The load: 40 MiB of ibdata1 beside 2,000 rows fills it.
    let args = [
        &redo[..],
        &["--mysql-set", "innodb_data_file_path=ibdata1:40M"],
        &["--sessions", "1", "--scale", "2000", "--work-loop", "5"],
    ]
    .concat();
    let out = run_within(&d, &args);
    assert_names_enospc(&d, &out);
    assert!(
        stderr_lines(&out).contains("The table 'dbio_t0' is full"),
        "{}",
        stderr_lines(&out)
    );
    assert_clean_removes_the_target(&d);
    drop(d);
    drop(dev);
}

crate::tests! {
    mysql_run_on_tmpfs_meets_the_invariants [Root, MariaDB],
    files_partition_one_table_into_that_many_ibd_files [Root, MariaDB],
    the_terminal_report_speaks_innodb [Root, MariaDB],
    no_mariadb_is_one_line_naming_the_package,
    a_bad_setting_fails_in_one_line_and_leaves_nothing_running [Root, MariaDB],
    ctrl_c_stops_the_server_and_keeps_what_was_measured [Root, MariaDB],
    kill_9_leaves_a_server_the_next_run_and_clean_stop [Root, MariaDB],
    a_server_killed_mid_run_fails_the_run_and_is_cleaned_up [Root, MariaDB],
    o_direct_reads_on_xfs_agree_with_the_device [Root, MariaDB, Tool("mkfs.xfs")],
    a_full_filesystem_is_named_with_its_free_space [Root, MariaDB, Tool("mkfs.ext4")],
}
