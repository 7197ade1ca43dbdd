//! From the file to the run list: cells (the cross product of the swept
//! values), one argument list per arm × cell validated with the real
//! `dbio run` parser, repeats and warm-ups, the execution order and the
//! estimates.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use super::parse::{Loc, RawPlan, Setting, Src, fill};
use super::{
    ASSUMED_IOPS_PER_SESSION, ASSUMED_LAYOUT_BYTES_PER_S, DEFAULT_DIR_SIZE, Order, Plan, PlanError,
    PlannedRun, RUN_OVERHEAD_S,
};
use crate::config::RunLength;
use crate::options::table::{self as options, Val};

/// The arm name used when the plan has no `[variables]`.
pub const DEFAULT_ARM: &str = "default";

/// One cell: a value for every swept option.
struct Cell<'a> {
    /// `bs=8k|sessions=16`: swept options in alphabetical order, so that the
    /// key does not change when [sweep] is reordered.
    label: String,
    values: Vec<&'a Setting>,
}

/// What one distinct argument list resolves to.
#[derive(Clone)]
struct Resolved {
    sessions: u32,
    /// Seconds without the layout guess.
    est: f64,
    /// (target, files, bs, size) of a directory target; None for a device.
    shape: Option<(String, u32, u32, u64)>,
    /// The layout grows to the largest size asked (the SLOB model's data,
    /// whose size follows the session count) instead of being redone.
    grows: bool,
}

/// A counted or warm-up run before ordering.
struct Item {
    arm: usize,
    cell: usize,
    warmup: bool,
    repeat: u32,
}

/// An arm: its name, where it is defined (none for the default arm) and
/// its settings.
type ArmRef<'a> = (&'a str, Option<&'a Loc>, &'a [Setting]);

pub(crate) fn expand(src: &Src, raw: RawPlan, path: &Path) -> Result<Plan, PlanError> {
    let cells = cells(&raw);
    let default_arm;
    let arm_list: Vec<ArmRef> = if raw.arms.is_empty() {
        default_arm = DEFAULT_ARM.to_string();
        vec![(default_arm.as_str(), None, &[][..])]
    } else {
        raw.arms
            .iter()
            .map(|a| (a.name.as_str(), Some(&a.loc), a.settings.as_slice()))
            .collect()
    };

    // Argument lists per arm × cell, each validated once.
    let mut cache: HashMap<Vec<String>, Resolved> = HashMap::new();
    let mut args_of: Vec<Vec<Vec<String>>> = Vec::new();
    for arm in &arm_list {
        let per_cell = cells
            .iter()
            .map(|cell| cell_args(src, &raw, *arm, cell, &mut cache))
            .collect::<Result<_, _>>()?;
        args_of.push(per_cell);
    }

    let seed = raw.seed.unwrap_or_else(|| seed_from_name(&raw.name));
    let items = order(
        raw.order,
        seed,
        arm_list.len(),
        cells.len(),
        raw.repeats,
        raw.warmup,
    );
    let runs = planned_runs(&items, &arm_list, &cells, &args_of, &cache);
    let warnings = relayout_warnings(&arm_list, &args_of, &cache);
    let cell_labels = cells.iter().map(|c| c.label.clone()).collect();
    let arm_names = arm_list.iter().map(|a| a.0.to_string()).collect();
    Ok(Plan {
        name: raw.name.clone(),
        description: raw.description.clone(),
        path: path.to_path_buf(),
        seed,
        seed_given: raw.seed.is_some(),
        order: raw.order,
        repeats: raw.repeats,
        warmup: raw.warmup,
        on_failure: raw.on_failure,
        metrics: raw.metrics.clone(),
        arms: arm_names,
        cells: cell_labels,
        runs,
        steps: raw.steps.clone(),
        warnings,
        lab: raw.lab.clone(),
    })
}

/// The `dbio run` arguments of one arm in one cell (workload, then arm,
/// then cell settings, placeholders filled), validated once per distinct
/// list into `cache`; a refusal names the setting to blame.
fn cell_args(
    src: &Src,
    raw: &RawPlan,
    (arm_name, arm_loc, arm_settings): ArmRef,
    cell: &Cell,
    cache: &mut HashMap<Vec<String>, Resolved>,
) -> Result<Vec<String>, PlanError> {
    // Later entries override earlier ones: workload, then arm, then cell.
    let mut merged: BTreeMap<&str, &Setting> = BTreeMap::new();
    for s in raw
        .workload
        .iter()
        .chain(arm_settings.iter())
        .chain(cell.values.iter().copied())
    {
        merged.insert(s.long.as_str(), s);
    }
    let lookup = |name: &str| -> Option<String> {
        if name == "variable" {
            return Some(arm_name.to_string());
        }
        cell.values
            .iter()
            .find(|s| s.long == name)
            .map(|s| s.val.label())
    };
    let mut args = Vec::new();
    for opt in &raw.options {
        if let Some(s) = merged.get(opt.long.as_str()) {
            let val = match &s.val {
                Val::Text(t) => Val::Text(fill(t, &lookup)),
                v => v.clone(),
            };
            options::push_arg(&mut args, &opt.long, &val);
        }
    }
    if !cache.contains_key(&args) {
        let cfg = options::parse_run(&args).map_err(|msg| {
            let loc = blame(&msg, &merged)
                .or(arm_loc)
                .or(raw.workload_loc.as_ref());
            let (line, key) = match loc {
                Some(l) => (l.line, l.key.clone()),
                None => (1, "[workload]".to_string()),
            };
            let mut context = Vec::new();
            if arm_loc.is_some() {
                context.push(format!("arm {arm_name}"));
            }
            if !cell.label.is_empty() {
                context.push(format!("cell {}", cell.label));
            }
            let msg = if context.is_empty() {
                msg.into()
            } else {
                format!("{msg}; in {}", context.join(", "))
            };
            src.err(line, key, msg)
        })?;
        cache.insert(args.clone(), resolve(&cfg));
    }
    Ok(args)
}

/// The runs in their order, each with its cell key and estimate (the
/// first run of a layout's shape also lays it out).
fn planned_runs(
    items: &[Item],
    arm_list: &[ArmRef],
    cells: &[Cell],
    args_of: &[Vec<Vec<String>>],
    cache: &HashMap<Vec<String>, Resolved>,
) -> Vec<PlannedRun> {
    let mut seen_shapes: HashSet<(String, u32, u32, u64)> = HashSet::new();
    let mut runs = Vec::with_capacity(items.len());
    for (index, it) in items.iter().enumerate() {
        let arm = arm_list[it.arm].0;
        let cell = &cells[it.cell];
        let args = args_of[it.arm][it.cell].clone();
        let res = &cache[&args];
        let mut est = res.est;
        if let Some(shape) = &res.shape
            && seen_shapes.insert(shape.clone())
        {
            est += shape.3 as f64 / ASSUMED_LAYOUT_BYTES_PER_S;
        }
        let cell_key = if it.warmup {
            format!("{arm}|warmup={}", it.repeat)
        } else if cell.label.is_empty() {
            format!("{arm}|rep={}", it.repeat)
        } else {
            format!("{arm}|{}|rep={}", cell.label, it.repeat)
        };
        runs.push(PlannedRun {
            index,
            variable: arm.to_string(),
            cell: cell.label.clone(),
            cell_key,
            warmup: it.warmup,
            repeat: it.repeat,
            sessions: Some(res.sessions),
            args,
            est_seconds: est,
        });
    }
    runs
}

/// The cross product of the swept values, the first [sweep] key outermost.
fn cells(raw: &RawPlan) -> Vec<Cell<'_>> {
    let mut combos: Vec<Vec<&Setting>> = vec![Vec::new()];
    for sw in &raw.sweep {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                sw.values.iter().map(move |v| {
                    let mut n = c.clone();
                    n.push(v);
                    n
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|values| {
            let mut sorted = values.clone();
            sorted.sort_by(|a, b| a.long.cmp(&b.long));
            let label = sorted
                .iter()
                .map(|s| format!("{}={}", s.long, s.val.label()))
                .collect::<Vec<_>>()
                .join("|");
            Cell { label, values }
        })
        .collect()
}

/// The setting a `dbio run` message is about: the first `--option` it names
/// that the plan sets.
fn blame<'a>(msg: &str, merged: &BTreeMap<&str, &'a Setting>) -> Option<&'a Loc> {
    let mut rest = msg;
    while let Some(i) = rest.find("--") {
        let name: String = rest[i + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if let Some(s) = merged.get(name.as_str()) {
            return Some(&s.loc);
        }
        rest = &rest[i + 2..];
    }
    None
}

fn resolve(cfg: &crate::config::RunConfig) -> Resolved {
    let run = match cfg.length {
        RunLength::Time { time_s, ramp_s } => time_s + ramp_s,
        RunLength::Ops { ops } => {
            let rate = cfg
                .rate_iops
                .map(|r| r as f64)
                .unwrap_or(ASSUMED_IOPS_PER_SESSION * f64::from(cfg.sessions));
            ops as f64 / rate
        }
    };
    let target = cfg.target.to_string_lossy().to_string();
    let shape = (!target.starts_with("/dev/")).then(|| {
        (
            target,
            cfg.files,
            cfg.block_size,
            cfg.size_bytes.unwrap_or(DEFAULT_DIR_SIZE),
        )
    });
    Resolved {
        sessions: cfg.sessions,
        est: run + RUN_OVERHEAD_S,
        shape,
        grows: cfg.workload.model().is_some(),
    }
}

/// The default seed of the shuffle: FNV-1a of the plan name, so the same plan
/// always runs in the same order.
pub(crate) fn seed_from_name(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h >> 1 // fits in a TOML integer, so it can be written back as seed = ...
}

/// SplitMix64: small, and fixed here so an order never changes with the
/// crate's other random number generators.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0), by widening multiplication.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

fn order(
    order: Order,
    seed: u64,
    arms: usize,
    cells: usize,
    repeats: u32,
    warmup: u32,
) -> Vec<Item> {
    let warm = |arm: usize| {
        (1..=warmup).map(move |w| Item {
            arm,
            cell: 0,
            warmup: true,
            repeat: w,
        })
    };
    let counted = |arm: usize, cell: usize, repeat: u32| Item {
        arm,
        cell,
        warmup: false,
        repeat,
    };
    let mut out = Vec::new();
    match order {
        Order::Sequential => {
            for a in 0..arms {
                out.extend(warm(a));
                for c in 0..cells {
                    for r in 1..=repeats {
                        out.push(counted(a, c, r));
                    }
                }
            }
        }
        Order::Interleaved => {
            for a in 0..arms {
                out.extend(warm(a));
            }
            // Odd rounds take the arms forward, even rounds backward, so no
            // arm always runs first in its cell (a host that warms, or a
            // page cache the arm before filled, favours neither).
            for r in 1..=repeats {
                for c in 0..cells {
                    for i in 0..arms {
                        let a = if r % 2 == 1 { i } else { arms - 1 - i };
                        out.push(counted(a, c, r));
                    }
                }
            }
        }
        Order::Shuffled => {
            let mut rng = SplitMix(seed);
            let mut arm_order: Vec<usize> = (0..arms).collect();
            rng.shuffle(&mut arm_order);
            for a in arm_order {
                out.extend(warm(a));
            }
            for r in 1..=repeats {
                let mut round: Vec<Item> = (0..cells)
                    .flat_map(|c| (0..arms).map(move |a| (a, c)))
                    .map(|(a, c)| counted(a, c, r))
                    .collect();
                rng.shuffle(&mut round);
                out.extend(round);
            }
        }
    }
    out
}

/// Warns when an arm's directory target is laid out again and again because
/// the swept options change its shape (files, bs or size).
fn relayout_warnings(
    arms: &[ArmRef],
    args_of: &[Vec<Vec<String>>],
    cache: &HashMap<Vec<String>, Resolved>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, (name, _, _)) in arms.iter().enumerate() {
        let mut shapes: BTreeMap<&str, HashSet<(u32, u32, u64)>> = BTreeMap::new();
        for args in &args_of[i] {
            let r = &cache[args];
            if let Some((t, f, b, s)) = &r.shape {
                let size = if r.grows { 0 } else { *s };
                shapes.entry(t.as_str()).or_default().insert((*f, *b, size));
            }
        }
        for (target, set) in shapes {
            if set.len() > 1 {
                out.push(format!(
                    "arm {name}: the target {target} is laid out in {} shapes (files, bs or size are swept), and each change lays the data files out again; put {{files}} / {{bs}} in the target path to keep one directory per shape",
                    set.len()
                ));
            }
        }
    }
    out
}
