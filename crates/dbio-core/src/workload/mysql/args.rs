//! The server's command line: every setting dbio gives MariaDB is one
//! argument of `mariadbd`, after `--no-defaults` (no option file is read,
//! none is written). An argument reaches the server byte for byte — no
//! shell parses it and no option-file rule (quotes, `#` comments, `\t`
//! escapes, a line's length) applies — so a target path with spaces, `#`,
//! quotes, backslashes, newlines or bytes that are not UTF-8 names exactly
//! that directory. The paths are dbio's to place ([`PLACED`]); the values
//! of `--mysql-set` come after dbio's own and win.

use std::ffi::{OsStr, OsString};

use super::server::Paths;

/// The settings that are paths of the instance dbio places under the
/// target (`--mysql-set` may not move them: dbio finds, stops and cleans
/// the server through them). `tmpdir` is the instance's own `run`
/// directory: a starting MariaDB deletes every `#sql*` file in its tmpdir,
/// so two instances sharing `/tmp` (the default) delete each other's
/// temporary tables — a bootstrap then aborts with "Error on delete of
/// '/tmp/#sql-temptable-…'".
pub const PLACED: [&str; 6] = [
    "datadir",
    "socket",
    "pid_file",
    "log_error",
    "innodb_log_group_home_dir",
    "tmpdir",
];

/// `--NAME=VALUE`, as one argument.
fn arg(name: &str, value: &OsStr) -> OsString {
    let mut a = OsString::from(format!("--{name}="));
    a.push(value);
    a
}

/// `mariadbd`'s arguments for the instance at `paths` with `settings`
/// (dbio's, then `--mysql-set`'s): `--no-defaults` first (it must be), the
/// placed paths, then each setting.
pub fn command_line(paths: &Paths, settings: &[(String, String)]) -> Vec<OsString> {
    let socket = paths.socket();
    let pid = paths.pid_file();
    let placed: [(&str, &OsStr); 6] = [
        ("datadir", paths.data.as_os_str()),
        ("socket", socket.as_os_str()),
        ("pid_file", pid.as_os_str()),
        ("log_error", paths.log.as_os_str()),
        ("innodb_log_group_home_dir", paths.redo.as_os_str()),
        ("tmpdir", paths.run.as_os_str()),
    ];
    std::iter::once(OsString::from("--no-defaults"))
        .chain(placed.iter().map(|(n, v)| arg(n, v)))
        .chain(settings.iter().map(|(n, v)| arg(n, OsStr::new(v))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    use std::path::Path;

    #[test]
    fn each_path_is_one_argument_byte_for_byte() {
        let target = OsStr::from_bytes(b"/srv/a b#c\t$(x)\n'\"\\\xff");
        let p = Paths::new(Path::new(target), None);
        let args = command_line(
            &p,
            &[("innodb_doublewrite".into(), "0 # not a comment".into())],
        );
        let args: Vec<Vec<u8>> = args.into_iter().map(OsString::into_vec).collect();
        assert_eq!(args[0], b"--no-defaults");
        let mut want = b"--datadir=".to_vec();
        want.extend_from_slice(target.as_bytes());
        want.extend_from_slice(b"/dbio-mysql/data");
        assert_eq!(args[1], want);
        assert!(args[5].starts_with(b"--innodb_log_group_home_dir=/srv/a b#c\t$(x)\n"));
        assert!(args[6].starts_with(b"--tmpdir=/srv/a b#c\t$(x)\n"));
        assert!(args[6].ends_with(b"/dbio-mysql/run"));
        assert_eq!(args[7], b"--innodb_doublewrite=0 # not a comment");
        assert_eq!(args.len(), 8);
    }
}
