//! The layers hold: every import between top-level modules of the core
//! (`crates/dbio-core/src/`) and of dbio (`src/`) is one the table in
//! ARCHITECTURE.md allows, or one of the known violations below — a
//! ratchet: a known one fixed must be deleted from the list, and a new one
//! fails, naming file, line and rule. The checker itself is tried on small
//! trees made here.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use crate::common::layers::{Below, Import, Rules, Tree, check, code_only, ratchet, scan};

crate::tests! {
    imports_between_modules_follow_the_table_in_architecture_md,
    a_forbidden_import_fails_naming_file_line_and_rule_and_an_allowed_one_passes,
    paths_in_comments_strings_and_inside_a_module_are_not_imports,
    the_ratchet_fails_on_a_new_violation_a_changed_count_and_a_fixed_one,
    the_core_has_no_new_pub_item_that_nothing_outside_names [Tool("python3")],
    the_pub_check_lists_an_item_named_only_inside_the_core [Tool("python3")],
}

/// Imports the table forbids that the tree still has: (from, to, how many).
/// Fixing one makes the test fail until it is deleted here (or its count
/// lowered); never add to this list — fix the import or change the table.
const KNOWN: &[(&str, &str, usize)] = &[];

/// `pub` items of the core that nothing outside it names
/// (`scripts/core-pub.py`): those left are in the interface of an item the
/// dbio crate uses (a field's or a signature's type, a re-export), or are
/// used only by the core's own tests. A ratchet like `KNOWN`: trimming one
/// lowers this number, and a new `pub` item only the core uses fails —
/// make it `pub(crate)`.
const CORE_PUB_UNNAMED: usize = 82;

fn imports_between_modules_follow_the_table_in_architecture_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let rules = Rules::parse(&fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap()).unwrap();
    let core_src = root.join("crates/dbio-core/src");
    let imports = scan_pair(
        ("core", &core_src),
        ("dbio", &root.join("src")),
        "dbio_core",
    );
    // Every module has a row, and every row is a module there is.
    let mut modules: BTreeSet<String> = top_modules(&core_src)
        .into_iter()
        .map(|m| format!("core::{m}"))
        .collect();
    modules.extend(
        top_modules(&root.join("src"))
            .into_iter()
            .map(|m| format!("dbio::{m}")),
    );
    let rows: BTreeSet<String> = rules.allowed.keys().cloned().collect();
    let stale: Vec<_> = rows.difference(&modules).collect();
    assert!(
        stale.is_empty(),
        "rows in ARCHITECTURE.md's table for modules that are not there: {stale:?}"
    );
    let missing: Vec<_> = modules.difference(&rows).collect();
    assert!(
        missing.is_empty(),
        "modules with no row in ARCHITECTURE.md's table: {missing:?}"
    );
    assert_eq!(
        rules.circle(&modules),
        None,
        "the table allows an import circle"
    );
    let violations = check(&rules, &imports);
    let problems = ratchet(&violations, KNOWN);
    assert!(
        problems.is_empty(),
        "{} problem(s) with the layers (ARCHITECTURE.md, \"Allowed imports\"):\n{}\n\nall imports between modules:\n{}",
        problems.len(),
        problems.join("\n"),
        graph(&imports)
    );
}

/// The top-level modules under `src` (files and folders; `lib`, `main`).
fn top_modules(src: &Path) -> BTreeSet<String> {
    fs::read_dir(src)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            match p.is_dir() {
                true => p.join("mod.rs").is_file().then(|| e.file_name()),
                false => p
                    .extension()
                    .is_some_and(|x| x == "rs")
                    .then(|| p.file_stem().unwrap().to_owned()),
            }
        })
        .map(|n| n.to_string_lossy().into_owned())
        .collect()
}

/// Import counts per pair of modules, one line each.
fn graph(imports: &[Import]) -> String {
    let mut n: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for i in imports {
        *n.entry((&i.from, &i.to)).or_default() += 1;
    }
    let lines: Vec<String> = n
        .iter()
        .map(|((f, t), c)| format!("  {f} -> {t}: {c}"))
        .collect();
    lines.join("\n")
}

const TABLE: &str = "\
<!-- layer-rules -->
| module | may import |
|---|---|
| `low::base` | — |
| `low::mid` | `low::base` |
| `up::lib` | `low::*` |
| `up::a` | `low::*` |
| `up::b` | `low::base`, `up::a` |
| `up::c` | `up::a` |
<!-- /layer-rules -->
";

/// A two-crate tree in `dir`: `low` (base, mid) and `up` (lib, a, b, c)
/// with the given sources.
fn synthetic(dir: &Path, files: &[(&str, &str)]) -> Vec<Import> {
    for (path, text) in files {
        let p = dir.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }
    scan_pair(
        ("low", &dir.join("low")),
        ("up", &dir.join("up")),
        "low_crate",
    )
}

/// The imports of two crates: `lower` (name, src) and `upper`, which
/// names the lower one `extern_name`.
fn scan_pair(lower: (&str, &Path), upper: (&str, &Path), extern_name: &str) -> Vec<Import> {
    let low = Tree {
        name: lower.0,
        src: lower.1,
        below: None,
    };
    let up = Tree {
        name: upper.0,
        src: upper.1,
        below: Some(Below {
            extern_name,
            name: lower.0,
            modules: top_modules(lower.1),
        }),
    };
    let mut imports = scan(&low);
    imports.extend(scan(&up));
    imports
}

const BASE: &[(&str, &str)] = &[
    ("low/lib.rs", "pub mod base;\npub mod mid;\n"),
    ("low/base.rs", "pub struct B;\n"),
    ("low/mid/mod.rs", "use crate::base::B;\nmod inner;\n"),
    ("low/mid/inner.rs", "use super::super::base::B;\n"),
    (
        "up/lib.rs",
        "pub use low_crate::{base, mid};\npub mod a;\npub mod b;\npub mod c;\n",
    ),
    ("up/a.rs", "use crate::mid::X;\nuse low_crate::base::B;\n"),
    ("up/c.rs", "use super::a::Y;\n"),
];

fn a_forbidden_import_fails_naming_file_line_and_rule_and_an_allowed_one_passes() {
    let rules = Rules::parse(TABLE).unwrap();
    // Allowed only: base below mid, a on the lower crate (through the
    // re-export and by name), c on a (through `super` from the root), b on a.
    let dir = tempfile::tempdir().unwrap();
    let mut files = BASE.to_vec();
    files.push(("up/b/mod.rs", "use crate::{a::A, base};\nmod deep;\n"));
    files.push(("up/b/deep.rs", "fn f() { let _ = super::super::a::A; }\n"));
    let imports = synthetic(dir.path(), &files);
    let pairs: BTreeSet<(String, String)> = imports
        .iter()
        .map(|i| (i.from.clone(), i.to.clone()))
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("low::mid", "low::base"),
        ("up::lib", "low::base"),
        ("up::lib", "low::mid"),
        ("up::a", "low::mid"),
        ("up::a", "low::base"),
        ("up::b", "up::a"),
        ("up::b", "low::base"),
        ("up::c", "up::a"),
    ]
    .iter()
    .map(|(f, t)| (f.to_string(), t.to_string()))
    .collect();
    assert_eq!(pairs, want, "{imports:#?}");
    assert!(
        check(&rules, &imports).is_empty(),
        "{:?}",
        check(&rules, &imports)
    );

    // Now base imports mid (a cycle), and b the lower crate's mid.
    let dir = tempfile::tempdir().unwrap();
    let mut files = BASE.to_vec();
    files[1] = ("low/base.rs", "pub struct B;\n\nuse crate::mid;\n");
    files.push((
        "up/b/mod.rs",
        "use low_crate::{\n    base,\n    mid::M,\n};\n",
    ));
    let imports = synthetic(dir.path(), &files);
    let found: Vec<String> = check(&rules, &imports)
        .iter()
        .map(|v| v.to_string())
        .collect();
    let base = dir.path().join("low/base.rs");
    let b = dir.path().join("up/b/mod.rs");
    assert_eq!(
        found,
        [
            format!(
                "{}:3: low::base imports low::mid (low::base may import nothing)",
                base.display()
            ),
            format!(
                "{}:3: up::b imports low::mid (up::b may import only low::base, up::a)",
                b.display()
            ),
        ],
    );
    // The table itself allows no circle.
    let mods: BTreeSet<String> = rules.allowed.keys().cloned().collect();
    assert_eq!(rules.circle(&mods), None);
    let circular = TABLE.replace("| `low::base` | — |", "| `low::base` | `low::mid` |");
    let found = Rules::parse(&circular).unwrap().circle(&mods);
    assert_eq!(
        found,
        Some(vec![
            "low::base".into(),
            "low::mid".into(),
            "low::base".into()
        ])
    );
    // A module with no row fails too.
    let dir = tempfile::tempdir().unwrap();
    let mut files = BASE.to_vec();
    files.push(("up/d.rs", "use crate::a::A;\n"));
    let imports = synthetic(dir.path(), &files);
    let found: Vec<String> = check(&rules, &imports)
        .iter()
        .map(|v| v.rule.clone())
        .collect();
    assert_eq!(found, ["up::d has no row in the table: add one"]);
}

fn paths_in_comments_strings_and_inside_a_module_are_not_imports() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = BASE.to_vec();
    files.push((
        "up/b/mod.rs",
        r####"//! Talks of crate::c::X and `use crate::c;`.
/* block crate::c /* nested crate::c */ still comment crate::c */
pub(crate) fn f<'a>(s: &'a str) -> &'a str {
    let _ = "crate::c::X";
    let _ = r#"crate::c::" and more "#;
    let _ = b"crate::c";
    let _ = '"';
    let _ = '\'';
    s
}
pub(super) mod g {
    use super::f;
    pub(in crate::b) fn h() {}
    mod tests {
        use super::super::f;
    }
}
mod inner;
"####,
    ));
    files.push(("up/b/inner.rs", "use super::f;\nuse super::super::a::A;\n"));
    let imports = synthetic(dir.path(), &files);
    let from_b: Vec<_> = imports.iter().filter(|i| i.from == "up::b").collect();
    assert_eq!(from_b.len(), 1, "{from_b:#?}");
    assert_eq!((from_b[0].to.as_str(), from_b[0].line), ("up::a", 2));
    assert!(from_b[0].file.ends_with("up/b/inner.rs"));
    // Blanking keeps every line break.
    let text = "a // c\n\"s\ntr\"\n/* x\n */ b\n";
    assert_eq!(code_only(text), "a     \n  \n   \n    \n    b\n");
}

fn the_ratchet_fails_on_a_new_violation_a_changed_count_and_a_fixed_one() {
    let rules = Rules::parse(TABLE).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut files = BASE.to_vec();
    files.push(("up/b/mod.rs", "use crate::c::C;\nuse crate::c::D;\n"));
    let imports = synthetic(dir.path(), &files);
    let v = check(&rules, &imports);
    assert_eq!(v.len(), 2);
    assert!(ratchet(&v, &[("up::b", "up::c", 2)]).is_empty());
    let more = ratchet(&v, &[("up::b", "up::c", 1)]);
    assert!(
        more.len() == 1 && more[0].contains("up::b imports up::c 2 times, KNOWN allows 1"),
        "{more:?}"
    );
    assert!(more[0].contains("up/b/mod.rs:2:"), "{more:?}");
    let fewer = ratchet(&v, &[("up::b", "up::c", 3)]);
    assert_eq!(
        fewer,
        ["up::b imports up::c 2 times now, KNOWN says 3: lower it to 2"]
    );
    let fixed = ratchet(&[], &[("up::b", "up::c", 2)]);
    assert_eq!(
        fixed,
        ["up::b no longer imports up::c: delete (\"up::b\", \"up::c\", 2) from KNOWN"]
    );
    let new = ratchet(&v, &[]);
    assert_eq!(new.len(), 1);
    assert!(
        new[0].contains(
            "up/b/mod.rs:1: up::b imports up::c (up::b may import only low::base, up::a)"
        ),
        "{new:?}"
    );
}

/// Runs `scripts/core-pub.py` with `args`: its exit status and stdout.
fn core_pub(args: &[&str]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new("python3")
        .arg(root.join("scripts/core-pub.py"))
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.is_empty(), "scripts/core-pub.py: {err}");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn the_core_has_no_new_pub_item_that_nothing_outside_names() {
    let (_, count) = core_pub(&["--count"]);
    let n: usize = count.trim().parse().unwrap();
    let (_, list) = core_pub(&[]);
    assert!(
        n <= CORE_PUB_UNNAMED,
        "{} new pub item(s) in the core that nothing outside it names: make them pub(crate) \
         (scripts/core-pub.py lists all {n}):\n{list}",
        n - CORE_PUB_UNNAMED
    );
    assert!(
        n == CORE_PUB_UNNAMED,
        "{} fewer unnamed pub items than counted: lower CORE_PUB_UNNAMED to {n}",
        CORE_PUB_UNNAMED - n
    );
}

fn the_pub_check_lists_an_item_named_only_inside_the_core() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("crates/dbio-core/src");
    fs::create_dir_all(&core).unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        core.join("lib.rs"),
        "pub mod inner;\npub fn used() {}\n// pub fn in_a_comment() {}\n\
         #[cfg(test)]\nmod t {\n    pub fn in_a_test() {}\n}\n",
    )
    .unwrap();
    fs::write(
        core.join("inner.rs"),
        "pub struct Named;\npub(crate) fn private() {}\n\
         impl Named {\n    pub fn only_here(&self) {}\n}\n",
    )
    .unwrap();
    let main = "fn main() { let _ = dbio_core::inner::Named; dbio_core::used(); }\n\
                // only_here\n";
    fs::write(dir.path().join("src/main.rs"), main).unwrap();
    let root = dir.path().to_str().unwrap();
    let (ok, list) = core_pub(&["--root", root]);
    assert!(!ok, "{list}");
    assert_eq!(
        list,
        format!(
            "{}:4 fn only_here\n",
            core.join("inner.rs")
                .strip_prefix(dir.path())
                .unwrap()
                .display()
        )
    );
    // Named outside in code, the list is empty and the check passes.
    fs::write(
        dir.path().join("src/main.rs"),
        format!("{main}fn f(n: &dbio_core::inner::Named) {{ n.only_here() }}\n"),
    )
    .unwrap();
    let (ok, list) = core_pub(&["--root", root]);
    assert!(ok && list.is_empty(), "{list}");
}
