//! A dbio built without the `mpi` feature refuses `--mpi` in one line that
//! says how to build one that has it (tests/it/mpi.rs covers the feature).

use crate::common::run::dbio;
use crate::common::store::temp_store;

crate::tests! {
    mpi_without_the_feature_is_refused_with_how_to_build_it,
}

fn mpi_without_the_feature_is_refused_with_how_to_build_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let out = dbio()
        .args(["run", "--mpi", "--ops", "10", "--target"])
        .arg(dir.path().join("t"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--features mpi"), "{err}");
    assert!(!dir.path().join("t").exists());
}
