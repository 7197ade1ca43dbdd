//! The model rules against SLOB.R's definitions, one case per branch.

use super::*;

fn m(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
    pairs.iter().map(|(n, x)| (n.to_string(), *x)).collect()
}

fn facts(metrics: &[(String, f64)]) -> Facts<'_> {
    Facts {
        model: None,
        metrics,
    }
}

#[test]
fn slob_r_rules_for_runs_with_readers_and_writers() {
    let reads = m(&[
        (v::READERS, 8.0),
        (v::WRITERS, 0.0),
        (v::PHYSICAL_WRITES_S, 1.0),
        (v::REDO_BYTES_S, 1e9),
    ]);
    let f = facts(&reads);
    assert_eq!(
        f.models(),
        [Model::Reads],
        "READS wins over a high redo ratio"
    );
    // redo / (pwrites * 8192) = 20000000 / (100 * 8192) = 24.4 > 2
    let redo = m(&[
        (v::READERS, 0.0),
        (v::WRITERS, 8.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 2e7),
    ]);
    assert_eq!(facts(&redo).models(), [Model::Redo]);
    // 1000000 / (100 * 8192) = 1.22: not REDO, so WRITES.
    let writes = m(&[
        (v::READERS, 0.0),
        (v::WRITERS, 8.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 1e6),
    ]);
    assert_eq!(facts(&writes).models(), [Model::Writes]);
    // Readers and writers, low redo: in READS and in WRITES, as in SLOB.R.
    let both = m(&[
        (v::READERS, 4.0),
        (v::WRITERS, 4.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 1e6),
    ]);
    assert_eq!(facts(&both).models(), [Model::Reads, Model::Writes]);
    // No physical writes but redo: Inf > 2, REDO (R's division).
    let inf = m(&[
        (v::READERS, 0.0),
        (v::WRITERS, 8.0),
        (v::PHYSICAL_WRITES_S, 0.0),
        (v::REDO_BYTES_S, 5.0),
    ]);
    assert_eq!(facts(&inf).models(), [Model::Redo]);
    // 0 / 0 is NaN: not REDO; writers > 0: WRITES.
    let nan = m(&[
        (v::READERS, 0.0),
        (v::WRITERS, 8.0),
        (v::PHYSICAL_WRITES_S, 0.0),
        (v::REDO_BYTES_S, 0.0),
    ]);
    assert_eq!(facts(&nan).models(), [Model::Writes]);
    // The ratio uses 8192 even when a block size is stored (SLOB.R's rule).
    // 1e6 / (100 * 8192) = 1.22; over 2048 it would be 4.9.
    let bs = m(&[
        (v::WRITERS, 8.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 1e6),
        (v::BLOCK_SIZE, 2048.0),
    ]);
    assert_eq!(facts(&bs).models(), [Model::Writes]);
}

#[test]
fn runs_without_readers_and_writers_use_no_writes_and_the_ratio() {
    let slob_reads = m(&[
        (v::UPDATE_PCT, 0.0),
        (v::PHYSICAL_WRITES_S, 40.0),
        (v::PHYSICAL_READS_S, 100.0),
    ]);
    assert_eq!(facts(&slob_reads).models(), [Model::Reads]);
    // db.block_size_bytes counts here: 1e6 / (100 * 2048) = 4.9 > 2 ...
    let slob_redo = m(&[
        (v::UPDATE_PCT, 20.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 1e6),
        (v::BLOCK_SIZE, 2048.0),
    ]);
    assert_eq!(facts(&slob_redo).models(), [Model::Redo]);
    // ... and 1e6 / (100 * 8192) = 1.22 is not.
    let slob_writes = m(&[
        (v::UPDATE_PCT, 20.0),
        (v::PHYSICAL_WRITES_S, 100.0),
        (v::REDO_BYTES_S, 1e6),
        (v::BLOCK_SIZE, 8192.0),
    ]);
    assert_eq!(facts(&slob_writes).models(), [Model::Writes]);
    let awr_reads = m(&[
        (v::PHYSICAL_READS_S, 10000.0),
        (v::PHYSICAL_WRITES_S, 100.0),
    ]);
    assert_eq!(facts(&awr_reads).models(), [Model::Reads]);
    let awr_writes = m(&[
        (v::PHYSICAL_READS_S, 10000.0),
        (v::PHYSICAL_WRITES_S, 101.0),
    ]);
    assert_eq!(facts(&awr_writes).models(), [Model::Writes]);
    let raw_read = m(&[("read.iops", 500.0), ("read.requests", 5000.0)]);
    let f = facts(&raw_read);
    assert_eq!(f.models(), [Model::Reads]);
    assert_eq!(
        (f.model_value(Model::Reads), f.writes_per_s()),
        (Some(500.0), Some(0.0))
    );
    let raw_rw = m(&[
        ("read.iops", 500.0),
        ("write.iops", 250.0),
        ("write.requests", 2500.0),
    ]);
    let f = facts(&raw_rw);
    assert_eq!(f.models(), [Model::Writes]);
    assert_eq!(f.model_value(Model::Redo), None);
}

#[test]
fn a_model_given_at_import_wins() {
    let reads = m(&[(v::READERS, 8.0)]);
    let f = Facts {
        model: Some("redo"),
        metrics: &reads,
    };
    assert_eq!(f.models(), [Model::Redo]);
    assert!(f.is(Model::Redo) && !f.is(Model::Readwrite));
    let f = Facts {
        model: Some("writes"),
        metrics: &reads,
    };
    assert!(f.is(Model::Readwrite));
}
