//! `dbio completions SHELL` and `dbio man`: shell completions and man pages
//! generated from the CLI's own definition, so they never drift from it.

use crate::cli::manual::{CompletionsArgs, ManArgs, Shell};
use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::CommandError;
use super::output::write_error;

/// Prints the completion script for `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    use clap_complete::Shell as S;
    let shell = match args.shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Elvish => S::Elvish,
        Shell::PowerShell => S::PowerShell,
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut crate::cli::command(), "dbio", &mut buf);
    super::output::print(&String::from_utf8_lossy(&buf))
}

/// Prints dbio.1, or writes every page into `--dir`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    let mut cmd = crate::cli::command();
    cmd.build();
    match &args.dir {
        None => {
            let buf = page(&cmd, "dbio").map_err(write_error)?;
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)
                .and_then(|()| out.flush())
                .map_err(write_error)?;
            Ok(())
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                CommandError::Usage(format!(
                    "cannot make {}: {e} (give --dir a directory you can write)",
                    dir.display()
                ))
            })?;
            let pages = write_pages(cmd, dir)?;
            eprintln!("dbio man: {pages} page(s) written to {}", dir.display());
            Ok(())
        }
    }
}

/// Writes the page of `cmd` and of every subcommand below it, named by
/// their path (`dbio-runs-show.1`); returns how many.
fn write_pages(cmd: clap::Command, dir: &Path) -> anyhow::Result<usize> {
    let mut cmd = cmd;
    cmd.build();
    fn walk(cmd: &clap::Command, name: String, dir: &Path) -> anyhow::Result<usize> {
        let file = dir.join(format!("{name}.1"));
        let buf = page(cmd, &name).map_err(write_error)?;
        std::fs::write(&file, buf).with_context(|| format!("cannot write {}", file.display()))?;
        let mut n = 1;
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            n += walk(sub, format!("{name}-{}", sub.get_name()), dir)?;
        }
        Ok(n)
    }
    walk(&cmd, "dbio".into(), dir)
}

/// The page of `cmd` named `name`, with its subcommands' pages in SEE ALSO.
fn page(cmd: &clap::Command, name: &str) -> std::io::Result<Vec<u8>> {
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
        .map(|s| format!("{name}-{}", s.get_name()))
        .collect();
    let mut buf = Vec::new();
    super::man_page::render(cmd.clone().display_name(name), name, &subs, &mut buf)?;
    Ok(buf)
}
