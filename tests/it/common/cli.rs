//! Running the dbio binary against a given store, for CLI tests.

use std::path::Path;
use std::process::{Command, Output};

/// `dbio ARGS --db DB`, waited for.
pub fn dbio(db: &Path, args: &[&str]) -> Output {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .unwrap()
}

/// The stdout of a run that must have succeeded (its stderr otherwise).
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
