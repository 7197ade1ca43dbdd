//! Shell completions and man pages, generated from the CLI definition:
//! bash completes dbio's real subcommands and options, and `dbio man`
//! writes one page per command with its options.

use std::process::Command;

fn dbio(args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        .output()
        .unwrap()
}

/// What bash's completion offers for the words typed so far.
fn bash_complete(script: &std::path::Path, words: &str) -> Vec<String> {
    let n = words.split_whitespace().count() - usize::from(!words.ends_with(' '));
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=({words} {}); COMP_CWORD={n}; COMP_LINE='{words}'; \
             _dbio dbio \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display(),
            if words.ends_with(' ') { "''" } else { "" },
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn bash_completes_subcommands_and_options() {
    let out = dbio(&["completions", "bash"]);
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("dbio.bash");
    std::fs::write(&script, &out.stdout).unwrap();

    let runs = bash_complete(&script, "dbio runs ex");
    assert_eq!(runs, ["export"], "{runs:?}");
    let top = bash_complete(&script, "dbio ");
    for sub in ["run", "plan", "report", "compare", "runs", "lab", "man"] {
        assert!(top.iter().any(|w| w == sub), "{sub} not in {top:?}");
    }
    let opts = bash_complete(&script, "dbio run --dbwr-");
    for o in ["--dbwr-engine", "--dbwr-batch"] {
        assert!(opts.iter().any(|w| w == o), "{o} not in {opts:?}");
    }
}

fn every_shell_gets_a_script_and_a_bad_one_is_named() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = dbio(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("dbio") && text.contains("dbwr-engine"),
            "{shell}"
        );
    }
    let out = dbio(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

fn man_pages_cover_every_command() {
    let out = dbio(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(".TH dbio 1"), "{page}");
    assert!(page.contains("runs") && page.contains("lab"), "{page}");

    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = dbio(&["man", "--dir", pages.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = std::fs::read_to_string(pages.join("dbio-runs-show.1")).unwrap();
    assert!(
        show.contains("\\-\\-html") || show.contains("--html"),
        "{show}"
    );
    let run = std::fs::read_to_string(pages.join("dbio-run.1")).unwrap();
    assert!(run.contains("dbwr\\-engine") || run.contains("dbwr-engine"));
    for name in [
        "dbio.1",
        "dbio-plan-run.1",
        "dbio-lab-discard.1",
        "dbio-import-fio.1",
    ] {
        assert!(pages.join(name).is_file(), "{name}");
    }

    let out = dbio(&["man", "--dir", "/proc/dbio-man"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("/proc/dbio-man") && err.contains("--dir"),
        "{err}"
    );
}

/// Every page as `man` shows it has what an installed user looks for
/// instead of docs/: examples, exit status, environment, files, see also.
fn man_pages_have_examples_exit_status_environment_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man1");
    let out = dbio(&["man", "--dir", pages.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = |name: &str| {
        let out = Command::new("man")
            .args(["-l", pages.join(name).to_str().unwrap()])
            .env("MANWIDTH", "200")
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("warning"), "{name}: {err}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for entry in std::fs::read_dir(&pages).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let text = show(&name);
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"] {
            assert!(
                text.contains(&format!("\n{section}\n")),
                "{name} lacks {section}"
            );
        }
        assert!(text.contains("DBIO_DB") && text.contains("130"), "{name}");
    }
    let run = show("dbio-run.1");
    let examples = &run[run.find("\nEXAMPLES\n").expect("dbio-run has EXAMPLES")..];
    for want in [
        "dbio run --pattern randread --engine io_uring --iodepth 32",
        "dbio run --workload slob",
        "--progress-file progress.jsonl",
    ] {
        assert!(examples.contains(want), "{want} not in {examples}");
    }
    let top = show("dbio.1");
    assert!(
        top.contains("\nEXAMPLES\n") && top.contains("dbio metrics latency"),
        "{top}"
    );
    assert!(
        top.contains("dbio-run(1)") && top.contains("dbio-metrics(1)"),
        "{top}"
    );
    let show_page = show("dbio-runs-show.1");
    assert!(show_page.contains("dbio-runs(1)"), "its parent in SEE ALSO");
}

crate::tests! {
    man_pages_have_examples_exit_status_environment_and_files [Tool("man")],
    bash_completes_subcommands_and_options [Tool("bash")],
    every_shell_gets_a_script_and_a_bad_one_is_named,
    man_pages_cover_every_command,
}
