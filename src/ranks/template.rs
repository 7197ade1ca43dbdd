//! Each rank's target from one `--target` template: `{rank}` becomes the
//! rank's number and `{host}` its host name, so that ranks on one host use
//! directories of their own (`/mnt/san/dbio-{rank}`).

use std::path::{Path, PathBuf};

/// `template` with `{rank}` and `{host}` replaced. A template that is not
/// UTF-8 is returned as it is (it cannot hold a placeholder).
pub fn expand(template: &Path, rank: u32, host: &str) -> PathBuf {
    match template.to_str() {
        Some(t) => t
            .replace("{rank}", &rank.to_string())
            .replace("{host}", host)
            .into(),
        None => template.to_path_buf(),
    }
}

/// Two ranks on one host given the same target, if any: `(a, b)` ranks.
/// Each entry is a rank's (host, target).
pub fn shared_target(targets: &[(String, PathBuf)]) -> Option<(usize, usize)> {
    targets
        .iter()
        .enumerate()
        .find_map(|(b, tb)| targets[..b].iter().position(|ta| ta == tb).map(|a| (a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_become_rank_and_host() {
        let t = Path::new("/mnt/san/{host}/dbio-{rank}");
        assert_eq!(expand(t, 3, "db2"), PathBuf::from("/mnt/san/db2/dbio-3"));
        assert_eq!(
            expand(Path::new("/mnt/fixed"), 3, "db2"),
            PathBuf::from("/mnt/fixed")
        );
    }

    #[test]
    fn ranks_sharing_a_target_on_one_host_are_found() {
        let t = |h: &str, p: &str| (h.to_string(), PathBuf::from(p));
        // The same path on two hosts is two targets.
        assert_eq!(shared_target(&[t("a", "/d"), t("b", "/d")]), None);
        assert_eq!(
            shared_target(&[t("a", "/d0"), t("a", "/d1"), t("a", "/d1")]),
            Some((1, 2))
        );
    }
}
