//! The plan `dbio lab vs-engine` runs: for each flavor of the model paired
//! with its engine (`report::vs_engine::PAIRS`), two arms — the model
//! (`--workload slob --flavor F`) and the engine (`--workload pg|mysql`) —
//! with the same shape, cache, page size and memory bound, swept over
//! update percentages × sessions, repeats interleaved (cell by cell, the
//! arms alternating). The storage is either a directory (one per arm under
//! it: `[variables]`) or a filesystem the lab builds per arm over a
//! direct-io loop device (`[lab]`).
//!
//! The plan is written as TOML through the `toml` crate (every value the
//! user gave is a TOML string or number, never text spliced into the file)
//! and loaded by [`super::load_str`], so it is checked exactly as a plan
//! file is, and its runs are stored as a plan's: `report`, `compare` and
//! `plan status` work on them, and running it again resumes.

use std::path::PathBuf;

use toml::{Table, Value};

use super::FsKind;
use crate::report::vs_engine::Pair;

/// Where the runs go.
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    /// A directory: each arm in `DIR/ARM`.
    Dir(PathBuf),
    /// A filesystem of this kind per arm, over a direct-io loop device on
    /// an image in `image_dir`, mounted under `mount_dir`.
    Lab {
        fs: FsKind,
        image_dir: PathBuf,
        image_size: String,
        mount_dir: PathBuf,
    },
}

/// How the sessions share tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One table (schema) every session shares: `--schemas 1`,
    /// `--threads-per-schema N`.
    Shared,
    /// A table per session: `--schemas N`, `--threads-per-schema 1`.
    PerSession,
}

/// Everything the plan is made of.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: String,
    pub storage: Storage,
    pub pairs: Vec<Pair>,
    pub sessions: Vec<u32>,
    pub update_pcts: Vec<u8>,
    pub runs: u32,
    pub warmup: u32,
    pub layout: Layout,
    /// `dbio run` options every arm shares (`time`, `scale`, `cache`, and
    /// what `--set` gave), in order.
    pub shared: Vec<(String, Value)>,
    /// Options of one arm only (`--arm-set ARM:KEY=VALUE`): (arm, key, value).
    pub per_arm: Vec<(String, String, Value)>,
    /// The memory bound: the engines' `--pg-memory` / `--mysql-memory`,
    /// and the model's `--memory` where `dbio run` has it.
    pub memory: Option<String>,
    /// Whether `dbio run` has `--memory` for the model.
    pub model_memory: bool,
}

/// The model arm's name for a pair.
pub fn model_arm(p: &Pair) -> String {
    format!("model-{}", p.flavor)
}

/// The engine arm's name for a pair.
pub fn engine_arm(p: &Pair) -> String {
    p.engine.workload().to_string()
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

/// The arms' own options: (name, options) for each pair, model first.
fn arms(spec: &Spec) -> Vec<(String, Table)> {
    let mut out = Vec::new();
    for p in &spec.pairs {
        let mut model = Table::new();
        model.insert("workload".into(), s("slob"));
        model.insert("flavor".into(), s(p.flavor));
        model.insert("bs".into(), s(p.page));
        let mut engine = Table::new();
        engine.insert("workload".into(), s(p.engine.workload()));
        engine.insert("bs".into(), s(p.page));
        if let Some(m) = &spec.memory {
            engine.insert(p.engine.memory_option().into(), s(m));
            if spec.model_memory {
                model.insert("memory".into(), s(m));
            }
        }
        out.push((model_arm(p), model));
        out.push((engine_arm(p), engine));
    }
    for (arm, key, value) in &spec.per_arm {
        if let Some((_, opts)) = out.iter_mut().find(|(name, _)| name == arm) {
            opts.insert(key.clone(), value.clone());
        }
    }
    out
}

/// The plan as TOML.
pub fn toml(spec: &Spec) -> String {
    let mut top = Table::new();
    top.insert("name".into(), s(&spec.name));
    top.insert(
        "description".into(),
        s("the model against its engines (dbio lab vs-engine)"),
    );
    top.insert("repeats".into(), Value::Integer(i64::from(spec.runs)));
    top.insert("warmup".into(), Value::Integer(i64::from(spec.warmup)));
    top.insert("order".into(), s("interleaved"));
    let (workload, sweep) = cells(spec);
    top.insert("workload".into(), Value::Table(workload));
    top.insert("sweep".into(), Value::Table(sweep));
    let (key, table) = storage(spec, arms(spec));
    top.insert(key.into(), Value::Table(table));
    toml::to_string(&top).expect("a table of strings and numbers serializes")
}

fn integers<T: Copy + Into<i64>>(values: &[T]) -> Value {
    Value::Array(values.iter().map(|v| Value::Integer((*v).into())).collect())
}

/// `[workload]` (what every arm shares) and `[sweep]` (the cells).
fn cells(spec: &Spec) -> (Table, Table) {
    let (swept, one) = match spec.layout {
        Layout::Shared => ("threads_per_schema", "schemas"),
        Layout::PerSession => ("schemas", "threads_per_schema"),
    };
    let mut workload = Table::new();
    workload.insert(one.into(), Value::Integer(1));
    for (k, v) in &spec.shared {
        workload.insert(k.clone(), v.clone());
    }
    let mut sweep = Table::new();
    sweep.insert("update_pct".into(), integers(&spec.update_pcts));
    sweep.insert(swept.into(), integers(&spec.sessions));
    (workload, sweep)
}

/// `[variables]` with a target per arm, or `[lab]` with a filesystem per arm.
fn storage(spec: &Spec, arms: Vec<(String, Table)>) -> (&'static str, Table) {
    match &spec.storage {
        Storage::Dir(dir) => {
            let mut vars = Table::new();
            for (name, mut opts) in arms {
                let target = dir.join(&name).display().to_string();
                opts.insert("target".into(), Value::String(target));
                vars.insert(name, Value::Table(opts));
            }
            ("variables", vars)
        }
        Storage::Lab {
            fs,
            image_dir,
            image_size,
            mount_dir,
        } => {
            let mut lab = Table::new();
            lab.insert("image_dir".into(), s(&image_dir.display().to_string()));
            lab.insert("image_size".into(), s(image_size));
            lab.insert("target".into(), s("dbio"));
            lab.insert("mount_dir".into(), s(&mount_dir.display().to_string()));
            let mut lab_arms = Table::new();
            for (name, mut opts) in arms {
                opts.insert("fs".into(), s(fs.name()));
                // The engines' tables change under the runs' updates (dead
                // rows, undo, the log's position): each run starts from
                // the state they were loaded in. The model keeps nothing
                // its I/O depends on between runs.
                if spec.pairs.iter().any(|p| engine_arm(p) == name) {
                    opts.insert("restore".into(), Value::Boolean(true));
                }
                if let Some(m) = mkfs_quiet_discard(*fs) {
                    opts.insert("mkfs".into(), s(m));
                }
                opts.insert("mount".into(), s("noatime"));
                lab_arms.insert(name, Value::Table(opts));
            }
            lab.insert("arms".into(), Value::Table(lab_arms));
            ("lab", lab)
        }
    }
}

/// mkfs without discarding the new loop device (nothing to discard in a new
/// sparse image; the time it takes is not the experiment's).
fn mkfs_quiet_discard(fs: FsKind) -> Option<&'static str> {
    match fs {
        FsKind::Xfs => Some("-K"),
        FsKind::Ext4 => Some("-E nodiscard"),
        FsKind::Btrfs => Some("--nodiscard"),
        FsKind::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::vs_engine::{Engine, PAIRS};

    fn spec(storage: Storage) -> Spec {
        Spec {
            name: "mve".into(),
            storage,
            pairs: PAIRS
                .iter()
                .copied()
                .filter(|p| p.engine == Engine::Pg)
                .collect(),
            sessions: vec![1, 8],
            update_pcts: vec![25],
            runs: 3,
            warmup: 0,
            layout: Layout::Shared,
            shared: vec![
                ("time".into(), s("2")),
                ("scale".into(), s("300")),
                ("cache".into(), s("16M")),
            ],
            per_arm: vec![("pg".into(), "pg_set".into(), s("autovacuum=on"))],
            memory: Some("256M".into()),
            model_memory: false,
        }
    }

    #[test]
    fn a_directory_plan_has_a_model_and_an_engine_arm_per_pair_alternating() {
        let dir = PathBuf::from("/tmp/x \"quoted\" dir");
        let text = toml(&spec(Storage::Dir(dir.clone())));
        let plan = super::super::load_str(std::path::Path::new("gen"), &text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(plan.arms, vec!["model-postgres", "pg"]);
        assert_eq!(plan.repeats, 3);
        assert_eq!(plan.runs.len(), 2 * 2 * 3);
        // Interleaved: the two arms of a cell run one after the other.
        assert_ne!(plan.runs[0].variable, plan.runs[1].variable);
        assert_eq!(plan.runs[0].cell, plan.runs[1].cell);
        let pg = plan.runs.iter().find(|r| r.variable == "pg").unwrap();
        let args = pg.args.join(" ");
        assert!(args.contains("--workload pg"), "{args}");
        assert!(args.contains("--pg-memory 256M"), "{args}");
        assert!(args.contains("--schemas 1"), "{args}");
        assert!(args.contains("--pg-set autovacuum=on"), "{args}");
        assert!(
            pg.args.contains(&dir.join("pg").display().to_string()),
            "{args}"
        );
        let model = plan.runs.iter().find(|r| r.variable != "pg").unwrap();
        let args = model.args.join(" ");
        assert!(args.contains("--flavor postgres"), "{args}");
        assert!(
            !args.contains("memory"),
            "no --memory for the model here: {args}"
        );
    }

    #[test]
    fn a_lab_plan_builds_one_filesystem_per_arm() {
        let text = toml(&spec(Storage::Lab {
            fs: FsKind::Xfs,
            image_dir: "/var/tmp".into(),
            image_size: "2G".into(),
            mount_dir: "/var/tmp/mnt".into(),
        }));
        let plan = super::super::load_str(std::path::Path::new("gen"), &text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let lab = plan.lab.expect("a [lab]");
        assert_eq!(lab.arms.len(), 2);
        assert!(lab.arms.iter().all(|a| a.fs == FsKind::Xfs), "{text}");
        // The engine starts every run from its loaded tables; the model
        // reuses its datafiles.
        let restores: Vec<(&str, bool)> = lab
            .arms
            .iter()
            .map(|a| (a.name.as_str(), a.restore))
            .collect();
        assert_eq!(restores, [("model-postgres", false), ("pg", true)]);
    }
}
