//! `--workload pg`'s options into a [`RunConfig`]: SLOB's shape and mix
//! options (shared with `--workload slob`), `--cache` as shared_buffers,
//! `--redo-dir` as the WAL directory, and the pg options. Options that mean
//! nothing to a real server are refused in one line.

use super::{PAGE, PgConfig, data};
use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::workload::db::options::{Instead, length, refuse_model_options};
use crate::workload::dist::Distribution;

impl RunArgs {
    /// Validates a `--workload pg` run.
    pub(crate) fn into_pg_config(self) -> Result<RunConfig, String> {
        refuse_model_options(
            &self,
            &Instead {
                workload: "pg",
                files: Some("PostgreSQL lays out its own files"),
                redo: "the server writes its own WAL",
                redo_files: "WAL segments are the server's",
                redo_file_size: "use --pg-set max_wal_size=...",
                redo_block: "WAL pages are the server's",
                redo_sync: "use --pg-set wal_sync_method=...",
                log_buffer: "use --pg-set wal_buffers=...",
            },
        )?;
        if self.pg.pg_url.is_some() {
            let own_server_only = [
                (self.pg.pg_bin.is_some(), "--pg-bin"),
                (!self.pg.pg_set.is_empty(), "--pg-set"),
                (self.slob.redo_dir.is_some(), "--redo-dir"),
                (self.slob.cache.is_some(), "--cache"),
                (self.pg.pg_memory.is_some(), "--pg-memory"),
            ];
            if let Some((_, opt)) = own_server_only.iter().find(|(given, _)| *given) {
                return Err(format!(
                    "{opt} does not apply with --pg-url: dbio changes nothing on an existing server (its settings are reported); drop {opt}"
                ));
            }
        }
        if let Some(bs) = self.bs
            && bs != PAGE
        {
            return Err(format!(
                "--bs {bs} does not apply to --workload pg: PostgreSQL's page is 8k; drop --bs"
            ));
        }
        if crate::target::device::is_block_device(&self.target) {
            return Err(format!(
                "--target {} is a block device; --workload pg needs a directory on a mounted filesystem for the cluster",
                self.target.display()
            ));
        }
        let hotspot = crate::cli::hotspot(
            self.hotspot_mb,
            self.hotspot_offset_mb,
            self.hotspot_frequency,
        )?;
        let wal_dir = self.slob.redo_dir.clone();
        let work_loop = self.slob.work_loop;
        let slob = self
            .slob
            .into_config(self.sessions, PAGE, 1, hotspot, Some(&self.target))?;
        if slob.scale_blocks > data::MAX_SCALE {
            return Err(format!(
                "--scale {} rows is more than --workload pg handles ({} per table); give a smaller --scale",
                slob.scale_blocks,
                data::MAX_SCALE
            ));
        }
        if let Some(m) = self.pg.pg_memory {
            let min = slob.cache_bytes + (64 << 20);
            if m < min {
                return Err(format!(
                    "--pg-memory {} is too small for --cache {} (shared_buffers) and the server's processes; give --pg-memory {} or more",
                    crate::units::fmt_size(m),
                    crate::units::fmt_size(slob.cache_bytes),
                    crate::units::fmt_size(min)
                ));
            }
        }
        let sessions = slob.sessions();
        let length = length(work_loop, sessions, self.time, self.ramp)?;
        let seed = self.seed.unwrap_or_else(crate::cli::random_seed);
        Ok(RunConfig {
            workload: "pg",
            target: self.target,
            files: 1,
            size_bytes: Some(slob.scale_blocks * u64::from(slob.schemas) * u64::from(PAGE)),
            block_size: PAGE,
            // A database model has no raw pattern: its mix is --update-pct.
            pattern: None,
            read_pct: None,
            sessions,
            iodepth: 1,
            engine: self.engine,
            io_mode: self.io_mode,
            length,
            distribution: Distribution::Uniform,
            hotspot,
            rate_iops: None,
            seed,
            load_parallel: 1,
            outlier_ms: self.outlier_ms,
            interval_s: self.interval,
            destroy_device: None,
            allow_root_fs: self.allow_root_fs,
            verify: Default::default(),
            slob: None,
            mysql: None,
            pg: Some(PgConfig {
                slob,
                wal_dir,
                bin: self.pg.pg_bin,
                set: self.pg.pg_set,
                memory_bytes: self.pg.pg_memory,
                url_redacted: self.pg.pg_url.as_deref().map(super::endpoint::redact),
                url: self.pg.pg_url,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use crate::config::RunConfig;
    use clap::Parser;

    fn config(args: &[&str]) -> Result<RunConfig, String> {
        let mut argv = vec!["dbio", "run", "--workload", "pg"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Run(r) => (*r).into_config(),
            _ => unreachable!(),
        }
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
        assert_eq!(c.workload, "pg");
        assert_eq!(pg.slob.schemas, 4);
        assert_eq!(pg.slob.scale_blocks, 1000);
        assert_eq!(pg.slob.update_pct, 20);
        assert_eq!(pg.slob.cache_bytes, 64 << 20);
        assert_eq!(
            pg.set,
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
