//! `dbio plan`'s subcommands.

use std::path::PathBuf;

/// `dbio plan ...`: to be nested in the top-level command as
/// `Plan { #[command(subcommand)] command: PlanCommand }`.
#[derive(clap::Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum PlanCommand {
    /// Run a plan (TOML, see docs/plans.md); running it again continues where it stopped.
    Run {
        /// The plan file.
        plan: PathBuf,
        /// Print the runs that would be made and the estimated duration; run nothing.
        #[arg(long)]
        dry_run: bool,
        /// Run it as one rank of an MPI job (mpirun, srun): every rank walks the plan and each run is a run under MPI (`{rank}`, `{host}` in its targets); rank 0 stores (docs/multihost.md; needs a build with --features mpi).
        #[arg(long)]
        mpi: bool,
        /// Live metrics for the whole plan (overrides the plan file's `metrics_listen` / `metrics_textfile`).
        #[command(flatten)]
        metrics: crate::options::metrics::MetricsArgs,
    },
    /// Show which runs of a plan are completed and what is left.
    Status {
        /// The plan file.
        plan: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_command_parses_as_a_subcommand() {
        use clap::Parser;
        #[derive(Parser, Debug)]
        struct T {
            #[command(subcommand)]
            c: PlanCommand,
        }
        let t = T::try_parse_from(["dbio-plan", "run", "p.toml", "--dry-run"]).unwrap();
        assert_eq!(
            t.c,
            PlanCommand::Run {
                plan: "p.toml".into(),
                dry_run: true,
                mpi: false,
                metrics: Default::default(),
            }
        );
        let t = T::try_parse_from(["dbio-plan", "status", "p.toml"]).unwrap();
        assert_eq!(
            t.c,
            PlanCommand::Status {
                plan: "p.toml".into()
            }
        );
    }
}
