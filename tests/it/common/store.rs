//! A results store per test: `let _store = temp_store();` at the top of a
//! test makes every dbio it starts (through `store_path()`) save its runs in
//! a temporary directory that is removed when the test ends, pass or fail.

use std::cell::RefCell;
use std::path::PathBuf;

thread_local! {
    static CURRENT: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Owns the store's directory; dropping it removes the store.
pub struct TempStore {
    _dir: tempfile::TempDir,
}

/// A fresh store for the current test (each test runs on its own thread).
pub fn temp_store() -> TempStore {
    let dir = tempfile::Builder::new()
        .prefix("dbio-store-")
        .tempdir()
        .expect("a temporary directory");
    CURRENT.with(|c| *c.borrow_mut() = Some(dir.path().join("store.sqlite")));
    TempStore { _dir: dir }
}

/// The current test's store, for `DBIO_DB`.
pub fn store_path() -> PathBuf {
    CURRENT
        .with(|c| c.borrow().clone())
        .expect("a test that runs dbio starts with `let _store = temp_store();`")
}
