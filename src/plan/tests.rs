use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::expand::seed_from_name;
use super::*;

/// 2 arms x 3 session counts x 3 repeats + 1 warm-up per arm.
const BASE: &str = r#"
name = "t"
warmup = 1

[workload]
pattern = "randread"
time = 10
ramp = 2

[sweep]
sessions = [1, 4, 16]

[variables]
XFS = { target = "/mnt/xfs/dbio" }
EXT4 = { target = "/mnt/ext4/dbio" }
"#;

fn plan(text: &str) -> Plan {
    match load_str(Path::new("plan.toml"), text) {
        Ok(p) => p,
        Err(e) => panic!("plan did not load: {e}"),
    }
}

fn plan_err(text: &str) -> String {
    match load_str(Path::new("plan.toml"), text) {
        Ok(p) => panic!("plan loaded but should not: {} runs", p.runs.len()),
        Err(e) => e.to_string(),
    }
}

/// BASE with `extra` inserted at the top (top-level keys).
fn with_top(extra: &str) -> String {
    format!("{extra}\n{BASE}")
}

fn keys(p: &Plan) -> Vec<String> {
    p.runs.iter().map(|r| r.cell_key.clone()).collect()
}

/// An executor that records calls and completes runs in memory.
#[derive(Default)]
struct Fake {
    done: HashSet<String>,
    calls: Vec<String>,
    steps: Vec<StepRecord>,
    /// Set this flag once `interrupt_after` runs were made.
    flag: Option<(Arc<AtomicBool>, usize)>,
    /// The run with this call number (1-based) returns this status.
    status_at: Option<(usize, RunStatus)>,
}

impl Executor for Fake {
    fn completed(&mut self, plan: &str) -> Result<HashSet<String>, crate::plan::ExecError> {
        assert_eq!(plan, "t");
        Ok(self.done.clone())
    }
    fn run(&mut self, run: &PlannedRun, _plan: &Plan) -> Result<RunStatus, crate::plan::ExecError> {
        assert!(
            !self.done.contains(&run.cell_key),
            "{} ran although it was completed",
            run.cell_key
        );
        self.calls.push(run.cell_key.clone());
        if let Some((flag, after)) = &self.flag
            && self.calls.len() == *after
        {
            flag.store(true, Ordering::Relaxed);
        }
        let status = match &self.status_at {
            Some((n, s)) if *n == self.calls.len() => s.clone(),
            _ => RunStatus::Completed,
        };
        if status == RunStatus::Completed {
            self.done.insert(run.cell_key.clone());
        }
        Ok(status)
    }
    fn step(&mut self, record: &StepRecord, _plan: &Plan) -> Result<(), crate::plan::ExecError> {
        self.steps.push(record.clone());
        Ok(())
    }
}

fn run_all(p: &Plan, fake: &mut Fake) -> Result<Summary, PlanError> {
    execute_with(p, fake, &AtomicBool::new(false), None)
}

// ---- expansion ----

#[test]
fn expansion_counts_arms_cells_repeats_and_warmups() {
    let p = plan(BASE);
    assert_eq!(p.runs.len(), 20);
    assert_eq!(p.counted(), 18);
    assert_eq!(p.runs.iter().filter(|r| r.warmup).count(), 2);
    assert_eq!(p.arms, ["XFS", "EXT4"]);
    assert_eq!(p.cells, ["sessions=1", "sessions=4", "sessions=16"]);
    for arm in ["XFS", "EXT4"] {
        for cell in &p.cells {
            let n = p
                .runs
                .iter()
                .filter(|r| !r.warmup && r.variable == arm && &r.cell == cell)
                .count();
            assert_eq!(n, 3, "{arm} {cell}");
        }
    }
    for (i, r) in p.runs.iter().enumerate() {
        assert_eq!(r.index, i);
    }
}

#[test]
fn each_run_is_a_dbio_run_argument_list() {
    let p = plan(BASE);
    let r = p
        .runs
        .iter()
        .find(|r| r.cell_key == "EXT4|sessions=16|rep=2")
        .expect("cell key exists");
    // Options in `dbio run --help` order, values as written.
    assert_eq!(
        r.args,
        [
            "--target",
            "/mnt/ext4/dbio",
            "--pattern",
            "randread",
            "--sessions",
            "16",
            "--time",
            "10",
            "--ramp",
            "2"
        ]
    );
    assert_eq!(r.sessions, Some(16));
    assert!(!r.warmup);
    assert_eq!(r.repeat, 2);
    // A warm-up runs the arm's first cell.
    let w = p
        .runs
        .iter()
        .find(|r| r.cell_key == "XFS|warmup=1")
        .unwrap();
    assert!(w.warmup);
    assert_eq!(w.sessions, Some(1));
    assert!(
        w.args
            .windows(2)
            .any(|a| a == ["--target", "/mnt/xfs/dbio"])
    );
}

#[test]
fn underscores_and_dashes_name_the_same_option() {
    let p = plan(
        r#"
name = "t"
repeats = 1
[workload]
pattern = "randrw"
read-pct = 70
[variables]
RAW = { target = "/dev/loop5", destroy_device = "/dev/loop5" }
"#,
    );
    let args = &p.runs[0].args;
    assert!(
        args.windows(2).any(|a| a == ["--read-pct", "70"]),
        "{args:?}"
    );
    assert!(
        args.windows(2)
            .any(|a| a == ["--destroy-device", "/dev/loop5"]),
        "{args:?}"
    );
    let e =
        plan_err("name = \"t\"\n[workload]\nread_pct = 70\nread-pct = 60\npattern = \"randrw\"\n");
    assert!(
        e.starts_with("plan.toml:4: [workload] read-pct: set twice"),
        "{e}"
    );
}

#[test]
fn estimates_are_ramp_plus_time_plus_overhead_and_a_layout_guess() {
    let p = plan(BASE);
    let run = 10.0 + 2.0 + RUN_OVERHEAD_S;
    let layout = DEFAULT_DIR_SIZE as f64 / ASSUMED_LAYOUT_BYTES_PER_S;
    // The first run on each of the two targets lays out 1 GiB.
    let with_layout: Vec<_> = p
        .runs
        .iter()
        .filter(|r| r.est_seconds > run + 0.01)
        .collect();
    assert_eq!(with_layout.len(), 2);
    for r in &with_layout {
        assert!((r.est_seconds - run - layout).abs() < 1e-9);
        let first = p.runs.iter().find(|x| x.variable == r.variable).unwrap();
        assert_eq!(
            first.index, r.index,
            "the layout is guessed for the first run"
        );
    }
    let total: f64 = p.runs.iter().map(|r| r.est_seconds).sum();
    assert!((total - (20.0 * run + 2.0 * layout)).abs() < 1e-6);

    // --ops: at the assumed rate per session, or at --rate.
    let p = plan(
        "name = \"t\"\nrepeats = 1\n[workload]\ntarget = \"/dev/sdx\"\nops = 40000\nsessions = 4\n",
    );
    let want = 40000.0 / (4.0 * ASSUMED_IOPS_PER_SESSION) + RUN_OVERHEAD_S;
    assert!(
        (p.runs[0].est_seconds - want).abs() < 1e-9,
        "{}",
        p.runs[0].est_seconds
    );
    let p = plan(
        "name = \"t\"\nrepeats = 1\n[workload]\ntarget = \"/dev/sdx\"\nops = 40000\nrate = 2000\n",
    );
    assert!((p.runs[0].est_seconds - (20.0 + RUN_OVERHEAD_S)).abs() < 1e-9);
}

// ---- order ----

#[test]
fn shuffled_order_is_reproducible_from_the_seed() {
    let a = plan(BASE);
    let b = plan(BASE);
    assert_eq!(a.order, Order::Shuffled);
    assert_eq!(keys(&a), keys(&b), "same plan, same order");
    assert_eq!(a.seed, seed_from_name("t"));
    assert!(!a.seed_given);
    // Writing the recorded seed back gives the same order.
    let c = plan(&with_top(&format!("seed = {}", a.seed)));
    assert!(c.seed_given);
    assert_eq!(keys(&a), keys(&c));
    // Another seed, another order; the same set of runs.
    let d = plan(&with_top("seed = 12345"));
    assert_ne!(keys(&a), keys(&d));
    let (mut ka, mut kd) = (keys(&a), keys(&d));
    ka.sort();
    kd.sort();
    assert_eq!(ka, kd);
    // And the same runs carry the same arguments whatever the order.
    for r in &a.runs {
        let s = d.runs.iter().find(|x| x.cell_key == r.cell_key).unwrap();
        assert_eq!(r.args, s.args);
    }
}

#[test]
fn shuffled_order_is_warmups_then_rounds_of_every_arm_and_cell() {
    for seed in [1u64, 2, 3, 99] {
        let p = plan(&with_top(&format!("seed = {seed}")));
        assert!(p.runs[..2].iter().all(|r| r.warmup));
        for (round, chunk) in p.runs[2..].chunks(6).enumerate() {
            assert!(chunk.iter().all(|r| r.repeat == round as u32 + 1));
            let distinct: HashSet<_> = chunk.iter().map(|r| (&r.variable, &r.cell)).collect();
            assert_eq!(distinct.len(), 6, "every arm x cell once per round");
        }
    }
    // Arms are interleaved, not run one after the other.
    let p = plan(BASE);
    let arms: Vec<&str> = p.runs[2..].iter().map(|r| r.variable.as_str()).collect();
    let switches = arms.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches > 1, "{arms:?}");
}

#[test]
fn sequential_order_is_arm_by_arm_and_differs_from_shuffled() {
    let p = plan(&with_top("order = \"sequential\""));
    let k = keys(&p);
    assert_eq!(
        &k[..5],
        [
            "XFS|warmup=1",
            "XFS|sessions=1|rep=1",
            "XFS|sessions=1|rep=2",
            "XFS|sessions=1|rep=3",
            "XFS|sessions=4|rep=1"
        ]
    );
    assert_eq!(k[10], "EXT4|warmup=1");
    assert_eq!(k[19], "EXT4|sessions=16|rep=3");
    assert_ne!(k, keys(&plan(BASE)));
}

#[test]
fn interleaved_order_alternates_arms_cell_by_cell() {
    let p = plan(&with_top("order = \"interleaved\""));
    let k = keys(&p);
    assert_eq!(
        &k[..6],
        [
            "XFS|warmup=1",
            "EXT4|warmup=1",
            "XFS|sessions=1|rep=1",
            "EXT4|sessions=1|rep=1",
            "XFS|sessions=4|rep=1",
            "EXT4|sessions=4|rep=1"
        ]
    );
    // The next round takes the arms the other way: neither always first.
    assert_eq!(k[8], "EXT4|sessions=1|rep=2");
    assert_eq!(k[9], "XFS|sessions=1|rep=2");
    let firsts: Vec<&str> = (0..3)
        .map(|r| k[2 + 6 * r].split('|').next().unwrap())
        .collect();
    assert_eq!(firsts, ["XFS", "EXT4", "XFS"]);
}

// ---- cell keys ----

#[test]
fn cell_keys_are_stable_and_unique() {
    let text = r#"
name = "t"
repeats = 2
warmup = 2
[workload]
pattern = "randwrite"
[sweep]
sessions = [1, 64]
bs = ["8k", "16k"]
[variables]
XFS = { target = "/mnt/xfs/dbio-{bs}" }
EXT4 = { target = "/mnt/ext4/dbio-{bs}" }
"#;
    let p = plan(text);
    let k = keys(&p);
    let unique: HashSet<_> = k.iter().collect();
    assert_eq!(unique.len(), k.len(), "unique");
    assert_eq!(k.len(), 2 * 4 * 2 + 2 * 2);
    // Swept options in alphabetical order, values as written.
    for want in [
        "XFS|bs=8k|sessions=1|rep=1",
        "XFS|bs=16k|sessions=64|rep=2",
        "EXT4|bs=16k|sessions=1|rep=2",
        "XFS|warmup=2",
        "EXT4|warmup=1",
    ] {
        assert!(unique.contains(&want.to_string()), "{want} in {k:?}");
    }
    // Reordering [sweep] or changing seed / order changes no key.
    let reordered = text.replace(
        "sessions = [1, 64]\nbs = [\"8k\", \"16k\"]",
        "bs = [\"8k\", \"16k\"]\nsessions = [1, 64]",
    );
    assert_ne!(reordered, text);
    let moved = format!("order = \"sequential\"\nseed = 7\n{reordered}");
    let mut a = keys(&p);
    let mut b = keys(&plan(&moved));
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // The key for an arm x cell x repeat always has the same arguments.
    let q = plan(&moved);
    for r in &p.runs {
        let s = q.runs.iter().find(|x| x.cell_key == r.cell_key).unwrap();
        assert_eq!(r.args, s.args, "{}", r.cell_key);
    }
}

#[test]
fn a_plan_without_variables_or_sweep_has_one_default_arm() {
    let p = plan("name = \"t\"\n[workload]\ntime = 1\n");
    assert_eq!(p.arms, ["default"]);
    assert_eq!(
        keys(&p),
        ["default|rep=1", "default|rep=2", "default|rep=3"]
    );
}

#[test]
fn templates_give_each_layout_its_own_directory() {
    let text = r#"
name = "t"
repeats = 1
[sweep]
files = [1, 8]
bs = ["8k", "16k"]
[variables]
XFS = { target = "/mnt/xfs/dbio-{files}x{bs}" }
"#;
    let p = plan(text);
    let r = p
        .runs
        .iter()
        .find(|r| r.cell_key == "XFS|bs=16k|files=8|rep=1")
        .unwrap();
    assert!(
        r.args
            .windows(2)
            .any(|a| a == ["--target", "/mnt/xfs/dbio-8x16k"]),
        "{:?}",
        r.args
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    // Without the templates one directory would be laid out again and again.
    let p = plan(&text.replace("-{files}x{bs}", ""));
    assert_eq!(p.warnings.len(), 1);
    assert!(p.warnings[0].contains("4 shapes"), "{}", p.warnings[0]);
    // {variable} is the arm name; unknown placeholders are refused.
    let p = plan(&text.replace("dbio-{files}x{bs}", "{variable}-{files}-{bs}"));
    assert!(p.runs[0].args[1].starts_with("/mnt/xfs/XFS-"));
    // {rank} and {host} are left for the ranks of `plan run --mpi` to fill.
    let p = plan(&text.replace("{files}x{bs}", "{files}x{bs}-{rank}-{host}"));
    assert!(
        p.runs[0].args[1].ends_with("-{rank}-{host}"),
        "{:?}",
        p.runs[0].args
    );
    let e = plan_err(&text.replace("{files}x{bs}", "{sessions}"));
    assert!(
        e.starts_with("plan.toml:8: [variables.XFS] target: {sessions} is neither {variable} nor a swept option"),
        "{e}"
    );
}

// ---- bad input ----

/// Every bad input is one line: FILE:LINE: [section] key: message.
fn assert_bad(text: &str, line: usize, key: &str, fragment: &str) {
    let e = plan_err(text);
    assert!(!e.contains('\n'), "one line: {e}");
    let prefix = if key.is_empty() {
        format!("plan.toml:{line}: ")
    } else {
        format!("plan.toml:{line}: {key}: ")
    };
    assert!(e.starts_with(&prefix), "expected `{prefix}...`, got: {e}");
    assert!(e.contains(fragment), "expected `{fragment}` in: {e}");
}

#[test]
fn unknown_keys_are_reported_with_file_line_and_key() {
    assert_bad(
        &with_top("repeets = 3"),
        1,
        "repeets",
        "unknown key (did you mean repeats?)",
    );
    assert_bad(
        &with_top("sessions = 4"),
        1,
        "sessions",
        "is an option of dbio run: set it under [workload]",
    );
    let text = BASE.replace("ramp = 2", "ramp = 2\nblocksize = \"8k\"");
    assert_bad(
        &text,
        9,
        "[workload] blocksize",
        "is not an option of dbio run",
    );
    // A variable overriding an option dbio run does not have.
    let text = BASE.replace(
        "EXT4 = { target = \"/mnt/ext4/dbio\" }",
        "EXT4 = { target = \"/mnt/ext4/dbio\", sesions = 4 }",
    );
    assert_bad(
        &text,
        15,
        "[variables.EXT4] sesions",
        "did you mean sessions?",
    );
    let text = format!("{BASE}\n[steps]\nbefore_each = \"true\"\n");
    assert_bad(&text, 18, "[steps] before_each", "unknown key");
    // Options the plan controls itself.
    let text = BASE.replace("ramp = 2", "ramp = 2\njson = true");
    assert_bad(&text, 9, "[workload] json", "set by dbio plan itself");
    let text = BASE.replace("[variables]", "[variables]\nQ = { quiet = true }");
    assert_bad(&text, 14, "[variables.Q] quiet", "set by dbio plan itself");
    let text = BASE.replace("ramp = 2", "ramp = 2\ndb = \"/tmp/x.sqlite\"");
    assert_bad(&text, 9, "[workload] db", "--db PATH");
    let text = BASE.replace("ramp = 2", "ramp = 2\nprogress = \"jsonl\"");
    assert_bad(&text, 9, "[workload] progress", "its own progress");
    let text = BASE.replace("ramp = 2", "ramp = 2\nprogress_file = \"p.jsonl\"");
    assert_bad(&text, 9, "[workload] progress_file", "its own progress");
}

#[test]
fn wrong_types_are_reported_with_file_line_and_key() {
    assert_bad(
        &with_top("repeats = \"3\""),
        1,
        "repeats",
        "expected an integer, found a string",
    );
    assert_bad(
        &with_top("order = 1"),
        1,
        "order",
        "expected a string, found an integer",
    );
    assert_bad(&with_top("name2 = 1"), 1, "name2", "unknown key");
    let text = BASE.replace("sessions = [1, 4, 16]", "sessions = 4");
    assert_bad(&text, 11, "[sweep] sessions", "expected an array of values");
    let text = BASE.replace("time = 10", "time = [10]");
    assert_bad(
        &text,
        7,
        "[workload] time",
        "found an array; a list of values to sweep belongs in [sweep]",
    );
    let text = BASE.replace("XFS = { target = \"/mnt/xfs/dbio\" }", "XFS = \"/mnt/xfs\"");
    assert_bad(
        &text,
        14,
        "[variables] XFS",
        "expected a table of dbio run options",
    );
    let text = format!("{BASE}\n[steps]\nbefore_run = 3\n");
    assert_bad(&text, 18, "[steps] before_run", "expected a shell command");
    assert_bad(
        "name = \"t\"\nworkload = 3\n",
        2,
        "workload",
        "expected a table",
    );
}

#[test]
fn impossible_values_are_reported_with_file_line_and_key() {
    // Refused by clap, one value at a time, at the line of the value.
    let text = BASE.replace("sessions = [1, 4, 16]", "sessions = [\n  1,\n  0,\n]");
    assert_bad(
        &text,
        13,
        "[sweep] sessions",
        "invalid value '0' for '--sessions",
    );
    let text = BASE.replace("time = 10", "time = 10\nbs = \"3k\"");
    assert_bad(&text, 8, "[workload] bs", "power of two");
    let text = BASE.replace("randread", "randomread");
    assert_bad(&text, 6, "[workload] pattern", "possible values: randread");
    let text = BASE.replace(
        "{ target = \"/mnt/xfs/dbio\" }",
        "{ target = \"/mnt/xfs/dbio\", size = \"lots\" }",
    );
    assert_bad(&text, 14, "[variables.XFS] size", "not a size");
    // Plan keys out of range.
    assert_bad(
        &with_top("repeats = 0"),
        1,
        "repeats",
        "out of range: must be from 1 to 1000",
    );
    assert_bad(&with_top("seed = -1"), 1, "seed", "must be 0 or more");
    assert_bad(
        &with_top("order = \"random\""),
        1,
        "order",
        "not one of shuffled, interleaved, sequential",
    );
    assert_bad(
        &with_top("on_failure = \"retry\""),
        1,
        "on_failure",
        "not one of stop, continue",
    );
    // Refused by into_config for a combination: reported at the option it names.
    let text = BASE.replace("time = 10\nramp = 2", "ops = 2");
    assert_bad(
        &text,
        7,
        "[workload] ops",
        "fewer than --sessions 4 (each session needs at least one); in arm XFS, cell sessions=4",
    );
    // A companion option missing: named at the option that needs it.
    assert_bad(
        "name = \"t\"\n[workload]\nhotspot_mb = 8\n",
        3,
        "[workload] hotspot_mb",
        "--hotspot-mb 8 needs --hotspot-frequency N",
    );
    let text = BASE.replace(
        "pattern = \"randread\"",
        "pattern = \"randread\"\nread_pct = 30",
    );
    assert_bad(
        &text,
        7,
        "[workload] read_pct",
        "applies to --pattern randrw only",
    );
    // Values that make no cell key or no arm.
    let text = BASE.replace("[1, 4, 16]", "[1, 4, 4]");
    assert_bad(&text, 11, "[sweep] sessions", "4 is listed twice");
    let text = BASE.replace("[1, 4, 16]", "[]");
    assert_bad(&text, 11, "[sweep] sessions", "is empty");
    let text = BASE.replace("XFS = {", "\"X F\" = {");
    assert_bad(&text, 14, "[variables] X F", "letters, digits");
    assert_bad("name = \"t\"\n[variables]\n", 2, "[variables]", "is empty");
    // A swept option set elsewhere too.
    let text = BASE.replace("time = 10", "time = 10\nsessions = 2");
    assert_bad(
        &text,
        12,
        "[sweep] sessions",
        "also set in [workload] sessions on line 8",
    );
    let text = BASE.replace(
        "{ target = \"/mnt/xfs/dbio\" }",
        "{ target = \"/mnt/xfs/dbio\", sessions = 2 }",
    );
    assert_bad(
        &text,
        14,
        "[variables.XFS] sessions",
        "is swept in [sweep] (line 11)",
    );
}

#[test]
fn missing_name_and_bad_toml_are_located() {
    assert_bad(&BASE.replace("name = \"t\"", ""), 1, "name", "missing");
    assert_bad(
        &BASE.replace("name = \"t\"", "name = \"  \""),
        2,
        "name",
        "non-empty",
    );
    assert_bad(
        &BASE.replace("ramp = 2", "ramp = = 2"),
        8,
        "",
        "not valid TOML",
    );
    let e = match load(Path::new("/nonexistent/plan.toml")) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("loaded a missing file"),
    };
    assert!(e.starts_with("cannot read /nonexistent/plan.toml"), "{e}");
}

// ---- execution ----

#[test]
fn execute_runs_everything_once_and_resume_skips_completed_keys() {
    let p = plan(BASE);
    let mut fake = Fake::default();
    let s = run_all(&p, &mut fake).unwrap();
    assert_eq!(fake.calls, keys(&p), "every run, in plan order");
    assert_eq!((s.completed, s.skipped, s.remaining), (20, 0, 0));
    assert!(!s.interrupted);
    // Again with what the first invocation completed: nothing runs.
    let mut again = Fake {
        done: fake.done.clone(),
        ..Fake::default()
    };
    let s = run_all(&p, &mut again).unwrap();
    assert!(again.calls.is_empty(), "{:?}", again.calls);
    assert_eq!((s.completed, s.skipped, s.remaining), (0, 20, 0));
    // A partly done plan runs exactly the rest, in plan order.
    let done: HashSet<String> = keys(&p).into_iter().step_by(3).collect();
    let mut part = Fake {
        done: done.clone(),
        ..Fake::default()
    };
    let s = run_all(&p, &mut part).unwrap();
    let rest: Vec<String> = keys(&p).into_iter().filter(|k| !done.contains(k)).collect();
    assert_eq!(part.calls, rest);
    assert_eq!(s.skipped, done.len());
}

#[test]
fn interrupt_stops_between_runs_and_resume_finishes_without_duplicates() {
    let p = plan(BASE);
    let flag = Arc::new(AtomicBool::new(false));
    let mut fake = Fake {
        flag: Some((Arc::clone(&flag), 3)),
        ..Fake::default()
    };
    let s = execute_with(&p, &mut fake, &flag, None).unwrap();
    assert!(s.interrupted);
    assert_eq!(
        fake.calls.len(),
        3,
        "the run in progress finishes, no next run starts"
    );
    assert_eq!((s.completed, s.remaining), (3, 17));
    let first = fake.calls.clone();
    let mut resume = Fake {
        done: fake.done.clone(),
        ..Fake::default()
    };
    let s = run_all(&p, &mut resume).unwrap();
    assert_eq!(s.completed, 17);
    let mut all: Vec<String> = first.into_iter().chain(resume.calls).collect();
    assert_eq!(all.len(), 20);
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 20, "no run made twice");

    // Interrupted before anything: nothing runs, not even a step.
    let p = plan(&format!("{BASE}\n[steps]\nbefore_run = \"true\"\n"));
    let mut fake = Fake::default();
    let s = execute_with(&p, &mut fake, &AtomicBool::new(true), None).unwrap();
    assert!(s.interrupted && fake.calls.is_empty() && fake.steps.is_empty());
}

#[test]
fn an_interrupted_run_is_not_completed_and_runs_again_on_resume() {
    let p = plan(BASE);
    let mut fake = Fake {
        status_at: Some((2, RunStatus::Interrupted)),
        ..Fake::default()
    };
    let s = run_all(&p, &mut fake).unwrap();
    assert!(s.interrupted);
    assert_eq!(fake.calls.len(), 2);
    assert_eq!(s.completed, 1);
    let cut = fake.calls[1].clone();
    let mut resume = Fake {
        done: fake.done.clone(),
        ..Fake::default()
    };
    run_all(&p, &mut resume).unwrap();
    assert_eq!(resume.calls[0], cut);
    assert_eq!(resume.calls.len(), 19);
}

#[test]
fn a_failed_run_stops_the_plan_unless_on_failure_is_continue() {
    let p = plan(BASE);
    let mut fake = Fake {
        status_at: Some((2, RunStatus::Failed("no space left on device".into()))),
        ..Fake::default()
    };
    let e = run_all(&p, &mut fake).unwrap_err().to_string();
    assert_eq!(fake.calls.len(), 2);
    assert!(
        e.contains(&format!(
            "run {} failed: no space left on device",
            p.runs[1].cell_key
        )),
        "{e}"
    );
    let p = plan(&with_top("on_failure = \"continue\""));
    let mut fake = Fake {
        status_at: Some((2, RunStatus::Failed("boom".into()))),
        ..Fake::default()
    };
    let s = run_all(&p, &mut fake).unwrap();
    assert_eq!(fake.calls.len(), 20);
    assert_eq!((s.completed, s.remaining, s.failed.len()), (19, 1, 1));
    assert_eq!(s.failed[0].1, "boom");
}

#[test]
fn a_failing_step_stops_the_plan_with_its_status_and_output() {
    let text = format!(
        "{BASE}\n[steps]\nbefore_run = [\"true\", \"echo preparing; echo 'no such device' >&2; exit 3\"]\n"
    );
    let p = plan(&text);
    let mut fake = Fake::default();
    let err = run_all(&p, &mut fake).unwrap_err();
    assert!(fake.calls.is_empty(), "no run after a failed step");
    let msg = err.to_string();
    assert!(msg.contains("failed with exit status 3"), "{msg}");
    assert!(msg.contains("before_run"), "{msg}");
    assert!(msg.contains(&p.runs[0].cell_key), "{msg}");
    assert!(
        msg.contains("preparing") && msg.contains("no such device"),
        "{msg}"
    );
    // Both steps were recorded through the executor, with output and status.
    assert_eq!(fake.steps.len(), 2);
    assert!(fake.steps[0].success());
    assert_eq!(fake.steps[1].exit_code, Some(3));
    assert_eq!(fake.steps[1].stdout, "preparing\n");
    assert_eq!(fake.steps[1].stderr, "no such device\n");
    match err {
        PlanError::Step { record, .. } => assert_eq!(record.exit_code, Some(3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn steps_run_before_each_arm_and_run_with_the_run_in_their_environment() {
    let text = format!(
        "order = \"sequential\"\n{BASE}\n[steps]\nbefore_arm = \"echo arm $DBIO_VARIABLE\"\nbefore_run = \"echo $DBIO_CELL_KEY $DBIO_TARGET $DBIO_WARMUP\"\n"
    );
    let p = plan(&text);
    let mut fake = Fake::default();
    let s = run_all(&p, &mut fake).unwrap();
    let arm_steps: Vec<&StepRecord> = s
        .steps
        .iter()
        .filter(|r| r.when == StepWhen::BeforeArm)
        .collect();
    assert_eq!(arm_steps.len(), 2, "sequential: once per arm");
    assert_eq!(arm_steps[0].stdout, "arm XFS\n");
    assert_eq!(arm_steps[1].stdout, "arm EXT4\n");
    let run_steps: Vec<&StepRecord> = s
        .steps
        .iter()
        .filter(|r| r.when == StepWhen::BeforeRun)
        .collect();
    assert_eq!(run_steps.len(), 20);
    for (st, run) in run_steps.iter().zip(&p.runs) {
        let target = if run.variable == "XFS" {
            "/mnt/xfs/dbio"
        } else {
            "/mnt/ext4/dbio"
        };
        let warm = if run.warmup { 1 } else { 0 };
        assert_eq!(st.stdout, format!("{} {target} {warm}\n", run.cell_key));
        assert_eq!(st.before, run.cell_key);
    }
    assert_eq!(fake.steps.len(), 22, "recorded through the executor");
    // Shuffled: before_arm runs whenever the arm changes.
    let p = plan(&text.replace("order = \"sequential\"", ""));
    let s = run_all(&p, &mut Fake::default()).unwrap();
    let changes = 1 + p
        .runs
        .windows(2)
        .filter(|w| w[0].variable != w[1].variable)
        .count();
    let n = s
        .steps
        .iter()
        .filter(|r| r.when == StepWhen::BeforeArm)
        .count();
    assert_eq!(n, changes);
}

#[test]
fn progress_shows_the_run_the_count_and_an_eta() {
    let p = plan(BASE);
    let mut out: Vec<u8> = Vec::new();
    let mut fake = Fake {
        done: keys(&p).into_iter().take(5).collect(),
        ..Fake::default()
    };
    execute_with(&p, &mut fake, &AtomicBool::new(false), Some(&mut out)).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 16, "{text}");
    assert!(
        lines[0].contains(&format!("run 6/20 {}", p.runs[5].cell_key)),
        "{text}"
    );
    assert!(
        lines[0].contains("(5 done, elapsed ") && lines[0].contains("s, ETA 3m"),
        "{text}"
    );
    assert!(
        lines[15].contains("15 run(s) completed now, 5 earlier, 0 left"),
        "{text}"
    );
}

// ---- dry run, status ----

#[test]
fn dry_run_lists_every_run_and_the_estimated_duration() {
    let p = plan(BASE);
    let done: HashSet<String> = keys(&p).into_iter().take(4).collect();
    let text = dry_run(&p, &done);
    for r in &p.runs {
        assert!(text.contains(&r.cell_key), "{}", r.cell_key);
    }
    assert!(text.contains("dbio run --target /mnt/xfs/dbio --pattern randread --sessions"));
    assert_eq!(
        text.lines().filter(|l| l.contains("  done  ")).count(),
        4,
        "{text}"
    );
    assert!(
        text.contains("16 of 20 run(s) to make, 4 already done"),
        "{text}"
    );
    let est = fmt_duration(p.remaining_seconds(&done));
    assert!(text.contains(&format!("estimated {est}")), "{text}");
    assert!(
        text.contains("2 arm(s) (XFS, EXT4) x 3 cell(s) x 3 repeat(s) = 18 counted"),
        "{text}"
    );
}

#[test]
fn status_counts_completed_repeats_per_cell_and_arm() {
    let p = plan(BASE);
    let mut done: HashSet<String> = [
        "XFS|sessions=4|rep=1",
        "XFS|sessions=4|rep=3",
        "XFS|warmup=1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    done.insert("XFS|sessions=2|rep=1".into()); // not in the plan any more
    let text = status(&p, &done);
    assert!(
        text.contains("completed: 2 of 18 counted run(s), 1 of 2 warm-up(s); 17 run(s) left"),
        "{text}"
    );
    let row = text.lines().find(|l| l.starts_with("sessions=4")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols, ["sessions=4", "2/3", "0/3"]);
    assert!(
        text.contains("1 completed run(s) stored for plan t are not in this plan"),
        "{text}"
    );
}

#[test]
fn durations_are_short_and_readable() {
    assert_eq!(fmt_duration(0.0), "0s");
    assert_eq!(fmt_duration(45.4), "45s");
    assert_eq!(fmt_duration(725.0), "12m05s");
    assert_eq!(fmt_duration(3.0 * 3600.0 + 7.0 * 60.0 + 10.0), "3h07m");
}
