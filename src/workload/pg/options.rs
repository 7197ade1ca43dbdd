//! `--workload pg`'s options into a [`RunConfig`]: SLOB's shape and mix
//! options (shared with `--workload slob`), `--cache` as shared_buffers,
//! `--redo-dir` as the WAL directory, and the pg options. Options that mean
//! nothing to a real server are refused in one line.

use super::{PAGE, PgConfig};
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::workload::db::options::{Instead, refuse_model_options, refuse_with_url, resolve};

/// PostgreSQL in dbio's words.
const PG: Instead = Instead {
    workload: "pg",
    makes: "the cluster",
    cache: "shared_buffers",
    processes: "the server's processes",
    processes_bytes: 64 << 20,
    files: Some("PostgreSQL lays out its own files"),
    redo: "the server writes its own WAL",
    redo_files: "WAL segments are the server's",
    redo_file_size: "use --pg-set max_wal_size=...",
    redo_block: "WAL pages are the server's",
    redo_sync: "use --pg-set wal_sync_method=...",
    log_buffer: "use --pg-set wal_buffers=...",
};

impl RunArgs {
    /// Validates a `--workload pg` run.
    pub(crate) fn into_pg_config(self) -> Result<RunConfig, String> {
        refuse_model_options(&self, &PG)?;
        let server = self.pg.clone().server();
        refuse_with_url(&self, &server, &[])?;
        if let Some(bs) = self.bs
            && bs != PAGE
        {
            return Err(format!(
                "--bs {bs} does not apply to --workload pg: PostgreSQL's page is 8k; drop --bs"
            ));
        }
        let (mut run, slob, wal_dir, server) = resolve(self, server, &PG, PAGE, 1)?;
        run.pg = Some(PgConfig {
            slob,
            wal_dir,
            server,
        });
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use crate::config::RunConfig;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<RunConfig, String> {
        crate::workload::db::options::config_of("pg", args)
    }

    #[test]
    fn pg_options_resolve() {
        let c = config(&[
            "--sessions",
            "4",
            "--scale",
            "1000",
            "--update-pct",
            "20",
            "--cache",
            "64M",
            "--pg-set",
            "wal_compression=on",
            "--work-loop",
            "10",
        ])
        .unwrap();
        let pg = c.pg.unwrap();
        let set = &pg.server.set;
        assert_eq!(c.workload, "pg");
        assert_eq!(pg.slob.schemas, 4);
        assert_eq!(pg.slob.scale_blocks, 1000);
        assert_eq!(pg.slob.update_pct, 20);
        assert_eq!(pg.slob.cache_bytes, 64 << 20);
        assert_eq!(
            *set,
            vec![("wal_compression".to_string(), "on".to_string())]
        );
        assert_eq!(c.length, crate::config::RunLength::Ops { ops: 40 });
    }

    #[test]
    fn options_that_mean_nothing_to_a_server_are_refused() {
        let e = config(&["--db-writers", "2"]).unwrap_err();
        assert!(
            e.contains("--db-writers") && e.contains("--workload pg"),
            "{e}"
        );
        let e = config(&["--bs", "4k"]).unwrap_err();
        assert!(e.contains("--bs") && e.contains("8k"), "{e}");
        let e = config(&["--pg-set", "oops"]).unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = config(&["--update-pct", "101"]).unwrap_err();
        assert!(e.contains("--update-pct"), "{e}");
        let mut argv = vec!["dbio", "run", "--pg-set", "a=b"];
        argv.push("--sessions");
        argv.push("2");
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Run(r) = cli.command else {
            unreachable!()
        };
        let e = (*r).into_config().unwrap_err();
        assert!(e.contains("--pg-set applies to --workload pg"), "{e}");
    }
}
