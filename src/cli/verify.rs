//! `dbio verify`'s arguments.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A directory dbio laid out, or a block device dbio wrote.
    #[arg(long, default_value = crate::options::DEFAULT_TARGET)]
    pub target: PathBuf,
    /// The findings as JSON on stdout (schema `dbio.verify.v1`).
    #[arg(long)]
    pub json: bool,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
    /// The results store [default: $DBIO_DB, else $XDG_DATA_HOME/dbio/dbio.sqlite].
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
}
