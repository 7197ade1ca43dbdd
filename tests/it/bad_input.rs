//! A sweep of bad inputs across every subcommand and plan keys (issue 13).
//! Each case runs the real binary in a fresh directory of its own ("world")
//! holding a store, plan files and files to import; it must exit 2 with one
//! line that starts `error: ` and names the option and the value, leave
//! every file of the world as it was (nothing created, nothing written),
//! never panic, and end within a time limit under a memory limit.
//!
//! `DBIO_SWEEP_BIN=PATH` runs the same table against another binary (an older
//! build), and `DBIO_SWEEP_TABLE=FILE` writes each case's outcome to FILE as
//! tab-separated values instead of asserting: the before/after table.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a refusal may take.
const LIMIT: Duration = Duration::from_secs(20);
/// Address space a case may use (a refusal needs a few MiB).
const MEMORY: u64 = 4 << 30;

/// The expected line names these; `HELP` instead: usage help on stderr, exit 2.
type Case = (&'static [&'static str], &'static [&'static str]);

#[rustfmt::skip]
const CASES: &[Case] = &[
    // no or unknown subcommand
    (&[], &["HELP"]),
    (&["bench"], &["bench"]),
    (&["--size", "1G"], &["--size"]),
    (&["runs"], &["HELP"]),
    (&["plan"], &["HELP"]),
    (&["import"], &["HELP"]),
    (&["lab"], &["HELP"]),
    // run (raw): sizes
    (&["run", "--size", "-1"], &["--size", "-1"]),
    (&["run", "--size", "-1G"], &["--size", "-1G"]),
    (&["run", "--size", "0"], &["--size", "0"]),
    (&["run", "--size", "12k", "--bs", "8k"], &["--size", "12 KiB", "--bs"]),
    (&["run", "--size", "1000"], &["--size", "1000"]),
    (&["run", "--size", "1.1"], &["--size", "1.1"]),
    (&["run", "--size", "1.2.3G"], &["--size", "1.2.3G"]),
    (&["run", "--size", "8q"], &["--size", "8q"]),
    (&["run", "--size", "k"], &["--size", "'k'"]),
    (&["run", "--size", "1e9"], &["--size", "1e9"]),
    (&["run", "--size", "99999999999T"], &["--size", "99999999999T"]),
    (&["run", "--size", "100T"], &["--size", "100 TiB"]),
    (&["run", "--size", "4k", "--files", "2"], &["--size", "4096"]),
    (&["run", "--size"], &["--size"]),
    // block size, files
    (&["run", "--bs", "3000"], &["--bs", "3000"]),
    (&["run", "--bs", "2M"], &["--bs", "2M"]),
    (&["run", "--bs", "0"], &["--bs", "'0'"]),
    (&["run", "--bs", "-8k"], &["--bs", "-8k"]),
    (&["run", "--bs", "256"], &["--bs", "256"]),
    (&["run", "--files", "0"], &["--files", "0"]),
    (&["run", "--files", "5000"], &["--files", "5000"]),
    (&["run", "--files", "-1"], &["--files", "-1"]),
    (&["run", "--files", "two"], &["--files", "two"]),
    // pattern, mix, sessions, depth, engine, io
    (&["run", "--pattern", "random"], &["--pattern", "random"]),
    (&["run", "--read-pct", "101"], &["--read-pct", "101"]),
    (&["run", "--read-pct", "-1"], &["--read-pct", "-1"]),
    (&["run", "--pattern", "randread", "--read-pct", "30"], &["--read-pct", "randread"]),
    (&["run", "--sessions", "0"], &["--sessions", "0"]),
    (&["run", "--sessions", "4097"], &["--sessions", "4097"]),
    (&["run", "--sessions", "-4"], &["--sessions", "-4"]),
    (&["run", "--iodepth", "0"], &["--iodepth", "0"]),
    (&["run", "--iodepth", "5000"], &["--iodepth", "5000"]),
    (&["run", "--iodepth", "32"], &["--iodepth", "32"]),
    (&["run", "--engine", "aio"], &["--engine", "aio"]),
    (&["run", "--engine", "io_uring", "--iodepth", "4096", "--bs", "1M", "--sessions", "64"], &["--iodepth 4096", "--sessions 64", "--bs 1 MiB"]),
    (&["run", "--io", "sync"], &["--io", "sync"]),
    (&["run", "--workload", "oltp"], &["--workload", "oltp"]),
    // durations and counts
    (&["run", "--time", "0"], &["--time", "'0'"]),
    (&["run", "--time", "-1"], &["--time", "-1"]),
    (&["run", "--time", "99999999999"], &["--time", "99999999999"]),
    (&["run", "--time", "1e20"], &["--time", "1e20"]),
    (&["run", "--time", "400d"], &["--time", "400d"]),
    (&["run", "--time", "soon"], &["--time", "soon"]),
    (&["run", "--time", "nan"], &["--time", "nan"]),
    (&["run", "--time", "inf"], &["--time", "inf"]),
    (&["run", "--time", "9000h"], &["--time", "9000h"]),
    (&["run", "--ramp", "-1"], &["--ramp", "-1"]),
    (&["run", "--ramp", "99999999999"], &["--ramp", "99999999999"]),
    (&["run", "--ramp", "later"], &["--ramp", "later"]),
    (&["run", "--time", "10", "--ops", "100"], &["--time", "--ops"]),
    (&["run", "--ops", "0"], &["--ops", "0"]),
    (&["run", "--ops", "-5"], &["--ops", "-5"]),
    (&["run", "--ops", "2", "--sessions", "4"], &["--ops 2", "--sessions 4"]),
    (&["run", "--ops", "99999999999999999999"], &["--ops", "99999999999999999999"]),
    (&["run", "--rate", "-10"], &["--rate", "-10"]),
    (&["run", "--rate", "0"], &["--rate", "'0'"]),
    (&["run", "--rate", "2", "--sessions", "4"], &["--rate 2", "--sessions 4"]),
    (&["run", "--rate", "fast"], &["--rate", "fast"]),
    (&["run", "--arrival", "poisson"], &["--arrival", "--rate"]),
    (&["run", "--rate", "100", "--arrival", "bursty"], &["--arrival", "bursty"]),
    (&["run", "--rate", "100", "--arrival"], &["--arrival"]),
    // steady state (issue 28 item 4)
    (&["run", "--steady-state", "--round", "0.5s"], &["--round", "0.5", "1 s"]),
    (&["run", "--steady-state", "--round", "1.5"], &["--round", "1.5"]),
    (&["run", "--steady-state", "--round", "soon"], &["--round", "soon"]),
    (&["run", "--steady-state", "--steady-window", "1"], &["--steady-window", "1"]),
    (&["run", "--steady-state", "--steady-window", "0"], &["--steady-window", "0"]),
    (&["run", "--steady-state", "--steady-range", "0"], &["--steady-range", "0%"]),
    (&["run", "--steady-state", "--steady-range", "150%"], &["--steady-range", "150%"]),
    (&["run", "--steady-state", "--steady-slope", "0%"], &["--steady-slope", "0%"]),
    (&["run", "--steady-state", "--steady-slope", "ten"], &["--steady-slope", "ten"]),
    (&["run", "--steady-state", "--steady-on", "median"], &["--steady-on", "median"]),
    (&["run", "--steady-state", "--ops", "100"], &["--steady-state", "--ops"]),
    (&["run", "--round", "2s"], &["--round", "--steady-state"]),
    (&["run", "--steady-range", "20%"], &["--steady-range", "--steady-state"]),
    (&["run", "--steady-state", "--round", "2s", "--time", "5"], &["--time 5s", "--steady-window 5", "--round 2s"]),
    (&["run", "--precondition", "--workload", "slob"], &["--precondition", "--workload raw"]),
    (&["run", "--steady-state", "--workload", "slob", "--work-loop", "10"], &["--steady-state", "--work-loop"]),
    (&["run", "--seed", "-5"], &["--seed", "-5"]),
    (&["run", "--seed", "abc"], &["--seed", "abc"]),
    (&["run", "--outlier-ms", "-1"], &["--outlier-ms", "-1"]),
    (&["run", "--outlier-ms", "0"], &["--outlier-ms", "'0'"]),
    (&["run", "--outlier-ms", "1e12"], &["--outlier-ms", "1e12"]),
    (&["run", "--outlier-ms", "slow"], &["--outlier-ms", "slow"]),
    (&["run", "--interval", "0"], &["--interval", "'0'"]),
    (&["run", "--interval", "0.01"], &["--interval", "0.01"]),
    (&["run", "--interval", "99999"], &["--interval", "99999"]),
    (&["run", "--interval", "-1"], &["--interval", "-1"]),
    // distributions and hot spots
    (&["run", "--dist", "zipf:x"], &["--dist", "zipf:x"]),
    (&["run", "--dist", "gauss"], &["--dist", "gauss"]),
    (&["run", "--dist", "pareto:-1"], &["--dist", "pareto:-1"]),
    (&["run", "--dist", "zipf:-2"], &["--dist", "zipf:-2"]),
    (&["run", "--pattern", "seqread", "--dist", "zipf:1.2"], &["--dist", "seqread"]),
    (&["run", "--hotspot-mb", "10"], &["--hotspot-mb", "--hotspot-frequency"]),
    (&["run", "--hotspot-offset-mb", "5"], &["--hotspot-offset-mb", "--hotspot-mb"]),
    (&["run", "--hotspot-mb", "0", "--hotspot-frequency", "2"], &["--hotspot-mb 0"]),
    (&["run", "--hotspot-mb", "8", "--hotspot-frequency", "0"], &["--hotspot-frequency", "'0'"]),
    (&["run", "--hotspot-mb", "-8", "--hotspot-frequency", "2"], &["--hotspot-mb", "-8"]),
    (&["run", "--size", "64M", "--hotspot-mb", "100000", "--hotspot-frequency", "2"], &["--hotspot-mb 100000", "64 MiB"]),
    (&["run", "--size", "64M", "--hotspot-mb", "8", "--hotspot-offset-mb", "60", "--hotspot-frequency", "2"], &["--hotspot-offset-mb 60", "--hotspot-mb 8"]),
    (&["run", "--hotspot-mb", "99999999999999", "--hotspot-frequency", "2"], &["--hotspot-mb 99999999999999"]),
    (&["run", "--pattern", "seqwrite", "--hotspot-mb", "8", "--hotspot-frequency", "2"], &["--hotspot-mb", "random"]),
    // targets, tags, slob-only options, unknown options
    (&["run", "--target", "{W}/afile"], &["--target", "afile"]),
    (&["run", "--target", "{W}/fresh", "--destroy-device", "/dev/null"], &["--destroy-device", "fresh"]),
    (&["run", "--tag", "bad tag"], &["tag", "bad tag"]),
    (&["run", "--tag", ""], &["tag", "\"\""]),
    (&["run", "--scale", "100"], &["--scale", "--workload slob"]),
    (&["run", "--cache", "1G"], &["--cache", "--workload slob"]),
    (&["run", "--sizes", "1G"], &["--sizes"]),
    (&["run", "--json=yes"], &["--json", "yes"]),
    (&["run", "extra"], &["extra"]),
    // run --workload slob
    (&["run", "--workload", "slob", "--size", "1G"], &["--size", "slob"]),
    (&["run", "--workload", "slob", "--pattern", "randread"], &["--pattern", "slob"]),
    (&["run", "--workload", "slob", "--read-pct", "50"], &["--read-pct", "slob"]),
    (&["run", "--workload", "slob", "--rate", "0"], &["--rate", "'0'"]),
    (&["run", "--workload", "slob", "--rate", "2", "--sessions", "4"], &["--rate 2", "operation", "--sessions 4"]),
    (&["run", "--workload", "slob", "--rate", "100", "--think-frequency", "5"], &["--rate 100", "--think-frequency"]),
    (&["run", "--workload", "slob", "--arrival", "poisson"], &["--arrival", "operations per second"]),
    (&["run", "--workload", "pg", "--rate", "0"], &["--rate", "'0'"]),
    (&["run", "--workload", "pg", "--arrival", "poisson"], &["--arrival", "transactions per second"]),
    (&["run", "--workload", "mysql", "--rate", "3", "--sessions", "4"], &["--rate 3", "transaction", "--sessions 4"]),
    (&["run", "--workload", "slob", "--ops", "100"], &["--ops", "slob"]),
    (&["run", "--workload", "slob", "--dist", "zipf:1.1"], &["--dist", "slob"]),
    (&["run", "--workload", "slob", "--scale", "0"], &["--scale 0"]),
    (&["run", "--workload", "slob", "--scale", "-1"], &["--scale", "-1"]),
    (&["run", "--workload", "slob", "--scale", "lots"], &["--scale", "lots"]),
    (&["run", "--workload", "slob", "--scale", "4"], &["--scale 4", "--work-unit"]),
    (&["run", "--workload", "slob", "--scale", "999999999999999999"], &["--scale 999999999999999999"]),
    (&["run", "--workload", "slob", "--scale", "99999999999999999999999"], &["--scale 99999999999999999999999"]),
    (&["run", "--workload", "slob", "--scale", "1T"], &["--scale", "1"]),
    (&["run", "--workload", "slob", "--schemas", "0"], &["--schemas", "0"]),
    (&["run", "--workload", "slob", "--schemas", "5000"], &["--schemas", "5000"]),
    (&["run", "--workload", "slob", "--schemas", "3", "--sessions", "4"], &["--schemas 3", "--sessions 4"]),
    (&["run", "--workload", "slob", "--threads-per-schema", "3", "--sessions", "4"], &["--threads-per-schema 3", "--sessions 4"]),
    (&["run", "--workload", "slob", "--schemas", "64", "--threads-per-schema", "65"], &["--schemas 64", "--threads-per-schema 65"]),
    (&["run", "--workload", "slob", "--work-unit", "2"], &["--work-unit 2"]),
    (&["run", "--workload", "slob", "--work-unit", "2000"], &["--work-unit 2000"]),
    (&["run", "--workload", "slob", "--work-unit", "-1"], &["--work-unit", "-1"]),
    (&["run", "--workload", "slob", "--update-pct", "101"], &["--update-pct 101"]),
    (&["run", "--workload", "slob", "--update-pct", "-5"], &["--update-pct", "-5"]),
    (&["run", "--workload", "slob", "--scan-pct", "90", "--update-pct", "20"], &["--scan-pct 90", "--update-pct 20"]),
    (&["run", "--workload", "slob", "--scan-size", "4"], &["--scan-size", "--scan-pct"]),
    (&["run", "--workload", "slob", "--scan-pct", "10", "--scan-size", "99999"], &["--scan-size 99999"]),
    (&["run", "--workload", "slob", "--redo-stress", "medium"], &["--redo-stress", "medium"]),
    (&["run", "--workload", "slob", "--hot-schema-frequency", "0"], &["--hot-schema-frequency", "'0'"]),
    (&["run", "--workload", "slob", "--think-frequency", "0"], &["--think-frequency", "'0'"]),
    (&["run", "--workload", "slob", "--think-min", "1"], &["--think-min", "--think-frequency"]),
    (&["run", "--workload", "slob", "--think-frequency", "2", "--think-min", "5", "--think-max", "1"], &["--think-max 1", "--think-min 5"]),
    (&["run", "--workload", "slob", "--think-frequency", "2", "--think-min", "99999"], &["--think-min 99999"]),
    (&["run", "--workload", "slob", "--think-frequency", "2", "--think-min", "-1"], &["--think-min", "-1"]),
    (&["run", "--workload", "slob", "--work-loop", "0"], &["--work-loop", "'0'"]),
    (&["run", "--workload", "slob", "--work-loop", "5", "--time", "10"], &["--work-loop", "--time"]),
    (&["run", "--workload", "slob", "--work-loop", "18446744073709551615"], &["--work-loop 18446744073709551615"]),
    (&["run", "--workload", "pg", "--work-loop", "18446744073709551615", "--sessions", "2"], &["--work-loop 18446744073709551615"]),
    (&["run", "--workload", "slob", "--time", "99999999999"], &["--time", "99999999999"]),
    (&["run", "--workload", "slob", "--cache", "64G"], &["--cache 64 GiB"]),
    (&["run", "--workload", "slob", "--cache", "100T"], &["--cache 100 TiB"]),
    (&["run", "--workload", "slob", "--cache", "20G"], &["--cache 20 GiB"]),
    (&["run", "--workload", "slob", "--sessions", "16", "--cache", "128K"], &["--cache 128 KiB"]),
    (&["run", "--workload", "slob", "--cache", "-1"], &["--cache", "-1"]),
    (&["run", "--workload", "slob", "--cache", "1.5q"], &["--cache", "1.5q"]),
    (&["run", "--workload", "slob", "--db-writers", "0"], &["--db-writers", "'0'"]),
    (&["run", "--workload", "slob", "--db-writers", "65"], &["--db-writers", "65"]),
    (&["run", "--workload", "slob", "--dbwr-batch", "0"], &["--dbwr-batch", "'0'"]),
    (&["run", "--workload", "slob", "--dbwr-rate", "0"], &["--dbwr-rate", "'0'"]),
    (&["run", "--workload", "slob", "--cache", "64M", "--memory", "100M"], &["--memory 100 MiB", "--cache 64 MiB"]),
    (&["run", "--workload", "pg", "--memory", "512M"], &["--memory", "--pg-memory"]),
    (&["run", "--workload", "slob", "--dbwr-engine", "aio"], &["--dbwr-engine", "aio"]),
    (&["run", "--workload", "slob", "--redo-files", "1"], &["--redo-files", "'1'"]),
    (&["run", "--workload", "slob", "--redo-files", "65"], &["--redo-files", "65"]),
    (&["run", "--workload", "slob", "--redo-file-size", "1k"], &["--redo-file-size 1 KiB"]),
    (&["run", "--workload", "slob", "--redo-file-size", "100T"], &["--redo-file-size 100 TiB"]),
    (&["run", "--workload", "slob", "--redo-block", "1024"], &["--redo-block 1024"]),
    (&["run", "--workload", "slob", "--redo-sync", "fsync"], &["--redo-sync", "fsync"]),
    (&["run", "--workload", "slob", "--log-buffer", "1k"], &["--log-buffer 1 KiB"]),
    (&["run", "--workload", "slob", "--log-buffer", "2G"], &["--log-buffer 2 GiB"]),
    (&["run", "--workload", "slob", "--hotspot-mb", "0", "--hotspot-frequency", "2"], &["--hotspot-mb 0"]),
    (&["run", "--workload", "slob", "--hotspot-mb", "100000", "--hotspot-frequency", "2"], &["--hotspot-mb 100000"]),
    (&["run", "--workload", "slob", "--target", "{W}/afile"], &["--target", "afile"]),
    // plan (bad keys and values in TOML files the world holds)
    (&["plan", "run", "{W}/missing.toml"], &["missing.toml"]),
    (&["plan", "run", "{W}/plans/size_suffix.toml", "--dry-run"], &["size", "12q"]),
    (&["plan", "run", "{W}/plans/size_negative.toml"], &["size", "-1"]),
    (&["plan", "run", "{W}/plans/size_blocks.toml"], &["size", "12 KiB"]),
    (&["plan", "run", "{W}/plans/time_huge.toml"], &["time", "99999999999"]),
    (&["plan", "run", "{W}/plans/time_word.toml"], &["time", "soon"]),
    (&["plan", "run", "{W}/plans/sessions_zero.toml"], &["sessions", "0"]),
    (&["plan", "run", "{W}/plans/unknown_key.toml"], &["bogus"]),
    (&["plan", "run", "{W}/plans/reserved_key.toml"], &["json"]),
    (&["plan", "run", "{W}/plans/cache_huge.toml"], &["cache", "64 GiB"]),
    (&["plan", "run", "{W}/plans/sweep_bad.toml"], &["bs", "3000"]),
    (&["plan", "run", "{W}/plans/rate_negative.toml"], &["rate", "-10"]),
    (&["plan", "run", "{W}/plans/not_toml.toml"], &["not_toml.toml"]),
    (&["plan", "run", "{W}/plans/repeats_zero.toml"], &["repeats", "0"]),
    (&["plan", "status", "{W}/plans/size_suffix.toml"], &["size", "12q"]),
    (&["plan", "status", "{W}/missing.toml"], &["missing.toml"]),
    (&["plan", "run"], &["<PLAN>"]),
    (&["plan", "walk", "x.toml"], &["walk"]),
    // report
    (&["report", "--digits", "0"], &["--digits", "'0'"]),
    (&["report", "--digits", "16"], &["--digits", "16"]),
    (&["report", "--digits", "-1"], &["--digits", "-1"]),
    (&["report", "--format", "pdf"], &["--format", "pdf"]),
    (&["report", "--model", "oltp"], &["--model", "oltp"]),
    (&["report", "--since", "yesterday"], &["--since", "yesterday"]),
    (&["report", "--limit", "-1"], &["--limit", "-1"]),
    (&["report", "--plan-file", "{W}/plans/good.toml"], &["--plan-file", "--html"]),
    (&["report", "--format", "csv", "--stats", "--scaling"], &["--format csv", "--stats", "--scaling"]),
    (&["report", "--model", "readwrite", "--metric", "total.iops"], &["--model readwrite", "--metric"]),
    // compare
    (&["metrics", "a", "b"], &["'b'"]),
    (&["metrics", "--limit", "3"], &["--limit"]),
    (&["compare"], &["<A>", "<B>"]),
    (&["compare", "1"], &["<B>"]),
    (&["compare", "1", "2"], &["no run 1"]),
    (&["compare", "-1", "2"], &["no run -1"]),
    (&["compare", "1", "2", "--sessions", "0"], &["--sessions", "'0'"]),
    (&["compare", "1", "2", "--sessions", "-1"], &["--sessions", "-1"]),
    (&["compare", "1", "2", "--format", "html"], &["--format", "html"]),
    (&["compare", "XFS", "EXT4"], &["XFS"]),
    (&["compare", "1", "2", "--db", "{W}/store/existing.sqlite"], &["no run 1"]),
    // import
    (&["import", "fio", "{W}/missing.json"], &["missing.json"]),
    (&["import", "fio", "{W}/import/garbage.json"], &["garbage.json"]),
    (&["import", "fio", "{W}/import/empty.json"], &["empty.json"]),
    (&["import", "awr-info", "{W}/import/garbage.txt"], &["garbage.txt"]),
    (&["import", "awr-info", "{W}/missing.txt"], &["missing.txt"]),
    (&["import", "fio", "--tag", "bad tag", "{W}/import/garbage.json"], &["tag", "bad tag"]),
    (&["import", "awr-info", "--model", "oltp", "{W}/import/garbage.txt"], &["--model", "oltp"]),
    (&["import", "awr-info", "--variable-regex", "(", "{W}/import/garbage.txt"], &["--variable-regex", "("]),
    (&["import", "fio"], &["<FILE>"]),
    (&["import", "run"], &["<FILE>"]),
    (&["import", "run", "{W}/missing.json"], &["missing.json"]),
    (&["import", "run", "{W}/import/garbage.json"], &["garbage.json", "not a run dbio kept"]),
    (&["import", "iostat", "x"], &["iostat"]),
    // lab
    (&["lab", "run", "{W}/missing.toml"], &["missing.toml"]),
    (&["lab", "run", "{W}/plans/size_suffix.toml"], &["size", "12q"]),
    (&["lab", "discard", "--image-size", "-1"], &["--image-size", "-1"]),
    (&["lab", "discard", "--image-size", "12q"], &["--image-size", "12q"]),
    (&["lab", "discard", "--files", "-3"], &["--files", "-3"]),
    (&["lab", "discard", "--fs", "ntfs"], &["--fs", "ntfs"]),
    (&["lab", "discard", "--direct-io", "maybe"], &["--direct-io", "maybe"]),
    (&["lab", "discard", "--file-size", "1.5q"], &["--file-size", "1.5q"]),
    (&["lab", "build"], &["build"]),
    // runs
    (&["runs", "show", "999"], &["999"]),
    (&["runs", "show", "-1"], &["-1"]),
    (&["runs", "show", "x"], &["'x'"]),
    (&["runs", "show", "999", "--db", "{W}/store/existing.sqlite"], &["999"]),
    (&["runs", "list", "--limit", "-1"], &["--limit", "-1"]),
    (&["runs", "list", "--limit", "many"], &["--limit", "many"]),
    (&["runs", "list", "--since", "yesterday"], &["--since", "yesterday"]),
    (&["runs", "list", "--since", "-5d"], &["--since", "-5d"]),
    (&["runs", "export", "--format", "xml"], &["--format", "xml"]),
    (&["runs", "delete"], &["<IDS>"]),
    (&["runs", "delete", "abc"], &["'abc'"]),
    (&["runs", "delete", "999", "--db", "{W}/store/existing.sqlite"], &["999"]),
    (&["runs", "tag", "999", "x", "--db", "{W}/store/existing.sqlite"], &["999"]),
    (&["runs", "tag", "1", "bad tag", "--db", "{W}/store/existing.sqlite"], &["bad tag"]),
    (&["runs", "note", "999", "hello", "--db", "{W}/store/existing.sqlite"], &["999"]),
    (&["runs", "list", "--db", "{W}/afile"], &["afile"]),
    (&["runs", "list", "--db", "{W}/missing/a/b/x.sqlite"], &["missing/a/b does not exist", "--db"]),
    (&["run", "--target", "{W}/t", "--size", "4M", "--time", "1", "--db", "{W}/missing/x.sqlite"], &["missing does not exist"]),
    (&["runs", "purge"], &["purge"]),
    // capture and trace
    (&["capture", "--device", "{W}/afile", "--output", "{W}/c.dbtrace"], &["afile"]),
    (&["capture", "--device", "{W}/afile", "--output", "{W}/c.dbtrace", "--time", "0"], &["--time", "0"]),
    (&["capture", "--device", "{W}/afile", "--output", "{W}/no/dir/c.dbtrace"], &["--output", "no/dir"]),
    (&["capture", "--output", "{W}/c.dbtrace"], &["--device"]),
    (&["trace", "show", "{W}/missing.iolog"], &["missing.iolog"]),
    (&["trace", "show", "{W}/import/garbage.txt"], &["garbage.txt", "not a trace"]),
    (&["trace", "convert", "{W}/import/small.iolog", "--output", "{W}/no/dir/out"], &["--output", "no/dir"]),
    (&["trace", "convert", "{W}/import/small.iolog", "--output", "{W}/afile"], &["--output", "afile", "exists"]),
    (&["trace", "convert", "{W}/import/small.iolog", "--output", "{W}/o", "--to", "csv"], &["--to", "csv"]),
    // replay
    (&["run", "--workload", "replay", "--target", "{W}/t"], &["--trace"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/missing.iolog"], &["--trace", "missing.iolog"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/garbage.txt"], &["--trace", "garbage.txt"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/bad.iolog"], &["--trace", "bad.iolog", "line 3"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/small.iolog", "--speed", "0"], &["--speed", "0"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/small.iolog", "--speed", "fast"], &["--speed", "fast"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/small.iolog", "--map", "wrap"], &["--map", "wrap"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/small.iolog", "--size", "1M"], &["--size", "--map", "8392704"]),
    (&["run", "--workload", "replay", "--target", "{W}/t", "--trace", "{W}/import/small.iolog", "--time", "5"], &["--time", "replay"]),
    (&["run", "--target", "{W}/t", "--rt", "--time", "1"], &["--rt", "--workload replay"]),
    (&["run", "--target", "{W}/t", "--trace", "{W}/import/small.iolog"], &["--trace", "--workload replay"]),
    // clean
    (&["clean", "--target", "{W}/no/such/dir"], &["no/such/dir"]),
    (&["clean", "--target", "{W}/afile"], &["afile"]),
    (&["clean", "--target", "{W}/import"], &["import"]),
    (&["clean", "--force"], &["--force"]),
    (&["clean", "--target"], &["--target"]),
];

/// Plan files of the world: a good one and one per bad key or value.
const PLANS: &[(&str, &str)] = &[
    ("good", "size = \"4M\""),
    ("size_suffix", "size = \"12q\""),
    ("size_negative", "size = -1"),
    ("size_blocks", "size = \"12k\""),
    ("time_huge", "size = \"4M\"\nramp = 99999999999"),
    ("time_word", "size = \"4M\"\nramp = \"soon\""),
    ("sessions_zero", "size = \"4M\"\nsessions = 0"),
    ("unknown_key", "size = \"4M\"\nbogus = 1"),
    ("reserved_key", "size = \"4M\"\njson = true"),
    ("cache_huge", "workload = \"slob\"\ncache = \"64G\""),
    (
        "sweep_bad",
        "size = \"4M\"\n[sweep]\nbs = [\"8k\", \"3000\"]",
    ),
    ("rate_negative", "size = \"4M\"\nrate = -10"),
];

/// What a case did.
#[derive(Debug)]
struct Outcome {
    code: Option<i32>,
    stderr: String,
    timed_out: bool,
    changed: Vec<String>,
}

fn binary() -> PathBuf {
    std::env::var_os("DBIO_SWEEP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("dbio"))
}

/// A fresh world: a store with no run, plan files, files to import, a plain file.
fn world() -> tempfile::TempDir {
    let w = tempfile::Builder::new()
        .prefix("dbio-bad-input-")
        .tempdir()
        .unwrap();
    let p = w.path();
    std::fs::create_dir_all(p.join("plans")).unwrap();
    for (name, workload) in PLANS {
        let (workload, sweep) = workload.split_once("\n[sweep]").unwrap_or((workload, ""));
        let mut text =
            format!("name = \"{name}\"\nrepeats = 1\n[workload]\ntime = 1\n{workload}\n");
        if !sweep.is_empty() {
            text.push_str(&format!("[sweep]{sweep}\n"));
        }
        text.push_str(&format!(
            "[variables]\nA = {{ target = \"{}/a\" }}\n",
            p.display()
        ));
        std::fs::write(p.join("plans").join(format!("{name}.toml")), text).unwrap();
    }
    std::fs::write(p.join("plans/not_toml.toml"), "name = \"x\"\n[workload\n").unwrap();
    std::fs::write(
        p.join("plans/repeats_zero.toml"),
        "name = \"r\"\nrepeats = 0\n[workload]\nsize = \"4M\"\n[variables]\nA = { target = \"a\" }\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.join("import")).unwrap();
    std::fs::write(
        p.join("import/garbage.json"),
        "{\"fio version\": 3, \"jobs\": [{",
    )
    .unwrap();
    std::fs::write(p.join("import/empty.json"), "").unwrap();
    std::fs::write(p.join("import/garbage.txt"), "this|is|not\nawr|info\n").unwrap();
    std::fs::write(
        p.join("import/small.iolog"),
        "fio version 3 iolog\n0 /f add\n5 /f read 0 4096\n9 /f write 8388608 4096\n",
    )
    .unwrap();
    std::fs::write(
        p.join("import/bad.iolog"),
        "fio version 3 iolog\n0 /f add\n5 /f read 10\n",
    )
    .unwrap();
    std::fs::write(p.join("afile"), "not a directory\n").unwrap();
    std::fs::create_dir_all(p.join("store")).unwrap();
    let out = Command::new(binary())
        .args(["runs", "list", "--db"])
        .arg(p.join("store/existing.sqlite"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    w
}

/// Every file and directory under `dir` with its size and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (u64, i64, i64)> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let md = e.path().symlink_metadata().unwrap();
            if md.is_dir() {
                todo.push(e.path());
            }
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            // A directory's own time changes when SQLite makes and removes
            // its -wal and -shm files: only that it exists counts.
            let v = if md.is_dir() {
                (0, 0, 0)
            } else {
                (md.len(), md.mtime(), md.mtime_nsec())
            };
            all.insert(rel, v);
        }
    }
    all
}

fn run_case(args: &[&str]) -> Outcome {
    let w = world();
    let p = w.path();
    let before = snapshot(p);
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{W}", &p.display().to_string()))
        .collect();
    let logs = tempfile::tempdir().unwrap();
    let (out, err) = (logs.path().join("out"), logs.path().join("err"));
    let mut cmd = Command::new(binary());
    cmd.args(&args)
        .current_dir(p)
        .env("DBIO_DB", p.join("absent/store.sqlite"))
        .env("XDG_DATA_HOME", p.join("absent-xdg"))
        .env("HOME", p.join("absent-home"))
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .process_group(0);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: MEMORY,
                rlim_max: MEMORY,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > LIMIT {
            timed_out = true;
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let after = snapshot(p);
    let mut changed: Vec<String> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .collect();
    changed.extend(
        before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .map(|k| format!("-{k}")),
    );
    Outcome {
        code: status.code(),
        stderr: std::fs::read_to_string(&err).unwrap_or_default(),
        timed_out,
        changed,
    }
}

/// Why an outcome is not a clean refusal (empty when it is).
fn faults(needles: &[&str], o: &Outcome) -> Vec<String> {
    let mut f = Vec::new();
    if o.timed_out {
        f.push(format!("hung (killed after {} s)", LIMIT.as_secs()));
    }
    if o.code != Some(2) {
        f.push(format!("exit {:?}", o.code));
    }
    if o.stderr.contains("panicked") || o.stderr.contains("RUST_BACKTRACE") {
        f.push("panicked".into());
    }
    if !o.changed.is_empty() {
        f.push(format!("changed {}", o.changed.join(" ")));
    }
    let lines: Vec<&str> = o.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if needles == ["HELP"] {
        if !o.stderr.contains("Usage:") {
            f.push("no usage help".into());
        }
        return f;
    }
    if lines.len() != 1 {
        f.push(format!("{} lines", lines.len()));
    }
    let first = lines.first().copied().unwrap_or("");
    if !first.starts_with("error: ") {
        f.push("no error line".into());
    }
    let missing: Vec<&str> = needles
        .iter()
        .copied()
        .filter(|n| !first.contains(n))
        .collect();
    if !missing.is_empty() {
        f.push(format!("does not name {missing:?}"));
    }
    f
}

fn every_bad_input_is_one_line_exit_2_and_changes_nothing() {
    assert!(CASES.len() >= 150, "{} cases", CASES.len());
    let table = std::env::var_os("DBIO_SWEEP_TABLE");
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (args, needles) in CASES {
        let o = run_case(args);
        let f = faults(needles, &o);
        let first = o
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string();
        rows.push(format!(
            "{}\t{}\t{}\t{}\t{}",
            args.join(" "),
            o.code.map_or("killed".into(), |c| c.to_string()),
            if f.is_empty() { "ok" } else { "BAD" },
            f.join("; "),
            first.chars().take(160).collect::<String>()
        ));
        if !f.is_empty() {
            failures.push(format!(
                "dbio {}: {}\n    {}",
                args.join(" "),
                f.join("; "),
                first
            ));
        }
    }
    if let Some(path) = table {
        let mut file = std::fs::File::create(path).unwrap();
        for r in &rows {
            writeln!(file, "{r}").unwrap();
        }
        return;
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs were not refused cleanly:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// `dbio ARGS` in `dir`: exit code and stderr's lines.
fn refusal(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<String>) {
    let out = Command::new(binary())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = err
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    (out.status.code(), lines)
}

/// Errors from deep inside (a store under a plain file, a store that is not
/// SQLite, a target that is a file, a man page that cannot be written) are
/// one line with what was being done, and the exit code of their kind; a
/// store the refused run created is gone again.
fn errors_from_deep_inside_are_one_line_with_context_and_their_exit_code() {
    let w = world();
    let p = w.path();
    let afile = p.join("afile");
    let under = afile.join("store.sqlite");
    let (code, lines) = refusal(p, &["runs", "list", "--db", under.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{lines:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    let want = format!(
        "error: opening the store at {}: cannot create the store directory {}: ",
        under.display(),
        afile.display()
    );
    assert!(lines[0].starts_with(&want), "{lines:?}");
    assert!(
        lines[0].ends_with("(choose another store with --db PATH)"),
        "{lines:?}"
    );

    let (code, lines) = refusal(p, &["report", "--db", afile.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{lines:?}");
    let want = format!(
        "error: opening the store at {0}: {0} is not a SQLite database",
        afile.display()
    );
    assert!(lines.len() == 1 && lines[0].starts_with(&want), "{lines:?}");
    assert_eq!(
        std::fs::read_to_string(&afile).unwrap(),
        "not a directory\n"
    );

    std::fs::create_dir(p.join("fresh")).unwrap();
    let fresh = p.join("fresh/dbio.sqlite");
    let args = ["run", "--target", "afile", "--time", "1", "--db"];
    let (code, lines) = refusal(p, &[&args[..], &[fresh.to_str().unwrap()]].concat());
    assert_eq!(code, Some(2), "{lines:?}");
    assert!(
        lines.len() == 1 && lines[0].starts_with("error: ") && lines[0].contains("--target"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_dir(p.join("fresh")).unwrap().count(),
        0,
        "the refused run's new store is removed"
    );

    let pages = p.join("pages");
    std::fs::create_dir_all(pages.join("dbio.1")).unwrap();
    let (code, lines) = refusal(p, &["man", "--dir", pages.to_str().unwrap()]);
    assert_eq!(code, Some(1), "a write that failed: {lines:?}");
    let want = format!("error: cannot write {}: ", pages.join("dbio.1").display());
    assert!(lines.len() == 1 && lines[0].starts_with(&want), "{lines:?}");
}

/// `--db` makes only the store file, in a directory that exists; the
/// default store's directories (`$XDG_DATA_HOME/dbio`) are made as needed.
fn only_the_default_store_gets_its_directories_made() {
    let w = tempfile::tempdir().unwrap();
    let p = w.path();
    let list = |db: Option<&Path>| {
        let mut c = Command::new(binary());
        c.args(["runs", "list"])
            .env_remove("DBIO_DB")
            .env("XDG_DATA_HOME", p.join("xdg/deep"))
            .env("HOME", p.join("home"));
        if let Some(db) = db {
            c.arg("--db").arg(db);
        }
        c.output().unwrap()
    };
    let out = list(None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.join("xdg/deep/dbio/dbio.sqlite").is_file());

    let named = p.join("named/a/b/x.sqlite");
    let out = list(Some(&named));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let dir = named.parent().unwrap().display().to_string();
    assert!(
        err.contains(&format!("the directory {dir} does not exist")),
        "{err}"
    );
    assert!(!p.join("named").exists(), "no directory was made");

    std::fs::create_dir_all(named.parent().unwrap()).unwrap();
    let out = list(Some(&named));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(named.is_file(), "the file itself is made");
}

crate::tests! {
    every_bad_input_is_one_line_exit_2_and_changes_nothing,
    only_the_default_store_gets_its_directories_made,
    errors_from_deep_inside_are_one_line_with_context_and_their_exit_code,
}
