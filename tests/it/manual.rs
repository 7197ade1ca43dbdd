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

crate::tests! {
    bash_completes_subcommands_and_options [Tool("bash")],
    every_shell_gets_a_script_and_a_bad_one_is_named,
    man_pages_cover_every_command,
}
