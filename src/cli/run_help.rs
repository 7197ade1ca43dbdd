//! `dbio run --help` as a reader looks for things: the options under
//! headings (target, workload, engine, timing, output, content and verify,
//! MPI; the model's and servers' own beside them) with examples at the
//! end, and `-h` only the options most runs use.

use clap::{Args, Command};

use crate::options::uring::UringArgs;

/// `run`'s own options under their headings, in the order shown (the
/// model's, PostgreSQL's and MariaDB's carry their own headings).
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Target",
        &[
            "target",
            "files",
            "size",
            "load_parallel",
            "destroy_device",
            "allow_root_fs",
        ],
    ),
    (
        "Workload",
        &[
            "workload",
            "pattern",
            "bs",
            "read_pct",
            "sessions",
            "dist",
            "hotspot_mb",
            "hotspot_offset_mb",
            "hotspot_frequency",
            "rate",
            "arrival",
            "seed",
        ],
    ),
    ("Engine", &["engine", "iodepth", "io_mode"]),
    (
        "Timing",
        &["time", "ramp", "window", "ops", "interval", "outlier_ms"],
    ),
    (
        "Output",
        &[
            "json",
            "output",
            "progress",
            "progress_file",
            "quiet",
            "db",
            "tags",
        ],
    ),
    (
        "Content and verify",
        &[
            "verify",
            "verify_after_write",
            "verify_sync_interval",
            "compress_pct",
            "dedupe_pct",
        ],
    ),
    (
        "MPI (several hosts)",
        &["mpi", "region_per_rank", "mpi_grace"],
    ),
];

/// The heading of the io_uring tuning options (`UringArgs`).
const URING: &str = "Engine: io_uring tuning";

/// What `-h` shows; `--help` shows every option.
const SHORT: &[&str] = &[
    "target",
    "size",
    "files",
    "workload",
    "pattern",
    "bs",
    "read_pct",
    "sessions",
    "engine",
    "iodepth",
    "io_mode",
    "time",
    "ramp",
    "ops",
    "rate",
    "json",
    "progress",
    "db",
    "tags",
    "update_pct",
    "help",
];

/// `dbio run`'s examples: what each does, and the command line (also in
/// its man page).
pub const EXAMPLES: &[(&str, &str)] = &[
    (
        "16 sessions of O_DIRECT 8k random writes to one 4 GiB file on XFS, 60 s after a 5 s warm-up",
        "dbio run --target /mnt/xfs/dbio --size 4G --pattern randwrite --sessions 16 --time 60 --ramp 5",
    ),
    (
        "fio's --rw=randread --ioengine=io_uring --iodepth=32 --numjobs=4 --runtime=30",
        "dbio run --pattern randread --engine io_uring --iodepth 32 --sessions 4 --time 30",
    ),
    (
        "InnoDB-style writes: buffered, an fsync after each (timed on its own too)",
        "dbio run --pattern randwrite --io fsync --time 30",
    ),
    (
        "The SLOB model: 8 sessions, 25% updates, redo and DB writers",
        "dbio run --workload slob --sessions 8 --update-pct 25 --time 60 --ramp 5",
    ),
    (
        "For a script: the report as JSON, a JSON line per second appended to a file",
        "dbio run --time 60 --json --progress-file progress.jsonl > run.json",
    ),
    (
        "Watch an hour's run live: Prometheus scrapes http://127.0.0.1:9464/metrics, a browser opens http://127.0.0.1:9464/",
        "dbio run --time 3600 --metrics-listen 127.0.0.1:9464",
    ),
];

/// The examples as the end of `--help`.
fn examples_text() -> String {
    let mut t = String::from("Examples:\n");
    for (what, line) in EXAMPLES {
        t.push_str(&format!("  # {what}\n  {line}\n\n"));
    }
    t + "The report is saved in the results store (dbio runs list; man dbio-runs)."
}

/// `run` with its options under headings, `-h` short and examples at the
/// end of `--help`.
pub fn arrange(mut run: Command) -> Command {
    let uring: Vec<String> = UringArgs::augment_args(Command::new("uring"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    // clap shows headings in the order of their options, and `mut_arg`
    // moves an option to the end: each group is moved in turn, io_uring's
    // after the engine's, then the model's and the servers' as they are.
    let mut moved: Vec<String> = Vec::new();
    for (heading, ids) in GROUPS {
        for id in *ids {
            let order = moved.len();
            run = run.mut_arg(*id, |a| a.help_heading(*heading).display_order(order));
            moved.push(id.to_string());
        }
        if *heading == "Engine" {
            for id in &uring {
                run = run.mut_arg(id, |a| a.help_heading(URING));
                moved.push(id.clone());
            }
        }
    }
    let rest: Vec<String> = run
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id != "help" && !moved.contains(id))
        .collect();
    for id in &rest {
        run = run.mut_arg(id, |a| a);
    }
    let shown = run.get_arguments().count();
    run.mut_args(|a| {
        let short = SHORT.contains(&a.get_id().as_str());
        a.hide_short_help(!short)
    })
    .after_help(format!(
        "-h shows the options most runs use; --help shows all {shown}, grouped, with examples."
    ))
    .after_long_help(examples_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> Command {
        let mut cmd = crate::cli::command();
        cmd.build();
        cmd.find_subcommand("run").unwrap().clone()
    }

    #[test]
    fn every_option_of_run_has_a_heading_and_every_name_is_real() {
        let run = run();
        for a in run.get_arguments() {
            let id = a.get_id().as_str();
            if id == "help" {
                continue;
            }
            assert!(a.get_help_heading().is_some(), "--{id} has no heading");
        }
        let ids: Vec<&str> = run.get_arguments().map(|a| a.get_id().as_str()).collect();
        for id in GROUPS.iter().flat_map(|(_, ids)| *ids).chain(SHORT) {
            assert!(ids.contains(id), "{id} is not an option of run");
        }
    }
}
