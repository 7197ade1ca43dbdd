//! Why a server's tool or the server itself failed, in one phrase: the
//! operating-system error its output or log names (a full filesystem, a
//! quota, a read-only mount, a permission), with the filesystem it happened
//! on and that filesystem's free space. initdb, mariadb's bootstrap and the
//! servers print these in their own words ("No space left on device",
//! "could not extend file", "errno: 28"); a user needs the cause, not the
//! tool's last line.

use std::path::Path;

use crate::units::fmt_size;

/// An operating-system error a server's output can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OsCause {
    NoSpace,
    Quota,
    ReadOnly,
    Permission,
}

impl OsCause {
    /// The error's words and its errno name.
    pub fn words(self) -> &'static str {
        match self {
            OsCause::NoSpace => "no space left on device (ENOSPC)",
            OsCause::Quota => "disk quota exceeded (EDQUOT)",
            OsCause::ReadOnly => "read-only file system (EROFS)",
            OsCause::Permission => "permission denied (EACCES)",
        }
    }

    /// What to do about it.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            OsCause::NoSpace | OsCause::Quota => "free space there or give a smaller data size",
            OsCause::ReadOnly => "remount it read-write or give another --target",
            OsCause::Permission => "make the target writable by the server's user",
        }
    }
}

/// The first operating-system error named in `text` (a tool's output or a
/// server log), if any. Matches the C library's strerror words, the errno
/// names standing alone (not inside a path such as `/mnt/enospc`), and
/// MariaDB's `errno: N` / `OS error code N` / InnoDB's `preallocating ...
/// failed with error N`.
pub fn find(text: &str) -> Option<OsCause> {
    let t = text.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    let named = |name: &str| stands_alone(&t, name);
    if has(&[
        "no space left on device",
        "errno: 28",
        "os error code 28",
        "error: 28 ",
        "failed with error 28",
    ]) || named("enospc")
    {
        Some(OsCause::NoSpace)
    } else if has(&[
        "disk quota exceeded",
        "errno: 122",
        "os error code 122",
        "failed with error 122",
    ]) || named("edquot")
    {
        Some(OsCause::Quota)
    } else if has(&["read-only file system", "errno: 30", "os error code 30"]) || named("erofs") {
        Some(OsCause::ReadOnly)
    } else if has(&["permission denied", "errno: 13", "os error code 13"]) || named("eacces") {
        Some(OsCause::Permission)
    } else if has(&["could not extend file"]) && has(&["wrote only"]) {
        // PostgreSQL's words for a short write while extending a file
        // (its hint: "Check free disk space").
        Some(OsCause::NoSpace)
    } else {
        None
    }
}

/// Whether `name` occurs in `text` as a word of its own: not part of a
/// longer word or of a path (`/mnt/enospc`, `enospc.log`, `my_erofs`).
fn stands_alone(text: &str, name: &str) -> bool {
    let part_of_word = |c: char| c.is_ascii_alphanumeric() || "/_-.".contains(c);
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        // A full stop ends a sentence unless a word goes on after it.
        let mut rest = text[at + name.len()..].chars();
        let after = match rest.next() {
            Some('.') => rest.next().filter(char::is_ascii_alphanumeric),
            c => c,
        };
        !before.is_some_and(part_of_word) && !after.is_some_and(part_of_word)
    })
}

/// The filesystem holding `path` (or its nearest existing parent) in words:
/// "the filesystem of /mnt/x (12.0 MiB free of 64.0 MiB)".
pub(crate) fn filesystem(path: &Path) -> String {
    let mut at = path;
    while !at.exists() {
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    match rustix::fs::statvfs(at) {
        Ok(st) => {
            let bs = st.f_frsize.max(1);
            format!(
                "the filesystem of {} ({} free of {})",
                path.display(),
                fmt_size(st.f_bavail.saturating_mul(bs)),
                fmt_size(st.f_blocks.saturating_mul(bs))
            )
        }
        Err(_) => format!("the filesystem of {}", path.display()),
    }
}

/// The cause named in `text`, on the filesystem of `path`, with what to do:
/// "no space left on device (ENOSPC) on the filesystem of /mnt/x (0 B free
/// of 64.0 MiB): free space there or give a smaller data size".
pub fn describe(text: &str, path: &Path) -> Option<String> {
    let cause = find(text)?;
    Some(format!(
        "{} on {}: {}",
        cause.words(),
        filesystem(path),
        cause.advice()
    ))
}

/// Free bytes under which a failure whose words name no error is put down
/// to a full filesystem (a server's write that fails reports it in words
/// of its own, e.g. PostgreSQL's "could not write init file").
pub(crate) const NEARLY_FULL: u64 = 32 << 20;

/// For a failure whose words name no operating-system error: the
/// filesystem of `path` when less than [`NEARLY_FULL`] is left there, in
/// [`describe`]'s words ("likely no space left on device (ENOSPC): the
/// filesystem of X (1.0 MiB free of 64.0 MiB) is nearly full: ...").
pub fn describe_nearly_full(path: &Path) -> Option<String> {
    let mut at = path;
    while !at.exists() {
        at = at.parent().filter(|p| !p.as_os_str().is_empty())?;
    }
    let st = rustix::fs::statvfs(at).ok()?;
    let free = st.f_bavail.saturating_mul(st.f_frsize.max(1));
    (free < NEARLY_FULL).then(|| {
        format!(
            "likely {}: {} is nearly full: {}",
            OsCause::NoSpace.words(),
            filesystem(path),
            OsCause::NoSpace.advice()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_servers_words_for_each_cause() {
        let initdb = "creating subdirectories ... ok\ninitdb: error: could not write to file \"x\": No space left on device";
        assert_eq!(find(initdb), Some(OsCause::NoSpace));
        let maria = "[ERROR] InnoDB: Operating system error number 28 in a file operation. Error number 28 means 'No space left on device'";
        assert_eq!(find(maria), Some(OsCause::NoSpace));
        let innodb = "[ERROR] InnoDB: preallocating 13631488 bytes for file ./dbio/dbio_t0.ibd failed with error 28";
        assert_eq!(find(innodb), Some(OsCause::NoSpace));
        assert_eq!(
            find(
                "[ERROR] mariadbd: Error writing file './x' (Errcode: 122 \"Disk quota exceeded\")"
            ),
            Some(OsCause::Quota)
        );
        assert_eq!(
            find("FATAL: could not create lock file: Read-only file system"),
            Some(OsCause::ReadOnly)
        );
        assert_eq!(
            find("could not open directory \"x\": Permission denied"),
            Some(OsCause::Permission)
        );
        assert_eq!(find("FATAL: the database system is starting up"), None);
        assert_eq!(find("write failed: ENOSPC"), Some(OsCause::NoSpace));
        assert_eq!(find("open(2) returned EROFS."), Some(OsCause::ReadOnly));
    }

    #[test]
    fn errno_names_inside_paths_are_not_causes() {
        assert_eq!(
            find("could not open \"/mnt/enospc/t0\": Permission denied"),
            Some(OsCause::Permission)
        );
        assert_eq!(find("table /srv/erofs_test/x is full"), None);
        assert_eq!(find("see /var/log/eacces.log"), None);
        assert_eq!(
            find(
                "ERROR: could not extend file \"base/1/2\": wrote only 4096 of 8192 bytes at block 9"
            ),
            Some(OsCause::NoSpace)
        );
    }

    #[test]
    fn a_filesystem_with_room_is_not_called_full() {
        let dir = tempfile::tempdir().unwrap();
        let free = rustix::fs::statvfs(dir.path()).unwrap();
        if free.f_bavail * free.f_frsize > NEARLY_FULL {
            assert_eq!(describe_nearly_full(&dir.path().join("x/y")), None);
        }
    }

    #[test]
    fn names_the_filesystem_and_its_free_space() {
        let dir = std::env::temp_dir();
        let d = describe("No space left on device", &dir.join("not/yet/made")).unwrap();
        assert!(
            d.starts_with("no space left on device (ENOSPC) on the filesystem of "),
            "{d}"
        );
        assert!(d.contains(" free of "), "{d}");
        assert!(
            d.ends_with("free space there or give a smaller data size"),
            "{d}"
        );
    }
}
