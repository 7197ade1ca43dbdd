//! `dbio completions` and `dbio man`: their arguments.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// The shells dbio writes completions for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    #[value(name = "powershell")]
    PowerShell,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete in, e.g. `dbio completions bash > /etc/bash_completion.d/dbio`.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write dbio.1 and one page per subcommand (dbio-run.1, dbio-runs-show.1, …)
    /// into DIR (made if missing) instead of printing dbio.1 on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}
