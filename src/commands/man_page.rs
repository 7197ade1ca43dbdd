//! One man page: clap_mangen's sections from the CLI's definition (name,
//! synopsis, description, options, subcommands), then what an installed
//! user has instead of the repository's docs/: EXAMPLES, EXIT STATUS,
//! ENVIRONMENT, FILES and SEE ALSO.

use std::io::{self, Write};

/// Examples of pages other than `dbio run`'s (its own are `--help`'s).
const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "dbio",
        &[
            (
                "A 30 s random read and write run on a directory",
                "dbio run --target /mnt/xfs/dbio --time 30",
            ),
            ("The runs kept so far", "dbio runs list"),
            ("What the stored metrics are called", "dbio metrics latency"),
            ("Two runs side by side", "dbio compare 1 2"),
        ],
    ),
    (
        "dbio-runs",
        &[
            ("The last five runs", "dbio runs list --limit 5"),
            (
                "A run's report as it printed, and as JSON",
                "dbio runs show 42 --json",
            ),
            (
                "Every run's read latencies as CSV",
                "dbio runs export --format csv --metrics 'read.latency.*'",
            ),
        ],
    ),
    (
        "dbio-runs-show",
        &[(
            "Run 42 as fio's JSON",
            "dbio runs show 42 --format fio-json",
        )],
    ),
    (
        "dbio-runs-list",
        &[("Runs of the last day", "dbio runs list --since 1d")],
    ),
    (
        "dbio-report",
        &[
            (
                "A plan's SLOB.R table of IOPS",
                "dbio report --plan seeds --metric total.iops",
            ),
            (
                "With 95% intervals and scaling",
                "dbio report --plan seeds --stats --scaling",
            ),
            (
                "One HTML page with charts",
                "dbio report --plan seeds --html seeds.html",
            ),
        ],
    ),
    (
        "dbio-metrics",
        &[
            ("Every stored metric name, unit and meaning", "dbio metrics"),
            ("Only the 99th percentiles", "dbio metrics p99"),
        ],
    ),
    (
        "dbio-compare",
        &[("Run 41 against run 42", "dbio compare 41 42")],
    ),
    (
        "dbio-curve",
        &[
            (
                "A curve of 8k random reads: the maximum, then 10..100% of it",
                "dbio curve --target /mnt/xfs/dbio --pattern randread --sessions 32 --time 30 --name xfs-curve",
            ),
            (
                "The highest rate at which reads and writes keep a due-time p99 of 2 ms",
                "dbio curve --target /mnt/xfs/dbio --sessions 32 --time 10 --latency-target p99=2ms",
            ),
        ],
    ),
    (
        "dbio-plan",
        &[
            (
                "What a plan would run, and how long",
                "dbio plan run examples/quick-engines.toml --dry-run",
            ),
            (
                "Run it (again: it continues where it stopped)",
                "dbio plan run examples/quick-engines.toml",
            ),
        ],
    ),
    (
        "dbio-import",
        &[(
            "fio's JSON output as runs",
            "dbio import fio fio-out.json --tag fio",
        )],
    ),
    (
        "dbio-verify",
        &[(
            "Read every block back and classify damage",
            "dbio verify --target /mnt/xfs/dbio",
        )],
    ),
    (
        "dbio-clean",
        &[(
            "Remove the data files dbio laid out",
            "dbio clean --target /mnt/xfs/dbio",
        )],
    ),
    (
        "dbio-lab",
        &[
            (
                "What a lab plan would build",
                "dbio lab run examples/innodb-lab.toml --dry-run",
            ),
            (
                "After a crash: remove what the lab made",
                "dbio lab cleanup",
            ),
        ],
    ),
];

const EXIT_STATUS: &[(&str, &str)] = &[
    (
        "0",
        "done (also when a reader closed the output early, as with | head)",
    ),
    (
        "1",
        "the run or command failed (an I/O error, a server that died); what was measured is saved",
    ),
    (
        "2",
        "bad usage or configuration, said in one line naming the option and value; nothing was run",
    ),
    (
        "130",
        "interrupted (Ctrl-C or SIGTERM): the results so far are printed and saved, marked interrupted",
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    ("DBIO_DB", "the results store when --db is not given"),
    (
        "XDG_DATA_HOME",
        "the store is $XDG_DATA_HOME/dbio/dbio.sqlite when neither --db nor DBIO_DB is given (else ~/.local/share/dbio/dbio.sqlite)",
    ),
    (
        "DBIO_LAB_DIR",
        "where dbio lab keeps its state files and mount points (else $XDG_STATE_HOME/dbio/lab, ~/.local/state/dbio/lab)",
    ),
    (
        "DBIO_CLOCK",
        "tsc: time latencies with the CPU's time-stamp counter where the kernel keeps time with it (an experiment)",
    ),
    (
        "RUST_BACKTRACE",
        "a dbio bug (an internal error) prints its backtrace",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "~/.local/share/dbio/dbio.sqlite",
        "the results store (SQLite; any SQL client reads it)",
    ),
    (
        "TARGET/dbio-data-NNNN.dat",
        "the data files dbio lays out in a directory target",
    ),
    (
        "TARGET/dbio-manifest.json",
        "what dbio laid out there (dbio clean removes only what it lists)",
    ),
    (
        "TARGET/dbio.lock",
        "held while a command uses the target (its pid inside)",
    ),
    (
        "TARGET/dbio-genmap",
        "the lost-write map dbio verify checks against",
    ),
    (
        "TARGET/dbio-redo/",
        "the SLOB model's redo logs (or under --redo-dir)",
    ),
    (
        "TARGET/dbio-pg/, TARGET/dbio-mysql/",
        "the PostgreSQL cluster or MariaDB instance dbio starts for --workload pg or mysql",
    ),
];

/// Writes the page of `cmd`, named `name` (`dbio-runs-show`), with `subs`
/// the names of its subcommands' pages.
pub fn render(cmd: clap::Command, name: &str, subs: &[String], w: &mut Vec<u8>) -> io::Result<()> {
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if cmd.has_subcommands() {
        man.render_subcommands_section(w)?;
    }
    let examples = examples(name);
    if !examples.is_empty() {
        writeln!(w, ".SH EXAMPLES")?;
        for (what, line) in examples {
            writeln!(
                w,
                ".PP\n{}\n.RS 4\n.nf\n{}\n.fi\n.RE",
                roff(what),
                roff(line)
            )?;
        }
    }
    section(w, "EXIT STATUS", EXIT_STATUS)?;
    section(w, "ENVIRONMENT", ENVIRONMENT)?;
    section(w, "FILES", FILES)?;
    writeln!(w, ".SH \"SEE ALSO\"")?;
    let parent = name.rsplit_once('-').map(|(p, _)| p.to_string());
    let mut related: Vec<String> = parent.into_iter().chain(subs.iter().cloned()).collect();
    if name != "dbio-metrics" && !related.iter().any(|p| p == "dbio-metrics") {
        related.push("dbio-metrics".into());
    }
    related.sort();
    let pages: Vec<String> = related
        .iter()
        .map(|p| format!("\\fB{}\\fR(1)", roff(p)))
        .chain(["\\fBfio\\fR(1)".into(), "\\fBiostat\\fR(1)".into()])
        .collect();
    writeln!(w, "{}", pages.join(", "))?;
    writeln!(
        w,
        ".PP\nThe full reference (the JSON document, the store's tables, plans, the lab) is docs/*.md in dbio's source tree."
    )?;
    match cmd.get_version() {
        Some(_) => man.render_version_section(w),
        None => Ok(()),
    }
}

/// The examples of page `name`.
pub fn examples(name: &str) -> &'static [(&'static str, &'static str)] {
    if name == "dbio-run" {
        return crate::cli::run_help::EXAMPLES;
    }
    EXAMPLES
        .iter()
        .find(|(page, _)| *page == name)
        .map_or(&[], |(_, e)| e)
}

/// A section of tagged paragraphs: each name in bold, its text below.
fn section(w: &mut Vec<u8>, title: &str, items: &[(&str, &str)]) -> io::Result<()> {
    writeln!(w, ".SH \"{title}\"")?;
    for (name, text) in items {
        writeln!(w, ".TP\n\\fB{}\\fR\n{}", roff(name), roff(text))?;
    }
    Ok(())
}

/// Text as roff reads it literally: backslashes and dashes escaped, a
/// line that would start a request guarded.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    match t.starts_with(['.', '\'']) {
        true => format!("\\&{t}"),
        false => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_is_a_command_line_dbio_parses() {
        let pages = EXAMPLES.iter().map(|(p, _)| *p).chain(["dbio-run"]);
        for page in pages {
            for (_, line) in examples(page) {
                let argv: Vec<String> = line
                    .split(" > ")
                    .next()
                    .unwrap()
                    .split_whitespace()
                    .map(|w| w.trim_matches('\'').to_string())
                    .collect();
                let parsed = crate::cli::try_parse_from(&argv);
                assert!(
                    parsed.is_ok(),
                    "{page}: {line}: {:?}",
                    parsed.err().map(|e| e.to_string())
                );
                let sub: String = page.trim_start_matches("dbio").replace('-', " ");
                assert!(
                    line.starts_with(&format!("dbio{sub}")),
                    "{page}: {line} is not an example of its page"
                );
            }
        }
    }

    #[test]
    fn roff_text_is_literal() {
        assert_eq!(roff("--time 60"), "\\-\\-time 60");
        assert_eq!(roff(".hidden"), "\\&.hidden");
        assert_eq!(roff("a\\b"), "a\\eb");
    }
}
