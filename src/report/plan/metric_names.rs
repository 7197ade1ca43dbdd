//! What a stored metric name means and in which unit, read from its parts
//! (`read.latency.p99_us`: the reads' 99th percentile latency, µs) — names
//! end in their unit (docs/json.md) — and the stored names nearest to one
//! that was not found (`read.p99` → `read.latency.p99_us`, …).

/// The unit a name's suffix says, as printed.
pub fn unit(name: &str) -> &'static str {
    let last = name.rsplit('.').next().unwrap_or(name);
    if let Some((_, u, _)) = cycle_field(name) {
        return u;
    }
    const SUFFIXES: &[(&str, &str)] = &[
        ("_mib_per_s", "MiB/s"),
        ("_kib_per_s", "KiB/s"),
        ("_per_s", "/s"),
        ("_per_tx", "/transaction"),
        ("_per_execute", "/execute"),
        ("_per_io", "/I/O"),
        ("_us", "µs"),
        ("_ms", "ms"),
        ("_s", "s"),
        ("_bytes", "bytes"),
        ("_kib", "KiB"),
        ("_pct", "%"),
        ("pct_db_time", "%"),
    ];
    if let Some((_, u)) = SUFFIXES.iter().find(|(s, _)| last.ends_with(s)) {
        return if *u == "/I/O" && last.starts_with("us_") {
            "µs/I/O"
        } else {
            u
        };
    }
    match last {
        "iops" => "/s",
        "bytes" => "bytes",
        "blocks" => "blocks",
        _ => "",
    }
}

/// The name's meaning in words, from its parts.
pub fn meaning(name: &str) -> String {
    let parts: Vec<&str> = name.split('.').collect();
    let rest = |from: usize| parts[from.min(parts.len())..].join(".");
    match parts[0] {
        "read" | "write" | "sync" | "total" | "trim" => {
            let of = match parts[0] {
                "read" => "reads",
                "write" => "writes",
                "sync" => "syncs after writes",
                "total" => "reads and writes",
                _ => "trims",
            };
            format!("{of}: {}", kind_field(&rest(1)))
        }
        "cpu" => match parts.get(1).copied() {
            Some("user_s") => "dbio's user CPU time in the window (every thread)".into(),
            Some("sys_s") => "dbio's system CPU time in the window (every thread)".into(),
            Some("us_per_io") => "dbio's CPU time per I/O request".into(),
            _ => format!("dbio's CPU: {}", words(&rest(1))),
        },
        "host" => format!("host (mpstat, window average): {}", host_field(&rest(1))),
        "dev" if parts.len() >= 3 => format!(
            "device {} (iostat -x, window average): {}",
            parts[1],
            device_field(&rest(2))
        ),
        "dev" => format!(
            "the device under the target (iostat -x, window average): {}",
            device_field(&rest(1))
        ),
        "db" => format!("database: {}", db_field(&rest(1))),
        "event" if parts.len() >= 3 => format!(
            "wait event '{}': {}",
            parts[1].replace('_', " "),
            event_field(&rest(2))
        ),
        "pg" | "mysql" | "slob" if cycle_field(name).is_some() => {
            let (whose, log) = match parts[0] {
                "pg" => ("PostgreSQL's", "WAL"),
                "mysql" => ("InnoDB's", "redo"),
                _ => ("the model's", "redo"),
            };
            let (_, _, what) = cycle_field(name).unwrap_or_default();
            format!(
                "where the window sat in {whose} checkpoint cycle: {}",
                what.replace("LOG", log)
            )
        }
        "pg" => format!("PostgreSQL: {}", words(&rest(1))),
        "mysql" => format!("MariaDB/InnoDB: {}", words(&rest(1))),
        "slob" => format!("the SLOB model: {}", words(&rest(1))),
        "open_loop" => open_loop_meaning(&rest(1)),
        "steady" => steady_meaning(&rest(1)),
        "measured_s" => "length of the measurement window".into(),
        "ramp_s" => "warm-up before the window, not counted".into(),
        "outliers" => match parts.get(1).copied() {
            Some("count") => "I/Os slower than the outlier threshold".into(),
            Some("unlisted") => "outliers counted but not listed".into(),
            Some("threshold_ms") => "the outlier threshold (--outlier-ms)".into(),
            _ => words(&rest(1)),
        },
        _ => words(name),
    }
}

/// A `PREFIX.cycle.*` name (`document::cycle`): its field, unit and
/// meaning (LOG: the log's name).
fn cycle_field(name: &str) -> Option<(&'static str, &'static str, &'static str)> {
    const FIELDS: &[(&str, &str, &str)] = &[
        (
            "open_log_bytes_since",
            "bytes",
            "LOG bytes since the last checkpoint when the window opened",
        ),
        (
            "open_transactions_since",
            "transactions",
            "write transactions since the last checkpoint when the window opened",
        ),
        (
            "checkpoints_completed",
            "checkpoints",
            "checkpoints completed inside the window",
        ),
        (
            "first_change_share",
            "/updated row",
            "full-page images per updated row (first changes since a checkpoint)",
        ),
    ];
    let field = name.split_once(".cycle.")?.1;
    FIELDS.iter().find(|(f, _, _)| *f == field).copied()
}

/// `iops`, `latency.p99_us`, `alone.latency.max_us` of one kind.
fn kind_field(f: &str) -> String {
    if let Some(l) = f.strip_prefix("alone.latency.") {
        return format!("{} (fio's write without its sync)", latency(l));
    }
    if let Some(l) = f.strip_prefix("clat.latency.") {
        return format!("{} (fio's completion latency)", latency(l));
    }
    if let Some(l) = f.strip_prefix("latency.") {
        return latency(l);
    }
    if let Some(l) = f.strip_prefix("due.") {
        return format!("{} from the due time (--rate)", latency(l));
    }
    match f {
        "iops" => "requests per second".into(),
        "mib_per_s" => "MiB per second".into(),
        "requests" => "requests completed in the window".into(),
        "blocks" => "blocks of --bs those requests moved".into(),
        "bytes" => "bytes moved".into(),
        other => words(other),
    }
}

/// `p99_9_us` → `99.9th percentile latency`.
pub(super) fn latency(f: &str) -> String {
    let stat = f.trim_end_matches("_us").trim_end_matches("_ms");
    match stat {
        "min" => "shortest latency".into(),
        "mean" => "mean latency".into(),
        "max" => "longest latency".into(),
        p if p.starts_with('p') => {
            format!("{}th percentile latency", p[1..].replacen('_', ".", 1))
        }
        other => format!("latency {}", words(other)),
    }
}

fn host_field(f: &str) -> String {
    if let Some(state) = f.strip_suffix("_pct") {
        return format!("% of all CPUs' time in {}", words(state));
    }
    match f {
        "ctxt_per_s" => "context switches per second".into(),
        "intr_per_s" => "interrupts per second".into(),
        "load1" | "load5" | "load15" => format!("load average over {} min", &f[4..]),
        "dirty_kib" => "page cache waiting to be written back (meminfo Dirty)".into(),
        "writeback_kib" => "page cache being written back (meminfo Writeback)".into(),
        other => words(other),
    }
}

fn device_field(f: &str) -> String {
    // iostat -x's letter of a direction: (plural, singular).
    let dir = |c: Option<char>| match c {
        Some('r') => ("reads", "read"),
        Some('w') => ("writes", "write"),
        Some('d') => ("discards", "discard"),
        Some('f') => ("flushes", "flush"),
        _ => ("requests", "request"),
    };
    let (many, one) = dir(f.chars().next());
    let head = f.split('_').next().unwrap_or(f);
    match f {
        "util_pct" => "% of time the device was busy".into(),
        "aqu_sz" => "average queue size".into(),
        _ if f.ends_with("_await_ms") => format!("mean time per {one} request, queue included"),
        _ if head.ends_with("rqm") => format!("{many} merged per second"),
        _ if head.ends_with("areq") => format!("average {one} request size"),
        _ if head.ends_with("kb") || head.ends_with("kib") => format!("KiB of {many} per second"),
        _ if f.ends_with("_per_s") && head.len() == 1 => format!("{many} per second"),
        other => words(other),
    }
}

fn db_field(f: &str) -> String {
    const KNOWN: &[(&str, &str)] = &[
        (
            "logical_reads_per_s",
            "logical reads (buffer gets) per second (AWR LIO)",
        ),
        (
            "physical_reads_per_s",
            "physical read requests per second (PREADS)",
        ),
        (
            "physical_read_blocks_per_s",
            "blocks physical reads read per second",
        ),
        (
            "physical_writes_per_s",
            "physical write requests per second (PWRITES)",
        ),
        ("redo_mib_per_s", "redo MiB per second"),
        ("transactions_per_s", "commits per second"),
        ("executes_per_s", "executions per second"),
        (
            "db_time_per_s",
            "DB time per second (average active sessions)",
        ),
        ("db_cpu_per_s", "DB CPU seconds per second"),
        ("cache_hit_pct", "logical reads found in the buffer cache"),
        ("update_pct", "share of operations that update"),
    ];
    KNOWN
        .iter()
        .find(|(k, _)| *k == f)
        .map_or_else(|| words(f), |(_, m)| m.to_string())
}

fn event_field(f: &str) -> String {
    match f {
        "avg_ms" => "average wait".into(),
        "waits_per_s" => "waits per second".into(),
        "time_s" => "seconds waited in the window".into(),
        "pct_db_time" => "share of DB time".into(),
        other => words(other),
    }
}

/// A name's part as words, its unit suffix left to the unit column.
fn words(part: &str) -> String {
    let mut p = part.to_string();
    for s in [
        "_mib_per_s",
        "_per_s",
        "_us",
        "_ms",
        "_bytes",
        "_kib",
        "_pct",
        "_s",
    ] {
        if let Some(stem) = p.strip_suffix(s) {
            p = match s {
                "_mib_per_s" => format!("{stem} MiB per second"),
                "_per_s" => format!("{stem} per second"),
                _ => stem.to_string(),
            };
            break;
        }
    }
    p.replace(['_', '.'], " ")
}

/// The stored names nearest to `typed`, at most `n`: first those holding
/// every word of it (`read.p99` → `read.latency.p99_us`), shortest first,
/// then those `distance` (an edit distance) finds a few edits away.
pub fn nearest<'a>(
    typed: &str,
    names: &'a [String],
    n: usize,
    distance: impl Fn(&str, &str) -> usize,
) -> Vec<&'a str> {
    let typed = typed.to_ascii_lowercase();
    let words: Vec<&str> = typed.split(['.', '_']).filter(|w| !w.is_empty()).collect();
    let mut scored: Vec<(usize, usize, &str)> = names
        .iter()
        .filter_map(|name| {
            let holds_all = !words.is_empty() && words.iter().all(|w| name.contains(w));
            if holds_all {
                return Some((0, name.len(), name.as_str()));
            }
            let d = distance(&typed, name);
            (d <= 3.max(typed.len() / 4)).then_some((1, d, name.as_str()))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(n)
        .map(|(_, _, name)| name)
        .collect()
}

/// The meaning of the metric `steady.<field>` (`--steady-state`).
fn steady_meaning(field: &str) -> String {
    let what = match field {
        "reached" => "1 when the last window of rounds was steady, else 0".to_string(),
        "reached_after_s" => "time from the start to the end of the steady window".into(),
        "rounds" => "rounds run".into(),
        f => match f.split_once('.') {
            Some((kind @ ("read" | "write" | "total"), rest)) => {
                format!("the steady window's {kind}: {}", words(rest))
            }
            _ => words(f),
        },
    };
    format!("steady state (--steady-state): {what}")
}

/// The meaning of the metric `open_loop.<field>` (`report --metric`).
fn open_loop_meaning(field: &str) -> String {
    let of = |what: &str| format!("open loop (--rate): {what}");
    if let Some(l) = field.strip_prefix("lateness.latency.") {
        return of(&format!(
            "issue lateness (issue − due time), {}",
            latency(l)
        ));
    }
    for (prefix, from) in [
        ("operations.due.", "from its due time"),
        ("operations.service.", "from its start (service)"),
    ] {
        if let Some(l) = field.strip_prefix(prefix) {
            return of(&format!(
                "a paced operation's (slob) or transaction's (pg, mysql) latency {from}, {}",
                latency(l)
            ));
        }
    }
    of(match field {
        "operations.count" => {
            "operations (slob) or transactions (pg, mysql) completed in the window"
        }
        "asked_per_s" => "requests per second asked",
        "due_per_s" => "requests per second that fell due in the window",
        "achieved_per_s" => "requests per second completed in the window",
        "lateness.late" => "requests issued late",
        "lateness.late_pct" => "share of requests issued late, %",
        "lateness.late_after_us" => "lateness above which a request is late",
        "lateness.requests" => "requests whose lateness was measured",
        _ => field,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_state_names_say_what_they_are() {
        assert_eq!(unit("steady.total.iops"), "/s");
        assert_eq!(unit("steady.read.p99_us"), "µs");
        assert_eq!(unit("steady.reached_after_s"), "s");
        assert!(
            meaning("steady.total.iops")
                .starts_with("steady state (--steady-state): the steady window's total")
        );
        assert!(meaning("steady.reached").contains("1 when"));
    }

    #[test]
    fn checkpoint_cycle_names_say_their_units_and_whose_cycle() {
        assert_eq!(unit("slob.cycle.open_log_bytes_since"), "bytes");
        assert_eq!(unit("pg.cycle.checkpoints_completed"), "checkpoints");
        assert_eq!(unit("mysql.cycle.first_change_share"), "/updated row");
        assert_eq!(
            meaning("slob.cycle.open_log_bytes_since"),
            "where the window sat in the model's checkpoint cycle: redo bytes since the last checkpoint when the window opened"
        );
        assert!(meaning("pg.cycle.open_log_bytes_since").contains("WAL bytes"));
        assert_eq!(
            meaning("pg.wal_fpi_per_s"),
            "PostgreSQL: wal fpi per second"
        );
    }

    #[test]
    fn names_read_as_units_and_words() {
        assert_eq!(unit("read.latency.p99_us"), "µs");
        assert_eq!(unit("total.iops"), "/s");
        assert_eq!(unit("db.redo_mib_per_s"), "MiB/s");
        assert_eq!(unit("dev.vda.util_pct"), "%");
        assert_eq!(unit("cpu.us_per_io"), "µs/I/O");
        assert_eq!(unit("outliers.count"), "");
        assert_eq!(
            meaning("read.latency.p99_9_us"),
            "reads: 99.9th percentile latency"
        );
        assert_eq!(
            meaning("total.iops"),
            "reads and writes: requests per second"
        );
        assert_eq!(
            meaning("dev.vda.w_await_ms"),
            "device vda (iostat -x, window average): mean time per write request, queue included"
        );
        assert_eq!(
            meaning("event.log_file_sync.avg_ms"),
            "wait event 'log file sync': average wait"
        );
        assert_eq!(
            meaning("host.iowait_pct"),
            "host (mpstat, window average): % of all CPUs' time in iowait"
        );
    }

    #[test]
    fn nearest_names_hold_the_words_typed() {
        let names: Vec<String> = [
            "read.iops",
            "read.latency.p99_us",
            "read.latency.p99_9_us",
            "write.latency.p99_us",
            "total.iops",
        ]
        .map(String::from)
        .to_vec();
        let d = crate::options::table::edit_distance;
        assert_eq!(
            nearest("read.p99", &names, 5, d),
            ["read.latency.p99_us", "read.latency.p99_9_us"]
        );
        assert_eq!(nearest("totl.iops", &names, 5, d), ["total.iops"]);
        assert!(nearest("zzzzzz.qqqq", &names, 5, d).is_empty());
    }
}
