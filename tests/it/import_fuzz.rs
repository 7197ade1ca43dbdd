//! Fuzzing both importers with proptest over the corpus in tests/corpus/
//! (real fio output, the awr_info.sh generations): byte edits, truncations,
//! repeated lines and, for fio, JSON values replaced by wrong types and
//! extreme numbers. Every input must give runs or a one-line
//! `ImportError`, never a panic; the valid corpus files must import.

use std::path::Path;

use dbio::import::{awr_info, awr_runs, fio, fio_runs};
use proptest::prelude::*;
use serde_json::Value;

fn corpus(kind: &str) -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {kind}");
    files
}

/// The whole import path of awr_info text: Ok(runs) or a one-line error.
fn import_awr(text: &str) -> Result<usize, String> {
    let parsed = awr_info::parse(text).map_err(|e| e.to_string())?;
    let runs = awr_runs::runs(&parsed, &Default::default(), "/f", 0, &mut Vec::new())
        .map_err(|e| e.to_string())?;
    for r in &runs {
        assert!(
            r.metrics.iter().all(|(_, v)| v.is_finite()),
            "{:?}",
            r.metrics
        );
    }
    Ok(runs.len())
}

fn import_fio(text: &str) -> Result<usize, String> {
    let parsed = fio::parse(text).map_err(|e| e.to_string())?;
    let runs = fio_runs::runs(&parsed, &Default::default(), "/f", 0, &mut Vec::new())
        .map_err(|e| e.to_string())?;
    Ok(runs.len())
}

fn one_line(r: Result<usize, String>) {
    if let Err(e) = r {
        assert!(!e.contains('\n') && !e.is_empty(), "{e:?}");
    }
}

#[derive(Clone, Debug)]
enum Edit {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    RepeatLine(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    let b = prop_oneof![
        Just(b'|'),
        Just(b'\n'),
        Just(b' '),
        Just(b'-'),
        Just(b'.'),
        Just(b'{'),
        Just(b'"'),
        Just(b'9'),
        any::<u8>()
    ];
    prop_oneof![
        (any::<usize>(), b.clone()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), b).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Truncate),
        any::<usize>().prop_map(Edit::RepeatLine),
    ]
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for e in edits {
        let n = bytes.len().max(1);
        match *e {
            Edit::Replace(i, b) if !bytes.is_empty() => bytes[i % n] = b,
            Edit::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Edit::Delete(i) if !bytes.is_empty() => {
                bytes.remove(i % n);
            }
            Edit::Truncate(i) => bytes.truncate(i % (bytes.len() + 1)),
            Edit::RepeatLine(i) => {
                let text = String::from_utf8_lossy(&bytes).to_string();
                let lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let l = lines[i % lines.len()];
                    bytes.extend_from_slice(format!("\n{l}\n").as_bytes());
                }
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).to_string()
}

/// Replaces the `k`-th node (depth first) of `v` with `with`.
fn replace_node(v: &mut Value, k: &mut usize, with: &Value) -> bool {
    if *k == 0 {
        *v = with.clone();
        return true;
    }
    *k -= 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|c| replace_node(c, k, with)),
        Value::Object(o) => o.values_mut().any(|c| replace_node(c, k, with)),
        _ => false,
    }
}

fn wrong_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(1e308)),
        Just(serde_json::json!(u64::MAX)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!("x")),
        Just(serde_json::json!([])),
        Just(serde_json::json!({})),
        Just(serde_json::json!({"1.000000": -5, "bad": 1})),
        any::<f64>().prop_map(|f| serde_json::json!(f)),
    ]
}

fn the_corpus_imports() {
    for (name, text) in corpus("awr_info") {
        let r = import_awr(&text);
        assert_eq!(r.is_ok(), !name.starts_with("bad"), "{name}: {r:?}");
    }
    for (name, text) in corpus("fio") {
        assert_eq!(import_fio(&text), Ok(1), "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    fn awr_info_never_panics(file in 0usize..100, edits in prop::collection::vec(edit(), 0..12)) {
        let files = corpus("awr_info");
        one_line(import_awr(&apply(&files[file % files.len()].1, &edits)));
    }

    fn awr_info_never_panics_on_any_text(text in "(FILE\\|[A-Z_ .]{0,12}\\|\n)?([ -~]{0,40}\n){0,6}") {
        one_line(import_awr(&text));
    }

    fn fio_never_panics_on_edited_bytes(file in 0usize..100, edits in prop::collection::vec(edit(), 0..8)) {
        let files = corpus("fio");
        one_line(import_fio(&apply(&files[file % files.len()].1, &edits)));
    }

    fn fio_never_panics_on_wrong_values(file in 0usize..100, nodes in prop::collection::vec((any::<usize>(), wrong_value()), 1..4)) {
        let files = corpus("fio");
        let text = &files[file % files.len()].1;
        let start = text.find('{').unwrap();
        let mut doc: Value = serde_json::Deserializer::from_str(&text[start..]).into_iter().next().unwrap().unwrap();
        for (k, with) in &nodes {
            let mut k = k % 4000;
            replace_node(&mut doc, &mut k, with);
        }
        one_line(import_fio(&doc.to_string()));
    }
}

crate::tests! {
    the_corpus_imports,
    awr_info_never_panics,
    awr_info_never_panics_on_any_text,
    fio_never_panics_on_edited_bytes,
    fio_never_panics_on_wrong_values,
}
