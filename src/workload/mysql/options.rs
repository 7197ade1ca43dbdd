//! `--workload mysql`'s options into a [`RunConfig`]: SLOB's shape and mix
//! options (shared with `--workload slob`), `--cache` as
//! innodb_buffer_pool_size, `--bs` as innodb_page_size, `--io` as
//! innodb_flush_method, `--redo-dir` as innodb_log_group_home_dir. Options
//! that mean nothing to a real server are refused in one line (`db::options`).

use super::{DEFAULT_PAGE, MAX_FILES, MysqlConfig};
use crate::cli::RunArgs;
use crate::config::{IoMode, RunConfig};
use crate::workload::db::data::MAX_SCALE;
use crate::workload::db::options::{Instead, length, refuse_model_options};
use crate::workload::dist::Distribution;

/// InnoDB's flush method for an `--io` mode.
fn flush_method(io: IoMode) -> Result<&'static str, String> {
    match io {
        IoMode::Direct => Ok("O_DIRECT"),
        IoMode::Fsync => Ok("fsync"),
        IoMode::Dsync => Ok("O_DSYNC"),
        other => Err(format!(
            "--io {} does not apply to --workload mysql: InnoDB's flush methods are --io direct (O_DIRECT), fsync (fsync) or dsync (O_DSYNC)",
            other.name()
        )),
    }
}

impl RunArgs {
    /// Validates a `--workload mysql` run.
    pub(crate) fn into_mysql_config(self) -> Result<RunConfig, String> {
        refuse_model_options(
            &self,
            &Instead {
                workload: "mysql",
                files: None,
                redo: "the server writes its own redo",
                redo_files: "the redo log is InnoDB's",
                redo_file_size: "use --mysql-set innodb_log_file_size=...",
                redo_block: "the redo log is InnoDB's",
                redo_sync: "the redo is synced at each commit (innodb_flush_log_at_trx_commit=1)",
                log_buffer: "use --mysql-set innodb_log_buffer_size=...",
            },
        )?;
        if let Some(opt) = self.pg.first_given() {
            return Err(format!(
                "{opt} applies to --workload pg; use --mysql-set with --workload mysql"
            ));
        }
        if self.mysql.mysql_url.is_some() {
            let own_server_only = [
                (self.mysql.mysql_bin.is_some(), "--mysql-bin"),
                (!self.mysql.mysql_set.is_empty(), "--mysql-set"),
                (self.slob.redo_dir.is_some(), "--redo-dir"),
                (self.slob.cache.is_some(), "--cache"),
                (self.mysql.mysql_memory.is_some(), "--mysql-memory"),
                (self.bs.is_some(), "--bs"),
            ];
            if let Some((_, opt)) = own_server_only.iter().find(|(given, _)| *given) {
                return Err(format!(
                    "{opt} does not apply with --mysql-url: dbio changes nothing on an existing server (its settings are reported); drop {opt}"
                ));
            }
        }
        let page_size = self.bs.unwrap_or(DEFAULT_PAGE);
        if !(4096..=65536).contains(&page_size) {
            return Err(format!(
                "--bs {page_size} is not an InnoDB page size; give 4k, 8k, 16k, 32k or 64k"
            ));
        }
        let flush_method = flush_method(self.io_mode)?;
        let files = self.files;
        if !(1..=MAX_FILES).contains(&files) {
            return Err(format!(
                "--files {files} is not a partition count for --workload mysql; give 1 (a table in one .ibd file) to {MAX_FILES} (its partitions, an .ibd file each)"
            ));
        }
        if crate::target::device::is_block_device(&self.target) {
            return Err(format!(
                "--target {} is a block device; --workload mysql needs a directory on a mounted filesystem for the instance",
                self.target.display()
            ));
        }
        let hotspot = crate::cli::hotspot(
            self.hotspot_mb,
            self.hotspot_offset_mb,
            self.hotspot_frequency,
        )?;
        let redo_dir = self.slob.redo_dir.clone();
        let work_loop = self.slob.work_loop;
        let slob =
            self.slob
                .into_config(self.sessions, page_size, 1, hotspot, Some(&self.target))?;
        if slob.scale_blocks > MAX_SCALE {
            return Err(format!(
                "--scale {} rows is more than --workload mysql handles ({MAX_SCALE} per table); give a smaller --scale",
                slob.scale_blocks
            ));
        }
        if let Some(m) = self.mysql.mysql_memory {
            let min = slob.cache_bytes + (256 << 20);
            if m < min {
                return Err(format!(
                    "--mysql-memory {} is too small for --cache {} (the buffer pool) and the server; give --mysql-memory {} or more",
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
            workload: "mysql",
            target: self.target,
            files,
            size_bytes: Some(slob.scale_blocks * u64::from(slob.schemas) * u64::from(page_size)),
            block_size: page_size,
            // A database workload has no raw pattern: its mix is --update-pct.
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
            pg: None,
            mysql: Some(MysqlConfig {
                slob,
                page_size,
                files,
                flush_method,
                redo_dir,
                bin: self.mysql.mysql_bin,
                set: self.mysql.mysql_set,
                memory_bytes: self.mysql.mysql_memory,
                url_redacted: self.mysql.mysql_url.as_deref().map(super::endpoint::redact),
                url: self.mysql.mysql_url,
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
        let mut argv = vec!["dbio", "run", "--workload", "mysql"];
        argv.extend_from_slice(args);
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        match cli.command {
            Command::Run(r) => (*r).into_config(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn mysql_options_resolve_to_innodb_settings() {
        let c = config(&[
            "--sessions",
            "4",
            "--scale",
            "1000",
            "--update-pct",
            "20",
            "--cache",
            "64M",
            "--io",
            "fsync",
            "--mysql-set",
            "innodb_doublewrite=0",
            "--work-loop",
            "10",
        ])
        .unwrap();
        let my = c.mysql.unwrap();
        assert_eq!(c.workload, "mysql");
        assert_eq!(my.slob.schemas, 4);
        assert_eq!(my.slob.cache_bytes, 64 << 20);
        assert_eq!(my.page_size, 16384, "InnoDB's page unless --bs");
        assert_eq!(my.flush_method, "fsync");
        assert_eq!(my.set, vec![("innodb_doublewrite".into(), "0".into())]);
        assert_eq!(c.length, crate::config::RunLength::Ops { ops: 40 });
        let c = config(&["--bs", "4k", "--io", "dsync"]).unwrap();
        let my = c.mysql.unwrap();
        assert_eq!((my.page_size, my.flush_method), (4096, "O_DSYNC"));
        assert_eq!(config(&[]).unwrap().mysql.unwrap().flush_method, "O_DIRECT");
    }

    #[test]
    fn files_are_the_partitions_of_each_table() {
        let c = config(&[
            "--files",
            "4",
            "--schemas",
            "1",
            "--threads-per-schema",
            "4",
        ])
        .unwrap();
        assert_eq!((c.files, c.mysql.as_ref().unwrap().files), (4, 4));
        assert_eq!(c.sessions, 4, "four sessions on one table in four files");
        assert_eq!(config(&[]).unwrap().mysql.unwrap().files, 1);
        let e = config(&["--files", "65"]).unwrap_err();
        assert!(e.contains("--files 65") && e.contains("64"), "{e}");
    }

    #[test]
    fn options_that_mean_nothing_to_innodb_are_refused() {
        let e = config(&["--bs", "2k"]).unwrap_err();
        assert!(e.contains("--bs") && e.contains("16k"), "{e}");
        let e = config(&["--io", "buffered"]).unwrap_err();
        assert!(e.contains("--io buffered") && e.contains("O_DIRECT"), "{e}");
        let e = config(&["--redo-file-size", "1G"]).unwrap_err();
        assert!(e.contains("innodb_log_file_size"), "{e}");
        let e = config(&["--pg-set", "a=b"]).unwrap_err();
        assert!(e.contains("--pg-set"), "{e}");
        let e = config(&["--mysql-set", "oops"]).unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let argv = ["dbio", "run", "--mysql-set", "a=b"];
        let Command::Run(r) = Cli::try_parse_from(argv).unwrap().command else {
            unreachable!()
        };
        let e = (*r).into_config().unwrap_err();
        assert!(e.contains("--mysql-set applies to --workload mysql"), "{e}");
    }
}
