//! Making an instance's system tables without `mariadb-install-db` (a
//! shell script that splits words of the paths it is given): `mariadbd
//! --bootstrap` run directly as the `mysql` user, with the instance's
//! arguments (`args`) and the SQL the script feeds it on its standard input
//! (the package's scripts, in the script's order; no test database; root
//! authenticated by unix socket as the user `root`, whom dbio runs as).
//! A failure names its cause (a full filesystem, a permission) from the
//! server's output and log.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::binaries::Binaries;
use crate::workload::db::procs;
use crate::workload::db::user::ServerUser;
use crate::workload::db::{ServerError, cause, failed, last_lines};

/// The scripts `mariadb-install-db` feeds the bootstrap, in its order
/// (`mysql_test_db.sql` is left out, as `--skip-test-db` does).
pub(crate) const SCRIPTS: [&str; 6] = [
    "mysql_system_tables.sql",
    "mysql_performance_tables.sql",
    "mysql_system_tables_data.sql",
    "fill_help_tables.sql",
    "maria_add_gis_sp_bootstrap.sql",
    "mysql_sys_schema.sql",
];

/// What the script writes before its scripts: the `mysql` database, and
/// root@localhost authenticated by unix socket as the OS user `root`.
const PRELUDE: &str =
    "create database if not exists mysql;\nuse mysql;\nSET @auth_root_socket='root';\n";

/// The bootstrap's own options, as `mariadb-install-db` gives them.
const OPTIONS: [&str; 6] = [
    "--bootstrap",
    "--lc-messages=en_US",
    "--log-warnings=0",
    "--enforce-storage-engine=",
    "--max_allowed_packet=8M",
    "--net_buffer_length=16K",
];

/// The SQL of the bootstrap: the prelude, then each script.
fn sql(bin: &Binaries) -> Result<Vec<u8>, ServerError> {
    let mut text = PRELUDE.as_bytes().to_vec();
    for s in SCRIPTS {
        let path = bin.share.join(s);
        let body = std::fs::read(&path)
            .map_err(|e| failed(&format!("cannot read {}", path.display()), e))?;
        text.extend_from_slice(&body);
        text.push(b'\n');
    }
    Ok(text)
}

/// The longest a bootstrap may take (it takes about a second).
const DEADLINE: Duration = Duration::from_secs(300);

/// What MariaDB logs when a write found the disk full and it waits (for
/// ever, retrying each minute) for someone to free space.
const WAITING_FOR_SPACE: &str = "Waiting for someone to free space";

/// Whether the server logged at `log` that it waits for disk space.
pub(crate) fn waits_for_space(log: &Path) -> bool {
    std::fs::read(log).is_ok_and(|b| String::from_utf8_lossy(&b).contains(WAITING_FOR_SPACE))
}

/// Runs the bootstrap of the instance whose arguments are `args` (its
/// error log at `log`, its data in `data`). A bootstrap that waits for
/// disk space, or passes [`DEADLINE`], is killed. A failure is one line:
/// the OS error behind it on the filesystem of `data` when the output
/// names one, else the server's errors.
pub fn run(
    user: &ServerUser,
    bin: &Binaries,
    args: &[OsString],
    log: &Path,
    data: &Path,
) -> Result<(), ServerError> {
    let sql = sql(bin)?;
    let mut child = user
        .command(&bin.mariadbd)
        .args(args)
        .args(OPTIONS)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(&format!("cannot run {}", bin.mariadbd.display()), e))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // Written and read by threads: no pipe fills while the server is watched.
    let feeder = std::thread::spawn(move || stdin.write_all(&sql));
    let out = output_of(child.stdout.take());
    let err = output_of(child.stderr.take());
    let t0 = Instant::now();
    let (status, stuck) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (status, None),
            Err(e) => return Err(failed("wait for mariadbd --bootstrap", e)),
            Ok(None) => {}
        }
        let stuck = match () {
            _ if waits_for_space(log) => Some("it waited for disk space"),
            _ if t0.elapsed() > DEADLINE => Some("it did not finish within 300 s"),
            _ => None,
        };
        if stuck.is_some() {
            procs::kill_group(child.id());
            let status = child
                .wait()
                .map_err(|e| failed("wait for mariadbd --bootstrap", e))?;
            break (status, stuck);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let fed = feeder.join().expect("the feeder does not panic");
    if status.success() && fed.is_ok() {
        return Ok(());
    }
    let text = format!(
        "{}\n{}\n{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
        String::from_utf8_lossy(&std::fs::read(log).unwrap_or_default())
    );
    let how = match stuck {
        Some(s) => format!("{s} and was stopped"),
        None => format!("{status}"),
    };
    Err(ServerError::Failed(format!(
        "MariaDB did not start: mariadbd --bootstrap (making its system tables) failed ({how}): {}",
        why(&text, data)
    )))
}

/// A thread reading a child's output to its end, as text.
fn output_of(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Why a server failed, from its output or log `text`: the OS error with
/// the filesystem of `at` and its free space, then the server's first
/// error; or its first error and last two (the first is the cause, the
/// last say what it stopped), the last lines when it logged none.
pub fn why(text: &str, at: &Path) -> String {
    let errors: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("[ERROR]"))
        .map(str::trim)
        .collect();
    match (cause::describe(text, at), errors.first()) {
        (Some(c), Some(first)) => format!("{c} (the server: {first})"),
        (Some(c), None) => c,
        (None, None) => last_lines(text, 3),
        // "Aborting" alone names no cause: what came before it does (a
        // bootstrap SQL error is printed without "[ERROR]").
        (None, Some(first)) if errors.len() == 1 && first.ends_with("Aborting") => {
            last_lines(text, 4)
        }
        (None, Some(first)) if errors.len() > 3 => {
            format!("{first} | ... | {}", last_lines(&errors.join("\n"), 2))
        }
        (None, Some(_)) => errors.join(" | "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abort_alone_gives_the_lines_before_it() {
        let log = "2026 0 [Note] Starting\nERROR: 1062  Duplicate entry 'x' for key 'PRIMARY'\n\
                   2026 0 [ERROR] Aborting\n";
        let w = why(log, &std::env::temp_dir());
        assert!(
            w.contains("Duplicate entry") && w.contains("Aborting"),
            "{w}"
        );
    }

    #[test]
    fn the_cause_comes_first_then_the_servers_error() {
        let log = "2026 0 [Note] InnoDB: x\n\
                   2026 0 [ERROR] InnoDB: Error number 28 means 'No space left on device'\n\
                   2026 0 [ERROR] Plugin 'InnoDB' registration as a STORAGE ENGINE failed.\n";
        let w = why(log, &std::env::temp_dir());
        assert!(
            w.starts_with("no space left on device (ENOSPC) on the filesystem of "),
            "{w}"
        );
        assert!(
            w.ends_with("(the server: 2026 0 [ERROR] InnoDB: Error number 28 means 'No space left on device')"),
            "{w}"
        );
        let w = why("a\n[ERROR] one\nb\n[ERROR] two\n", Path::new("/"));
        assert_eq!(w, "[ERROR] one | [ERROR] two");
        let w = why(
            "[ERROR] cause\n[ERROR] b\n[ERROR] c\n[ERROR] Aborting\n",
            Path::new("/"),
        );
        assert_eq!(w, "[ERROR] cause | ... | [ERROR] c | [ERROR] Aborting");
        assert_eq!(why("x\ny\n", Path::new("/")), "x | y");
    }
}
