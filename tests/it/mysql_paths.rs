//! `--workload mysql` on hostile target paths (issue 26): command
//! substitution, backticks, quotes, a backslash, a comma, `#`, a space, a
//! tab, a newline, a leading `-`, a path too long for a unix socket, a `;`
//! (InnoDB cannot take it in its redo directory), bytes that are not UTF-8. Each either runs — the server's data directory is
//! exactly that path, and `dbio clean` removes the instance — or is refused
//! in one line (exit 2) with nothing created; no command in a path ever
//! runs (the canary file a shell would make never appears), and no server,
//! socket or socket directory is left.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::server::{ServerDir, dbio, processes_left};
use crate::common::store::temp_store;
use crate::mysql::{ONE_AT_A_TIME, setting};

/// What a target path must give.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// A short run that completes on exactly that directory.
    Runs,
    /// One line, exit 2, nothing created.
    Refused,
}

/// A directory on tmpfs the mysql user can reach (a `ServerDir`: what a
/// failed test leaves running there is stopped when it drops), with a
/// canary directory anyone may write: a command in a path that ran would
/// make `canary` there.
struct Base {
    dir: ServerDir,
}

impl Base {
    fn new() -> Base {
        let dir = ServerDir::on_tmpfs("mysql", "dbio-mysql/run/mysqld.sock");
        let c = dir.base.join("c");
        fs::create_dir(&c).unwrap();
        fs::set_permissions(&c, fs::Permissions::from_mode(0o777)).unwrap();
        Base { dir }
    }

    fn path(&self) -> &Path {
        &self.dir.base
    }

    fn canary(&self) -> PathBuf {
        self.path().join("c/canary")
    }
}

/// The cases: a name, the last part of the target (under the base; `{C}`
/// is the canary's path, whose slashes make parents the test creates), and
/// what it must give.
fn cases(base: &Base) -> Vec<(&'static str, OsString, Expect)> {
    let c = base.canary().display().to_string();
    let text = |s: String| OsString::from(s);
    vec![
        ("command", text(format!("t$(touch {c})")), Expect::Runs),
        ("backticks", text(format!("t`touch {c}`")), Expect::Runs),
        ("double quote", text(r#"t"x"#.into()), Expect::Runs),
        ("single quote", text("t'x".into()), Expect::Runs),
        ("backslash", text(r"t\x\t\".into()), Expect::Runs),
        ("comma", text("t,x".into()), Expect::Runs),
        ("hash", text("t#x".into()), Expect::Runs),
        ("space", text("t x".into()), Expect::Runs),
        ("tab", text("t\tx".into()), Expect::Runs),
        ("newline", text("t\nx".into()), Expect::Runs),
        // InnoDB refuses a ';' in innodb_log_group_home_dir.
        ("semicolon", text(format!("t;touch {c}")), Expect::Refused),
        ("leading dash", text("-t".into()), Expect::Runs),
        ("socket too long", text("d".repeat(100)), Expect::Runs),
        (
            "not UTF-8",
            OsString::from_vec(b"t\xff\xfe".to_vec()),
            Expect::Refused,
        ),
    ]
}

/// `dbio run --workload mysql --json --target=TARGET`: a short run.
fn run(target: &Path) -> Output {
    let mut arg = OsString::from("--target=");
    arg.push(target.as_os_str());
    dbio()
        .args(["run", "--workload", "mysql", "--json"])
        .arg(arg)
        .args(["--sessions", "1", "--scale", "100", "--work-loop", "5"])
        .output()
        .unwrap()
}

/// A run that must have completed on `target`'s instance; then cleaned.
fn check_runs(name: &str, target: &Path, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{name}: {err}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "completed", "{name}: {}", r["error"]);
    let data = target.join("dbio-mysql/data");
    assert_eq!(
        setting(&r["mysql"], "datadir"),
        format!("{}/", data.to_str().unwrap()),
        "{name}: the server's data directory is the target's"
    );
    assert!(
        data.join("dbio").is_dir(),
        "{name}: no tables under the target"
    );
    let clean = dbio()
        .args(["clean", "--target"])
        .arg(target)
        .output()
        .unwrap();
    assert!(clean.status.success(), "{name}: clean: {clean:?}");
    assert!(!target.join("dbio-mysql").exists(), "{name}: clean left it");
}

/// A refusal: one line, exit 2, the target not made.
fn check_refused(name: &str, target: &Path, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
    assert!(!target.exists(), "{name}: a refused run made its target");
}

fn hostile_target_paths_run_or_are_refused_and_run_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let base = Base::new();
    let sockets_before = private_sockets();
    for (name, last, expect) in cases(&base) {
        let target = base.path().join(&last);
        // dbio makes only the last component: the test makes the rest.
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        let out = run(&target);
        match expect {
            Expect::Runs => check_runs(name, &target, &out),
            Expect::Refused => check_refused(name, &target, &out),
        }
        assert!(!base.canary().exists(), "{name}: a command in the path ran");
        assert_eq!(
            processes_left(base.path()),
            Vec::<i32>::new(),
            "{name}: mariadbd left"
        );
        assert_eq!(private_sockets(), sockets_before, "{name}: socket dir left");
    }
    // A relative path starting with '-': the instance is in the working directory.
    let out = dbio()
        .current_dir(base.path())
        .args(["run", "--workload", "mysql", "--json", "--target=-rel"])
        .args(["--sessions", "1", "--scale", "100", "--work-loop", "5"])
        .output()
        .unwrap();
    check_runs("relative", &base.path().join("-rel"), &out);
    assert!(!base.canary().exists());
}

/// The socket directories dbio made for itself (`/run/dbio/mysql-*`).
fn private_sockets() -> Vec<OsString> {
    let mut v: Vec<OsString> = fs::read_dir("/run/dbio")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.as_bytes().starts_with(b"mysql-"))
        .collect();
    v.sort();
    v
}

fn a_mysql_set_value_reaches_the_server_byte_for_byte() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let base = Base::new();
    let target = base.path().join("t");
    // A comment sign, quotes, a backslash escape and spaces: in an option
    // file each would change the value; as an argument none does.
    let value = r#"x #y 'z' "w" \t v"#;
    let out = dbio()
        .args(["run", "--workload", "mysql", "--json", "--target"])
        .arg(&target)
        .args(["--sessions", "1", "--scale", "100", "--work-loop", "2"])
        .arg(OsStr::new(&format!("--mysql-set=init_connect={value}")))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(setting(&r["mysql"], "init_connect"), value);
    dbio()
        .args(["clean", "--target"])
        .arg(&target)
        .output()
        .unwrap();
    assert_eq!(processes_left(base.path()), Vec::<i32>::new());
}

crate::tests! {
    hostile_target_paths_run_or_are_refused_and_run_nothing [Root, MariaDB],
    a_mysql_set_value_reaches_the_server_byte_for_byte [Root, MariaDB],
}
