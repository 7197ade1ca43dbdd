//! The layer checker, reading sources only (no build): every path that
//! leaves a module's folder — `use crate::x`, `crate::x::` in code,
//! `dbio_core::x`, `super::…` climbing past the module's top — is an import
//! of one top-level module (`core::storage`, `dbio::report`) by another, and
//! the table of allowed imports in ARCHITECTURE.md says which are allowed.
//! Comments, strings and character literals are blanked first, so a path in
//! a doc comment or a message is not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// One import of module `to` by module `from` (both `crate::module`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub file: PathBuf,
    pub line: usize,
    pub from: String,
    pub to: String,
}

/// A crate's sources: its name in module names (`dbio`, `core`), its `src/`,
/// and the crate below it that it may name (`dbio_core` → `core`).
pub struct Tree<'a> {
    pub name: &'a str,
    pub src: &'a Path,
    pub below: Option<Below<'a>>,
}

/// The crate below a tree: the name it is imported by, the name its
/// modules carry in the table, and its top-level modules (also reachable
/// through `crate::` where the upper crate re-exports them).
pub struct Below<'a> {
    pub extern_name: &'a str,
    pub name: &'a str,
    pub modules: BTreeSet<String>,
}

/// The table: each module, the modules it may import (`core::*` for every
/// module of that crate, `*` for all).
#[derive(Debug, Default)]
pub struct Rules {
    pub allowed: BTreeMap<String, Vec<String>>,
}

impl Rules {
    /// Reads the rows between `<!-- layer-rules -->` and `<!-- /layer-rules -->`:
    /// `` | `dbio::store` | `core::*`, `dbio::analysis` | ``; `—` allows nothing.
    pub fn parse(markdown: &str) -> Result<Rules, String> {
        let start = markdown
            .find("<!-- layer-rules -->")
            .ok_or("no <!-- layer-rules --> marker")?;
        let end = markdown[start..]
            .find("<!-- /layer-rules -->")
            .ok_or("no <!-- /layer-rules --> marker")?;
        let mut rules = Rules::default();
        for row in markdown[start..start + end].lines() {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let [_, module, allowed, ..] = cells.as_slice() else {
                continue;
            };
            let Some(module) = module.strip_prefix('`').and_then(|m| m.strip_suffix('`')) else {
                continue;
            };
            let names = allowed.split('`').skip(1).step_by(2).map(String::from);
            if rules
                .allowed
                .insert(module.into(), names.collect())
                .is_some()
            {
                return Err(format!("{module} has two rows"));
            }
        }
        Ok(rules)
    }

    /// A circle the table allows among `modules` (each allowed import of
    /// one by another an edge), as the modules around it, if there is one.
    pub fn circle(&self, modules: &BTreeSet<String>) -> Option<Vec<String>> {
        fn visit<'a>(
            rules: &Rules,
            modules: &'a BTreeSet<String>,
            m: &'a str,
            path: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
        ) -> Option<Vec<String>> {
            if let Some(at) = path.iter().position(|p| *p == m) {
                let mut c: Vec<String> = path[at..].iter().map(|s| s.to_string()).collect();
                c.push(m.to_string());
                return Some(c);
            }
            if !done.insert(m) {
                return None;
            }
            path.push(m);
            for to in modules.iter().filter(|t| *t != m) {
                if rules.forbids(m, to).is_none()
                    && let Some(c) = visit(rules, modules, to, path, done)
                {
                    return Some(c);
                }
            }
            path.pop();
            None
        }
        let mut done = BTreeSet::new();
        modules
            .iter()
            .find_map(|m| visit(self, modules, m, &mut Vec::new(), &mut done))
    }

    /// Whether `from` may import `to`: None when it may, else the rule.
    pub fn forbids(&self, from: &str, to: &str) -> Option<String> {
        let Some(allowed) = self.allowed.get(from) else {
            return Some(format!("{from} has no row in the table: add one"));
        };
        let crate_of = |m: &str| m.split("::").next().unwrap_or("").to_string();
        let ok = allowed
            .iter()
            .any(|a| a == "*" || a == to || a.strip_suffix("::*") == Some(&crate_of(to)));
        (!ok).then(|| match allowed.is_empty() {
            true => format!("{from} may import nothing"),
            false => format!("{from} may import only {}", allowed.join(", ")),
        })
    }
}

/// A forbidden import with the rule it breaks.
#[derive(Debug)]
pub struct Violation {
    pub import: Import,
    pub rule: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let i = &self.import;
        write!(
            f,
            "{}:{}: {} imports {} ({})",
            i.file.display(),
            i.line,
            i.from,
            i.to,
            self.rule
        )
    }
}

/// Every import in `imports` the rules forbid.
pub fn check(rules: &Rules, imports: &[Import]) -> Vec<Violation> {
    imports
        .iter()
        .filter_map(|i| {
            rules.forbids(&i.from, &i.to).map(|rule| Violation {
                import: i.clone(),
                rule,
            })
        })
        .collect()
}

/// The ratchet: `known` lists violations that may remain (from, to, how
/// many imports). Returns what is wrong: a new violation, a known one with
/// another count (lower the count), a known one gone (delete it).
pub fn ratchet(violations: &[Violation], known: &[(&str, &str, usize)]) -> Vec<String> {
    let mut by_pair: BTreeMap<(String, String), Vec<&Violation>> = BTreeMap::new();
    for v in violations {
        let key = (v.import.from.clone(), v.import.to.clone());
        by_pair.entry(key).or_default().push(v);
    }
    let mut problems = Vec::new();
    for &(from, to, count) in known {
        let now = by_pair.remove(&(from.to_string(), to.to_string()));
        let n = now.as_ref().map_or(0, Vec::len);
        match (n, n.cmp(&count)) {
            (0, _) => problems.push(format!(
                "{from} no longer imports {to}: delete (\"{from}\", \"{to}\", {count}) from KNOWN"
            )),
            (_, std::cmp::Ordering::Less) => problems.push(format!(
                "{from} imports {to} {n} times now, KNOWN says {count}: lower it to {n}"
            )),
            (_, std::cmp::Ordering::Greater) => {
                let sites = now.unwrap_or_default();
                problems.push(format!(
                    "{from} imports {to} {n} times, KNOWN allows {count}: {}",
                    list(&sites)
                ))
            }
            (_, std::cmp::Ordering::Equal) => {}
        }
    }
    for sites in by_pair.values() {
        problems.push(list(sites));
    }
    problems
}

fn list(sites: &[&Violation]) -> String {
    let lines: Vec<String> = sites.iter().map(|v| v.to_string()).collect();
    lines.join("\n  ")
}

/// Every import between top-level modules in `tree`, file by file.
pub fn scan(tree: &Tree) -> Vec<Import> {
    let mut files = Vec::new();
    rust_files(tree.src, &mut files);
    files.sort();
    let mut paths = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (file, modpath) in path_attributes(f, &text, &module_path(tree.src, f)) {
            paths.insert(file, modpath);
        }
    }
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let modpath = paths
            .get(f)
            .cloned()
            .unwrap_or_else(|| module_path(tree.src, f));
        imports_of(tree, f, &modpath, &text, &mut out);
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A file's module path from its place: `report/html/mod.rs` →
/// `[report, html]`; `lib.rs`, `main.rs` → `[]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod"))
        || (parts.len() == 1 && matches!(parts[0].as_str(), "lib" | "main"))
    {
        parts.pop();
    }
    parts
}

/// `#[path = "x_tests.rs"] mod tests;` in `file` (module `modpath`): the
/// file it names and that file's module path.
fn path_attributes(file: &Path, text: &str, modpath: &[String]) -> Vec<(PathBuf, Vec<String>)> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    let mut pending: Option<String> = None;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            pending = rest.split('"').next().map(String::from);
        } else if let Some(target) = &pending {
            let decl = line.strip_prefix("pub ").unwrap_or(line);
            if let Some(name) = decl.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
                let mut m = modpath.to_vec();
                m.push(name.trim().to_string());
                out.push((dir.join(target), m));
                pending = None;
            } else if !line.starts_with("#[") {
                pending = None;
            }
        }
    }
    out
}

/// The name a top-level module carries in the table.
fn top_name(tree: &Tree, file_modpath: &[String], file: &Path) -> String {
    match file_modpath.first() {
        Some(m) => format!("{}::{m}", tree.name),
        None => {
            let stem = file.file_stem().unwrap_or_default().to_string_lossy();
            format!("{}::{stem}", tree.name)
        }
    }
}

fn imports_of(tree: &Tree, file: &Path, modpath: &[String], text: &str, out: &mut Vec<Import>) {
    if is_test_file(file) {
        return;
    }
    let from = top_name(tree, modpath, file);
    let tokens = tokens(&code_only(text));
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut pending_mod: Option<String> = None;
    // Test code: an item after `#[cfg(test)]` (until its `;` or through
    // its block), at the depth its block opened.
    let mut test_item = false;
    let mut test_block: Option<usize> = None;
    for (i, (tok, _)) in tokens.iter().enumerate() {
        match tok {
            Tok::LBrace => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
                if std::mem::take(&mut test_item) && test_block.is_none() {
                    test_block = Some(depth);
                }
            }
            Tok::RBrace => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                if test_block == Some(depth) {
                    test_block = None;
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Other(';') => test_item = false,
            Tok::Other('#') if cfg_test(&tokens[i..]) => test_item = true,
            Tok::Ident(m) if m == "mod" => {
                pending_mod = match tokens.get(i + 1..i + 3) {
                    Some([(Tok::Ident(n), _), (Tok::LBrace, _)]) => Some(n.clone()),
                    _ => None,
                };
            }
            _ if test_item || test_block.is_some() => {}
            Tok::Ident(_) if !matches!(i.checked_sub(1).map(|p| &tokens[p].0), Some(Tok::Sep)) => {
                let mut here = modpath.to_vec();
                here.extend(inline.iter().map(|(n, _)| n.clone()));
                for (to, line) in targets(tree, &tokens[i..], &here) {
                    if to != from {
                        out.push(Import {
                            file: file.to_path_buf(),
                            line,
                            from: from.clone(),
                            to,
                        });
                    }
                }
            }
            _ => {}
        }
    }
}

/// Tests beside the code (`tests.rs`, `x_tests.rs`, `tests_x.rs`) may
/// import what they check against: not imports of the module.
fn is_test_file(file: &Path) -> bool {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    stem == "tests" || stem.ends_with("_tests") || stem.starts_with("tests_")
}

/// Whether `toks` start with `#[cfg(test)]`.
fn cfg_test(toks: &[(Tok, usize)]) -> bool {
    let want = [
        Tok::Other('#'),
        Tok::Other('['),
        Tok::Ident("cfg".into()),
        Tok::Other('('),
        Tok::Ident("test".into()),
        Tok::Other(')'),
        Tok::Other(']'),
    ];
    toks.len() >= want.len() && toks.iter().zip(&want).all(|((t, _), w)| t == w)
}

/// The top-level modules a path starting at `toks[0]` names, when it
/// leaves the module (`here` is the module the code is in).
fn targets(tree: &Tree, toks: &[(Tok, usize)], here: &[String]) -> Vec<(String, usize)> {
    let ident = |k: usize| match toks.get(k) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |k: usize| matches!(toks.get(k), Some((Tok::Sep, _)));
    let line = toks[0].1;
    let below = tree.below.as_ref();
    // Where the path starts: the crate root (`crate`, `dbio` in main.rs),
    // the crate below, or `super` climbed k times.
    let (root_crate, mut k) = match ident(0) {
        Some("crate") if sep(1) => (tree.name, 2),
        Some("dbio") if sep(1) && tree.name == "dbio" => (tree.name, 2),
        Some(e) if sep(1) && below.is_some_and(|b| b.extern_name == e) => {
            (below.map_or("", |b| b.name), 2)
        }
        Some("super") if sep(1) => {
            let mut up = 0;
            while ident(2 * up) == Some("super") && sep(2 * up + 1) {
                up += 1;
            }
            if up < here.len() {
                return Vec::new(); // still inside the top-level module
            }
            if up > here.len() {
                return Vec::new();
            }
            (tree.name, 2 * up)
        }
        _ => return Vec::new(),
    };
    let mut names = Vec::new();
    match toks.get(k) {
        Some((Tok::Ident(n), l)) => names.push((n.clone(), *l)),
        Some((Tok::LBrace, _)) => {
            let mut d = 0;
            let mut expect = true;
            while let Some((t, l)) = toks.get(k) {
                match t {
                    Tok::LBrace => d += 1,
                    Tok::RBrace => d -= 1,
                    Tok::Comma if d == 1 => expect = true,
                    Tok::Ident(n) if d == 1 && expect => {
                        names.push((n.clone(), *l));
                        expect = false;
                    }
                    _ if d == 1 => expect = false,
                    _ => {}
                }
                if d == 0 {
                    break;
                }
                k += 1;
            }
        }
        _ => {}
    }
    names
        .into_iter()
        .filter_map(|(n, l)| module_of(tree, root_crate, &n).map(|m| (m, l.max(line))))
        .collect()
}

/// `name` at the root of `root_crate` as a table name, if it is a module
/// (the upper crate's re-exports of the lower one's modules included).
fn module_of(tree: &Tree, root_crate: &str, name: &str) -> Option<String> {
    let below = tree.below.as_ref();
    if let Some(b) = below.filter(|b| b.modules.contains(name))
        && (root_crate == b.name || root_crate == tree.name)
    {
        return Some(format!("{}::{name}", b.name));
    }
    if root_crate != tree.name || matches!(name, "self" | "super" | "crate") {
        return None;
    }
    let src = tree.src;
    let is_module =
        src.join(format!("{name}.rs")).is_file() || src.join(name).join("mod.rs").is_file();
    is_module.then(|| format!("{}::{name}", tree.name))
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Sep,
    LBrace,
    RBrace,
    Comma,
    Other(char),
}

/// Identifiers, `::`, braces and commas, each with its line.
fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        let tok = match c {
            '\n' => {
                line += 1;
                continue;
            }
            c if c.is_whitespace() => continue,
            c if c.is_alphanumeric() || c == '_' => {
                let mut s = c.to_string();
                while let Some(&n) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                    s.push(n);
                    chars.next();
                }
                Tok::Ident(s)
            }
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                Tok::Sep
            }
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            ',' => Tok::Comma,
            c => Tok::Other(c),
        };
        out.push((tok, line));
    }
    out
}

/// `text` with comments, strings and character literals blanked (line
/// breaks kept, so lines still count).
pub fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < b.len() {
        let at = |k: usize| b.get(k).copied().unwrap_or('\0');
        let end = match (at(i), at(i + 1)) {
            ('/', '/') => (i..b.len()).find(|&k| b[k] == '\n').unwrap_or(b.len()),
            ('/', '*') => block_comment_end(&b, i),
            ('"', _) => string_end(&b, i + 1),
            ('b', '"') if !ident_char(at(i.wrapping_sub(1))) => string_end(&b, i + 2),
            ('r' | 'b', '#' | '"') if !ident_char(at(i.wrapping_sub(1))) => {
                raw_string_end(&b, i).unwrap_or(i + 1)
            }
            ('\'', _) => char_end(&b, i).unwrap_or(i + 1),
            _ => i + 1,
        };
        if end == i + 1 {
            out.push(b[i]);
        } else {
            out.extend(b[i..end].iter().map(|&c| blank(c)));
        }
        i = end;
    }
    out
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn block_comment_end(b: &[char], start: usize) -> usize {
    let (mut depth, mut k) = (0, start);
    while k + 1 < b.len() {
        match (b[k], b[k + 1]) {
            ('/', '*') => (depth, k) = (depth + 1, k + 2),
            ('*', '/') => {
                depth -= 1;
                k += 2;
                if depth == 0 {
                    return k;
                }
            }
            _ => k += 1,
        }
    }
    b.len()
}

fn string_end(b: &[char], mut k: usize) -> usize {
    while k < b.len() {
        match b[k] {
            '\\' => k += 2,
            '"' => return k + 1,
            _ => k += 1,
        }
    }
    b.len()
}

/// `r"…"`, `r#"…"#`, `br#"…"#`: the end, if `start` opens one.
fn raw_string_end(b: &[char], start: usize) -> Option<usize> {
    let mut k = start + usize::from(b[start] == 'b');
    if b.get(k) != Some(&'r') {
        return None;
    }
    k += 1;
    let hashes = b[k..].iter().take_while(|&&c| c == '#').count();
    k += hashes;
    if b.get(k) != Some(&'"') {
        return None;
    }
    let close: Vec<char> = std::iter::once('"')
        .chain(std::iter::repeat_n('#', hashes))
        .collect();
    (k + 1..b.len())
        .find(|&e| b[e..].starts_with(&close))
        .map(|e| e + close.len())
}

/// `'x'`, `'\n'`, `'\u{1F600}'`: the end; None for a lifetime (`'a`).
fn char_end(b: &[char], start: usize) -> Option<usize> {
    match b.get(start + 1)? {
        '\\' => (start + 2..b.len().min(start + 12))
            .find(|&k| b[k] == '\'')
            .map(|k| k + 1),
        _ if b.get(start + 2) == Some(&'\'') => Some(start + 3),
        _ => None,
    }
}
