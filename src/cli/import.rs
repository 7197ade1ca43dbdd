//! `dbio import`'s subcommands and their arguments (fio JSON, AWR reports).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::import::ModelArg;
use crate::options::choice::choice;

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// SLOB's misc/awr_info.sh output (pipe-separated, one row per AWR report).
    AwrInfo(AwrInfoArgs),
    /// fio 3.x --output-format=json or json+ output (also client/server).
    Fio(FioArgs),
    /// A run dbio measured but could not save (the store locked, read-only or
    /// full): the file its error line named, saved now as it would have been.
    Run(RunFileArgs),
}

#[derive(Args, Debug)]
pub struct RunFileArgs {
    /// The files (`STORE.unsaved/*.json`); each is removed once its run is stored.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Options every importer has.
#[derive(Args, Debug)]
pub struct CommonArgs {
    /// The file to import.
    pub file: PathBuf,
    /// Store the runs under this plan name (select them with `dbio report --plan NAME`).
    #[arg(long, value_name = "NAME")]
    pub plan: Option<String>,
    /// Tag every imported run (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Show how the file would be imported (variables, sessions, models) and store nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Import a file again even though runs from it are stored already.
    #[arg(long)]
    pub again: bool,
}

#[derive(Args, Debug)]
pub struct AwrInfoArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Read the variable (and sessions, writers, readers) from FILE names with
    /// this regex: named groups variable, sessions, writers, readers.
    #[arg(long, value_name = "RE", allow_hyphen_values = true)]
    pub variable_regex: Option<String>,
    /// The SLOB.R model of every run of the file, instead of SLOB.R's rules
    /// (readwrite is stored as writes: READWRITE is computed over WRITES runs).
    #[arg(long, value_parser = choice::<ModelArg>())]
    pub model: Option<ModelArg>,
}

#[derive(Args, Debug)]
pub struct FioArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// The variable of the runs (a row of `dbio report`), e.g. the filesystem.
    #[arg(long, value_name = "NAME")]
    pub variable: Option<String>,
}
